-- 30_bm25: keyword search over bm25_postings, scoring exactly like fts's match_bm25
-- (k1 = 1.2, b = 0.75, porter stemmer, bm25_stopwords; log is base 10 as in fts), except that the query's stop
-- words are dropped as the documents' are (fts stems them, and its 'on' matches a document's 'one'). The input text
-- must be the output of echo_duck.text.segment.segment_for_index: letters/numbers separated by spaces,
-- which lets a plain split stand in for fts's tokenizer regex.

-- bm25_tokens(text) -> VARCHAR[]: fts's tokenizer for pre-segmented text.
CREATE OR REPLACE MACRO bm25_tokens(s) AS
    string_split(lower(strip_accents(CAST(s AS VARCHAR))), ' ');

-- bm25_doc_terms(text) -> (term, tf): stop words dropped before stemming, as fts does.
CREATE OR REPLACE MACRO bm25_doc_terms(txt) AS TABLE
    SELECT hash(stem(w, 'porter')) AS term, count(*)::INTEGER AS tf
    FROM (SELECT unnest(bm25_tokens(txt)) AS w)
    WHERE len(w) > 0 AND w NOT IN (SELECT sw FROM bm25_stopwords)
    GROUP BY ALL;

-- The formula's parts, shared by bm25_scores, keyword_bm25 (sql/macros/40_recall.sql) and kb_bm25_scores:
-- bm25_idf(n, df) -> DOUBLE: fts's IDF of a term in df of n documents, log10(((n - df) + 0.5) / (df + 0.5) + 1).
CREATE OR REPLACE MACRO bm25_idf(n, df) AS
    log((((n - df) + 0.5) / (df + 0.5)) + 1);

