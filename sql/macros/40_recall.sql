-- 40_recall: hybrid recall as one table macro, so an agent (through Python) and an analyst (in SQL)
-- get the same ranking. Steps (SPEC R1-R11):
--   candidates BM25 matches (bm25_scores) and vector candidates. recall_hits computes both here:
--              BM25 over bm25_postings, and the exact vector arm over memory_vectors for p_qvec /
--              p_model (rows of another model are left out), unless p_vec_ids/p_vec_sims are given.
--              The agent's recall (echo_duck/recall/hybrid.py) computes both arms in process, the same
--              formulas over in-memory copies, and ranks in process too (echo_duck/recall/eligibility.py
--              mirrors `eligible` below, echo_duck/recall/fusion.py the steps after it); only a filtered
--              recall inside a transaction calls recall_fused. Tests hold them all equal.
--              Without filters only the best 10 × keyword_pool BM25 matches go on (a common word
--              can match a third of the store; joining all of them to memories cost ~30 ms at 100k).
--   eligible   candidates the caller may see (can_see) and asked for (filters); superseded hidden
--              unless asked; each arm ranked among them, top keyword_pool / vector_pool kept
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
-- Four macros (a table macro may only call ones whose names sort before its own, see 10_memory_views):
-- exact_vector_candidates(...) the exact vector arm over the filtered, visible rows
-- keyword_candidates(q, all)   the keyword arm as recall_fused takes it (lists), from bm25_scores
-- recall_fused(...)            everything else, given both arms' candidates; what the agent runs
-- recall_hits(...)             the analysts' entry point: recall_fused over keyword_candidates and
--                              exact_vector_candidates (when no vector candidates are given)
--
-- recall_hits(p_query, p_vec_ids, p_vec_sims, p_qvec, p_model, p_caller_agent, p_caller_session, p_k,
--             p_entropy, p_types, p_tiers, p_tags, p_entities, p_since, p_until, p_session,
--             p_include_superseded, p_now)
--   p_query       segmented query text (echo_duck.text.segment.segment_for_index)
--   p_vec_ids     '[uuid, …]' text or NULL; p_vec_sims '[0.8, …]' text (same order) or NULL
--   p_qvec        '[f, …]' query embedding text or NULL (no vector arm when both are NULL)
--   p_types, p_tiers, p_tags (all required), p_entities (any) VARCHAR[] or NULL; p_since/p_until TIMESTAMP
--   or NULL on coalesce(observed_at, created_at); p_session: only memories from that source session
-- Returns the top p_k rows with every memories column plus the explain columns.
-- exact_vector_candidates(p_qvec, p_model, p_n, caller…, filters…) -> (memory_id, similarity): the p_n
-- nearest rows of model p_model among those the caller may see and asked for, by exact inner product
-- (vectors are unit length, so it is the cosine). The definition of the filtered in-process arm
-- (eligibility.py); run by a filtered recall inside a transaction, and by recall_hits.
CREATE OR REPLACE MACRO exact_vector_candidates(p_qvec, p_model, p_n, p_caller_agent, p_caller_session,
                                                p_caller_teams, p_caller_tenants, p_types, p_tiers, p_tags,
                                                p_entities, p_since, p_until, p_session, p_include_superseded) AS TABLE
    SELECT v.memory_id, list_inner_product(v.vector, CAST(p_qvec AS VARCHAR)::FLOAT[]) AS similarity
    FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
    WHERE v.model_id = p_model
      AND (m.status = 'active' OR (p_include_superseded AND m.status = 'superseded'))
      AND can_see_as(m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity,
                     p_caller_agent, p_caller_session, p_caller_teams, p_caller_tenants)
      AND (p_types IS NULL OR list_contains(p_types, m.type))
      AND (p_tiers IS NULL OR list_contains(p_tiers, m.tier))
      AND (p_tags IS NULL OR list_has_all(m.tags, p_tags))
      AND (p_entities IS NULL OR list_has_any(m.entities, p_entities))
      AND (p_since IS NULL OR coalesce(m.observed_at, m.created_at) >= p_since)
      AND (p_until IS NULL OR coalesce(m.observed_at, m.created_at) <= p_until)
      AND (p_session IS NULL OR m.source_session = p_session)
    ORDER BY similarity DESC, v.memory_id
    LIMIT p_n;

