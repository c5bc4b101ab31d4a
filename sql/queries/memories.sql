-- Reads and writes of the memories table used by the write path and the facade.
-- Every read a caller sees goes through visible_memories(caller_agent, caller_session).

-- name: insert_memory
INSERT INTO memories (
    id, agent_id, type, tier, key, content, tags, entities, scope, team_id, tenant_id,
    source_session, source_refs, created_at, updated_at, observed_at, importance, confidence,
    episode_id, version, supersedes, provenance, pinned, sensitivity, status
) VALUES (
    $id, $agent_id, $type, $tier, $key, $content, $tags, $entities, $scope, $team_id, $tenant_id,
    $source_session, $source_refs, $now, $now, $observed_at, $importance, $confidence,
    $episode_id, $version, $supersedes, $provenance, $pinned, $sensitivity, $status
);

-- name: memory_by_id
SELECT * FROM memories WHERE id = $id;

-- name: visible_memory_by_id
SELECT * FROM visible_memories($caller_agent, $caller_session) WHERE id = $id;

-- name: memory_json
SELECT to_json(m)::VARCHAR FROM memories m WHERE m.id = $id;

-- The rows a same-key write would replace: same key, same scope and same owner of that scope.
-- name: live_by_key_in_scope
SELECT * FROM memories
WHERE key = $key AND status = 'active' AND scope = $scope
  AND CASE scope
        WHEN 'private' THEN agent_id = $agent_id
        WHEN 'session' THEN agent_id = $agent_id AND source_session IS NOT DISTINCT FROM $source_session
        WHEN 'team' THEN team_id = $team_id
        WHEN 'tenant' THEN tenant_id = $tenant_id
        ELSE true
      END
ORDER BY created_at;

-- An identical keyless fact already stored in the same scope: the write becomes a no-op.
-- name: live_duplicate_in_scope
SELECT * FROM memories
WHERE key IS NULL AND content = $content AND status = 'active' AND scope = $scope
  AND CASE scope
        WHEN 'private' THEN agent_id = $agent_id
        WHEN 'session' THEN agent_id = $agent_id AND source_session IS NOT DISTINCT FROM $source_session
        WHEN 'team' THEN team_id = $team_id
        WHEN 'tenant' THEN tenant_id = $tenant_id
        ELSE true
      END
LIMIT 1;

-- Live rows with this key that the caller can see (update/forget by key).
-- name: visible_live_by_key
SELECT * FROM visible_memories($caller_agent, $caller_session)
WHERE key = $key AND status = 'active'
ORDER BY created_at;

-- name: find_memories
SELECT * FROM visible_memories($caller_agent, $caller_session)
WHERE ($key::VARCHAR IS NULL OR key = $key)
  AND ($types::VARCHAR[] IS NULL OR list_contains($types::VARCHAR[], type))
  AND ($tiers::VARCHAR[] IS NULL OR list_contains($tiers::VARCHAR[], tier))
  AND ($statuses::VARCHAR[] IS NULL OR list_contains($statuses::VARCHAR[], status))
  AND ($tags::VARCHAR[] IS NULL OR list_has_all(tags, $tags::VARCHAR[]))
  AND ($scopes::VARCHAR[] IS NULL OR list_contains($scopes::VARCHAR[], scope))
  AND ($text::VARCHAR IS NULL OR contains(lower(content), lower($text)))
ORDER BY pinned DESC, updated_at DESC, id
LIMIT $limit;

-- name: supersede_memory
UPDATE memories
SET superseded_by = $new_id, status = 'superseded', tier = 'archival', updated_at = greatest(updated_at, $now),
    row_version = nextval('memory_row_version_seq')
WHERE id = $id;

-- name: set_memory_status
UPDATE memories SET status = $status, updated_at = greatest(updated_at, $now), row_version = nextval('memory_row_version_seq')
WHERE id = $id;

-- Every version of the chain that contains $id, oldest first.
-- name: version_chain
WITH RECURSIVE
    older(id, prev) AS (
        SELECT id, supersedes FROM memories WHERE id = $id
        UNION ALL
        SELECT m.id, m.supersedes FROM memories m JOIN older o ON m.id = o.prev
    ),
    newer(id, next) AS (
        SELECT id, superseded_by FROM memories WHERE id = $id
        UNION ALL
        SELECT m.id, m.superseded_by FROM memories m JOIN newer n ON m.id = n.next
    )
SELECT m.* FROM memories m
WHERE m.id IN (SELECT id FROM older UNION SELECT id FROM newer)
ORDER BY m.version, m.created_at;

-- name: insert_pending_contradiction
INSERT INTO contradictions (id, memory_a, memory_b, description, confidence, detected_by, detected_at, status)
VALUES ($id, $memory_a, $memory_b, $description, $confidence, $detected_by, $now, 'pending');

-- A grant to a current member changes nothing; a grant after a revocation starts a new period.
-- name: grant_membership
INSERT INTO memberships
SELECT $agent_id, $kind, $group_id, $now, NULL
WHERE NOT EXISTS (SELECT 1 FROM memberships
                  WHERE agent_id = $agent_id AND kind = $kind AND group_id = $group_id AND revoked_at IS NULL);

-- name: revoke_membership
UPDATE memberships SET revoked_at = $now
WHERE agent_id = $agent_id AND kind = $kind AND group_id = $group_id AND revoked_at IS NULL;

-- name: is_member
SELECT count(*) > 0 FROM memberships
WHERE agent_id = $agent_id AND kind = $kind AND group_id = $group_id AND revoked_at IS NULL;

-- $ids is text '[uuid, …]': binding a Python list costs ~0.2 ms per element in duckdb 1.5.5.
-- name: memories_by_ids
SELECT * FROM memories WHERE id IN (SELECT unnest($ids::VARCHAR::UUID[]));

-- A quarantined memory approved by a person: live from now on, as the next version of the live memory it
-- replaces (same key and scope), if any.
-- name: approve_quarantined
UPDATE memories SET status = 'active', version = $version, supersedes = $supersedes, updated_at = greatest(updated_at, $now),
    row_version = nextval('memory_row_version_seq')
WHERE id = $id AND status = 'quarantined';
