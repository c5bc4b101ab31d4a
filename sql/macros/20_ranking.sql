-- 20_ranking: the scoring formulas, one macro each, shared by recall, decay and the audit views.

-- setting(name) -> DOUBLE: a tunable from the settings table.
CREATE OR REPLACE MACRO setting(setting_name) AS
    (SELECT s.value FROM settings s WHERE s.name = setting_name);

-- half_life_days(access_count, base_days) -> DOUBLE: each review lengthens the half-life (SPEC L1).
CREATE OR REPLACE MACRO half_life_days(access_count, base_days) AS
    greatest(base_days, 1) * (1 + log2(1 + access_count));

-- days_between(t0, t1) -> DOUBLE days from t0 to t1, never negative.
CREATE OR REPLACE MACRO days_between(t0, t1) AS
    greatest(date_diff('second', t0, t1), 0) / 86400.0;

-- effective_importance(...) -> DOUBLE: importance × 0.5^(days since last access / half-life);
-- USER memories, PROCEDURE memories (behaviour rules apply every turn while active, seed 004) and
-- pinned rows are exempt (SPEC L1).
CREATE OR REPLACE MACRO effective_importance(importance, mem_type, pinned, access_count, last_touch, now_ts, base_days) AS
    CASE WHEN mem_type IN ('user', 'procedure') OR pinned THEN importance
         ELSE importance * pow(0.5, days_between(last_touch, now_ts) / half_life_days(access_count, base_days))
    END;

-- rrf(rank, k) -> DOUBLE: reciprocal rank fusion term (SPEC R3); NULL rank contributes 0.
CREATE OR REPLACE MACRO rrf(rnk, k := 60) AS
    coalesce(1.0 / (k + rnk), 0.0);

-- vector_arm_weight(entropy, low, high) -> DOUBLE: broad, high-entropy queries lean on meaning,
-- specific ones (commands, file names, ids) on keywords (SPEC R7). The BM25 arm always weighs 1.
CREATE OR REPLACE MACRO vector_arm_weight(entropy, low, high) AS
    low + (high - low) * least(greatest(coalesce(entropy, 0.5), 0), 1);

-- query_entropy(spec, stop, length, code) -> DOUBLE in [0, 1]: how broad a query is (echo_duck.text.segment.
-- query_entropy documents the terms; Python measures stop/length/code, spec comes from bm25_scores).
CREATE OR REPLACE MACRO query_entropy(spec, stop_share, length_share, code_share) AS
    least(greatest((0.5 * (1 - spec) + 0.3 * stop_share + 0.2 * length_share) * (1 - 0.6 * code_share), 0), 1);

-- ranking_settings() -> one row with every ranking tunable as a column. One pivot over settings:
-- nine separate scalar subqueries made DuckDB's join planner take ~30 ms.
CREATE OR REPLACE MACRO ranking_settings() AS TABLE
    SELECT max(value) FILTER (WHERE name = 'rrf_k') AS rrf_k,
           max(value) FILTER (WHERE name = 'keyword_pool')::INTEGER AS keyword_pool,
           max(value) FILTER (WHERE name = 'vector_pool')::INTEGER AS vector_pool,
           max(value) FILTER (WHERE name = 'vector_weight_low') AS vector_weight_low,
           max(value) FILTER (WHERE name = 'vector_weight_high') AS vector_weight_high,
           max(value) FILTER (WHERE name = 'gate_df_ratio') AS gate_df_ratio,
           max(value) FILTER (WHERE name = 'vector_min_similarity') AS vector_min_similarity,
           max(value) FILTER (WHERE name = 'archived_weight') AS archived_weight,
           max(value) FILTER (WHERE name = 'importance_floor') AS importance_floor,
           max(value) FILTER (WHERE name = 'unhelpful_penalty') AS unhelpful_penalty,
           max(value) FILTER (WHERE name = 'importance_decay_days') AS decay_days,
           max(value) FILTER (WHERE name = 'keyword_score_power') AS keyword_score_power,
           max(value) FILTER (WHERE name = 'vector_score_power') AS vector_score_power,
           max(value) FILTER (WHERE name = 'vector_strong_similarity') AS vector_strong_similarity
    FROM settings;