-- keyword_candidates(p_query, p_all) -> one row (ids UUID[], scores DOUBLE[], rarest DOUBLE[], query_idf,
-- query_spec): the BM25 matches in rank order (score, then id), as recall_fused takes them; all of them
-- when p_all, else the best 10 × keyword_pool (recall.py cuts the agent's in-process arm at the same
-- rank). Lists are NULL when nothing matches.
CREATE OR REPLACE MACRO keyword_candidates(p_query, p_all) AS TABLE
    WITH ranked AS (
        SELECT s.*, row_number() OVER (ORDER BY s.score DESC, s.memory_id) AS rnk
        FROM bm25_scores(p_query) s
    )
    SELECT list(memory_id ORDER BY rnk) AS ids, list(score ORDER BY rnk) AS scores,
           list(rarest_df_ratio ORDER BY rnk) AS rarest, any_value(query_idf) AS query_idf,
           any_value(query_spec) AS query_spec
    FROM ranked
    WHERE p_all OR rnk <= 10 * setting('keyword_pool');

-- recall_fused(p_kw_ids, p_kw_scores, p_kw_rarest, p_kw_idf, p_kw_spec, p_vec_ids, p_vec_sims, ...,
--              p_entropy, p_shape, ...): the keyword arm as keyword_candidates returns it (or the same
-- lists as '[…]' texts, which the agent's in-process arm binds); p_entropy fixes
-- the query's entropy; when NULL it is query_entropy(p_kw_spec, p_shape = '[stop, length, code]' from
-- text.query_shape).
CREATE OR REPLACE MACRO recall_fused(p_kw_ids, p_kw_scores, p_kw_rarest, p_kw_idf, p_kw_spec, p_vec_ids, p_vec_sims,
                                     p_caller_agent, p_caller_session,
                                     p_caller_teams, p_caller_tenants, p_k, p_entropy, p_shape, p_types, p_tiers,
                                     p_tags, p_entities, p_since, p_until, p_session, p_include_superseded,
                                     p_now) AS TABLE
