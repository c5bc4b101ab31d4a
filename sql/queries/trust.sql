-- Rights, ownership and administration (issue 18): echo_duck/write/writer.py, echo_duck/store/admin_verbs.py.

-- Does the agent hold a current right to publish into this scope ('*' stands for any group)?
-- $scope is team, tenant or public; $group_id the team or tenant id (NULL for public).
-- name: has_publish_right
SELECT count(*) > 0 FROM agent_rights
WHERE agent_id = $agent_id AND revoked_at IS NULL
  AND ("right" = 'publish:' || $scope || coalesce(':' || $group_id::VARCHAR, '')
       OR ($group_id::VARCHAR IS NOT NULL AND "right" = 'publish:' || $scope || ':*'));

-- A grant to a current holder changes nothing; a grant after a revocation starts a new period.
-- name: grant_right
INSERT INTO agent_rights
SELECT $agent_id, $right, $now, $granted_by, NULL
WHERE NOT EXISTS (SELECT 1 FROM agent_rights WHERE agent_id = $agent_id AND "right" = $right AND revoked_at IS NULL);

-- name: revoke_right
UPDATE agent_rights SET revoked_at = $now WHERE agent_id = $agent_id AND "right" = $right AND revoked_at IS NULL;

-- name: current_rights
SELECT agent_id, "right", granted_at, granted_by FROM agent_rights
WHERE revoked_at IS NULL AND ($agent_id::VARCHAR IS NULL OR agent_id = $agent_id)
ORDER BY agent_id, "right";

-- name: current_memberships
SELECT agent_id, kind, group_id, granted_at FROM memberships
WHERE revoked_at IS NULL AND ($agent_id::VARCHAR IS NULL OR agent_id = $agent_id)
ORDER BY agent_id, kind, group_id;

-- An event about the store rather than one memory (memberships, rights, settings, SQL run by an
-- admin, reinforcement batches): memory_id NULL, what changed in before/after.
-- name: log_store_event
INSERT INTO memory_events (occurred_at, actor, action, memory_id, reason, before, after)
VALUES ($now, $actor, $action, NULL, $reason, $before::JSON, $after::JSON);

-- An event about one memory whose row did not change shape (a feedback mark): after is given.
-- name: log_memory_note
INSERT INTO memory_events (occurred_at, actor, action, memory_id, reason, before, after)
VALUES ($now, $actor, $action, $memory_id, $reason, NULL, $after::JSON);

-- name: all_settings
SELECT name, value FROM settings ORDER BY name;

-- name: set_setting
UPDATE settings SET value = $value WHERE name = $name;

-- Which of these memories ($ids: text '[uuid, …]'), live or in the Parquet archive, the caller may see, as
-- visible_memories decides: history() of a shared fact whose older versions were sensitive or exported, the other
-- sides of an as-of recall's conflicts.
-- name: visible_of_ids
SELECT m.id FROM memories_all m
WHERE m.id IN (SELECT unnest($ids::VARCHAR::UUID[]))
  AND can_see(m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity,
              $caller_agent, $caller_session::VARCHAR)
  AND NOT barred_from(m.id, m.status, m.agent_id, $caller_agent);

-- Who wrote the episode $id (NULL: none): a memory's episode_id names one of its writer's own episodes.
-- name: episode_owner
SELECT agent_id FROM episodes WHERE id = $id;

-- The agent ids this store knows: members, holders of a right, writers of a memory, and the host's default (admin's
-- grant refuses an id a person would take for one of these: store/admin_verbs.py).
-- name: known_agent_ids
SELECT agent_id FROM memberships UNION SELECT agent_id FROM agent_rights
UNION SELECT DISTINCT agent_id FROM memories UNION SELECT 'default';
