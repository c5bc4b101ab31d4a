-- The audit report (echo_duck/store.py audit()): one query per view of sql/views/20_audit.sql.

-- name: audit_memory_health
SELECT * FROM memory_health;

-- name: audit_memory_counts
SELECT * FROM memory_counts;

-- name: audit_provenance_coverage
SELECT * FROM provenance_coverage;

-- name: audit_open_contradictions
SELECT * FROM open_contradictions;

-- name: audit_stale_recalls
SELECT * FROM stale_recalls;

-- name: audit_leaked_recalls
SELECT * FROM leaked_recalls;

-- name: audit_memory_utility
SELECT * FROM memory_utility;

-- name: audit_decay_histogram
SELECT * FROM decay_histogram;

-- name: audit_blocked_writes_by_reason
SELECT * FROM blocked_writes_by_reason;
