-- 40_recall: hybrid recall as one table macro, so an agent (through Python) and an analyst (in SQL)
-- get the same ranking. Steps (SPEC R1-R11):
--   eligible   rows the caller may see (can_see) and asked for (filters); superseded hidden unless asked
--   bm         BM25 over bm25_postings, ranked among eligible rows, top keyword_pool
--   vec        vector candidates, ranked among eligible rows, top vector_pool: either given by the
--              caller (p_vec_ids/p_vec_sims, an exact in-process scan) or computed here exactly
--              from memory_vectors for p_qvec / p_model (rows of another model are left out)
--   fused      RRF, weighted by arm and by how good each arm's match is:
--                1 × rrf(bm25_rank) × min(bm25_score / query_idf, 1)^keyword_score_power
--              + vector_arm_weight(p_entropy) × rrf(vec_rank)
--                × clamp((similarity - vector_min_similarity) / (vector_strong_similarity - vector_min_similarity))^vector_score_power
--              Plain RRF (powers 0) gives the best-ranked candidate of a weak arm full credit: on
--              LoCoMo (3 conversations) hybrid R@10 was 0.66 against BM25's 0.74.
--   gate       drop keyword-only candidates matched only on common terms (rarest df/N > gate_df_ratio)
--              unless the vector arm is empty (no model, or all vectors stale)
--              and vector-only candidates below vector_min_similarity
--   score      fused × (floor + (1 - floor) × effective importance) × archived weight × feedback weight
--
-- recall_hits(p_query, p_vec_ids, p_vec_sims, p_qvec, p_model, p_caller_agent, p_caller_session, p_k,
--             p_entropy, p_types, p_tiers, p_tags, p_entities, p_since, p_until, p_session,
--             p_include_superseded, p_now)
--   p_query       segmented query text (echo_duck.text.segment_for_index)
--   p_vec_ids     '[uuid, …]' text or NULL; p_vec_sims '[0.8, …]' text (same order) or NULL
--   p_qvec        '[f, …]' query embedding text or NULL (no vector arm when both are NULL)
--   p_types, p_tiers, p_tags (all required), p_entities (any) VARCHAR[] or NULL; p_since/p_until TIMESTAMP
--   or NULL on coalesce(observed_at, created_at); p_session: only memories from that source session
-- Returns the top p_k rows with every memories column plus the explain columns.
CREATE OR REPLACE MACRO recall_hits(p_query, p_vec_ids, p_vec_sims, p_qvec, p_model, p_caller_agent,
                                    p_caller_session, p_k, p_entropy, p_types, p_tiers, p_tags, p_entities,
                                    p_since, p_until, p_session, p_include_superseded, p_now) AS TABLE
