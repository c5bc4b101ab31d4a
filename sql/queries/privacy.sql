-- Deletion cascade for privacy requests (echo_duck/lifecycle/privacy.py). Purge ids come from a registered
-- Arrow table named echo_duck_purge_stage (memory_id VARCHAR).

-- Memories derived from any of $refs ('memory:<id>', 'message:<id>'), and the summary memory of
-- any episode named 'summary:<episode id>', that are not already in the purge set.
-- $agent: only that agent's memories (an agent's purge touches nothing of another's); NULL: any (an admin's).
-- Live or already in the Parquet archive (memories_all): an archived version of a derived memory holds the text too.
-- A ref an import claimed ('claimed-message:<id>', importers.py) counts here: what claims to come from a purged
-- memory or message goes with it (a purge never follows a claim forward, to what it names).
-- name: derived_memories
SELECT id, type, tier, status, source_refs, episode_id, storage = 'archive' AS archived FROM memories_all
WHERE (list_has_any(list_transform(source_refs, r -> regexp_replace(r, '^claimed-', '')), $refs::VARCHAR[])
       OR (tier = 'episodic' AND list_contains($refs::VARCHAR[], 'summary:' || episode_id::VARCHAR)))
  AND NOT list_contains($exclude::VARCHAR[], id::VARCHAR)
  AND ($agent::VARCHAR IS NULL OR (agent_id = $agent::VARCHAR AND NOT coalesce(by_host, false)));

-- Of the message ids $messages and episode ids $episodes a memory cites, those of its owner $owner's own sessions
-- and episodes: a ref to another agent's message or episode was not where the memory came from (a write may cite
-- any id), and purging the memory must not delete that agent's conversation.
-- name: owned_messages
SELECT m.id::VARCHAR FROM messages m
WHERE list_contains($messages::VARCHAR[], m.id::VARCHAR) AND m.agent_id = $owner;

-- name: owned_episodes
SELECT id::VARCHAR FROM episodes WHERE list_contains($episodes::VARCHAR[], id::VARCHAR) AND agent_id = $owner;

-- Every version of the fact $id belongs to, live or in the Parquet archive: its older and newer versions (a newer one
-- names the older in supersedes) and every row of the same owner superseded into any of them (a restatement folded
-- into it at write time, lifecycle/compress.py: it holds the same words, and was left behind). Not the winner of a
-- dispute this row lost, nor another agent's claim that lost to it: a dispute links two facts, not two versions.
-- A keyed fact's rows are also the rows its writer (agent, and host mark) exported to Parquet under the same key in
-- the same scope, active or superseded (exported_under_key): a fact that decayed into the archive is not linked to the
-- key written again later (a write reads the live table only), and a purge of the key must take it too.
-- name: version_chain_all
WITH RECURSIVE
    every AS MATERIALIZED (SELECT id, agent_id, supersedes, superseded_by, key, scope, team_id, tenant_id,
                                  source_session, by_host, status, storage FROM memories_all),
    seed AS (
        SELECT e.id, e.agent_id, e.supersedes FROM every e JOIN every t ON t.id = $id
        WHERE e.id = t.id OR (exported_under_key(e, t))
    ),
    chain(id, agent_id, prev) AS (
        SELECT id, agent_id, supersedes FROM seed
        UNION
        SELECT m.id, m.agent_id, m.supersedes FROM every m JOIN chain c
            ON m.id = c.prev OR m.supersedes = c.id OR (m.superseded_by = c.id AND m.agent_id = c.agent_id)
    )
SELECT DISTINCT id FROM chain;

-- name: memories_all_by_ids
SELECT * FROM memories_all WHERE id IN (SELECT unnest($ids::VARCHAR::UUID[]));

-- A memory already in the Parquet archive that the caller can see ($any_agent: an admin, any): to purge it, or to
-- restore, get or show the history of one (lifecycle/returning.py).
-- name: archived_memory
SELECT * FROM memories_all
WHERE id = $id AND storage = 'archive'
  AND ($any_agent OR (can_see(scope, agent_id, team_id, tenant_id, source_session, tags, sensitivity,
                               $caller_agent, $caller_session::VARCHAR)
                      AND NOT barred_from(id, status, agent_id, $caller_agent)));

