-- 60_kb: knowledge-base search (SPEC M5). The same BM25 formula as 30_bm25 and the same fusion as
-- 40_recall, over the kb_* tables only: memories never appear here, and recall_hits never reads kb_*.

-- kb_bm25_scores(q) -> (chunk_id, score, rarest_df_ratio, query_idf, covered_idf, query_idf_all): bm25_scores
-- over kb_bm25_*. q is segmented text (echo_duck.text.segment.segment_for_index); log base 10, k1 1.2,
-- b 0.75, as fts; covered_idf and query_idf_all as in bm25_scores. p_docs: as bm25_scores' (NULL: every document).
CREATE OR REPLACE MACRO kb_bm25_scores(q, p_docs := NULL) AS TABLE
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
        SELECT doc, len FROM kb_bm25_docs WHERE p_docs IS NULL OR doc IN (SELECT unnest(CAST(p_docs AS BIGINT[])))
    ),
    stats AS MATERIALIZED (
        SELECT count(*) AS num_docs, sum(len) / count(len) AS avgdl FROM docs
    ),
    hits AS MATERIALIZED (
        SELECT chunk_id, term, tf, doc_len
        FROM kb_bm25_postings
        WHERE term IN (SELECT term FROM qterms)
          AND doc NOT IN (SELECT doc FROM kb_bm25_dead)
          AND (p_docs IS NULL OR doc IN (SELECT doc FROM docs))
    ),
    dfs AS MATERIALIZED (
        SELECT term, count(*) AS df FROM hits GROUP BY term
    )
    SELECT hits.chunk_id,
           sum(bm25_idf(stats.num_docs, df) * bm25_saturation(tf, doc_len, stats.avgdl)) AS score,
           min(df) / stats.num_docs AS rarest_df_ratio,
           any_value(q.query_idf) AS query_idf,
           sum(bm25_rsj(stats.num_docs, df)) AS covered_idf,
           any_value(q.query_info + (q.n_terms - q.n_found) * log((stats.num_docs + 0.5) / 0.5)) AS query_idf_all
    FROM hits JOIN dfs USING (term) CROSS JOIN stats
    CROSS JOIN (SELECT sum(bm25_idf(s.num_docs, d.df)) AS query_idf, sum(bm25_rsj(s.num_docs, d.df)) AS query_info,
                       count(*) AS n_found, any_value(c.n_terms) AS n_terms
                FROM dfs d CROSS JOIN stats s CROSS JOIN qcontent c) q
    GROUP BY hits.chunk_id, stats.num_docs;

-- kb_counted_chunks(caller_agent, caller_session) -> (id): the chunks a caller's search statistics count, those of
-- the documents it may see (can_see, any status), as counted_memories does for memories (10_scope.sql): the
-- BM25 document count, lengths and term frequencies (kb_keyword_bm25) and the query's similarity mean and spread
-- say nothing about another agent's private documents.
CREATE OR REPLACE MACRO kb_counted_chunks(p_caller_agent, p_caller_session) AS TABLE
    SELECT c.id
    FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
    WHERE can_see(d.scope, d.agent_id, d.team_id, d.tenant_id, NULL, d.tags, d.sensitivity,
                  p_caller_agent, p_caller_session);

-- kb_keyword_bm25(q, caller_agent, caller_session) -> kb_bm25_scores(q) over the chunks of kb_counted_chunks: only
-- they match, and their count, average length and each term's df make the scores.
CREATE OR REPLACE MACRO kb_keyword_bm25(q, p_caller_agent, p_caller_session) AS TABLE
    SELECT * FROM kb_bm25_scores(q, p_docs := (
        SELECT coalesce(list(b.doc), []) FROM kb_bm25_docs b  -- [] when none: no document counts
        WHERE b.chunk_id IN (SELECT id FROM kb_counted_chunks(p_caller_agent, p_caller_session))));

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

