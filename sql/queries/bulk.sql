-- Set-based batch writes (echo_duck/write/bulk.py). Rows come from a registered Arrow table named
-- echo_duck_write_stage with the columns of memories plus pos (order in the batch).

-- Positions that need a versioning decision: a live memory or another batch row with the same key
-- (keyless: the same content) in the same scope and owner.
-- name: bulk_conflicting_positions
-- Equality joins (hash joins) first, the owner check after: a correlated EXISTS with the owner
-- macro in its condition ran as a nested loop (16 s for 2,000 rows against 100k memories).
SELECT s.pos FROM echo_duck_write_stage s JOIN memories m ON m.scope = s.scope AND m.key = s.key
WHERE m.status = 'active'
  AND same_scope_owner(s.scope, m.agent_id, m.source_session, m.team_id, m.tenant_id,
                       s.agent_id, s.source_session, s.team_id, s.tenant_id)
UNION
SELECT s.pos FROM echo_duck_write_stage s JOIN memories m ON m.scope = s.scope AND m.content = s.content
WHERE s.key IS NULL AND m.key IS NULL AND m.status = 'active'
  AND same_scope_owner(s.scope, m.agent_id, m.source_session, m.team_id, m.tenant_id,
                       s.agent_id, s.source_session, s.team_id, s.tenant_id)
UNION
SELECT s.pos FROM echo_duck_write_stage s JOIN echo_duck_write_stage t ON t.scope = s.scope AND t.key = s.key
WHERE t.pos <> s.pos
  AND same_scope_owner(s.scope, t.agent_id, t.source_session, t.team_id, t.tenant_id,
                       s.agent_id, s.source_session, s.team_id, s.tenant_id)
UNION
SELECT s.pos FROM echo_duck_write_stage s JOIN echo_duck_write_stage t ON t.scope = s.scope AND t.content = s.content
WHERE t.pos <> s.pos AND s.key IS NULL AND t.key IS NULL
  AND same_scope_owner(s.scope, t.agent_id, t.source_session, t.team_id, t.tenant_id,
                       s.agent_id, s.source_session, s.team_id, s.tenant_id);

-- SELF memories start at most at self_confidence_cap, as insert_memory (sql/queries/memories.sql).
-- name: bulk_insert_memories
INSERT INTO memories (id, agent_id, type, tier, key, content, tags, entities, scope, team_id, tenant_id,
                      source_session, source_refs, created_at, updated_at, observed_at, importance, confidence,
                      episode_id, version, supersedes, provenance, pinned, sensitivity, status, by_host)
SELECT id::UUID, agent_id, type, tier, key, content, tags, entities, scope, team_id, tenant_id,
       source_session, source_refs, created_at, created_at, observed_at, importance,
       CASE WHEN type = 'self' THEN least(confidence, setting('self_confidence_cap')) ELSE confidence END,
       episode_id::UUID, 1, NULL, provenance, pinned, sensitivity, 'active', $by_host
FROM echo_duck_write_stage ORDER BY pos;

-- name: bulk_log_create_events
INSERT INTO memory_events (occurred_at, actor, action, memory_id, reason, before, after)
SELECT m.created_at, $actor, 'create', m.id, 'remember', NULL, to_json(m)
FROM memories m JOIN echo_duck_write_stage s ON m.id = s.id::UUID
ORDER BY s.pos;