WITH
    settings AS MATERIALIZED (SELECT * FROM ranking_settings()),
    keyword_arm AS (
        SELECT unnest(CAST(p_kw_ids AS UUID[])) AS memory_id,
               unnest(CAST(p_kw_scores AS DOUBLE[])) AS bm25_score,
               unnest(CAST(p_kw_rarest AS DOUBLE[])) AS rarest_df_ratio,
               CAST(p_kw_idf AS DOUBLE) AS query_idf
        WHERE p_kw_ids IS NOT NULL
    ),
    cfg AS MATERIALIZED (
        SELECT r.*, 1.0::DOUBLE AS keyword_weight, e.entropy,
               vector_arm_weight(e.entropy, r.vector_weight_low, r.vector_weight_high) AS vector_weight
        FROM settings r,
             (SELECT coalesce(p_entropy,
                              query_entropy(coalesce(CAST(p_kw_spec AS DOUBLE), 0.5),
                                            (CAST(p_shape AS VARCHAR)::DOUBLE[])[1], (CAST(p_shape AS VARCHAR)::DOUBLE[])[2],
                                            (CAST(p_shape AS VARCHAR)::DOUBLE[])[3]),
                              0.5) AS entropy) e
    ),
    vector_arm AS (
        SELECT unnest(CAST(p_vec_ids AS VARCHAR)::UUID[]) AS memory_id,
               unnest(CAST(p_vec_sims AS VARCHAR)::DOUBLE[]) AS similarity
        WHERE p_vec_ids IS NOT NULL
    ),
    candidates AS MATERIALIZED (
        SELECT coalesce(k.memory_id, v.memory_id) AS memory_id, k.bm25_score, k.rarest_df_ratio, k.query_idf,
               v.similarity
        FROM keyword_arm k FULL OUTER JOIN vector_arm v ON k.memory_id = v.memory_id
    ),
    -- Candidates the caller may see and asked for, with what scoring needs, ranked within each arm.
    eligible AS MATERIALIZED (
        SELECT c.*, m.type, m.tier, m.importance, m.pinned, m.access_count, m.last_accessed, m.created_at,
               m.helpful_count, m.unhelpful_count,
               CASE WHEN c.bm25_score IS NOT NULL THEN row_number() OVER (
                   PARTITION BY c.bm25_score IS NULL ORDER BY c.bm25_score DESC, c.memory_id) END AS bm25_rank,
               CASE WHEN c.similarity IS NOT NULL THEN row_number() OVER (
                   PARTITION BY c.similarity IS NULL ORDER BY c.similarity DESC, c.memory_id) END AS vec_rank
        FROM candidates c JOIN memories m ON m.id = c.memory_id
        WHERE (m.status = 'active' OR (p_include_superseded AND m.status = 'superseded'))
          AND can_see_as(m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity,
                         p_caller_agent, p_caller_session, p_caller_teams, p_caller_tenants)
          AND (p_types IS NULL OR list_contains(p_types, m.type))
          AND (p_tiers IS NULL OR list_contains(p_tiers, m.tier))
          AND (p_tags IS NULL OR list_has_all(m.tags, p_tags))
          AND (p_entities IS NULL OR list_has_any(m.entities, p_entities))
          AND (p_since IS NULL OR coalesce(m.observed_at, m.created_at) >= p_since)
          AND (p_until IS NULL OR coalesce(m.observed_at, m.created_at) <= p_until)
          AND (p_session IS NULL OR m.source_session = p_session)
    ),
    pooled AS (
        SELECT e.* EXCLUDE (bm25_rank, bm25_score, vec_rank, similarity),
               CASE WHEN e.bm25_rank <= cfg.keyword_pool THEN e.bm25_rank END AS bm25_rank,
               CASE WHEN e.bm25_rank <= cfg.keyword_pool THEN e.bm25_score END AS bm25_score,
               CASE WHEN e.vec_rank <= cfg.vector_pool THEN e.vec_rank END AS vec_rank,
               CASE WHEN e.vec_rank <= cfg.vector_pool THEN e.similarity END AS similarity,
               (SELECT count(*) > 0 FROM eligible WHERE vec_rank IS NOT NULL) AS vector_arm_ran
        FROM eligible e, cfg
        WHERE e.bm25_rank <= cfg.keyword_pool OR e.vec_rank <= cfg.vector_pool
    ),
    fused AS (
        SELECT p.*, cfg.keyword_weight, cfg.vector_weight, cfg.entropy,
               pow(least(p.bm25_score / p.query_idf, 1), cfg.keyword_score_power) AS keyword_quality,
               pow(least(greatest(p.similarity - cfg.vector_min_similarity, 0)
                         / (cfg.vector_strong_similarity - cfg.vector_min_similarity), 1),
                   cfg.vector_score_power) AS vector_quality,
               cfg.keyword_weight * rrf(p.bm25_rank, cfg.rrf_k) * coalesce(keyword_quality, 0)
                 + cfg.vector_weight * rrf(p.vec_rank, cfg.rrf_k) * coalesce(vector_quality, 0) AS rrf_score,
               CASE
                   -- only when the vector arm ran and could have vouched for it
                   WHEN p.vec_rank IS NULL AND p.rarest_df_ratio > cfg.gate_df_ratio AND p.vector_arm_ran
                       THEN 'dropped: only common keywords'
                   WHEN p.bm25_rank IS NULL AND p.similarity < cfg.vector_min_similarity THEN 'dropped: weak meaning match'
                   ELSE 'kept'
               END AS gate,
               effective_importance(p.importance, p.type, p.pinned, p.access_count,
                                    coalesce(p.last_accessed, p.created_at), p_now, cfg.decay_days) AS effective_importance,
               CASE WHEN p.tier = 'archival' THEN cfg.archived_weight ELSE 1.0 END AS tier_weight,
               pow(1 - cfg.unhelpful_penalty, greatest(p.unhelpful_count - p.helpful_count, 0)) AS feedback_weight,
               cfg.importance_floor
        FROM pooled p, cfg
    ),
    top AS MATERIALIZED (
        SELECT f.memory_id, f.bm25_rank, f.bm25_score, f.rarest_df_ratio, f.vec_rank, f.similarity,
               f.keyword_weight, f.vector_weight, f.entropy, f.keyword_quality, f.vector_quality, f.rrf_score, f.gate,
               f.effective_importance, f.tier_weight, f.feedback_weight,
               f.importance_floor + (1 - f.importance_floor) * f.effective_importance AS decay_factor,
               f.rrf_score * (f.importance_floor + (1 - f.importance_floor) * f.effective_importance)
                   * f.tier_weight * f.feedback_weight AS score
        FROM fused f
        WHERE f.gate = 'kept'
        ORDER BY score DESC, f.memory_id
        LIMIT p_k
    ),
    conflicts AS (
        SELECT side AS id, list(other ORDER BY detected_at, other) AS conflicts_with
        -- pending ones, and ones settled by recency that nobody reviewed (the hit replaced a conflicting claim)
        FROM (SELECT memory_a AS side, memory_b AS other, detected_at FROM contradictions
              WHERE status = 'pending' OR resolution = 'newer'
              UNION ALL
              SELECT memory_b, memory_a, detected_at FROM contradictions WHERE status = 'pending' OR resolution = 'newer')
        GROUP BY side
    )
