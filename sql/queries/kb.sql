-- The knowledge base (echo_duck/kb/documents.py). Staged rows come from registered Arrow tables:
--   echo_duck_kb_doc_stage    (id, path, source, content_hash, title, tags VARCHAR[], size)
--   echo_duck_kb_chunk_stage  (id, document_id, seq, heading_trail VARCHAR[], start_offset, end_offset,
--                              content, flagged, flag_reason, tokens)   tokens = segmented trail + content
--   echo_duck_kb_vector_stage (chunk_id, vector FLOAT[])
-- Id lists ($ids) are bound as text '[uuid, …]' and cast here: binding Python lists is slow in duckdb 1.5.5.

-- Documents the adding agent already has for the files or text being added (any status), to decide
-- skip/replace/remove. Each agent's documents are its own: two agents adding one file get two documents.
-- name: kb_document_at
SELECT id, path, source, content_hash, title, tags, status, scope, team_id, tenant_id, sensitivity,
       coalesce(by_host, false) AS by_host
FROM kb_documents WHERE path = $path AND agent_id = $agent_id;

-- name: kb_documents_under
SELECT id, path, source, content_hash, title, tags, status, scope, team_id, tenant_id, sensitivity,
       coalesce(by_host, false) AS by_host
FROM kb_documents WHERE starts_with(path, $prefix) AND agent_id = $agent_id;

-- name: kb_text_document
SELECT id, path, source, content_hash, title, tags, status, scope, team_id, tenant_id, sensitivity,
       coalesce(by_host, false) AS by_host
FROM kb_documents WHERE path IS NULL AND source = $source AND agent_id = $agent_id;

-- kb_remove: a source name, or a file path, or a folder (every document below it); the caller's own
-- documents ($any_agent: an admin's, any agent's).
-- name: kb_active_documents_of_source
SELECT id, coalesce(by_host, false) AS by_host FROM kb_documents WHERE status = 'active' AND source = $source AND ($any_agent OR agent_id = $agent_id);

-- name: kb_active_documents_at
SELECT id, coalesce(by_host, false) AS by_host FROM kb_documents
WHERE status = 'active' AND (path = $path OR starts_with(path, $prefix)) AND ($any_agent OR agent_id = $agent_id);

-- New, changed and re-activated documents; added_at survives a change. Owner and scope come from
-- the adding call ($agent_id, $scope, $team_id, $tenant_id, $sensitivity), and by_host ($by_host: the host adds it,
-- guards.host_writes; the host names a document's whole text, so a copy an agent added first becomes the host's).
-- name: kb_upsert_documents_from_stage
INSERT OR REPLACE INTO kb_documents (id, path, source, content_hash, title, tags, size, added_at, updated_at, status,
                                     agent_id, scope, team_id, tenant_id, sensitivity, by_host)
SELECT s.id::UUID, s.path, s.source, s.content_hash, s.title, s.tags::VARCHAR[], s.size,
       coalesce(d.added_at, $now), $now, 'active', $agent_id, $scope, $team_id::VARCHAR, $tenant_id::VARCHAR, $sensitivity,
       $by_host
FROM echo_duck_kb_doc_stage s LEFT JOIN kb_documents d ON d.id = s.id::UUID;

-- name: kb_count_chunks_of_documents
SELECT count(*) FROM kb_chunks WHERE document_id IN (SELECT unnest($ids::VARCHAR::UUID[]));

-- Everything derived from these documents' old text: postings (marked dead), vectors, chunks.
-- name: kb_drop_chunks_of_documents
INSERT INTO kb_bm25_dead
SELECT b.doc FROM kb_bm25_docs b JOIN kb_chunks c ON c.id = b.chunk_id
WHERE c.document_id IN (SELECT unnest($ids::VARCHAR::UUID[]));
DELETE FROM kb_bm25_docs WHERE chunk_id IN (
    SELECT id FROM kb_chunks WHERE document_id IN (SELECT unnest($ids::VARCHAR::UUID[])));
DELETE FROM kb_vectors WHERE chunk_id IN (
    SELECT id FROM kb_chunks WHERE document_id IN (SELECT unnest($ids::VARCHAR::UUID[])));
DELETE FROM kb_chunks WHERE document_id IN (SELECT unnest($ids::VARCHAR::UUID[]));

-- name: kb_mark_documents_removed
UPDATE kb_documents SET status = 'removed', updated_at = $now
WHERE id IN (SELECT unnest($ids::VARCHAR::UUID[]));

-- name: kb_insert_chunks_from_stage
INSERT INTO kb_chunks (id, document_id, seq, heading_trail, start_offset, end_offset, content, flagged, flag_reason)
SELECT id::UUID, document_id::UUID, seq, heading_trail::VARCHAR[], start_offset, end_offset, content, flagged, flag_reason
FROM echo_duck_kb_chunk_stage;

-- BM25 docs and postings of the staged chunks, exactly as insert_keyword_*_from_stage does for memories.
-- name: kb_insert_bm25_docs_from_stage
INSERT INTO kb_bm25_docs (doc, chunk_id, len, tokens)
WITH lens AS (
    SELECT id, count(*) AS n
    FROM (SELECT id, unnest(bm25_tokens(tokens)) AS w FROM echo_duck_kb_chunk_stage)
    WHERE len(w) > 0 AND w NOT IN (SELECT sw FROM bm25_stopwords)
    GROUP BY id
)
SELECT nextval('kb_bm25_doc_seq'), s.id::UUID, coalesce(l.n, 0)::INTEGER, s.tokens
FROM echo_duck_kb_chunk_stage s LEFT JOIN lens l ON l.id = s.id;

