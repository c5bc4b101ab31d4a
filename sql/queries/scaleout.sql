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

-- Every id the store holds for the team, in any status (run on the store): what a publish retracts from the lake
-- unless it publishes it again, whichever source (a path before store ids, a store since moved) published it.
-- name: team_memory_ids
SELECT id::VARCHAR AS id FROM memories WHERE team_id = $team_id;

-- Rows this source published before (by its id, or by the store's path as publishes before store ids named it),
-- rows whose id the store holds, and rows that carry a republished id make way for the new set, so an update
-- replaces its old version and a forgotten memory disappears from the lake.
-- name: retract_team_memories
DELETE FROM team_lake.team_memories
WHERE team_id = $team_id
  AND (source IN ($source, $by_path) OR id IN (SELECT id FROM echo_duck_publish_stage)
       OR id IN (SELECT id FROM echo_duck_publish_held));

-- The lake keeps no history (scaleout.py): the files a retraction touched are rewritten without the rows, every
-- snapshot before the newest is expired, and the files no snapshot refers to are deleted.
-- name: rewrite_team_lake_files
CALL ducklake_rewrite_data_files('team_lake', 'team_memories', delete_threshold => 0);

-- name: team_lake_older_snapshots
SELECT snapshot_id FROM ducklake_snapshots('team_lake')
WHERE snapshot_id < (SELECT max(snapshot_id) FROM ducklake_snapshots('team_lake'));

-- name: expire_team_lake_snapshots
CALL ducklake_expire_snapshots('team_lake', versions => $versions::UBIGINT[]);

-- name: clean_up_team_lake_files
CALL ducklake_cleanup_old_files('team_lake', cleanup_all => true);

-- The tables of a DuckDB file (on its own read-only connection): is an existing catalog file a DuckLake catalog?
-- name: catalog_table_names
SELECT table_name FROM information_schema.tables;

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
