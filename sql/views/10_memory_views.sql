-- 10_memory_views: what analysts query about memories' health. Each view is documented with COMMENT ON.
-- Views never read other views (EXPORT DATABASE may write views alphabetically, so a view over a
-- view may not import); shared logic lives in table macros. The same holds for table macros, which
-- bind at creation: one may only call table macros whose names sort before its own
-- (each_recalled_memory before leaked_recalls_all), as an attached store exports them alphabetically.

-- utc_now() -> TIMESTAMP: the store keeps naive UTC; now()::TIMESTAMP would be local time.
CREATE OR REPLACE MACRO utc_now() AS (now() AT TIME ZONE 'UTC');

-- memory_decay_at(ts) -> every live memory's decay state as of ts (SPEC L1, L2).
CREATE OR REPLACE MACRO memory_decay_at(ts) AS TABLE
    SELECT m.id, m.agent_id, m.type, m.tier, m.key, m.importance, m.access_count, m.pinned,
           coalesce(m.last_accessed, m.created_at) AS last_touch,
           days_between(coalesce(m.last_accessed, m.created_at), ts) AS days_since_access,
           half_life_days(m.access_count, setting('importance_decay_days')) AS half_life_days,
           (m.type IN ('user', 'procedure') OR m.pinned) AS exempt,
           effective_importance(m.importance, m.type, m.pinned, m.access_count,
                                coalesce(m.last_accessed, m.created_at), ts, setting('importance_decay_days')) AS effective_importance,
           NOT (m.type IN ('user', 'procedure') OR m.pinned)
               AND effective_importance(m.importance, m.type, m.pinned, m.access_count,
                                        coalesce(m.last_accessed, m.created_at), ts, setting('importance_decay_days'))
                   < setting('archive_threshold') AS below_threshold
    FROM memories m
    WHERE m.status = 'active';

CREATE OR REPLACE VIEW memory_decay AS SELECT * FROM memory_decay_at(utc_now());
COMMENT ON VIEW memory_decay IS 'Each live memory''s days since access, half-life, effective importance and whether it is below archive_threshold, as of now (use memory_decay_at(ts) for another time)';

-- stale_vectors_now() -> memories whose vector is missing or from another model than the store's current one.
CREATE OR REPLACE MACRO stale_vectors_now() AS TABLE
    SELECT m.id AS memory_id, v.model_id AS vector_model,
           (SELECT value FROM store_info WHERE name = 'embedding_model') AS current_model
    FROM memories m LEFT JOIN memory_vectors v ON v.memory_id = m.id
    WHERE m.status <> 'forgotten'
      AND (SELECT value FROM store_info WHERE name = 'embedding_model') IS NOT NULL
      AND (v.model_id IS NULL OR v.model_id <> (SELECT value FROM store_info WHERE name = 'embedding_model'));

CREATE OR REPLACE VIEW stale_vectors AS SELECT * FROM stale_vectors_now();
COMMENT ON VIEW stale_vectors IS 'Memories to re-embed: no vector from the store''s current embedding model (store_info.embedding_model)';