-- name: kb_insert_bm25_postings_from_stage
INSERT INTO kb_bm25_postings
WITH staged AS (
    SELECT d.doc, d.chunk_id, d.len, d.tokens
    FROM kb_bm25_docs d JOIN echo_duck_kb_chunk_stage s ON d.chunk_id = s.id::UUID
),
toks AS (
    SELECT doc, chunk_id, len, unnest(bm25_tokens(tokens)) AS w FROM staged
)
SELECT hash(stem(w, 'porter')) AS term, doc, chunk_id, count(*)::INTEGER AS tf, any_value(len)
FROM toks WHERE len(w) > 0 AND w NOT IN (SELECT sw FROM bm25_stopwords)
GROUP BY ALL
ORDER BY term, doc;

-- name: kb_upsert_vectors_from_stage
INSERT OR REPLACE INTO kb_vectors (chunk_id, model_id, dim, vector, embedded_at)
SELECT chunk_id::UUID, $model_id, $dim, vector::FLOAT[], $now FROM echo_duck_kb_vector_stage;

-- name: kb_vectors_of_model
SELECT chunk_id, vector FROM kb_vectors WHERE model_id = $model_id;

-- The chunks a caller's search statistics count (kb_counted_chunks): the in-process vector arm's population.
-- name: kb_counted_chunk_ids
SELECT id::VARCHAR FROM kb_counted_chunks($p_caller_agent, $p_caller_session::VARCHAR);

-- Chunks of active documents without a vector from this model (what kb_stale_vectors shows for the
-- store's current model), in batches for kb_reembed.
-- name: kb_count_stale_vectors
SELECT count(*) FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id AND d.status = 'active'
WHERE NOT EXISTS (SELECT 1 FROM kb_vectors v WHERE v.chunk_id = c.id AND v.model_id = $model_id);

-- name: kb_stale_vector_batch
SELECT c.id, c.heading_trail, c.content
FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id AND d.status = 'active'
WHERE NOT EXISTS (SELECT 1 FROM kb_vectors v WHERE v.chunk_id = c.id AND v.model_id = $model_id)
ORDER BY c.document_id, c.seq
LIMIT $n;

-- Rebuild of the postings when segmentation, stop words or hash() changed.
-- name: kb_all_chunk_texts
SELECT id, heading_trail, content FROM kb_chunks ORDER BY document_id, seq;

-- name: kb_clear_keyword_index
DELETE FROM kb_bm25_postings; DELETE FROM kb_bm25_docs; DELETE FROM kb_bm25_dead;

-- Compaction: drop dead postings, keep the live ones sorted by term.
-- name: kb_keyword_counts
SELECT (SELECT count(*) FROM kb_bm25_dead) AS dead, (SELECT count(*) FROM kb_bm25_docs) AS live;

-- name: kb_compact_postings
CREATE OR REPLACE TEMP TABLE echo_duck_kb_sorted_postings AS
SELECT * FROM kb_bm25_postings WHERE doc NOT IN (SELECT doc FROM kb_bm25_dead) ORDER BY term, doc;
DELETE FROM kb_bm25_postings;
INSERT INTO kb_bm25_postings SELECT * FROM echo_duck_kb_sorted_postings ORDER BY term, doc;
DROP TABLE echo_duck_kb_sorted_postings;
DELETE FROM kb_bm25_dead;

-- name: kb_token_df
SELECT token, df, n_docs FROM kb_bm25_token_df($q);

-- name: kb_search
SELECT * FROM kb_search_hits($p_query, $p_vec_ids::VARCHAR, $p_vec_sims::VARCHAR, $p_vec_stats::VARCHAR,
                             $p_qvec::VARCHAR, $p_model::VARCHAR, $p_k, $p_sources::VARCHAR[], $p_tags::VARCHAR[],
                             $p_caller_agent, $p_caller_session::VARCHAR, p_bridge := $p_bridge::VARCHAR,
                             p_query_script := $p_query_script::INTEGER, p_asks_when := $p_asks_when::BOOLEAN,
                             p_caller_host := $p_caller_host::BOOLEAN);

-- The active documents the caller may see.
-- name: kb_overview
SELECT * FROM kb_overview
WHERE can_see(scope, agent_id, team_id, tenant_id, NULL, tags, sensitivity, $caller_agent, $caller_session::VARCHAR)
ORDER BY source, path NULLS FIRST, title;

-- For analysts who want fts's own match_bm25 over the knowledge base (same text as the postings).
-- name: kb_create_fts_index
PRAGMA create_fts_index('kb_bm25_docs', 'chunk_id', 'tokens', stemmer = 'porter', stopwords = 'bm25_stopwords',
                        ignore = '[^\p{L}\p{N}]+', strip_accents = 1, lower = 1, overwrite = 1);

-- The query's similarity statistics over every chunk vector (calibration_stats, one script), from the
-- in-process matrix's count, sum and sum of squares: kb_search_hits's p_vec_stats.
-- name: kb_similarity_stats
SELECT calibration_stats($n::DOUBLE, $total::DOUBLE, $squares::DOUBLE, 0, 0, 0);

-- The latest write time of any document: the next document write comes after it (kb/documents.py _written_at).
-- name: kb_last_written
SELECT max(updated_at) FROM kb_documents;
