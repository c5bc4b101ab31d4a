-- 40_recall: hybrid recall as one table macro, so an agent (through Python) and an analyst (in SQL)
-- get the same ranking. Steps (SPEC R1-R11):
--   candidates BM25 matches (keyword_bm25) and vector candidates. recall_hits computes both here:
--              BM25 over bm25_postings, and the exact vector arm over memory_vectors for p_qvec /
--              p_model (rows of another model are left out). The agent's recall
--              (echo_duck/recall/hybrid.py) computes both arms in process, the same formulas over
--              in-memory copies, and ranks in process too (echo_duck/recall/eligibility.py mirrors
--              `eligible` below, echo_duck/recall/fusion.py the steps after it); only a filtered recall
--              inside a transaction calls recall_fused. Tests hold them all equal. Without filters only
--              the best 10 × keyword_pool BM25 matches go on (a common word can match a third of the
--              store; joining all of them to memories cost ~30 ms at 100k).
--   eligible   candidates the caller may see (can_see) and asked for (filters); superseded hidden
--              unless asked; each arm ranked among them, top keyword_pool / vector_pool kept
--   relevance  calibrated_score (20_ranking.sql): each arm weighed by its own confidence, no ranks:
--                keyword_conf × bm25 / bm25_max + 0.5 × coverage + 0.2 × vector_conf × max(z, 0)
--              keyword_conf = the best coverage among the keyword candidates, coverage = covered_idf /
--              query_idf_all; z = (similarity - mean) / sd of this query's similarity over the stored
--              memories of the candidate's script (p_vec_stats, query_similarity_stats); vector_conf =
--              min(1, (best z - 10th best z) / 2). Rank fusion (RRF) gave a weak arm's first candidate
--              full credit; on LongMemEval the hybrid fell below its own vector arm.
--              A memory the vector arm ranked takes script_credit for the keyword terms when that is more:
--              the keyword arm cannot see a translation or a paraphrase, so a fact that answers the question
--              in other words is credited as if it matched as well as the keyword arm's best match, scaled
--              by z / the best z (both keyword terms in another script than the question's,
--              p_vec_query_script; the BM25 term in the same script).
--   bridge     + coverage_weight × bridge_coverage for a memory the vector arm ranked in the other script than
--              the question: the share of the information of the question's dictionary translations
--              (bm25_scores' covered_idf / query_idf_all over them) that it holds
--              (p_br_*: keyword_candidates over echo_duck.text.bridge.bridged_query(question); NULL: none).
--              "How does Mei take her coffee?" shares no word with "陈美每天早上喝一杯不加糖的黑咖啡", and
--              the model's cross-language similarities are weak; "咖啡" is what connects them.
--   time       × recency_boost: when the question asks for the current state (p_recency = the weight,
--              set by echo_duck/text/when.py wants_current), 1 + p_recency × (t - oldest) / (newest -
--              oldest) over the candidates, t = observed_at else created_at; superseded versions get none
--              (provenance outranks recency); × time_boost: 1 + time_weight when t falls in [p_time_from,
--              p_time_to), the time the question names (when.py time_window), × (1 + time_weight) more when
--              the question asks when (p_asks_when, when.py asks_when) and the memory states a time
--              (states_time: its answer has to say when). All soft, never filters.
--   gate       labels, not filters: keyword-only candidates matched only on common terms (rarest df/N >
--              gate_df_ratio, when the vector arm ran) and vector-only candidates below
--              vector_min_similarity are ranked after every other candidate, so a small store still
--              returns its best guess and lists are never cut short. Among the k winners, one whose pending
--              dispute is with a live, visible fact that stands against it in the caller's snapshot (the caller's own,
--              the host's, or one of higher provenance by its own author) is ranked after the kept too
--              ('disputed by a fact that stands'); half the list is kept for the caller's own kept
--              candidates when there are that many: other agents' past the rest are ranked after the kept
--              ('half the list is kept for your own')
--   session    a kept candidate with a source_session takes session_credit when that is more: follow_weight
--              (0.8) × the relevance of the nearest earlier kept candidate of the same owner (agent_id) and
--              session (observed time, then write time, then id). In a conversation the turn after a question holds its answer
--              ("What do you watch?" / "Music videos, mostly"), and shares few of the question's words.
--              Only candidates take part (what the caller may see and asked for), so no hidden memory moves
--              a visible one; only the owner's own, so another agent cannot ride on a relevant memory by
--              writing into its session. LoCoMo held-out R@10 +0.04, a blind chat set +0.06, LongMemEval -0.004.
--   update     on a question about the current state (p_recency), a kept candidate that states a change
--              (states_change: "sold the Golf and bought a Tesla", 冰箱换了) takes update_credit when that is more:
--              the own relevance of a kept, older candidate of the same owner and no higher provenance whose vector
--              (of p_upd_model; NULL: none) has an inner product of at least update_similarity (0.5) with its own.
--              Recency then ranks the newer first. Only candidates, only the owner's own.
--   asking     × asking_weight (0.7) for a memory that mostly asks (mostly_asks: "What kind of yoga is it?"): a
--              question is not its own answer, and the model puts it near a later question about the answer. Applied
--              to the score, so the turn after it still takes session_credit from its relevance.
--   score      relevance × recency_boost × time_boost × asking_weight × (floor + (1 - floor) × effective importance)
--              × archived weight × feedback weight; p_min_score (NULL: none) drops candidates whose
--              relevance is below it, for callers who want "nothing relevant"
--
-- Macros (a table macro may only call ones whose names sort before its own, see 10_memory_views):
-- exact_vector_candidates(...) the exact vector arm over the filtered, visible rows
-- keyword_bm25(q, caller…)     bm25_scores over the rows the caller may see (its statistics too)
-- keyword_common_words(...)    bm25_common_words over the same rows
-- keyword_candidates(q, all, caller…) the keyword arm as recall_fused takes it (lists), from keyword_bm25
-- query_similarity_stats(...)  a query's similarity mean and spread per script (p_vec_stats)
-- recall_fused(...)            everything else, given both arms' candidates; what the agent runs
-- recall_hits(...)             the analysts' entry point: recall_fused over keyword_candidates,
--                              exact_vector_candidates and query_similarity_stats
--
-- recall_hits(p_query, p_qvec, p_model, p_caller_agent, p_caller_session, p_k, p_recency, p_time_from,
--             p_time_to, p_types, p_tiers, p_tags, p_entities, p_since, p_until, p_session,
--             p_include_superseded, p_now, p_bridge := NULL, p_query_script := NULL, p_asks_when := NULL)
--   p_query       segmented query text (echo_duck.text.segment.segment_for_index)
--   p_qvec        '[f, …]' query embedding text or NULL (then no vector arm); p_model its model id. The
--                 agent's recall passes the question's vector less the model's direction of asking
--                 (echo_duck.embed.question_axis.as_question); pass the same to rank as it does
--   p_bridge      NULL, or the question's words in the other language, segmented
--                 (echo_duck.text.bridge.bridged_query): the agent's recall passes them
--   p_query_script 0 (Latin) or 1 (Han): the script of the question as asked (echo_duck.text.when.text_script),
--                 as the agent's recall reads it; NULL: content_script of p_query (the segmented text counts a
--                 Chinese word's sub-words too, so a question mixing scripts can read as Han)
--   p_recency     NULL, or the recency weight when the question asks for the current state
--   p_time_from/p_time_to  TIMESTAMP window the question names, or NULL
--   p_asks_when   NULL/false, or true when the question asks when (echo_duck.text.when.asks_when)
--   p_types, p_tiers, p_tags (all required), p_entities (any) VARCHAR[] or NULL; p_since/p_until TIMESTAMP
--   or NULL on coalesce(observed_at, created_at); p_session: only memories from that source session
-- Returns the top p_k rows with every memories column plus the explain columns.

-- exact_vector_candidates(p_qvec, p_model, p_n, caller…, filters…) -> (memory_id, similarity, script): the
-- p_n nearest rows of model p_model among those the caller may see and asked for, by exact inner product
-- (vectors are unit length, so it is the cosine), with the script of each (content_script). The
-- definition of the filtered in-process arm (eligibility.py); run by a filtered recall inside a
-- transaction, and by recall_hits.
CREATE OR REPLACE MACRO exact_vector_candidates(p_qvec, p_model, p_n, p_caller_agent, p_caller_session,
                                                p_caller_teams, p_caller_tenants, p_types, p_tiers, p_tags,
                                                p_entities, p_since, p_until, p_session, p_include_superseded) AS TABLE
    SELECT v.memory_id, list_inner_product(v.vector, CAST(p_qvec AS VARCHAR)::FLOAT[]) AS similarity,
           content_script(m.content) AS script
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

-- keyword_bm25(q, caller…) -> bm25_scores(q) as one caller's recall computes it: over the documents of
-- counted_memories (10_scope.sql), the rows the caller may see, so the document count, average length and
-- each term's df, and with them every score and weight, say nothing about memories the caller cannot see.
-- Only those rows match. (bm25_scores is the same over every document: the analyst's view of the store.)
CREATE OR REPLACE MACRO keyword_bm25(q, p_caller_agent, p_caller_session, p_caller_teams, p_caller_tenants) AS TABLE
    SELECT * FROM bm25_scores(q, p_docs := (
        SELECT coalesce(list(d.doc), []) FROM bm25_docs d  -- [] when none: no document counts (NULL would be all)
        WHERE d.memory_id IN (SELECT id FROM counted_memories(p_caller_agent, p_caller_session, p_caller_teams,
                                                              p_caller_tenants))));

-- keyword_common_words(q, caller…) -> (word): bm25_common_words as one caller's recall counts it, over the
-- documents of counted_memories: the words of q that more than half of them hold, sorted.
CREATE OR REPLACE MACRO keyword_common_words(q, p_caller_agent, p_caller_session, p_caller_teams,
                                             p_caller_tenants) AS TABLE
    SELECT * FROM bm25_common_words(q, p_docs := (
        SELECT coalesce(list(d.doc), []) FROM bm25_docs d  -- [] when none: no document counts (NULL would be all)
        WHERE d.memory_id IN (SELECT id FROM counted_memories(p_caller_agent, p_caller_session, p_caller_teams,
                                                              p_caller_tenants))));

-- keyword_candidates(p_query, p_all, caller…) -> one row (ids UUID[], scores DOUBLE[], rarest DOUBLE[], covered
-- DOUBLE[], query_idf_all): the caller's BM25 matches (keyword_bm25) in rank order (score, then id), as
-- recall_fused takes them; all of them when p_all, else the best 10 × keyword_pool (recall.py cuts the agent's
-- in-process arm at the same rank). Lists are NULL when nothing matches.
CREATE OR REPLACE MACRO keyword_candidates(p_query, p_all, p_caller_agent, p_caller_session, p_caller_teams,
                                           p_caller_tenants) AS TABLE
    WITH ranked AS (
        SELECT s.*, row_number() OVER (ORDER BY s.score DESC, s.memory_id) AS rnk
        FROM keyword_bm25(p_query, p_caller_agent, p_caller_session, p_caller_teams, p_caller_tenants) s
    )
    SELECT list(memory_id ORDER BY rnk) AS ids, list(score ORDER BY rnk) AS scores,
           list(rarest_df_ratio ORDER BY rnk) AS rarest, list(covered_idf ORDER BY rnk) AS covered,
           any_value(query_idf_all) AS query_idf_all
    FROM ranked
    WHERE p_all OR rnk <= 10 * setting('keyword_pool');

-- query_similarity_stats(p_qvec, p_model, caller…) -> one row, stats DOUBLE[4] = [mean_0, sd_0, mean_1, sd_1]: the
-- query's cosine similarity over the stored vectors of model p_model of the memories the caller's statistics
-- count (counted_memories), per script of the memory (0 Latin, 1 Han), through calibration_stats (each script
-- leans on all those rows, a small store on a prior). What recall_fused's p_vec_stats means. The agent's recall
-- gets the same sums from the int8 first pass its vector scan already makes (exact below 16,384 rows; within
-- ~1e-3 above).
CREATE OR REPLACE MACRO query_similarity_stats(p_qvec, p_model, p_caller_agent, p_caller_session, p_caller_teams,
                                               p_caller_tenants) AS TABLE
    WITH sims AS (
        SELECT content_script(m.content) AS script,
               list_inner_product(v.vector, CAST(p_qvec AS VARCHAR)::FLOAT[])::DOUBLE AS similarity
        FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
        WHERE v.model_id = p_model
          AND m.id IN (SELECT id FROM counted_memories(p_caller_agent, p_caller_session, p_caller_teams,
                                                       p_caller_tenants))
    ),
    sums AS (
        SELECT count(*) FILTER (WHERE script = 0)::DOUBLE AS n0,
               coalesce(sum(similarity) FILTER (WHERE script = 0), 0) AS total0,
               coalesce(sum(similarity * similarity) FILTER (WHERE script = 0), 0) AS squares0,
               count(*) FILTER (WHERE script = 1)::DOUBLE AS n1,
               coalesce(sum(similarity) FILTER (WHERE script = 1), 0) AS total1,
               coalesce(sum(similarity * similarity) FILTER (WHERE script = 1), 0) AS squares1
        FROM sims
    )
    SELECT calibration_stats(n0, total0, squares0, n1, total1, squares1) AS stats FROM sums;

-- recall_fused(p_kw_ids, p_kw_scores, p_kw_rarest, p_kw_covered, p_kw_idf_all, p_vec_ids, p_vec_sims,
--              p_vec_scripts, p_vec_stats, p_vec_query_script, caller…, p_k, p_recency, p_time_from, p_time_to,
--              p_min_score, filters…, p_now, p_br_ids, p_br_covered, p_br_idf_all, p_asks_when, p_upd_model): the
-- keyword arm as keyword_candidates returns it (or the same lists as '[…]' texts, which the agent's in-process arm
-- binds); the vector arm as ids, similarities and scripts in rank order plus the query's similarity statistics
-- (query_similarity_stats) and the query's own script (content_script; NULL: no script_credit); optionally the
-- bridge, keyword_candidates' ids, covered and query_idf_all for the question's bridged words (NULL: no
-- bridge_coverage); p_asks_when (states_time's boost); p_upd_model, the model whose vectors link a change to what it
-- changes (update_credit; NULL: none); p_asked, the hits asked for (NULL: p_k), half of which is kept for the caller's
-- own (a reranker reads more than it returns); p_caller_host, the caller is an admin handle (the host: whose facts
-- count in the outranked step, memory_author).
CREATE OR REPLACE MACRO recall_fused(p_kw_ids, p_kw_scores, p_kw_rarest, p_kw_covered, p_kw_idf_all,
                                     p_vec_ids, p_vec_sims, p_vec_scripts, p_vec_stats, p_vec_query_script,
                                     p_caller_agent, p_caller_session, p_caller_teams, p_caller_tenants, p_k,
                                     p_recency, p_time_from, p_time_to, p_min_score, p_types, p_tiers,
                                     p_tags, p_entities, p_since, p_until, p_session, p_include_superseded,
                                     p_now, p_br_ids := NULL, p_br_covered := NULL, p_br_idf_all := NULL,
                                     p_asks_when := NULL, p_upd_model := NULL, p_asked := NULL,
                                     p_caller_host := NULL) AS TABLE
WITH
    cfg AS MATERIALIZED (SELECT r.*, unnest(calibration_constants()) FROM ranking_settings() r),
    keyword_arm AS (
        SELECT unnest(CAST(p_kw_ids AS UUID[])) AS memory_id,
               unnest(CAST(p_kw_scores AS DOUBLE[])) AS bm25_score,
               unnest(CAST(p_kw_rarest AS DOUBLE[])) AS rarest_df_ratio,
               unnest(CAST(p_kw_covered AS DOUBLE[])) AS covered_idf
        WHERE p_kw_ids IS NOT NULL
    ),
    vector_arm AS (
        SELECT unnest(CAST(p_vec_ids AS VARCHAR)::UUID[]) AS memory_id,
               unnest(CAST(p_vec_sims AS VARCHAR)::DOUBLE[]) AS similarity,
               unnest(CAST(p_vec_scripts AS VARCHAR)::INTEGER[]) AS script
        WHERE p_vec_ids IS NOT NULL
    ),
    bridge_arm AS (
        SELECT unnest(CAST(p_br_ids AS UUID[])) AS memory_id,
               unnest(CAST(p_br_covered AS DOUBLE[])) AS bridge_covered
        WHERE p_br_ids IS NOT NULL
    ),
    candidates AS MATERIALIZED (
        SELECT coalesce(k.memory_id, v.memory_id) AS memory_id, k.bm25_score, k.rarest_df_ratio, k.covered_idf,
               v.similarity, v.script
        FROM keyword_arm k FULL OUTER JOIN vector_arm v ON k.memory_id = v.memory_id
    ),
    -- Candidates the caller may see and asked for, with what scoring needs, ranked within each arm.
    eligible AS MATERIALIZED (
        SELECT c.*, m.status, m.type, m.tier, m.importance, m.pinned, m.access_count, m.last_accessed, m.created_at,
               m.helpful_count, m.unhelpful_count, epoch_us(coalesce(m.observed_at, m.created_at)) AS at_us,
               m.agent_id, m.source_session, epoch_us(m.created_at) AS created_us,
               states_time(m.content) AS states_time, states_change(m.content) AS states_change, m.provenance,
               mostly_asks(m.content) AS mostly_asks, coalesce(m.by_host, false) AS by_host,
               CASE WHEN c.bm25_score IS NOT NULL THEN row_number() OVER (
                   PARTITION BY c.bm25_score IS NULL ORDER BY c.bm25_score DESC, c.memory_id) END AS bm25_rank,
               CASE WHEN c.similarity IS NOT NULL THEN row_number() OVER (
                   PARTITION BY c.similarity IS NULL ORDER BY c.similarity DESC, c.memory_id) END AS vec_rank,
               -- the rank within its pool group (pool_group), which the pool cut reads
               CASE WHEN c.bm25_score IS NOT NULL THEN row_number() OVER (
                   PARTITION BY c.bm25_score IS NULL, pool_group(m.agent_id, m.by_host, p_caller_agent, p_caller_host)
                   ORDER BY c.bm25_score DESC, c.memory_id) END AS bm25_group_rank,
               CASE WHEN c.similarity IS NOT NULL THEN row_number() OVER (
                   PARTITION BY c.similarity IS NULL, pool_group(m.agent_id, m.by_host, p_caller_agent, p_caller_host)
                   ORDER BY c.similarity DESC, c.memory_id) END AS vec_group_rank
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
    -- Each arm's best keyword_pool / vector_pool of each pool group (pool_group: the caller's own, the host's rows,
    -- every other author's): one member's near-copies of a fact must not push the caller's own, or the host's, answer
    -- out of the pool before the shared step can keep a place for it. (Three groups, not one per author: pools per
    -- author made a recall in a store of 30 agents three to seven times slower.)
    pooled AS MATERIALIZED (
        SELECT e.* EXCLUDE (bm25_rank, bm25_score, covered_idf, vec_rank, similarity, script, bm25_group_rank,
                            vec_group_rank),
               CASE WHEN e.bm25_group_rank <= cfg.keyword_pool THEN e.bm25_rank END AS bm25_rank,
               CASE WHEN e.bm25_group_rank <= cfg.keyword_pool THEN e.bm25_score END AS bm25_score,
               CASE WHEN e.bm25_group_rank <= cfg.keyword_pool THEN e.covered_idf END AS covered_idf,
               CASE WHEN e.vec_group_rank <= cfg.vector_pool THEN e.vec_rank END AS vec_rank,
               CASE WHEN e.vec_group_rank <= cfg.vector_pool THEN e.similarity END AS similarity,
               CASE WHEN e.vec_group_rank <= cfg.vector_pool
                    THEN (e.similarity - CAST(p_vec_stats AS DOUBLE[])[1 + 2 * e.script])
                         / CAST(p_vec_stats AS DOUBLE[])[2 + 2 * e.script] END AS similarity_z,
               CASE WHEN e.vec_group_rank <= cfg.vector_pool THEN e.script END AS script,
               (SELECT count(*) > 0 FROM eligible WHERE vec_rank IS NOT NULL) AS vector_arm_ran
        FROM eligible e, cfg
        WHERE e.bm25_group_rank <= cfg.keyword_pool OR e.vec_group_rank <= cfg.vector_pool
    ),
    -- Each arm's confidence over the candidates the caller may see, and the candidates' time span.
    arms AS MATERIALIZED (
        SELECT max(p.bm25_score) AS bm25_max,
               max(p.covered_idf) / CAST(p_kw_idf_all AS DOUBLE) AS keyword_conf,
               least(1, (max(p.similarity_z)
                         - (list(p.similarity_z ORDER BY p.similarity_z DESC)
                                FILTER (WHERE p.similarity_z IS NOT NULL))[least(10, count(p.similarity_z))])
                        / any_value(cfg.gap_scale)) AS vector_conf,
               max(p.similarity_z) AS z_top,
               min(p.at_us) AS at_min, max(p.at_us) AS at_max
        FROM pooled p, cfg
    ),
    credited AS (
        SELECT p.*, script_credit(p.script, CAST(p_vec_query_script AS INTEGER), a.keyword_conf, p.similarity_z,
                                  a.z_top, cfg.coverage_weight) AS script_credit,
               -- the share of the question's bridged words (its dictionary translations) this memory holds,
               -- for a memory the vector arm ranked, written in the other script than the question
               CASE WHEN p.script IS NOT NULL AND CAST(p_vec_query_script AS INTEGER) IS NOT NULL
                         AND p.script <> CAST(p_vec_query_script AS INTEGER)
                    THEN b.bridge_covered / CAST(p_br_idf_all AS DOUBLE) END AS bridge_coverage
        FROM pooled p LEFT JOIN bridge_arm b ON b.memory_id = p.memory_id, arms a, cfg
    ),
    fused AS (
        SELECT p.*, a.keyword_conf, a.vector_conf, p.covered_idf / CAST(p_kw_idf_all AS DOUBLE) AS coverage,
               calibrated_score(p.bm25_score, a.bm25_max, p.covered_idf, CAST(p_kw_idf_all AS DOUBLE), a.keyword_conf,
                                p.similarity_z, a.vector_conf, cfg.coverage_weight, cfg.vector_weight,
                                p.script_credit)
                   + cfg.coverage_weight * coalesce(p.bridge_coverage, 0) AS own_relevance,
               1 + coalesce(CAST(p_recency AS DOUBLE), 0)
                   * CASE WHEN p.status = 'active' AND a.at_max > a.at_min
                          THEN (p.at_us - a.at_min) / (a.at_max - a.at_min) ELSE 0 END AS recency_boost,
               (1 + CASE WHEN p.at_us >= epoch_us(CAST(p_time_from AS TIMESTAMP))
                          AND p.at_us < epoch_us(CAST(p_time_to AS TIMESTAMP)) THEN cfg.time_weight ELSE 0 END)
                   * (1 + CASE WHEN CAST(p_asks_when AS BOOLEAN) AND p.states_time THEN cfg.time_weight ELSE 0 END)
                   AS time_boost,
               CASE WHEN p.mostly_asks THEN cfg.asking_weight ELSE 1.0 END AS asking_weight,
               CASE
                   -- only when the vector arm ran and could have vouched for it
                   WHEN p.vec_rank IS NULL AND p.rarest_df_ratio > cfg.gate_df_ratio AND p.vector_arm_ran
                       THEN 'ranked last: only common keywords'
                   WHEN p.bm25_rank IS NULL AND p.similarity < cfg.vector_min_similarity
                       THEN 'ranked last: weak meaning match'
                   ELSE 'kept'
               END AS gate,
               effective_importance(p.importance, p.type, p.pinned, p.access_count,
                                    coalesce(p.last_accessed, p.created_at), p_now, cfg.decay_days) AS effective_importance,
               CASE WHEN p.tier = 'archival' THEN cfg.archived_weight ELSE 1.0 END AS tier_weight,
               pow(1 - cfg.unhelpful_penalty, greatest(p.unhelpful_count - p.helpful_count, 0)) AS feedback_weight,
               cfg.importance_floor, cfg.follow_weight
        FROM credited p, arms a, cfg
    ),
    -- A kept candidate of a source session takes follow_weight × the relevance of the nearest earlier kept
    -- candidate of the same owner and session (by observed time, then write time) when that is more: the turn
    -- after a question is where its answer is. The same owner: another agent cannot ride on a relevant memory
    -- by writing into its session.
    followed AS (
        SELECT f.*,
               CASE WHEN f.gate = 'kept' AND f.source_session IS NOT NULL
                    THEN f.follow_weight * last_value(CASE WHEN f.gate = 'kept' THEN f.own_relevance END IGNORE NULLS)
                         OVER (PARTITION BY f.agent_id, f.source_session ORDER BY f.at_us, f.created_us, f.memory_id
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) END AS session_credit
        FROM fused f
    ),
    -- On a question about the current state, a kept candidate that states a change (states_change) takes the
    -- relevance of a kept, older candidate of the same owner that it updates when that is more: their vectors (of
    -- model p_upd_model; NULL: none) at least update_similarity close, and the older one of no higher provenance.
    -- "Sam moved to Paris" answers "Where does Sam live now?" as well as "Sam lives in Berlin" does; recency then
    -- puts the newer first. Only candidates and only the owner's own, as for session_credit.
    updates AS (
        SELECT b.memory_id, max(a.own_relevance) AS update_credit
        FROM fused b JOIN fused a ON a.agent_id = b.agent_id AND a.memory_id <> b.memory_id
        JOIN memory_vectors vb ON vb.memory_id = b.memory_id AND vb.model_id = p_upd_model
        JOIN memory_vectors va ON va.memory_id = a.memory_id AND va.model_id = p_upd_model, cfg
        WHERE CAST(p_recency AS DOUBLE) IS NOT NULL AND b.gate = 'kept' AND a.gate = 'kept' AND b.states_change
          AND a.provenance <= b.provenance
          AND (a.at_us < b.at_us OR (a.at_us = b.at_us AND (a.created_us < b.created_us
               OR (a.created_us = b.created_us AND a.memory_id < b.memory_id))))
          AND list_inner_product(vb.vector, va.vector) >= cfg.update_similarity
        GROUP BY b.memory_id
    ),
    related AS (
        SELECT f.* EXCLUDE (own_relevance, follow_weight), u.update_credit,
               greatest(f.own_relevance, coalesce(f.session_credit, 0), coalesce(u.update_credit, 0)) AS relevance
        FROM followed f LEFT JOIN updates u ON u.memory_id = f.memory_id
    ),
    scored AS (
        SELECT f.memory_id, f.agent_id, f.by_host, f.bm25_rank, f.bm25_score, f.rarest_df_ratio, f.vec_rank, f.similarity,
               f.keyword_conf, f.vector_conf, f.coverage, f.similarity_z, f.script_credit, f.bridge_coverage,
               f.session_credit, f.update_credit,
               f.relevance, f.recency_boost, f.time_boost, f.asking_weight,
               f.gate, f.effective_importance, f.tier_weight, f.feedback_weight,
               f.importance_floor + (1 - f.importance_floor) * f.effective_importance AS decay_factor,
               f.relevance * f.recency_boost * f.time_boost * f.asking_weight
                   * (f.importance_floor + (1 - f.importance_floor) * f.effective_importance)
                   * f.tier_weight * f.feedback_weight AS score
        FROM related f
        WHERE p_min_score IS NULL OR f.relevance >= p_min_score
    ),
    -- Half the list asked for (p_asked hits; NULL: p_k), rounded up, is kept for the caller's own kept candidates,
    -- as far as there are that many: other agents' kept candidates past the rest of it are ranked after the kept.
    -- The rest goes to the rows the host wrote first (by_host), then each other author's best, then by score: seven
    -- paraphrases of a question by one member (or by two, or by as many members as there are places) must not push
    -- the caller's own answer, nor the host's team fact, out of the list.
    shared AS (
        SELECT s.* EXCLUDE (agent_id, by_host, author, own_kept, other_rank)
               REPLACE (CASE WHEN s.gate = 'kept' AND s.author <> memory_author(p_caller_agent, p_caller_host)
                                  AND s.other_rank > coalesce(p_asked, p_k)
                                                     - least(s.own_kept, (coalesce(p_asked, p_k) + 1) // 2)
                             THEN 'ranked last: half the list is kept for your own' ELSE s.gate END AS gate)
        FROM (SELECT t.* EXCLUDE (author_turn),
                     count(*) FILTER (WHERE t.gate = 'kept' AND t.author = memory_author(p_caller_agent, p_caller_host))
                         OVER () AS own_kept,
                     row_number() OVER (PARTITION BY t.gate = 'kept'
                                                     AND t.author <> memory_author(p_caller_agent, p_caller_host)
                                        ORDER BY NOT t.by_host, NOT t.by_host AND t.author_turn > 1, t.score DESC,
                                                 t.memory_id)
                         AS other_rank
              FROM (SELECT sc.*, memory_author(sc.agent_id, sc.by_host) AS author,
                           row_number() OVER (PARTITION BY memory_author(sc.agent_id, sc.by_host), sc.gate = 'kept'
                                              ORDER BY sc.score DESC, sc.memory_id) AS author_turn
                    FROM scored sc) t) s
    ),
    top AS MATERIALIZED (
        SELECT * FROM shared f
        ORDER BY f.gate = 'kept' DESC, f.score DESC, f.memory_id
        LIMIT p_k
    ),
    conflicts AS (
        SELECT s.side AS id, list(s.other ORDER BY s.detected_at, s.other) AS conflicts_with
        -- pending ones, and ones settled by recency that nobody reviewed (the hit replaced a conflicting claim)
        FROM (SELECT memory_a AS side, memory_b AS other, detected_at FROM contradictions
              WHERE status = 'pending' OR resolution = 'newer'
              UNION ALL
              SELECT memory_b, memory_a, detected_at FROM contradictions WHERE status = 'pending' OR resolution = 'newer') s
        -- only others the caller may see (counted_memories' rule): a hidden memory's id is not the caller's to know
        JOIN memories o ON o.id = s.other
        WHERE can_see_as(o.scope, o.agent_id, o.team_id, o.tenant_id, o.source_session, o.tags, o.sensitivity,
                         p_caller_agent, p_caller_session, p_caller_teams, p_caller_tenants)
          AND (o.status <> 'quarantined' OR o.agent_id = p_caller_agent)
        GROUP BY s.side
    ),
    -- A winner whose pending dispute is with a live fact the caller may see that the snapshot says stands against it
    -- is ranked after the kept, so recall does not put first the claim its prompt names as a claim (dispute_stands):
    -- between two memories of one author, the one of higher provenance; between authors, the caller's own, whatever
    -- provenance the other claims (a teammate claiming user_stated ranked its claim above the caller's own fact). A
    -- teammate's claim never pushes a third agent's fact down in the caller's recall. Authors as memory_author names
    -- them: an agent under the host's agent id claiming user_stated pushed the host's fact down; and the host's fact
    -- outranks such an agent's claim whatever their provenance.
    outranked AS (
        SELECT DISTINCT s.side AS id
        FROM (SELECT memory_a AS side, memory_b AS other FROM contradictions WHERE status = 'pending'
              UNION ALL
              SELECT memory_b, memory_a FROM contradictions WHERE status = 'pending') s
        JOIN top ON top.memory_id = s.side
        JOIN memories me ON me.id = s.side
        JOIN memories o ON o.id = s.other
        WHERE o.status = 'active'
          AND CASE WHEN o.agent_id = me.agent_id AND coalesce(o.by_host, false) <> coalesce(me.by_host, false)
                   -- the host's memory against an agent's under its agent id stands, whatever their provenance and
                   -- whoever reads, as dispute_stands says (agent default's user_stated claim pushed the host's
                   -- consolidated fact down agent default's own recall)
                   THEN coalesce(o.by_host, false)
                   WHEN memory_author(o.agent_id, o.by_host) = memory_author(me.agent_id, me.by_host)
                   THEN o.provenance > me.provenance
                   ELSE NOT dispute_stands(memory_author(me.agent_id, me.by_host), me.provenance,
                                           memory_author(o.agent_id, o.by_host), o.provenance,
                                           memory_author(p_caller_agent, p_caller_host)) END
          AND can_see_as(o.scope, o.agent_id, o.team_id, o.tenant_id, o.source_session, o.tags, o.sensitivity,
                         p_caller_agent, p_caller_session, p_caller_teams, p_caller_tenants)
    )
-- Only the k winners fetch every column of their memory row.
SELECT top.* EXCLUDE (memory_id)
           REPLACE (CASE WHEN top.gate = 'kept' AND outranked.id IS NOT NULL
                         THEN 'ranked last: disputed by a fact that stands (yours, the host''s or one of higher provenance)' ELSE top.gate END AS gate),
       m.*, conflicts.conflicts_with
FROM top JOIN memories m ON m.id = top.memory_id
LEFT JOIN conflicts ON conflicts.id = top.memory_id
LEFT JOIN outranked ON outranked.id = top.memory_id
ORDER BY top.gate = 'kept' AND outranked.id IS NULL DESC, top.score DESC, m.id;

CREATE OR REPLACE MACRO recall_hits(p_query, p_qvec, p_model, p_caller_agent, p_caller_session, p_k, p_recency,
                                    p_time_from, p_time_to, p_types, p_tiers, p_tags, p_entities, p_since, p_until,
                                    p_session, p_include_superseded, p_now, p_bridge := NULL,
                                    p_query_script := NULL, p_asks_when := NULL, p_asked := NULL,
                                    p_caller_host := NULL, p_min_score := NULL) AS TABLE
    WITH g AS MATERIALIZED (SELECT * FROM caller_groups(p_caller_agent)),
    br AS MATERIALIZED (SELECT * FROM keyword_candidates(p_bridge, true, p_caller_agent, p_caller_session,
                                                         (SELECT teams FROM g), (SELECT tenants FROM g))
                        WHERE p_bridge IS NOT NULL),
    kw AS MATERIALIZED (
        SELECT * FROM keyword_candidates(p_query, p_types IS NOT NULL OR p_tiers IS NOT NULL OR p_tags IS NOT NULL
                                                  OR p_entities IS NOT NULL OR p_since IS NOT NULL
                                                  OR p_until IS NOT NULL OR p_session IS NOT NULL,
                                         p_caller_agent, p_caller_session, (SELECT teams FROM g),
                                         (SELECT tenants FROM g))
    ),
    exact AS MATERIALIZED (
        SELECT list(memory_id ORDER BY similarity DESC, memory_id)::VARCHAR AS ids,
               list(similarity ORDER BY similarity DESC, memory_id)::VARCHAR AS sims,
               list(script ORDER BY similarity DESC, memory_id)::VARCHAR AS scripts
        FROM exact_vector_candidates(p_qvec, p_model, 1000, p_caller_agent, p_caller_session,
                                     (SELECT teams FROM g), (SELECT tenants FROM g), p_types, p_tiers, p_tags,
                                     p_entities, p_since, p_until, p_session, p_include_superseded)
        WHERE p_qvec IS NOT NULL
    ),
    stats AS MATERIALIZED (SELECT stats FROM query_similarity_stats(p_qvec, p_model, p_caller_agent, p_caller_session,
                                                                    (SELECT teams FROM g), (SELECT tenants FROM g))
                           WHERE p_qvec IS NOT NULL)
    SELECT * FROM recall_fused((SELECT ids FROM kw), (SELECT scores FROM kw), (SELECT rarest FROM kw),
                               (SELECT covered FROM kw), (SELECT query_idf_all FROM kw),
                               (SELECT ids FROM exact), (SELECT sims FROM exact), (SELECT scripts FROM exact),
                               (SELECT stats FROM stats), coalesce(p_query_script, content_script(p_query)),
                               p_caller_agent, p_caller_session,
                               (SELECT teams FROM g), (SELECT tenants FROM g), p_k, p_recency, p_time_from, p_time_to,
                               p_min_score, p_types, p_tiers, p_tags, p_entities, p_since, p_until, p_session,
                               p_include_superseded, p_now, p_br_ids := (SELECT ids FROM br),
                               p_br_covered := (SELECT covered FROM br), p_br_idf_all := (SELECT query_idf_all FROM br),
                               p_asks_when := p_asks_when,
                               p_upd_model := CASE WHEN p_qvec IS NOT NULL THEN p_model END, p_asked := p_asked,
                               p_caller_host := p_caller_host);

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
           type, tier, epoch_us(coalesce(observed_at, created_at)) AS at_us, epoch_us(created_at) AS created_us,
           tags, entities, states_time(content) AS states_time, states_change(content) AS states_change, provenance,
           mostly_asks(content) AS mostly_asks, approval_never_given(id) AS held, coalesce(by_host, false) AS by_host
    FROM memories;
