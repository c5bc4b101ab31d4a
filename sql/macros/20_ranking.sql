-- 20_ranking: the scoring formulas, one macro each, shared by recall, decay and the audit views.

-- setting(name) -> DOUBLE: a tunable from the settings table.
CREATE OR REPLACE MACRO setting(setting_name) AS
    (SELECT s.value FROM settings s WHERE s.name = setting_name);

-- half_life_days(access_count, base_days) -> DOUBLE: each review lengthens the half-life (SPEC L1).
CREATE OR REPLACE MACRO half_life_days(access_count, base_days) AS
    greatest(base_days, 1) * (1 + log2(1 + CAST(access_count AS BIGINT)));  -- 1 + INTEGER overflows at 2^31 - 1

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

-- content_script(text) -> INTEGER: 1 when the text has Han characters and 8 × their number is at least the
-- number of Latin letters (Han at least a third of the letters, a Latin word of ~4 letters counting as
-- one), else 0. The vector arm judges a similarity against the stored memories of the same script: a
-- correct translation scores 0.1-0.3 where same-language rows sharing a generic word score more
-- (echo_duck/text/when.py text_script is the same rule; a test holds them equal).
CREATE OR REPLACE MACRO content_script(t) AS
    CASE WHEN length(regexp_replace(CAST(t AS VARCHAR), '[^\x{3400}-\x{9fff}\x{f900}-\x{faff}]', '', 'g')) > 0
              AND 8 * length(regexp_replace(CAST(t AS VARCHAR), '[^\x{3400}-\x{9fff}\x{f900}-\x{faff}]', '', 'g'))
                  >= length(regexp_replace(CAST(t AS VARCHAR), '[^A-Za-z]', '', 'g'))
         THEN 1 ELSE 0 END;

