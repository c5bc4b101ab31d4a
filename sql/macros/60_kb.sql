-- 60_kb: knowledge-base search (SPEC M5). The same BM25 formula as 30_bm25 and the same fusion as
-- 40_recall, over the kb_* tables only: memories never appear here, and recall_hits never reads kb_*.

-- kb_bm25_scores(q) -> (chunk_id, score, rarest_df_ratio, query_idf): bm25_scores over kb_bm25_*.
-- q is segmented text (echo_duck.text.segment.segment_for_index); log base 10, k1 1.2, b 0.75, as fts.
CREATE OR REPLACE MACRO kb_bm25_scores(q) AS TABLE
    WITH qterms AS MATERIALIZED (
        SELECT DISTINCT hash(stem(unnest(bm25_tokens(q)), 'porter')) AS term
    ),
    stats AS MATERIALIZED (
        SELECT count(*) AS num_docs, sum(len) / count(len) AS avgdl FROM kb_bm25_docs
    ),
    hits AS MATERIALIZED (
        SELECT chunk_id, term, tf, doc_len
        FROM kb_bm25_postings
        WHERE term IN (SELECT term FROM qterms)
          AND doc NOT IN (SELECT doc FROM kb_bm25_dead)
    ),
    dfs AS MATERIALIZED (
        SELECT term, count(*) AS df FROM hits GROUP BY term
    )
    SELECT hits.chunk_id,
           sum(log((((stats.num_docs - df) + 0.5) / (df + 0.5)) + 1)
               * ((tf * (1.2 + 1)) / (tf + (1.2 * ((1 - 0.75) + (0.75 * (doc_len / stats.avgdl))))))) AS score,
           min(df) / stats.num_docs AS rarest_df_ratio,
           any_value(q.query_idf) AS query_idf
    FROM hits JOIN dfs USING (term) CROSS JOIN stats
    CROSS JOIN (SELECT sum(log((((s.num_docs - d.df) + 0.5) / (d.df + 0.5)) + 1)) AS query_idf
                FROM dfs d CROSS JOIN stats s) q
    GROUP BY hits.chunk_id, stats.num_docs;

-- kb_bm25_token_df(q) -> (token, df, n_docs) for each distinct query token: feeds query entropy.
CREATE OR REPLACE MACRO kb_bm25_token_df(q) AS TABLE
    WITH toks AS (
        SELECT DISTINCT t, hash(stem(t, 'porter')) AS term
        FROM (SELECT unnest(bm25_tokens(q)) AS t) WHERE len(t) > 0
    )
    SELECT toks.t AS token,
           (SELECT count(*) FROM kb_bm25_postings p
            WHERE p.term = toks.term AND p.doc NOT IN (SELECT doc FROM kb_bm25_dead)) AS df,
           (SELECT count(*) FROM kb_bm25_docs) AS n_docs
    FROM toks;

-- kb_search_hits(p_query, p_vec_ids, p_vec_sims, p_qvec, p_model, p_k, p_entropy, p_sources, p_tags,
--                p_caller_agent, p_caller_session)
-- Hybrid search over chunks of active documents the caller may see: a document has an owner, a scope
-- and a sensitivity like a memory, and can_see decides (10_scope.sql). Steps as in recall_hits:
--   eligible   chunks of visible active documents, optionally only from p_sources (any) with all p_tags
--   bm / vec   the two arms, each ranked among eligible chunks, top keyword_pool / vector_pool;
--              vec is given by the caller (p_vec_ids/p_vec_sims, an exact in-process scan) or
--              computed here exactly over kb_vectors of model p_model (other models: left out)
--   fused      quality-weighted RRF, the same formula and gate as recall_hits
--   score      rrf_score × kb_weight, kb_weight = importance_floor + (1 - importance_floor) × kb_importance:
--              a chunk scores like a fresh memory of importance kb_importance (default 0.5), so
--              memory and knowledge-base hits can be merged into one list by score.
--   p_query    segmented query text; p_vec_ids '[uuid, …]' text or NULL, p_vec_sims '[0.8, …]' or NULL;
--   p_qvec     '[f, …]' text or NULL; p_sources, p_tags VARCHAR[] or NULL.
-- Returns the top p_k chunks with their document's source, path, title and tags and the explain columns.
CREATE OR REPLACE MACRO kb_search_hits(p_query, p_vec_ids, p_vec_sims, p_qvec, p_model, p_k, p_entropy,
                                       p_sources, p_tags, p_caller_agent, p_caller_session) AS TABLE