-- Only the k winners fetch every column of their memory row.
SELECT top.* EXCLUDE (memory_id), m.*, conflicts.conflicts_with
FROM top JOIN memories m ON m.id = top.memory_id
LEFT JOIN conflicts ON conflicts.id = top.memory_id
ORDER BY top.score DESC, m.id;

CREATE OR REPLACE MACRO recall_hits(p_query, p_vec_ids, p_vec_sims, p_qvec, p_model, p_caller_agent,
                                    p_caller_session, p_k, p_entropy, p_types, p_tiers, p_tags, p_entities,
                                    p_since, p_until, p_session, p_include_superseded, p_now) AS TABLE
    WITH g AS MATERIALIZED (SELECT * FROM caller_groups(p_caller_agent)),
    kw AS MATERIALIZED (
        SELECT * FROM keyword_candidates(p_query, p_types IS NOT NULL OR p_tiers IS NOT NULL OR p_tags IS NOT NULL
                                                  OR p_entities IS NOT NULL OR p_since IS NOT NULL
                                                  OR p_until IS NOT NULL OR p_session IS NOT NULL)
    ),
    exact AS MATERIALIZED (
        SELECT list(memory_id ORDER BY similarity DESC, memory_id)::VARCHAR AS ids,
               list(similarity ORDER BY similarity DESC, memory_id)::VARCHAR AS sims
        FROM exact_vector_candidates(p_qvec, p_model, 1000, p_caller_agent, p_caller_session,
                                     (SELECT teams FROM g), (SELECT tenants FROM g), p_types, p_tiers, p_tags,
                                     p_entities, p_since, p_until, p_session, p_include_superseded)
        WHERE p_vec_ids IS NULL AND p_qvec IS NOT NULL
    )
    SELECT * FROM recall_fused((SELECT ids FROM kw), (SELECT scores FROM kw), (SELECT rarest FROM kw),
                               (SELECT query_idf FROM kw), (SELECT query_spec FROM kw),
                               coalesce(p_vec_ids, (SELECT ids FROM exact)),
                               coalesce(p_vec_sims, (SELECT sims FROM exact)), p_caller_agent, p_caller_session,
                               (SELECT teams FROM g), (SELECT tenants FROM g), p_k, p_entropy, NULL, p_types, p_tiers,
                               p_tags, p_entities, p_since, p_until, p_session, p_include_superseded, p_now);

-- eligibility_rows() -> per memory, the columns recall_fused's eligible step reads (status, can_see_as,
-- the filters, effective_importance, tier and feedback weights), for the in-process copy
-- (echo_duck/recall/eligibility.py): texts it compares as they are, the rest as the operands of those formulas.
CREATE OR REPLACE MACRO eligibility_rows() AS TABLE
    SELECT id::VARCHAR AS id, row_version, status, scope, agent_id, team_id, tenant_id, source_session,
           list_contains(tags, 'global') AS global_tag,
           another_agent_may_see(sensitivity, tags) AS another_agent_may_see,
           type IN ('user', 'procedure') OR pinned AS exempt,
           tier = 'archival' AS archival, importance, access_count::BIGINT AS access_count,
           epoch_us(coalesce(last_accessed, created_at)) AS last_touch_us,
           (unhelpful_count - helpful_count)::BIGINT AS net_unhelpful,
           type, tier, epoch_us(coalesce(observed_at, created_at)) AS at_us, tags, entities
    FROM memories;
