-- The audit report through the facade (store_lifecycle.audit()): one query per view of
-- sql/views/20_audit.sql. Views that show memory content or other agents' queries are narrowed to
-- what the calling agent may see; an analyst querying the views directly sees the whole store.

-- name: audit_memory_health
SELECT * FROM memory_health;

-- name: audit_memory_counts
SELECT * FROM memory_counts;

-- name: audit_provenance_coverage
SELECT * FROM provenance_coverage;

-- name: audit_open_contradictions
SELECT * FROM open_contradictions
WHERE memory_a IN (SELECT id FROM visible_memories($caller_agent, $caller_session::VARCHAR))
  AND memory_b IN (SELECT id FROM visible_memories($caller_agent, $caller_session::VARCHAR));

-- name: audit_stale_recalls
SELECT * FROM stale_recalls WHERE agent_id = $caller_agent;

-- name: audit_leaked_recalls
SELECT * FROM leaked_recalls WHERE agent_id = $caller_agent;

-- name: audit_memory_utility
SELECT * FROM memory_utility
WHERE id IN (SELECT id FROM visible_memories($caller_agent, $caller_session::VARCHAR));

-- name: audit_decay_histogram
SELECT * FROM decay_histogram;

-- name: audit_blocked_writes_by_reason
SELECT * FROM blocked_writes_by_reason;