-- The exported rows the caller may see whose id starts with $prefix (get() by a short id, as archived_memory).
-- name: archived_by_id_prefix
SELECT * FROM memories_all
WHERE starts_with(id::VARCHAR, lower($prefix)) AND storage = 'archive'
  AND can_see(scope, agent_id, team_id, tenant_id, source_session, tags, sensitivity, $caller_agent,
              $caller_session::VARCHAR)
  AND NOT barred_from(id, status, agent_id, $caller_agent)
ORDER BY created_at
LIMIT 5;

-- Recall queries that returned a purged memory may quote it: their text goes too.
-- name: scrub_purged_recall_queries
UPDATE recall_log SET query = '[purged]'
WHERE list_has_any(memory_ids, (SELECT list(memory_id::UUID) FROM echo_duck_purge_stage));

-- name: episodes_from_messages
SELECT e.id FROM episodes e
JOIN messages m ON m.agent_id = e.agent_id AND m.session_id = e.session_id AND m.seq BETWEEN e.first_seq AND e.last_seq
WHERE list_contains($messages::VARCHAR[], m.id::VARCHAR)
GROUP BY e.id;

-- name: purge_keyword_docs
INSERT INTO bm25_dead SELECT doc FROM bm25_docs WHERE memory_id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);
DELETE FROM bm25_docs WHERE memory_id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);
DELETE FROM memory_vectors WHERE memory_id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);
DELETE FROM contradiction_decisions WHERE contradiction_id IN (
    SELECT id FROM contradictions WHERE memory_a IN (SELECT memory_id::UUID FROM echo_duck_purge_stage)
                                     OR memory_b IN (SELECT memory_id::UUID FROM echo_duck_purge_stage));
DELETE FROM contradictions WHERE memory_a IN (SELECT memory_id::UUID FROM echo_duck_purge_stage)
                              OR memory_b IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);
DELETE FROM memory_feedback WHERE memory_id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);
DELETE FROM pending_checks WHERE memory_id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);

-- The one exception to the append-only log: a purged memory's events keep who/when/what, not content.
-- The salt goes too, so the kept content_digest cannot confirm a guess of the text; the chain's
-- links still verify (echo_duck/storage/event_chain.py).
-- name: blank_purged_events
UPDATE memory_events SET before = NULL, after = NULL, reason = NULL, salt = NULL
WHERE memory_id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);

-- name: delete_purged_memories
DELETE FROM memories WHERE id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);

-- name: log_purge_events
INSERT INTO memory_events (occurred_at, actor, action, memory_id, reason, before, after)
SELECT $now, $actor, 'purge', memory_id::UUID, $reason, NULL, NULL FROM echo_duck_purge_stage;

-- The store file still holds the purged text in freed blocks until erasure.py rewrites it.
-- name: mark_purges_pending
INSERT OR IGNORE INTO pending_purges SELECT memory_id::UUID, $now FROM echo_duck_purge_stage;

-- name: count_archived_purges
SELECT count(*) FROM memories_all WHERE storage = 'archive' AND id IN (SELECT memory_id::UUID FROM echo_duck_purge_stage);

-- name: pending_purge_ids
SELECT memory_id::VARCHAR FROM pending_purges ORDER BY memory_id;

-- name: flag_memory
UPDATE memories SET status = 'flagged', updated_at = greatest(updated_at, $now), row_version = nextval('memory_row_version_seq')
WHERE id = $id;

-- name: delete_messages
DELETE FROM messages WHERE list_contains($ids::VARCHAR[], id::VARCHAR);

-- name: purge_episode
DELETE FROM episodes WHERE id = $id;

-- A flagged episode keeps its row (which messages, when) but not its summary or entities: they quote the purged
-- message or note (an extractive summary copies its sentences).
-- name: flag_episode
UPDATE episodes SET status = 'flagged', summary = '(summary withdrawn: a message it summarised was purged)',
                    entities = []
WHERE id = $id;

-- name: keyword_doc_exists
SELECT count(*) FROM bm25_docs WHERE memory_id = $id;

-- name: clear_pending_purges
DELETE FROM pending_purges;
