-- The hash chain over memory_events (echo_duck/storage/event_chain.py): sealing at commit, verifying.

-- name: chain_has_columns
SELECT count(*) FROM duckdb_columns()
WHERE database_name = current_database() AND table_name = 'memory_events' AND column_name = 'hash';

-- name: chain_head
SELECT event_id, hash FROM memory_events WHERE hash IS NOT NULL ORDER BY event_id DESC LIMIT 1;

-- name: chain_newest_after
SELECT max(event_id) FROM memory_events WHERE event_id > $after;

-- name: chain_unsealed_after
SELECT event_id, occurred_at, actor, action, memory_id, reason, before::VARCHAR, after::VARCHAR
FROM memory_events WHERE event_id > $floor AND hash IS NULL ORDER BY event_id;

-- Rows come from a registered Arrow table echo_duck_event_seal_stage (event_id, salt, content_digest,
-- prev_hash, hash).
-- name: chain_apply_seals
UPDATE memory_events SET salt = s.salt, content_digest = s.content_digest, prev_hash = s.prev_hash, hash = s.hash
FROM echo_duck_event_seal_stage s WHERE memory_events.event_id = s.event_id;

-- name: chain_count_sealed
SELECT count(*) FILTER (WHERE hash IS NOT NULL), count(*) FROM memory_events;

-- name: chain_all_events
SELECT event_id, occurred_at, actor, action, memory_id, reason, before::VARCHAR, after::VARCHAR,
       salt, content_digest, prev_hash, hash
FROM memory_events ORDER BY event_id;
