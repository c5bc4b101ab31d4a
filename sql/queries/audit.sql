-- The audit report through the facade (store_lifecycle.audit()): one query per view of
-- sql/views/20_audit.sql, narrowed to what the calling agent may see ($caller_agent NULL: an admin handle, the
-- whole store, as an analyst querying the views directly).

-- name: audit_memory_health
SELECT * FROM visible_memory_health($caller_agent, $caller_session::VARCHAR);

-- name: audit_memory_counts
SELECT * FROM visible_memory_counts($caller_agent, $caller_session::VARCHAR);

-- name: audit_provenance_coverage
SELECT * FROM visible_provenance_coverage($caller_agent, $caller_session::VARCHAR);

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
SELECT * FROM visible_decay_histogram($caller_agent, $caller_session::VARCHAR);

-- name: audit_blocked_writes_by_reason
SELECT * FROM visible_blocked_writes($caller_agent);
