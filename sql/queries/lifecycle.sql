-- Decay, restore and gc (echo_duck/lifecycle/decay.py). Each job is one transaction.

-- Rows the decay job would archive now: live, not exempt, below archive_threshold, not yet archival.
-- name: decay_candidates
SELECT d.id, d.key, d.type, d.effective_importance, d.days_since_access
FROM memory_decay_at($now) d
JOIN memories m ON m.id = d.id
WHERE d.below_threshold AND m.tier <> 'archival'
ORDER BY d.effective_importance, d.id;

-- The events of a decay run record only what changed (tier, updated_at), not the whole row:
-- at a million rows, a full JSON copy per archived row was most of the job's time.
-- name: stage_decay_batch
CREATE OR REPLACE TEMP TABLE echo_duck_decay_batch AS
SELECT m.id, json_object('tier', m.tier, 'updated_at', m.updated_at) AS before
FROM memories m
WHERE m.tier <> 'archival'
  AND m.id IN (SELECT id FROM memory_decay_at($now) WHERE below_threshold);

-- name: apply_decay_batch
UPDATE memories SET tier = 'archival', updated_at = greatest(updated_at, $now), row_version = nextval('memory_row_version_seq')
WHERE id IN (SELECT id FROM temp.echo_duck_decay_batch);

-- name: log_decay_batch
INSERT INTO memory_events (occurred_at, actor, action, memory_id, reason, before, after)
SELECT $now, $actor, 'archive', b.id, 'effective importance fell below archive_threshold', b.before,
       json_object('tier', m.tier, 'updated_at', m.updated_at)
FROM temp.echo_duck_decay_batch b JOIN memories m ON m.id = b.id;

-- name: count_decay_batch
SELECT count(*) FROM temp.echo_duck_decay_batch;

-- name: drop_decay_batch
DROP TABLE IF EXISTS temp.echo_duck_decay_batch;

-- The tier a memory had before it was archived (from its last archive event), for restore().
-- name: tier_before_archive
SELECT coalesce(max_by(json_extract_string(before, '$.tier'), event_id), 'semantic')
FROM memory_events WHERE memory_id = $id AND action = 'archive';

-- name: restore_memory
UPDATE memories SET tier = $tier, last_accessed = $now, updated_at = greatest(updated_at, $now),
                    row_version = nextval('memory_row_version_seq')
WHERE id = $id;

-- What gc may remove as of $cutoff (retention policy): forgotten rows, old retrieval log and
-- quarantine entries, finished export bookkeeping.
-- name: gc_counts
SELECT (SELECT count(*) FROM memories WHERE status = 'forgotten' AND updated_at < $cutoff) AS forgotten_memories,
       (SELECT count(*) FROM recall_log WHERE occurred_at < $cutoff) AS recall_log_rows,
       (SELECT count(*) FROM blocked_writes WHERE occurred_at < $cutoff) AS blocked_write_rows,
       (SELECT count(*) FROM archive_exports WHERE status IN ('done', 'abandoned') AND created_at < $cutoff) AS finished_exports;

-- name: gc_stage_forgotten
CREATE OR REPLACE TEMP TABLE echo_duck_gc_ids AS
SELECT id FROM memories WHERE status = 'forgotten' AND updated_at < $cutoff;

-- name: gc_apply
INSERT INTO bm25_dead SELECT doc FROM bm25_docs WHERE memory_id IN (SELECT id FROM temp.echo_duck_gc_ids);
DELETE FROM bm25_docs WHERE memory_id IN (SELECT id FROM temp.echo_duck_gc_ids);
DELETE FROM memory_vectors WHERE memory_id IN (SELECT id FROM temp.echo_duck_gc_ids);
DELETE FROM memories WHERE id IN (SELECT id FROM temp.echo_duck_gc_ids);
DROP TABLE temp.echo_duck_gc_ids;

-- name: gc_logs
DELETE FROM recall_log WHERE occurred_at < $cutoff::TIMESTAMP;
DELETE FROM blocked_writes WHERE occurred_at < $cutoff;
DELETE FROM archive_export_rows WHERE export_id IN
    (SELECT id FROM archive_exports WHERE status IN ('done', 'abandoned') AND created_at < $cutoff);
DELETE FROM archive_exports WHERE status IN ('done', 'abandoned') AND created_at < $cutoff;

-- name: log_gc_event
INSERT INTO memory_events (occurred_at, actor, action, memory_id, reason, before, after)
VALUES ($now, $actor, 'gc', NULL, $reason, NULL, NULL);