-- states_time(text) -> BOOLEAN: whether the text states when something happens: a digit (a date, a clock time,
-- a year), a month or weekday name, a relative day or period (yesterday, last week, 3 days ago, this weekend,
-- recently), or the same in Chinese (昨天, 上周, 上个月, 去年, 三月, 五号, 八点, 凌晨一点, 周六, 星期, 礼拜, 三天前, 春节,
-- 暑假, 最近, 刚才; traditional forms too). A question asking when (echo_duck.text.when.asks_when: "When did…",
-- "what year", 什么时候, 几点) gives such memories time_weight more (recall_fused's time_boost): its answer has to
-- say when. "may" and "march" are not months here (a modal, a verb), nor 一点 alone ("a little") a clock time.
CREATE OR REPLACE MACRO states_time(t) AS
    regexp_matches(lower(CAST(t AS VARCHAR)),
        '[0-9]|\b(?:yesterday|today|tonight|tomorrow|ago|since|weekends?|recently|'
        || '(?:last|this|next|past) (?:week|month|year|night|weekend|spring|summer|fall|autumn|winter)|'
        || 'january|february|april|june|july|august|september|october|november|december|'
        || 'jan|feb|apr|jun|jul|aug|sept?|oct|nov|dec|(?:mon|tues|wednes|thurs|fri|satur|sun)days?)\b|'
        || '昨天|今天|明天|前天|后天|後天|[上下这這本][周週]|[上下这這][个個]月|去年|今年|明年|前年|'
        || '[〇零一二两兩三四五六七八九十]+(?:月|号|號|日)|(?:[两兩三四五六七八九十]|十[一二])[点點]|'
        || '(?:凌晨|早上|上午|中午|下午|傍晚|晚上|夜里|夜裡)[一二两兩三四五六七八九十]+[点點]|'
        || '[周週][一二三四五六日末]|星期|礼拜|禮拜|[年天月周週]前|小[时時]前|春[节節]|国庆|國慶|中秋|端午|元旦|'
        || '暑假|寒假|最近|[刚剛][才刚剛]');

-- states_change(text) -> BOOLEAN: whether the text says something changed: switched, moved, sold, replaced, quit,
-- stopped, no longer, instead, upgraded, promoted, broke up, gave up, any more; 换, 改, 不再, 搬, 调到, 调回, 卖了, 辞职,
-- 离职, 戒了, 升职, 转到, 不去了, 不用了, 停了, 变成, 取消, 退了, 分手 (traditional forms too). Such a memory may take the
-- relevance of an older one it updates (update_credit in recall_fused).
CREATE OR REPLACE MACRO states_change(t) AS
    regexp_matches(lower(CAST(t AS VARCHAR)),
        '\b(?:no longer|any ?more|instead|switch(?:ed|ing)?|chang(?:ed|ing)|moved|replac(?:ed|ing)|sold|quit|'
        || 'stopped|gave up|upgraded|transferred|promoted|broke up)\b|'
        || '换|換|改|不再|搬|调到|調到|调回|調回|调岗|調崗|卖了|賣了|辞职|辭職|离职|離職|戒了|戒掉|升[成为為职職]|'
        || '转[到成]|轉[到成]|不[去用做吃喝玩打学學住开開骑騎]了|停了|变成|變成|取消|退了|分手');

-- mostly_asks(text) -> BOOLEAN: whether at least half of the text (in characters, after a leading "Name: " label of up
-- to 40 characters) is in questions that say nothing of the one asking: no I, me, my, we, us, our, 我. "Caroline: What
-- kind of yoga is it?" and 你最近在读什么书？ ask; "Can you suggest a hotel for my trip to Rome?" tells of its writer, and
-- "Sorry to hear that, the move sounds hard. Where are you staying now?" is more telling than asking. In a conversation
-- such a turn shares the words of a later question about the answer, and the model puts questions near questions, so
-- it outranked the turn that answers; recall gives it asking_weight of its score (recall_fused's asking_weight).
CREATE OR REPLACE MACRO mostly_asks(t) AS
    -- most texts hold no question mark: they skip the sentence split
    CASE WHEN contains(CAST(t AS VARCHAR), '?') OR contains(CAST(t AS VARCHAR), '？') THEN coalesce(list_transform(
        [list_transform(
            regexp_extract_all(regexp_replace(CAST(t AS VARCHAR), '^[^:：]{1,40}[:：]\s+', ''),
                               '[^.!?。！？]*[.!?。！？]+|[^.!?。！？]+$'),
            s -> regexp_replace(s, '^\s+|\s+$', '', 'g'))],
        parts -> list_sum(list_transform(parts, s -> CASE WHEN regexp_matches(s, '[?？]$')
                                                           AND NOT regexp_matches(lower(s),
                                                               '\b(?:i|me|my|mine|myself|we|us|our|ours|ourselves)\b|我')
                                                      THEN length(s) ELSE 0 END)) * 2
                 >= list_sum(list_transform(parts, s -> length(s)))
                 AND list_sum(list_transform(parts, s -> CASE WHEN regexp_matches(s, '[?？]$') THEN 1 ELSE 0 END)) > 0
    )[1], false) ELSE false END;

-- calibration_constants() -> STRUCT: the constants of the calibrated fusion (recall_fused, kb_search_hits);
-- SELECT unnest(calibration_constants()) shows them as columns. A scalar macro, so other scalar macros
-- may read it (an attached store exports scalar macros before table macros). Fitted on LoCoMo
-- conversations 0-4 and LongMemEval (dev) questions 0-49, and nowhere else (echo_duck/recall/fusion.py
-- holds the same values; a test holds them equal):
--   coverage_weight  0.5  the share of the query's information a keyword match covers
--   vector_weight    0.2  per standard deviation a similarity stands above its script's mean
--   gap_scale        2    vector_conf = min(1, (best z - 10th best z) / gap_scale)
--   recency_weight   0.5  a question about the current state lifts the newest candidate by up to half
--   time_weight      0.5  a memory observed inside the time the question names scores half more
--   prior_rows       10   similarity statistics lean on 10 pseudo-rows: the store's, then a prior
--   prior_mean, prior_sd  0.1, 0.1: the prior for unrelated texts (what a store of a few rows leans on)
--   follow_weight    0.8  a candidate from a source session scores at least this share of the nearest earlier
--                         candidate of the same owner and session (session_credit in recall_fused)
--   update_similarity 0.5 on a question about the current state, a candidate that states a change takes the
--                         relevance of an older one of the same owner whose vector is at least this close to its
--                         own (update_credit in recall_fused)
--   asking_weight    0.7  a memory that mostly asks (mostly_asks) keeps this share of its score: a question is not
--                         its own answer
CREATE OR REPLACE MACRO calibration_constants() AS
    {'coverage_weight': 0.5::DOUBLE, 'vector_weight': 0.2::DOUBLE, 'gap_scale': 2.0::DOUBLE,
     'recency_weight': 0.5::DOUBLE, 'time_weight': 0.5::DOUBLE, 'prior_rows': 10.0::DOUBLE,
     'prior_mean': 0.1::DOUBLE, 'prior_sd': 0.1::DOUBLE, 'follow_weight': 0.8::DOUBLE,
     'update_similarity': 0.5::DOUBLE, 'asking_weight': 0.7::DOUBLE};

-- calibrated_score(...) -> DOUBLE: how relevant one candidate is, from what each arm knows about its
-- own confidence (no rank enters, so a weak arm's first candidate gets no credit for being first):
--     max(keyword_conf × bm25_score / bm25_max                   the BM25 score, scaled by how much of
--                                                                the query the arm's best match covers
--         + coverage_weight × covered_idf / query_idf_all,       the share of the query's IDF mass this
--                                                                memory matches (every content term counts)
--         script_credit)                                         (what its meaning earns when the words
--                                                                miss: see script_credit)
--   + vector_weight × vector_conf × max(similarity_z, 0)         standard deviations above the mean
--                                                                similarity of its script, scaled by how far
--                                                                the vector arm's best stands above its 10th
-- A missing arm contributes 0.
CREATE OR REPLACE MACRO calibrated_score(bm25_score, bm25_max, covered_idf, query_idf_all, keyword_conf,
                                         similarity_z, vector_conf, coverage_weight, vector_weight, script_credit) AS
    greatest(coalesce(keyword_conf * bm25_score / bm25_max, 0)
             + coverage_weight * coalesce(covered_idf / query_idf_all, 0), coalesce(script_credit, 0))
    + coalesce(vector_weight * vector_conf * greatest(similarity_z, 0), 0);

-- script_credit(...) -> DOUBLE or NULL: the keyword credit a memory's meaning earns. The keyword arm cannot
-- see a translation (an English question shares no word with the Chinese fact that answers it, at most a
-- name), nor a paraphrase ("supervise" / "act as her interim supervisor"). So a memory the vector arm ranked is
-- credited as if it matched the question's words as well as the keyword arm's best match does, scaled by how
-- its similarity_z compares with the best similarity_z of the recall: a memory in another script than the
-- question with that match's two keyword terms (keyword_conf × (1 + coverage_weight)), one in the question's
-- script with its BM25 term (keyword_conf), since it could have matched the words and did not. NULL (no
-- credit) when the keyword arm found nothing or the vector arm did not rank it.
CREATE OR REPLACE MACRO script_credit(script, query_script, keyword_conf, similarity_z, z_top, coverage_weight) AS
    CASE WHEN keyword_conf IS NOT NULL AND similarity_z IS NOT NULL AND z_top > 0
         THEN keyword_conf * (CASE WHEN query_script IS NOT NULL AND script IS NOT NULL AND script <> query_script
                                   THEN 1 + coverage_weight ELSE 1.0::DOUBLE END)
              * greatest(similarity_z, 0) / z_top END;

-- calibration_stats(n0, sum0, sumsq0, n1, sum1, sumsq1) -> DOUBLE[4] [mean_0, sd_0, mean_1, sd_1]: a query's
-- similarity statistics per script (0 Latin, 1 Han) from the count, sum and sum of squares of its
-- similarities to the stored vectors of each script. Each script leans on prior_rows pseudo-rows drawn
-- from the whole store, and the store on prior_rows pseudo-rows of the prior, so a script with a few
-- rows (or a store of a few rows) is not judged by a mean and spread of two values.
CREATE OR REPLACE MACRO calibration_stats(n0, sum0, sumsq0, n1, sum1, sumsq1) AS (
    WITH g AS (SELECT k, (sum0 + sum1 + k.prior_rows * k.prior_mean) / (n0 + n1 + k.prior_rows) AS mean,
                      (sumsq0 + sumsq1 + k.prior_rows * (k.prior_sd * k.prior_sd + k.prior_mean * k.prior_mean))
                          / (n0 + n1 + k.prior_rows) AS square
               FROM (SELECT calibration_constants() AS k)),
    s AS (SELECT (sum0 + g.k.prior_rows * g.mean) / (n0 + g.k.prior_rows) AS mean0,
                 (sumsq0 + g.k.prior_rows * g.square) / (n0 + g.k.prior_rows) AS square0,
                 (sum1 + g.k.prior_rows * g.mean) / (n1 + g.k.prior_rows) AS mean1,
                 (sumsq1 + g.k.prior_rows * g.square) / (n1 + g.k.prior_rows) AS square1
          FROM g)
    SELECT [mean0, sqrt(greatest(square0 - mean0 * mean0, 1e-12)), mean1, sqrt(greatest(square1 - mean1 * mean1, 1e-12))]
    FROM s);