-- bm25_rsj(n, df) -> DOUBLE: the RSJ weight coverage counts a term by, log10((N' - df + 0.5) / (df + 0.5)) with
-- N' = max(n, 2 df + 1): near 0 for a term in half the documents or more, never 0 in a store of a few.
CREATE OR REPLACE MACRO bm25_rsj(n, df) AS
    log(((greatest(n, 2 * df + 1) - df) + 0.5) / (df + 0.5));

-- bm25_saturation(tf, doc_len, avgdl) -> DOUBLE: the term-frequency part (k1 1.2, b 0.75).
CREATE OR REPLACE MACRO bm25_saturation(tf, doc_len, avgdl) AS
    (tf * (1.2 + 1)) / (tf + (1.2 * ((1 - 0.75) + (0.75 * (doc_len / avgdl)))));

-- bm25_scores(q) -> (memory_id, score, rarest_df_ratio, query_idf, query_spec, covered_idf, query_idf_all) for every
-- document matching any query term. rarest_df_ratio = df / N of the rarest matched term: near 1 means the
-- match is on a common word. query_idf = the sum of the IDFs of the query terms found in the index.
-- covered_idf = the information of the query terms the document holds, each term weighted by
-- log((N' - df + 0.5) / (df + 0.5)) with N' = max(N, 2 df + 1): the RSJ weight, near 0 for a term in half
-- the documents or more (a user's name in every other memory), never 0 in a store of a few. query_idf_all
-- = the same over every content (non stop word) query term, a term no document holds at df 0.
-- covered_idf / query_idf_all is the share of the query's information the document matches: a match on
-- the only term the store knows (a name in a Chinese question over English memories) is not a full match.
-- p_docs (BIGINT[], default NULL: every document): only these documents count and match (keyword_bm25 passes the
-- documents of the memories a caller may see).
CREATE OR REPLACE MACRO bm25_scores(q, p_docs := NULL) AS TABLE
    WITH qterms AS MATERIALIZED (  -- stop words dropped as from documents (fts's match_bm25 stems them: 'on' met 'one')
        SELECT DISTINCT hash(stem(w, 'porter')) AS term
        FROM (SELECT unnest(bm25_tokens(q)) AS w)
        WHERE len(w) > 0 AND w NOT IN (SELECT sw FROM bm25_stopwords)
    ),
    qcontent AS MATERIALIZED (
        SELECT count(DISTINCT hash(stem(w, 'porter'))) AS n_terms
        FROM (SELECT unnest(bm25_tokens(q)) AS w)
        WHERE len(w) > 0 AND w NOT IN (SELECT sw FROM bm25_stopwords)
    ),
    docs AS (  -- not materialised: with p_docs NULL it is the plain table (6.6 -> 6.2 ms a query at 40k docs)
        SELECT doc, len FROM bm25_docs WHERE p_docs IS NULL OR doc IN (SELECT unnest(CAST(p_docs AS BIGINT[])))
    ),
    stats AS MATERIALIZED (
        SELECT count(*) AS num_docs, sum(len) / count(len) AS avgdl FROM docs
    ),
    hits AS MATERIALIZED (
        SELECT memory_id, term, tf, doc_len
        FROM bm25_postings
        WHERE term IN (SELECT term FROM qterms)
          AND doc NOT IN (SELECT doc FROM bm25_dead)
          AND (p_docs IS NULL OR doc IN (SELECT doc FROM docs))
    ),
    dfs AS MATERIALIZED (
        SELECT term, count(*) AS df FROM hits GROUP BY term
    )
    SELECT hits.memory_id,
           sum(bm25_idf(stats.num_docs, df) * bm25_saturation(tf, doc_len, stats.avgdl)) AS score,
           min(df) / stats.num_docs AS rarest_df_ratio,
           any_value(q.query_idf) AS query_idf,
           any_value(q.query_spec) AS query_spec,
           sum(bm25_rsj(stats.num_docs, df)) AS covered_idf,
           any_value(q.query_info + (q.n_terms - q.n_found) * log((stats.num_docs + 0.5) / 0.5)) AS query_idf_all
    FROM hits JOIN dfs USING (term) CROSS JOIN stats
    CROSS JOIN (
        -- query_spec: how rare the query's indexed terms are (the spec of text.query_entropy)
        SELECT sum(bm25_idf(s.num_docs, d.df)) AS query_idf,
               (avg(ln(1 + (s.num_docs - d.df + 0.5) / (d.df + 0.5))) + max(ln(1 + (s.num_docs - d.df + 0.5) / (d.df + 0.5))))
                   / 2 / any_value(ln(1 + (s.num_docs + 0.5) / 0.5)) AS query_spec,
               sum(bm25_rsj(s.num_docs, d.df)) AS query_info,
               count(*) AS n_found, any_value(c.n_terms) AS n_terms
        FROM dfs d CROSS JOIN stats s CROSS JOIN qcontent c) q
    GROUP BY hits.memory_id, stats.num_docs;

-- bm25_search(q, n) -> the n best (memory_id, score), ties broken by id.
CREATE OR REPLACE MACRO bm25_search(q, n) AS TABLE
    SELECT memory_id, score FROM bm25_scores(q) ORDER BY score DESC, memory_id LIMIT n;

-- bm25_token_df(q) -> (token, df, n_docs) for each distinct query token: feeds query entropy.
CREATE OR REPLACE MACRO bm25_token_df(q) AS TABLE
    WITH toks AS (
        SELECT DISTINCT t, hash(stem(t, 'porter')) AS term
        FROM (SELECT unnest(bm25_tokens(q)) AS t) WHERE len(t) > 0
    )
    SELECT toks.t AS token,
           (SELECT count(*) FROM bm25_postings p
            WHERE p.term = toks.term AND p.doc NOT IN (SELECT doc FROM bm25_dead)) AS df,
           (SELECT count(*) FROM bm25_docs) AS n_docs
    FROM toks;

-- bm25_common_words(q) -> (word) the words of the segmented query q that more than half of the indexed memories
-- hold, sorted. Such a word tells no memory from another (its RSJ weight is ~0); the vector arm reads the question
-- without it (recall/vector_text.py). Stop words are never indexed, but one that stems like a content
-- word can count as common ('on' where most memories say 'one'); the in-process copy counts alike.
-- p_docs: as bm25_scores' (NULL: every document; keyword_common_words passes a caller's).
-- (bm25_token_df's counts, spelled out here: a table macro that calls another does not survive IMPORT DATABASE.)
CREATE OR REPLACE MACRO bm25_common_words(q, p_docs := NULL) AS TABLE
    WITH docs AS (
        SELECT doc FROM bm25_docs WHERE p_docs IS NULL OR doc IN (SELECT unnest(CAST(p_docs AS BIGINT[])))
    ),
    toks AS (
        SELECT DISTINCT t, hash(stem(t, 'porter')) AS term
        FROM (SELECT unnest(bm25_tokens(q)) AS t) WHERE len(t) > 0
    )
    SELECT toks.t AS word FROM toks
    WHERE 2 * (SELECT count(*) FROM bm25_postings p
               WHERE p.term = toks.term AND p.doc NOT IN (SELECT doc FROM bm25_dead)
                 AND (p_docs IS NULL OR p.doc IN (SELECT doc FROM docs)))
          > (SELECT count(*) FROM docs)
    ORDER BY toks.t;
