-- The append-only event log and the quarantine of refused writes. Only inserts here.

-- Records a change; `after` is read from the row as it is now (NULL if the row is gone). A create event's reason
-- starts with 'quarantined' only when the row was held (approval_never_given reads it so; validate.reason refuses
-- such a caller's reason first).
-- name: log_event
INSERT INTO memory_events (occurred_at, actor, action, memory_id, reason, before, after)
SELECT $now, $actor, $action, $memory_id,
       CASE WHEN $action = 'create' AND starts_with($reason, 'quarantined') AND r.status IS DISTINCT FROM 'quarantined'
            THEN error('a create event''s reason may start with ''quarantined'' only for a row the scanner held')
            ELSE $reason END,
       $before::JSON, r.row
FROM (SELECT 1) AS one LEFT JOIN (SELECT to_json(m) AS row, m.status FROM memories m WHERE m.id = $memory_id) AS r
     ON true;  -- one read of the row for both

-- Records a change of a few columns: before/after hold only those (JSON text), not the whole row.
-- name: log_partial_event
INSERT INTO memory_events (occurred_at, actor, action, memory_id, reason, before, after)
VALUES ($now, $actor, $action, $memory_id, $reason, $before::JSON, $after::JSON);

-- name: events_for_memories
SELECT event_id, occurred_at, actor, action, memory_id, reason, before::VARCHAR AS before, after::VARCHAR AS after
FROM memory_events
WHERE list_contains($ids::UUID[], memory_id)
ORDER BY event_id;

-- name: log_blocked_write
INSERT INTO blocked_writes (occurred_at, actor, agent_id, path, field, reason, detail, excerpt)
VALUES ($now, $actor, $agent_id, $path, $field, $reason, $detail, $excerpt);