-- kb_search_hits(p_query, p_vec_ids, p_vec_sims, p_vec_stats, p_qvec, p_model, p_k, p_sources, p_tags,
--                p_caller_agent, p_caller_session)
-- Hybrid search over chunks of active documents the caller may see: a document has an owner, a scope
-- and a sensitivity like a memory, and can_see decides (10_scope.sql). Steps as in recall_fused:
--   eligible   chunks of visible active documents, optionally only from p_sources (any) with all p_tags
--   bm / vec   the two arms, each ranked among eligible chunks, top keyword_pool / vector_pool; BM25 is
--              kb_keyword_bm25, its statistics over the chunks the caller may see (kb_counted_chunks);
--              vec is given by the caller (p_vec_ids/p_vec_sims, an exact in-process scan) or
--              computed here exactly over kb_vectors of model p_model (other models: left out)
--   relevance  calibrated_score with script_credit, as recall_fused (the chunk's and the query's
--              content_script); z against the query's similarity over the chunk vectors of the model
--              of kb_counted_chunks (one script: documents rarely mix languages), from p_vec_stats
--              ([mean, sd, mean, sd], calibration_stats of the count, sum and sum of squares) or
--              computed here when the vectors are
--   bridge     + coverage_weight × bridge_coverage for a chunk the vector arm ranked in the other script than
--              the question, as recall_fused: its coverage of p_bridge (the question's dictionary
--              translations, echo_duck.text.bridge.bridged_query; NULL: none); the question's script is
--              p_query_script (text_script of the question as asked) or, when NULL, content_script(p_query)
--   gate       the same labels as recall_fused: the gated come after the kept
--   shared     as recall_fused's: half the p_k is kept for the caller's own kept chunks (as far as there are that
--              many), the rest goes to the host's documents first, then each other author's best; other authors'
--              chunks past it are ranked after the kept ('half the list is kept for your own'). The caller's own:
--              its agent id, and the host's mark when p_caller_host (an admin handle) and not else, since an agent
--              handle may carry the host's agent id
--   score      relevance × time_boost × kb_weight, kb_weight = importance_floor + (1 - importance_floor) ×
--              kb_importance: a chunk scores like a fresh memory of importance kb_importance (default 0.5), so
--              memory and knowledge-base hits can be merged into one list by score; time_boost is 1 +
--              time_weight for a chunk that states a time (states_time) when the question asks when
--              (p_asks_when), as recall_fused's, else 1 (a chunk has no observed time for a window).
--   p_query    segmented query text; p_vec_ids '[uuid, …]' text or NULL, p_vec_sims '[0.8, …]' or NULL;
--   p_qvec     '[f, …]' text or NULL; p_sources, p_tags VARCHAR[] or NULL.
-- Returns the top p_k chunks with their document's source, path, title and tags and the explain columns.
CREATE OR REPLACE MACRO kb_search_hits(p_query, p_vec_ids, p_vec_sims, p_vec_stats, p_qvec, p_model, p_k,
                                       p_sources, p_tags, p_caller_agent, p_caller_session, p_bridge := NULL,
                                       p_query_script := NULL, p_asks_when := NULL, p_caller_host := NULL) AS TABLE
