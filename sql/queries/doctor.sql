-- `echo-duck doctor` (echo_duck/store/doctor.py): read-only questions about a store's health. Run on a
-- read-only connection after the schema version was found current, so every view exists.

-- Vectors to re-embed: memories (stale_vectors) and knowledge-base chunks (kb_stale_vectors).
-- name: doctor_stale_vectors
SELECT (SELECT count(*) FROM stale_vectors) AS memories,
       (SELECT count(*) FROM kb_stale_vectors) AS kb_chunks;

-- Consolidation jobs not done: waiting, failed at least once (retried with backoff), running.
-- name: doctor_jobs
SELECT count(*) FILTER (WHERE status = 'pending' AND last_error IS NULL) AS waiting,
       count(*) FILTER (WHERE status <> 'done' AND last_error IS NOT NULL) AS failed,
       count(*) FILTER (WHERE status = 'running') AS running,
       max(last_error) FILTER (WHERE status <> 'done') AS last_error
FROM consolidation_jobs;

-- Archive exports a crash left half-way (staged or moved).
-- Of the ids in the Parquet archive ($ids, '[uuid, …]' text), those neither live nor exported by this store (no
-- export event): the store file is older than its archive folder (restored from a copy), and reads would show
-- versions it never had.
-- name: doctor_archive_rows_unknown
SELECT count(*) AS n, min(id::VARCHAR) AS first FROM (SELECT unnest(CAST($ids AS VARCHAR)::UUID[]) AS id) a
WHERE a.id NOT IN (SELECT id FROM memories)
  AND NOT EXISTS (SELECT 1 FROM memory_events e WHERE e.memory_id = a.id AND e.action = 'export');

-- name: doctor_unfinished_exports
SELECT count(*) FILTER (WHERE status = 'staged') AS staged,
       count(*) FILTER (WHERE status = 'moved') AS moved
FROM archive_exports;

-- The audit's must-be-zero counters, and the store's size.
-- name: doctor_audit
SELECT live_memories, stale_recalls, leaked_recalls FROM memory_health;

-- Purges whose store-file rewrite a crash interrupted (finished on the next writable open).
-- name: doctor_pending_purges
SELECT count(*) FROM pending_purges;

-- Live memories whose owner, scope, team, tenant, sensitivity, sharing or text is not what the event log rebuilds
-- (memories_as_of at the end of time): a row edited with plain SQL, which every read path would otherwise trust.
-- name: doctor_rows_off_log
SELECT count(*) AS rows, min(m.id::VARCHAR) AS first_id
FROM memories m LEFT JOIN memories_as_of(TIMESTAMP '9999-12-31') a ON a.id = m.id
WHERE a.id IS NULL OR m.agent_id IS DISTINCT FROM a.agent_id OR m.scope IS DISTINCT FROM a.scope
   OR m.team_id IS DISTINCT FROM a.team_id OR m.tenant_id IS DISTINCT FROM a.tenant_id
   OR m.sensitivity IS DISTINCT FROM a.sensitivity OR m.content IS DISTINCT FROM a.content
   OR list_contains(m.tags, 'share:personal') IS DISTINCT FROM list_contains(a.tags, 'share:personal');

-- Every table of the store (integrity: each is read in full).
-- name: doctor_tables
SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY table_name;

-- Every row of one table, for the integrity check (a table name cannot be bound: {table} is replaced by
-- a quoted identifier taken from doctor_tables).
-- name: doctor_read_table
SELECT * FROM {table};

-- Who may read and publish what, against the event log: a membership or publishing right in force that no grant
-- event (the last of its grant/revoke events) accounts for, e.g. an INSERT INTO memberships in a plain SQL session,
-- which every read path would trust. Returns (how many, the first as text).
-- name: doctor_access_off_log
WITH events AS (
    SELECT action, after ->> 'agent_id' AS agent_id,
           CASE WHEN action IN ('grant', 'revoke') THEN (after ->> 'kind') || ':' || (after ->> 'group_id')
                ELSE 'right:' || (after ->> 'right') END AS what, event_id
    FROM memory_events
    WHERE memory_id IS NULL AND action IN ('grant', 'revoke', 'grant_right', 'revoke_right')),
granted AS (
    SELECT agent_id, what FROM events GROUP BY agent_id, what HAVING arg_max(action, event_id) IN ('grant', 'grant_right')),
in_force AS (
    SELECT agent_id, kind || ':' || group_id AS what FROM memberships WHERE revoked_at IS NULL
    UNION SELECT agent_id, 'right:' || "right" FROM agent_rights WHERE revoked_at IS NULL),
off AS (SELECT * FROM in_force EXCEPT SELECT * FROM granted)
SELECT count(*), min(agent_id || ' ' || what) FROM off;