WITH
    cfg AS MATERIALIZED (
        SELECT r.*, 1.0::DOUBLE AS keyword_weight,
               vector_arm_weight(p_entropy, r.vector_weight_low, r.vector_weight_high) AS vector_weight
        FROM ranking_settings() r
    ),
    eligible AS (
        SELECT m.id
        FROM memories m
        WHERE (m.status = 'active' OR (p_include_superseded AND m.status = 'superseded'))
          AND can_see(m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags,
                      p_caller_agent, p_caller_session)
          AND (p_types IS NULL OR list_contains(p_types, m.type))
          AND (p_tiers IS NULL OR list_contains(p_tiers, m.tier))
          AND (p_tags IS NULL OR list_has_all(m.tags, p_tags))
          AND (p_entities IS NULL OR list_has_any(m.entities, p_entities))
          AND (p_since IS NULL OR coalesce(m.observed_at, m.created_at) >= p_since)
          AND (p_until IS NULL OR coalesce(m.observed_at, m.created_at) <= p_until)
          AND (p_session IS NULL OR m.source_session = p_session)
    ),
    bm AS MATERIALIZED (
        SELECT s.memory_id, s.score AS bm25_score, s.rarest_df_ratio, s.query_idf,
               row_number() OVER (ORDER BY s.score DESC, s.memory_id) AS bm25_rank
        FROM bm25_scores(p_query) s
        WHERE s.memory_id IN (SELECT id FROM eligible)
        QUALIFY bm25_rank <= (SELECT keyword_pool FROM cfg)
    ),
    vec_given AS (
        SELECT unnest(CAST(p_vec_ids AS VARCHAR)::UUID[]) AS memory_id,
               unnest(CAST(p_vec_sims AS VARCHAR)::DOUBLE[]) AS similarity
        WHERE p_vec_ids IS NOT NULL
    ),
    vec_exact AS (
        SELECT v.memory_id, list_inner_product(v.vector, CAST(p_qvec AS VARCHAR)::FLOAT[]) AS similarity
        FROM memory_vectors v
        WHERE p_qvec IS NOT NULL AND p_vec_ids IS NULL AND v.model_id = p_model
    ),
    vec AS MATERIALIZED (
        SELECT x.memory_id, x.similarity,
               row_number() OVER (ORDER BY x.similarity DESC, x.memory_id) AS vec_rank
        FROM (SELECT * FROM vec_given UNION ALL SELECT * FROM vec_exact) x
        WHERE x.memory_id IN (SELECT id FROM eligible)
        QUALIFY vec_rank <= (SELECT vector_pool FROM cfg)
    ),
    fused AS (
        SELECT coalesce(b.memory_id, v.memory_id) AS memory_id,
               b.bm25_rank, b.bm25_score, b.rarest_df_ratio, v.vec_rank, v.similarity,
               cfg.keyword_weight, cfg.vector_weight,
               pow(least(b.bm25_score / b.query_idf, 1), cfg.keyword_score_power) AS keyword_quality,
               pow(least(greatest(v.similarity - cfg.vector_min_similarity, 0)
                         / (cfg.vector_strong_similarity - cfg.vector_min_similarity), 1),
                   cfg.vector_score_power) AS vector_quality,
               cfg.keyword_weight * rrf(b.bm25_rank, cfg.rrf_k) * coalesce(keyword_quality, 0)
                 + cfg.vector_weight * rrf(v.vec_rank, cfg.rrf_k) * coalesce(vector_quality, 0) AS rrf_score,
               CASE
                   -- only when the vector arm ran and could have vouched for it
                   WHEN v.memory_id IS NULL AND b.rarest_df_ratio > cfg.gate_df_ratio AND EXISTS (SELECT 1 FROM vec)
                       THEN 'dropped: only common keywords'
                   WHEN b.memory_id IS NULL AND v.similarity < cfg.vector_min_similarity THEN 'dropped: weak meaning match'
                   ELSE 'kept'
               END AS gate
        FROM bm b FULL OUTER JOIN vec v ON b.memory_id = v.memory_id
        CROSS JOIN cfg
    ),
    weighed AS (
        SELECT f.*, m.*,
               effective_importance(m.importance, m.type, m.pinned, m.access_count,
                                    coalesce(m.last_accessed, m.created_at), p_now, cfg.decay_days) AS effective_importance,
               CASE WHEN m.tier = 'archival' THEN cfg.archived_weight ELSE 1.0 END AS tier_weight,
               pow(1 - cfg.unhelpful_penalty, greatest(m.unhelpful_count - m.helpful_count, 0)) AS feedback_weight,
               cfg.importance_floor
        FROM fused f JOIN memories m ON m.id = f.memory_id CROSS JOIN cfg
        WHERE f.gate = 'kept'
    ),
    scored AS (
        SELECT w.* EXCLUDE (importance_floor),
               w.importance_floor + (1 - w.importance_floor) * w.effective_importance AS decay_factor,
               w.rrf_score * (w.importance_floor + (1 - w.importance_floor) * w.effective_importance)
                   * w.tier_weight * w.feedback_weight AS score
        FROM weighed w
    ),
    top AS (
        SELECT * FROM scored ORDER BY score DESC, id LIMIT p_k
    ),
    conflicts AS (
        SELECT side AS id, list(other ORDER BY detected_at) AS conflicts_with
        FROM (SELECT memory_a AS side, memory_b AS other, detected_at FROM contradictions WHERE status = 'pending'
              UNION ALL
              SELECT memory_b, memory_a, detected_at FROM contradictions WHERE status = 'pending')
        GROUP BY side
    )
SELECT top.* EXCLUDE (memory_id), conflicts.conflicts_with
FROM top LEFT JOIN conflicts ON conflicts.id = top.id
ORDER BY top.score DESC, top.id;
