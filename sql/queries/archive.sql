-- The Parquet cold archive (echo_duck/lifecycle/archive.py). Staged ids come from a registered Arrow table
-- named echo_duck_archive_stage (memory_id VARCHAR).

-- Archived (decayed) and superseded rows untouched since the cutoff, but the two sides of a decision by recency
-- nobody reviewed: they stay live until reviewed (with either in Parquet its Conflicts line went,
-- contradictions('resolved') lost it, and resolve() could no longer reverse the decision). Retention counts from the
-- last change or the last review, whichever is later: a decayed memory recalled again (include_archived=True reviews
-- it) is in use and stays in the live table.
-- name: archive_candidates
SELECT * FROM memories
WHERE updated_at < $cutoff AND coalesce(last_accessed, updated_at) < $cutoff
  AND (status = 'superseded' OR (status = 'active' AND tier = 'archival'))
  AND id NOT IN (SELECT memory_a FROM contradictions WHERE status = 'resolved' AND resolution = 'newer'
                 UNION ALL SELECT memory_b FROM contradictions WHERE status = 'resolved' AND resolution = 'newer')
ORDER BY agent_id, created_at, id;

-- name: insert_archive_export
INSERT INTO archive_exports (id, created_at, status, rows) VALUES ($id, $now, 'staged', $rows);

-- name: insert_archive_export_rows
INSERT INTO archive_export_rows SELECT $id::UUID, memory_id::UUID FROM echo_duck_archive_stage;

-- name: mark_archive_export_moved
UPDATE archive_exports SET status = 'moved', files = $files WHERE id = $id;

-- name: mark_archive_export_done
UPDATE archive_exports SET status = 'done', finished_at = $now WHERE id = $id;

-- name: mark_archive_export_abandoned
UPDATE archive_exports SET status = 'abandoned' WHERE id = $id;

-- name: unfinished_archive_exports
SELECT id, status FROM archive_exports WHERE status IN ('staged', 'moved') ORDER BY created_at;

-- The row itself is in the Parquet file; the event says where it went.
-- name: log_archive_export_events
INSERT INTO memory_events (occurred_at, actor, action, memory_id, reason, before, after)
SELECT $now, $actor, 'export', r.memory_id, 'moved to the Parquet archive (export ' || $id::VARCHAR || ')',
       json_object('storage', 'live'), json_object('storage', 'archive', 'export_id', $id::VARCHAR)
FROM archive_export_rows r WHERE r.export_id = $id;

-- name: mark_exported_keyword_docs_dead
INSERT INTO bm25_dead
SELECT doc FROM bm25_docs WHERE memory_id IN (SELECT memory_id FROM archive_export_rows WHERE export_id = $id);

-- name: delete_exported_keyword_docs
DELETE FROM bm25_docs WHERE memory_id IN (SELECT memory_id FROM archive_export_rows WHERE export_id = $id);

-- name: delete_exported_vectors
DELETE FROM memory_vectors WHERE memory_id IN (SELECT memory_id FROM archive_export_rows WHERE export_id = $id);

-- name: delete_exported_memories
DELETE FROM memories WHERE id IN (SELECT memory_id FROM archive_export_rows WHERE export_id = $id);

-- memories_all = live rows + the Parquet archive, one row per id (the live copy wins while an
-- interrupted export still has both). {archive_glob} is replaced by a list of quoted file paths (the
-- readable archive files: a damaged one is left out and reported, echo_duck/lifecycle/archive.py).
-- name: create_memories_all_with_archive
CREATE OR REPLACE VIEW memories_all AS
WITH archived AS (
    SELECT * EXCLUDE (year), 'archive' AS storage
    FROM read_parquet({archive_glob}, hive_partitioning = true, union_by_name = true)
    WHERE id::UUID NOT IN (SELECT id FROM memories)
    QUALIFY row_number() OVER (PARTITION BY id ORDER BY updated_at DESC) = 1
),
-- an exported version narrowed since (a later version made the fact sensitive or no longer shared: write/narrowing.py
-- logs a 'narrow' event, the Parquet file keeps what it was) reads narrowed, as memories_as_of reads it
narrowed AS (
    SELECT memory_id AS id, arg_max(CAST(after ->> 'sensitivity' AS VARCHAR), event_id) AS sensitivity,
           bool_or(NOT list_contains(CAST(after -> 'tags' AS VARCHAR[]), 'share:personal')) AS unshared
    FROM memory_events WHERE action = 'narrow' AND memory_id IS NOT NULL AND after IS NOT NULL
    GROUP BY memory_id
)
SELECT *, 'live' AS storage FROM memories
UNION ALL BY NAME
SELECT a.* REPLACE (
    a.id::UUID AS id, a.episode_id::UUID AS episode_id, a.supersedes::UUID AS supersedes,
    a.superseded_by::UUID AS superseded_by,
    ['normal', 'personal', 'sensitive'][greatest(list_position(['normal', 'personal', 'sensitive'], a.sensitivity),
                                                 coalesce(list_position(['normal', 'personal', 'sensitive'], n.sensitivity), 1))]
        AS sensitivity,
    CASE WHEN coalesce(n.unshared, false) THEN list_filter(a.tags, t -> t <> 'share:personal') ELSE a.tags END AS tags)
FROM archived a LEFT JOIN narrowed n ON n.id = a.id::UUID;
COMMENT ON VIEW memories_all IS 'Every memory, live and archived to Parquet, one row per id; storage says where it lives';

-- name: create_memories_all_live_only
CREATE OR REPLACE VIEW memories_all AS SELECT *, 'live' AS storage FROM memories;
COMMENT ON VIEW memories_all IS 'Every memory, live and archived to Parquet, one row per id; storage says where it lives';

-- memories_all as the file holds it (archive.adopt_legacy_folder reads which archive folder it names).
-- name: memories_all_definition
SELECT sql FROM duckdb_views() WHERE database_name = current_database() AND view_name = 'memories_all';

-- Does memories_all exist (refresh_view skips rebuilding it while its recorded definition still holds)?
-- name: memories_all_exists
SELECT count(*) > 0 FROM duckdb_views() WHERE database_name = current_database() AND view_name = 'memories_all';

-- The newest archived memory of key $key the caller can see, its own first (lifecycle/returning.py).
-- name: archived_memory_by_key
SELECT * FROM memories_all
WHERE key = $key AND storage = 'archive' AND status = 'active'
  AND ($any_agent OR (can_see(scope, agent_id, team_id, tenant_id, source_session, tags, sensitivity,
                               $caller_agent, $caller_session::VARCHAR)
                      AND NOT barred_from(id, status, agent_id, $caller_agent)))
ORDER BY agent_id = $caller_agent DESC, created_at DESC, id
LIMIT 1;

-- A row of the Parquet archive back into the live table, numbered anew by row_version's default
-- (lifecycle/returning.py).
-- name: insert_returned_memory
INSERT INTO memories BY NAME
SELECT * EXCLUDE (storage, row_version) FROM memories_all WHERE id = $id AND storage = 'archive';

-- A live memory of agent $agent with key $key: a memory restored from the archive would stand beside it.
-- name: live_key_of_owner
SELECT id FROM memories WHERE agent_id = $agent AND key = $key AND status = 'active' LIMIT 1;
