-- Maintenance of the BM25 postings (echo_duck/index/keyword.py). Staged rows come from a registered
-- Arrow table named echo_duck_keyword_stage (memory_id VARCHAR, tokens VARCHAR) or (word VARCHAR).

-- name: store_info_value
SELECT value FROM store_info WHERE name = $name;

-- name: set_store_info
INSERT OR REPLACE INTO store_info VALUES ($name, $value);

-- A value that changes if DuckDB's hash() changes between versions (postings store hashes).
-- name: hash_probe
SELECT hash(stem('echo_duck', 'porter'))::VARCHAR;

-- name: clear_stopwords
DELETE FROM bm25_stopwords;

-- name: insert_stopwords_from_stage
INSERT INTO bm25_stopwords SELECT DISTINCT word FROM echo_duck_keyword_stage;

-- name: clear_keyword_index
DELETE FROM bm25_postings; DELETE FROM bm25_docs; DELETE FROM bm25_dead;

-- Every memory's own text, for a rebuild of the postings.
-- name: all_memory_texts
SELECT id, content FROM memories ORDER BY id;

-- name: insert_keyword_docs_from_stage
INSERT INTO bm25_docs (doc, memory_id, len, tokens)
WITH lens AS (
    SELECT memory_id, count(*) AS n
    FROM (SELECT memory_id, unnest(bm25_tokens(tokens)) AS w FROM echo_duck_keyword_stage)
    WHERE len(w) > 0 AND w NOT IN (SELECT sw FROM bm25_stopwords)
    GROUP BY memory_id
)
SELECT nextval('bm25_doc_seq'), s.memory_id::UUID, coalesce(l.n, 0)::INTEGER, s.tokens
FROM echo_duck_keyword_stage s LEFT JOIN lens l ON l.memory_id = s.memory_id;

-- Postings of the staged docs; doc_len (non-stop tokens, as fts counts) was set on the doc row.
-- name: insert_keyword_postings_from_stage
INSERT INTO bm25_postings
WITH staged AS (
    SELECT d.doc, d.memory_id, d.len, d.tokens
    FROM bm25_docs d JOIN echo_duck_keyword_stage s ON d.memory_id = s.memory_id::UUID
),
toks AS (
    SELECT doc, memory_id, len, unnest(bm25_tokens(tokens)) AS w FROM staged
)
SELECT hash(stem(w, 'porter')) AS term, doc, memory_id, count(*)::INTEGER AS tf, any_value(len)
FROM toks WHERE len(w) > 0 AND w NOT IN (SELECT sw FROM bm25_stopwords)
GROUP BY ALL
ORDER BY term, doc;

-- name: mark_keyword_doc_dead
INSERT INTO bm25_dead SELECT doc FROM bm25_docs WHERE memory_id = $id;

-- name: delete_keyword_doc
DELETE FROM bm25_docs WHERE memory_id = $id;

-- name: count_dead_keyword_docs
SELECT count(*) FROM bm25_dead;

-- name: count_postings
SELECT count(*) FROM bm25_postings;

-- Compaction: keep live postings sorted by term so a search reads only its terms' row groups.
-- name: stage_live_postings_sorted
CREATE OR REPLACE TEMP TABLE echo_duck_sorted_postings AS
SELECT * FROM bm25_postings WHERE doc NOT IN (SELECT doc FROM bm25_dead) ORDER BY term, doc;

-- name: clear_postings
DELETE FROM bm25_postings;

-- name: insert_postings_from_sorted_stage
INSERT INTO bm25_postings SELECT * FROM echo_duck_sorted_postings ORDER BY term, doc;

-- name: drop_sorted_postings_stage
DROP TABLE IF EXISTS echo_duck_sorted_postings;

-- name: clear_dead_keyword_docs
DELETE FROM bm25_dead;

-- name: create_fts_index
PRAGMA create_fts_index('bm25_docs', 'memory_id', 'tokens', stemmer = 'porter', stopwords = 'bm25_stopwords',
                        ignore = '[^\p{L}\p{N}]+', strip_accents = 1, lower = 1, overwrite = 1);

-- The in-process keyword arm (echo_duck/index/keyword_search.py): what it needs to follow the tables,
-- and the query's terms exactly as bm25_scores derives them.
-- name: keyword_search_state
SELECT count(*) AS n_docs, coalesce(sum(len), 0)::BIGINT AS total_len, max(doc) AS max_doc,
       (SELECT count(*) FROM bm25_dead) AS n_dead,
       (SELECT list_distinct(list_transform(list_filter(bm25_tokens($q), w -> len(w) > 0 AND NOT list_contains(words, w)),
                                            w -> hash(stem(w, 'porter'))))
        FROM (SELECT coalesce(list(sw), []) AS words FROM bm25_stopwords)) AS terms  -- content terms only (query_idf_all)
FROM bm25_docs;

-- keyword_search_state in parts: the state alone (skipped while nothing was written), the query's terms
-- alone, and each word of a query with its term (kept per word: most words of a new query were seen
-- before), with the stop words, for queries the searcher splits as bm25_tokens would.
-- name: keyword_state
SELECT count(*) AS n_docs, coalesce(sum(len), 0)::BIGINT AS total_len, max(doc) AS max_doc,
       (SELECT count(*) FROM bm25_dead) AS n_dead
FROM bm25_docs;

-- name: keyword_query_terms
SELECT list_distinct(list_transform(list_filter(bm25_tokens($q), w -> len(w) > 0 AND NOT list_contains(words, w)),
                                    w -> hash(stem(w, 'porter')))) AS terms
FROM (SELECT coalesce(list(sw), []) AS words FROM bm25_stopwords);

-- name: keyword_query_words
SELECT DISTINCT w, hash(stem(w, 'porter')) AS term FROM (SELECT unnest(bm25_tokens($q)) AS w) WHERE len(w) > 0;

-- name: keyword_common_words
SELECT word FROM keyword_common_words($q, $p_caller_agent, $p_caller_session::VARCHAR, $p_caller_teams::VARCHAR[],
                                      $p_caller_tenants::VARCHAR[]);

-- The memory ids a caller's recall statistics count (counted_memories): the in-process arms' population inside a
-- transaction, where the in-process copy of the memories table is not read.
-- name: counted_memory_ids
SELECT id::VARCHAR FROM counted_memories($p_caller_agent, $p_caller_session::VARCHAR, $p_caller_teams::VARCHAR[],
                                         $p_caller_tenants::VARCHAR[]);

-- name: keyword_stopwords
SELECT sw FROM bm25_stopwords;

-- name: keyword_docs_after
SELECT doc, memory_id, len FROM bm25_docs WHERE doc > $after ORDER BY doc;

-- name: keyword_postings_after
SELECT term, doc, tf, doc_len FROM bm25_postings WHERE doc > $after;

-- name: keyword_dead_docs
SELECT doc FROM bm25_dead;
