-- Scale-out (echo_duck/io/scaleout.py): team memories published from a store to a DuckLake catalog that
-- several processes read. The lake side runs on its own connection with the catalog attached as
-- team_lake; {catalog} and {data_path} are replaced by quoted literals (ATTACH cannot bind parameters).
-- Rows to publish come from a registered Arrow table named echo_duck_publish_stage.

-- Live team-scoped memories of one team that the publishing agent may see (run on the store).
-- name: team_memories_to_publish
SELECT id::VARCHAR AS id, team_id, agent_id AS author, type, key, content, tags, provenance,
       importance, confidence, version, created_at, updated_at
FROM visible_memories($caller_agent, $caller_session)
WHERE scope = 'team' AND team_id = $team_id AND status = 'active'
  AND another_agent_may_see(sensitivity, tags)  -- a lake has no per-reader rights: never sensitive ones
ORDER BY created_at, id;

-- name: attach_team_lake
ATTACH {catalog} AS team_lake (DATA_PATH {data_path}, DATA_INLINING_ROW_LIMIT 0);

-- name: attach_team_lake_read_only
ATTACH {catalog} AS team_lake (READ_ONLY);

-- One row per published memory; a publish replaces what the same source published for the team.
-- name: create_team_memories
CREATE TABLE IF NOT EXISTS team_lake.team_memories (
    id VARCHAR NOT NULL, team_id VARCHAR NOT NULL, author VARCHAR NOT NULL, type VARCHAR NOT NULL,
    key VARCHAR, content VARCHAR NOT NULL, tags VARCHAR[], provenance TINYINT, importance DOUBLE,
    confidence DOUBLE, version INTEGER, created_at TIMESTAMP, updated_at TIMESTAMP,
    source VARCHAR NOT NULL, published_at TIMESTAMP NOT NULL
);

-- Every id the store ever held (run on the store): its event log names each memory it made, purged and archived ones
-- too. A publish retracts the rows under these ids for its team, whoever published them (its old path, a copy).
-- name: memory_ids_ever_held
SELECT DISTINCT memory_id::VARCHAR AS id FROM memory_events WHERE memory_id IS NOT NULL;

-- The rows a publish keeps (run before its transaction: it writes the lake alone): other teams', and the team's
-- that carry no id the store ever held (whatever their source says: two containers' stores may share a path).
-- name: keep_team_memories
CREATE OR REPLACE TEMP TABLE echo_duck_lake_keep AS
SELECT * FROM team_lake.team_memories
WHERE team_id <> $team_id
   OR (id NOT IN (SELECT id FROM echo_duck_publish_held) AND id NOT IN (SELECT id FROM echo_duck_publish_stage));

-- The attached catalog (DuckLake's own attach of the file) copied into a fresh file (scaleout._rewrite_catalog).
-- name: copy_team_lake_catalog
COPY FROM DATABASE __ducklake_metadata_team_lake TO echo_duck_fresh_catalog;

-- The table written anew with the rows kept: DuckLake's table statistics (min/max per column) only ever widen, so a
-- DELETE would leave a retracted text as the content column's max_value for every reader.
-- (Dropped, then create_team_memories again, then refilled, in one transaction.)
-- name: drop_team_memories
DROP TABLE team_lake.team_memories;

-- name: refill_team_memories
INSERT INTO team_lake.team_memories SELECT * FROM echo_duck_lake_keep;

-- The lake keeps no history (scaleout.py): every snapshot before the newest is expired, and the files no snapshot
-- refers to are deleted.
-- name: team_lake_older_snapshots
SELECT snapshot_id FROM ducklake_snapshots('team_lake')
WHERE snapshot_id < (SELECT max(snapshot_id) FROM ducklake_snapshots('team_lake'));

-- name: expire_team_lake_snapshots
CALL ducklake_expire_snapshots('team_lake', versions => $versions::UBIGINT[]);

-- The files DuckLake scheduled for deletion (those of expired snapshots): scaleout._clean_up deletes the ones named as
-- DuckLake names a table's files, then drops every row (ducklake_cleanup_old_files would delete whatever a shared
-- catalog's row names).
-- name: team_lake_files_due
SELECT data_file_id, path, path_is_relative FROM __ducklake_metadata_team_lake.ducklake_files_scheduled_for_deletion;

-- name: forget_team_lake_files_due
DELETE FROM __ducklake_metadata_team_lake.ducklake_files_scheduled_for_deletion
WHERE data_file_id IN (SELECT unnest($ids::BIGINT[]));

-- The tables of a DuckDB file (on its own read-only connection): is an existing catalog file a DuckLake catalog?
-- name: catalog_table_names
SELECT table_name FROM information_schema.tables;

-- The paths the attached catalog records that are absolute or climb out of its data folder (scaleout.py).
-- name: team_lake_paths_outside
SELECT path FROM (
    SELECT path, path_is_relative FROM __ducklake_metadata_team_lake.ducklake_schema
    UNION ALL SELECT path, path_is_relative FROM __ducklake_metadata_team_lake.ducklake_table
    UNION ALL SELECT path, path_is_relative FROM __ducklake_metadata_team_lake.ducklake_data_file
    UNION ALL SELECT path, path_is_relative FROM __ducklake_metadata_team_lake.ducklake_delete_file
    UNION ALL SELECT path, path_is_relative FROM __ducklake_metadata_team_lake.ducklake_files_scheduled_for_deletion)
WHERE path IS NOT NULL AND (NOT coalesce(path_is_relative, false) OR starts_with(path, '/')
                            OR list_contains(string_split(replace(path, chr(92), '/'), '/'), '..'));

-- name: insert_team_memories
INSERT INTO team_lake.team_memories
SELECT id, team_id, author, type, key, content, tags, provenance, importance, confidence, version,
       created_at, updated_at, $source, $now
FROM echo_duck_publish_stage;

-- name: team_lake_snapshot
SELECT max(snapshot_id) FROM ducklake_snapshots('team_lake');

-- What a team member reads: the team's memories, newest change first.
-- name: read_team_memories
SELECT id, team_id, author, type, key, content, tags, provenance, importance, confidence, version,
       created_at, updated_at, source, published_at
FROM team_lake.team_memories
WHERE team_id = $team_id
ORDER BY updated_at DESC, id;