WITH
    cfg AS MATERIALIZED (
        SELECT r.*, 1.0::DOUBLE AS keyword_weight,
               vector_arm_weight(p_entropy, r.vector_weight_low, r.vector_weight_high) AS vector_weight,
               r.importance_floor + (1 - r.importance_floor) * coalesce(setting('kb_importance'), 0.5) AS kb_weight
        FROM ranking_settings() r
    ),
    eligible AS (
        SELECT c.id
        FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
        WHERE d.status = 'active'
          AND can_see(d.scope, d.agent_id, d.team_id, d.tenant_id, NULL, d.tags, d.sensitivity,
                      p_caller_agent, p_caller_session)
          AND (p_sources IS NULL OR list_contains(p_sources, d.source))
          AND (p_tags IS NULL OR list_has_all(d.tags, p_tags))
    ),
    bm AS MATERIALIZED (
        SELECT s.chunk_id, s.score AS bm25_score, s.rarest_df_ratio, s.query_idf,
               row_number() OVER (ORDER BY s.score DESC, s.chunk_id) AS bm25_rank
        FROM kb_bm25_scores(p_query) s
        WHERE s.chunk_id IN (SELECT id FROM eligible)
        QUALIFY bm25_rank <= (SELECT keyword_pool FROM cfg)
    ),
    vec_given AS (
        SELECT unnest(CAST(p_vec_ids AS VARCHAR)::UUID[]) AS chunk_id,
               unnest(CAST(p_vec_sims AS VARCHAR)::DOUBLE[]) AS similarity
        WHERE p_vec_ids IS NOT NULL
    ),
    vec_exact AS (
        SELECT v.chunk_id, list_inner_product(v.vector, CAST(p_qvec AS VARCHAR)::FLOAT[]) AS similarity
        FROM kb_vectors v
        WHERE p_qvec IS NOT NULL AND p_vec_ids IS NULL AND v.model_id = p_model
    ),
    vec AS MATERIALIZED (
        SELECT x.chunk_id, x.similarity,
               row_number() OVER (ORDER BY x.similarity DESC, x.chunk_id) AS vec_rank
        FROM (SELECT * FROM vec_given UNION ALL SELECT * FROM vec_exact) x
        WHERE x.chunk_id IN (SELECT id FROM eligible)
        QUALIFY vec_rank <= (SELECT vector_pool FROM cfg)
    ),
    fused AS (
        SELECT coalesce(b.chunk_id, v.chunk_id) AS chunk_id,
               b.bm25_rank, b.bm25_score, b.rarest_df_ratio, v.vec_rank, v.similarity,
               cfg.keyword_weight, cfg.vector_weight, cfg.kb_weight,
               pow(least(b.bm25_score / b.query_idf, 1), cfg.keyword_score_power) AS keyword_quality,
               pow(least(greatest(v.similarity - cfg.vector_min_similarity, 0)
                         / (cfg.vector_strong_similarity - cfg.vector_min_similarity), 1),
                   cfg.vector_score_power) AS vector_quality,
               cfg.keyword_weight * rrf(b.bm25_rank, cfg.rrf_k) * coalesce(keyword_quality, 0)
                 + cfg.vector_weight * rrf(v.vec_rank, cfg.rrf_k) * coalesce(vector_quality, 0) AS rrf_score,
               CASE
                   WHEN v.chunk_id IS NULL AND b.rarest_df_ratio > cfg.gate_df_ratio AND EXISTS (SELECT 1 FROM vec)
                       THEN 'dropped: only common keywords'
                   WHEN b.chunk_id IS NULL AND v.similarity < cfg.vector_min_similarity THEN 'dropped: weak meaning match'
                   ELSE 'kept'
               END AS gate
        FROM bm b FULL OUTER JOIN vec v ON b.chunk_id = v.chunk_id
        CROSS JOIN cfg
    ),
    top AS (
        SELECT f.*, f.rrf_score * f.kb_weight AS score
        FROM fused f
        WHERE f.gate = 'kept' AND f.rrf_score > 0
        ORDER BY score DESC, f.chunk_id
        LIMIT p_k
    )
SELECT top.* EXCLUDE (chunk_id), c.*, d.source, d.path, d.title, d.tags
FROM top
JOIN kb_chunks c ON c.id = top.chunk_id
JOIN kb_documents d ON d.id = c.document_id
ORDER BY top.score DESC, c.id;

-- kb_stale_vectors: chunks of active documents with no vector from the store's current model.
-- (Scalar subqueries, not a cross join: an exported cross-join-then-left-join view does not import.)
CREATE OR REPLACE VIEW kb_stale_vectors AS
    SELECT c.id AS chunk_id, c.document_id, v.model_id AS vector_model,
           (SELECT value FROM store_info WHERE name = 'embedding_model') AS current_model
    FROM kb_chunks c
    JOIN kb_documents d ON d.id = c.document_id AND d.status = 'active'
    LEFT JOIN kb_vectors v ON v.chunk_id = c.id
    WHERE (SELECT value FROM store_info WHERE name = 'embedding_model') IS NOT NULL
      AND (v.model_id IS NULL OR v.model_id <> (SELECT value FROM store_info WHERE name = 'embedding_model'));
COMMENT ON VIEW kb_stale_vectors IS 'Knowledge-base chunks to re-embed (kb_reembed): no vector from the store''s current embedding model';

-- kb_overview: one row per active document with its chunk counts, for analysts and kb_documents().
CREATE OR REPLACE VIEW kb_overview AS
    SELECT d.id, d.source, d.path, d.title, d.tags, d.size, d.content_hash, d.added_at, d.updated_at, d.status,
           d.agent_id, d.scope, d.team_id, d.tenant_id, d.sensitivity,
           count(c.id) AS chunks, count(c.id) FILTER (WHERE c.flagged) AS flagged_chunks
    FROM kb_documents d LEFT JOIN kb_chunks c ON c.document_id = d.id
    WHERE d.status = 'active'
    GROUP BY ALL;
COMMENT ON VIEW kb_overview IS 'Active knowledge-base documents with their number of chunks and of flagged chunks';
