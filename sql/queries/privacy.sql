-- Deletion cascade for privacy requests (echo_duck/lifecycle/privacy.py). Purge ids come from a registered
-- Arrow table named echo_duck_purge_stage (memory_id VARCHAR).

-- Memories derived from any of $refs ('memory:<id>', 'message:<id>'), and the summary memory of
-- any episode named 'summary:<episode id>', that are not already in the purge set.
-- name: derived_memories
SELECT id, type, status, source_refs, episode_id FROM memories
WHERE (list_has_any(source_refs, $refs::VARCHAR[])
       OR (tier = 'episodic' AND list_contains($refs::VARCHAR[], 'summary:' || episode_id::VARCHAR)))
  AND NOT list_contains($exclude::VARCHAR[], id::VARCHAR);

-- Every version of the fact $id belongs to, live or in the Parquet archive.
-- name: version_chain_all
WITH RECURSIVE
    older(id, prev) AS (
        SELECT id, supersedes FROM memories_all WHERE id = $id
        UNION
        SELECT m.id, m.supersedes FROM memories_all m JOIN older o ON m.id = o.prev
    ),
    newer(id, next) AS (
        SELECT id, superseded_by FROM memories_all WHERE id = $id
        UNION
        SELECT m.id, m.superseded_by FROM memories_all m JOIN newer n ON m.id = n.next
    )
SELECT id FROM older UNION SELECT id FROM newer;

-- name: memories_all_by_ids
SELECT * FROM memories_all WHERE id IN (SELECT unnest($ids::VARCHAR::UUID[]));

-- name: visible_archived_memory
SELECT * FROM memories_all
WHERE id = $id AND storage = 'archive'
  AND can_see(scope, agent_id, team_id, tenant_id, source_session, tags, $caller_agent, $caller_session::VARCHAR);

-- Recall queries that returned a purged memory may quote it: their text goes too.
-- name: scrub_purged_recall_queries
UPDATE recall_log SET query = '[purged]'
WHERE list_has_any(memory_ids, (SELECT list(memory_id::UUID) FROM echo_duck_purge_stage));

-- name: episodes_from_messages
SELECT e.id FROM episodes e JOIN messages m ON m.session_id = e.session_id AND m.seq BETWEEN e.first_seq AND e.last_seq
WHERE list_contains($messages::VARCHAR[], m.id::VARCHAR)
GROUP BY e.id;

-- The memory whose conversational context was this one (the next in its session); the purged one
-- may already be in the archive.
-- name: next_in_session
SELECT n.id FROM memories n, memories_all p
WHERE p.id = $id AND n.agent_id = p.agent_id AND n.source_session = p.source_session AND n.id <> p.id
  AND (coalesce(n.observed_at, n.created_at) > coalesce(p.observed_at, p.created_at)
       OR (coalesce(n.observed_at, n.created_at) = coalesce(p.observed_at, p.created_at) AND n.created_at > p.created_at))
ORDER BY coalesce(n.observed_at, n.created_at), n.created_at, n.id
LIMIT 1;

-- name: purge_keyword_docs
INSERT INTO bm25_dead SELECT doc FROM bm25_docs WHERE memory_id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);
DELETE FROM bm25_docs WHERE memory_id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);
DELETE FROM memory_vectors WHERE memory_id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);
DELETE FROM contradictions WHERE memory_a IN (SELECT memory_id::UUID FROM echo_duck_purge_stage)
                              OR memory_b IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);
DELETE FROM memory_feedback WHERE memory_id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);

-- The one exception to the append-only log: a purged memory's events keep who/when/what, not content.
-- name: blank_purged_events
UPDATE memory_events SET before = NULL, after = NULL, reason = '[purged]'
WHERE memory_id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);

-- name: delete_purged_memories
DELETE FROM memories WHERE id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);

-- name: log_purge_events
INSERT INTO memory_events (occurred_at, actor, action, memory_id, reason, before, after)
SELECT $now, $actor, 'purge', memory_id::UUID, $reason, NULL, NULL FROM echo_duck_purge_stage;

-- name: flag_memory
UPDATE memories SET status = 'flagged', updated_at = greatest(updated_at, $now), row_version = nextval('memory_row_version_seq')
WHERE id = $id;

-- name: delete_messages
DELETE FROM messages WHERE list_contains($ids::VARCHAR[], id::VARCHAR);

-- name: purge_episode
DELETE FROM episodes WHERE id = $id;

-- name: flag_episode
UPDATE episodes SET status = 'flagged' WHERE id = $id;

-- name: keyword_doc_exists
SELECT count(*) FROM bm25_docs WHERE memory_id = $id;

-- name: reindex_row
SELECT id, agent_id, source_session, coalesce(observed_at, created_at) AS at, created_at, content
FROM memories WHERE id = $id;