WITH
    cfg AS MATERIALIZED (
        SELECT r.*, unnest(calibration_constants()),
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
        SELECT s.chunk_id, s.score AS bm25_score, s.rarest_df_ratio, s.covered_idf, s.query_idf_all,
               row_number() OVER (ORDER BY s.score DESC, s.chunk_id) AS bm25_rank
        FROM kb_keyword_bm25(p_query, p_caller_agent, p_caller_session) s
        WHERE s.chunk_id IN (SELECT id FROM eligible)
        QUALIFY bm25_rank <= (SELECT keyword_pool FROM cfg)
    ),
    vec_given AS (
        SELECT unnest(CAST(p_vec_ids AS VARCHAR)::UUID[]) AS chunk_id,
               unnest(CAST(p_vec_sims AS VARCHAR)::DOUBLE[]) AS similarity
        WHERE p_vec_ids IS NOT NULL
    ),
    vec_exact AS MATERIALIZED (
        SELECT v.chunk_id, list_inner_product(v.vector, CAST(p_qvec AS VARCHAR)::FLOAT[])::DOUBLE AS similarity
        FROM kb_vectors v
        WHERE p_qvec IS NOT NULL AND p_vec_ids IS NULL AND v.model_id = p_model
          AND v.chunk_id IN (SELECT id FROM kb_counted_chunks(p_caller_agent, p_caller_session))
    ),
    sums AS MATERIALIZED (
        SELECT count(*)::DOUBLE AS n, coalesce(sum(similarity), 0) AS total,
               coalesce(sum(similarity * similarity), 0) AS squares
        FROM vec_exact
    ),
    stats AS MATERIALIZED (
        SELECT coalesce(CAST(CAST(p_vec_stats AS VARCHAR) AS DOUBLE[]), calibration_stats(n, total, squares, 0, 0, 0)) AS st
        FROM sums
    ),
    vec_ranked AS MATERIALIZED (
        SELECT x.chunk_id, x.similarity, (x.similarity - st[1]) / st[2] AS similarity_z,
               row_number() OVER (ORDER BY x.similarity DESC, x.chunk_id) AS vec_rank
        FROM (SELECT * FROM vec_given UNION ALL SELECT * FROM vec_exact) x, stats
        WHERE x.chunk_id IN (SELECT id FROM eligible)
        QUALIFY vec_rank <= (SELECT vector_pool FROM cfg)
    ),
    vec AS MATERIALIZED (
        SELECT v.*, content_script(c.content) AS script
        FROM vec_ranked v JOIN kb_chunks c ON c.id = v.chunk_id
    ),
    arms AS MATERIALIZED (
        SELECT (SELECT max(bm25_score) FROM bm) AS bm25_max,
               (SELECT max(covered_idf) / any_value(query_idf_all) FROM bm) AS keyword_conf,
               (SELECT least(1, (max(similarity_z) - (list(similarity_z ORDER BY similarity_z DESC))[least(10, count(*))])
                                / any_value(cfg.gap_scale)) FROM vec, cfg) AS vector_conf,
               (SELECT max(similarity_z) FROM vec) AS z_top
    ),
    bridged AS MATERIALIZED (
        SELECT s.chunk_id, s.covered_idf / s.query_idf_all AS bridge_coverage
        FROM kb_keyword_bm25(coalesce(p_bridge, ''), p_caller_agent, p_caller_session) s
        WHERE p_bridge IS NOT NULL
    ),
    credited AS (
        SELECT v.*, script_credit(v.script, coalesce(p_query_script, content_script(p_query)), a.keyword_conf, v.similarity_z, a.z_top,
                                  cfg.coverage_weight) AS script_credit,
               CASE WHEN v.script <> coalesce(p_query_script, content_script(p_query)) THEN br.bridge_coverage END AS bridge_coverage
        FROM vec v LEFT JOIN bridged br ON br.chunk_id = v.chunk_id, arms a, cfg
    ),
    fused AS (
        SELECT coalesce(b.chunk_id, v.chunk_id) AS chunk_id,
               b.bm25_rank, b.bm25_score, b.rarest_df_ratio, v.vec_rank, v.similarity, a.keyword_conf, a.vector_conf,
               b.covered_idf / b.query_idf_all AS coverage, v.similarity_z, v.script_credit, v.bridge_coverage,
               cfg.kb_weight,
               calibrated_score(b.bm25_score, a.bm25_max, b.covered_idf, b.query_idf_all, a.keyword_conf,
                                v.similarity_z, a.vector_conf, cfg.coverage_weight, cfg.vector_weight,
                                v.script_credit)
                   + cfg.coverage_weight * coalesce(v.bridge_coverage, 0) AS relevance,
               CASE
                   WHEN v.chunk_id IS NULL AND b.rarest_df_ratio > cfg.gate_df_ratio AND EXISTS (SELECT 1 FROM vec)
                       THEN 'ranked last: only common keywords'
                   WHEN b.chunk_id IS NULL AND v.similarity < cfg.vector_min_similarity
                       THEN 'ranked last: weak meaning match'
                   ELSE 'kept'
               END AS gate
        FROM bm b FULL OUTER JOIN credited v ON b.chunk_id = v.chunk_id
        CROSS JOIN cfg CROSS JOIN arms a
    ),
    scored AS (
        SELECT f.* EXCLUDE (document_id), f.relevance * f.time_boost * f.kb_weight AS score,
               CASE WHEN d.agent_id = p_caller_agent AND coalesce(d.by_host, false) = coalesce(p_caller_host, false)
                    THEN p_caller_agent WHEN d.agent_id = p_caller_agent THEN d.agent_id || chr(0) ELSE d.agent_id
               END AS author,  -- the caller's agent id under the other mark is another author
               coalesce(d.by_host, false) AS host_document
        FROM (SELECT f.*, c.document_id, 1 + CASE WHEN CAST(p_asks_when AS BOOLEAN) AND states_time(c.content)
                                                  THEN cfg.time_weight ELSE 0 END AS time_boost
              FROM fused f JOIN kb_chunks c ON c.id = f.chunk_id CROSS JOIN cfg) f
        JOIN kb_documents d ON d.id = f.document_id
    ),
    -- recall_fused's shared step, a document counted under its owner: half the p_k, rounded up, is kept for the
    -- caller's own kept chunks as far as there are that many; the rest goes to the host's documents first
    -- (kb_documents.by_host), then each other author's best, then by score (a member's near-copies of the question
    -- took every place of a search and the host's document with them).
    shared AS (
        SELECT s.* EXCLUDE (author, host_document, own_kept, other_rank)
               REPLACE (CASE WHEN s.gate = 'kept' AND s.author <> p_caller_agent
                                  AND s.other_rank > p_k - least(s.own_kept, (p_k + 1) // 2)
                             THEN 'ranked last: half the list is kept for your own' ELSE s.gate END AS gate)
        FROM (SELECT t.* EXCLUDE (author_turn),
                     count(*) FILTER (WHERE t.gate = 'kept' AND t.author = p_caller_agent) OVER () AS own_kept,
                     row_number() OVER (PARTITION BY t.gate = 'kept' AND t.author <> p_caller_agent
                                        ORDER BY NOT t.host_document, NOT t.host_document AND t.author_turn > 1,
                                                 t.score DESC, t.chunk_id) AS other_rank
              FROM (SELECT sc.*, row_number() OVER (PARTITION BY sc.author, sc.gate = 'kept'
                                                    ORDER BY sc.score DESC, sc.chunk_id) AS author_turn
                    FROM scored sc) t) s
    ),
    top AS (
        SELECT * FROM shared f
        ORDER BY f.gate = 'kept' DESC, f.score DESC, f.chunk_id
        LIMIT p_k
    )
SELECT top.* EXCLUDE (chunk_id), c.*, d.source, d.path, d.title, d.tags, d.agent_id AS owner, d.scope,
       d.updated_at AS written_at, coalesce(d.by_host, false) AS by_host
FROM top
JOIN kb_chunks c ON c.id = top.chunk_id
JOIN kb_documents d ON d.id = c.document_id
ORDER BY top.gate = 'kept' DESC, top.score DESC, c.id;

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
           d.agent_id, d.scope, d.team_id, d.tenant_id, d.sensitivity, coalesce(d.by_host, false) AS by_host,
           count(c.id) AS chunks, count(c.id) FILTER (WHERE c.flagged) AS flagged_chunks
    FROM kb_documents d LEFT JOIN kb_chunks c ON c.document_id = d.id
    WHERE d.status = 'active'
    GROUP BY ALL;
COMMENT ON VIEW kb_overview IS 'Active knowledge-base documents with their number of chunks and of flagged chunks';
