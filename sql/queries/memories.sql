-- Reads and writes of the memories table used by the write path and the facade.
-- Every read a caller sees goes through visible_memories(caller_agent, caller_session).

-- A SELF memory starts at most at self_confidence_cap, whatever its writer claims (seed 001: a
-- self-report alone proves no capability); it earns more from outcomes (lifecycle/self_knowledge.py).
-- name: insert_memory
INSERT INTO memories (
    id, agent_id, type, tier, key, content, tags, entities, scope, team_id, tenant_id,
    source_session, source_refs, created_at, updated_at, observed_at, importance, confidence,
    episode_id, version, supersedes, provenance, pinned, sensitivity, status, by_host
) VALUES (
    $id, $agent_id, $type, $tier, $key, $content, $tags, $entities, $scope, $team_id, $tenant_id,
    $source_session, $source_refs, $now, $now, $observed_at, $importance,
    CASE WHEN $type = 'self' THEN least($confidence, setting('self_confidence_cap')) ELSE $confidence END,
    $episode_id, $version, $supersedes, $provenance, $pinned, $sensitivity, $status, $by_host
);

-- name: memory_by_id
SELECT * FROM memories WHERE id = $id;

-- name: visible_memory_by_id
SELECT * FROM visible_memories($caller_agent, $caller_session) WHERE id = $id;

-- name: memory_json
SELECT to_json(m)::VARCHAR FROM memories m WHERE m.id = $id;

-- The rows a same-key write would replace: same key, same scope and same owner of that scope (the writer's own
-- first, then another agent's that the writer may see: Writer.key_rows).
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
-- Only the writer's own: the same words from another agent are that agent's statement (restating folds pins,
-- tags and importance into the row, which only its owner may change; and a hidden row must not answer).
-- The same words of the same kind (type and tier: an imported history line or environment fact met the user's rule of
-- the same words and took it in, the rule lost from the prompt) live in the same scope of the same writer.
-- name: live_duplicate_in_scope
SELECT * FROM memories
WHERE key IS NULL AND content = $content AND status = 'active' AND scope = $scope AND agent_id = $agent_id
  AND type = $type AND (tier = $tier OR (tier = 'archival' AND $tier = 'semantic'))  -- a decayed fact is the same
  AND coalesce(by_host, false) = $by_host  -- the host's row is not an agent handle's with the same id (and back)
  AND CASE scope
        WHEN 'session' THEN source_session IS NOT DISTINCT FROM $source_session
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

-- The same fact written again (echo_duck/write/writer.py, _restate): a review, plus what the new write
-- adds (pinning, tags, sources, a higher importance or confidence; Python picks the values).
-- A decayed (archival) row said again is in use again: back in the tier the write names.
-- name: restate_in_place
UPDATE memories
SET pinned = $pinned, importance = $importance, confidence = $confidence, tags = $tags::VARCHAR[],
    source_refs = $refs::VARCHAR[], sensitivity = $sensitivity, provenance = $provenance,
    tier = CASE WHEN tier = 'archival' THEN $tier ELSE tier END,
    access_count = least(access_count::BIGINT + 1, 2147483647)::INTEGER, last_accessed = $now,
    updated_at = greatest(updated_at, $now), row_version = nextval('memory_row_version_seq')
WHERE id = $id;

-- name: supersede_memory
UPDATE memories
SET superseded_by = $new_id, status = 'superseded', tier = 'archival', updated_at = greatest(updated_at, $now),
    row_version = nextval('memory_row_version_seq')
WHERE id = $id;

-- A new version that shows the fact to fewer agents (a higher sensitivity, or a personal memory no longer shared)
-- narrows every earlier version of its chain the same way: the older text is the same fact, and a teammate must
-- not read through include_archived, get, history or as_of what its owner has since hidden. Sensitivity only
-- rises. The chain is every row superseded into $id, transitively: earlier versions and near-duplicates folded
-- into one of them (lifecycle/compress.py), live or already in the Parquet archive (memories_all); another agent's row
-- only as a version.
-- earlier_versions_to_narrow lists those that change; narrow_version changes a live one; Writer.narrow_history
-- logs a 'narrow' event for each (an archived one gets only the event), which memories_as_of reads back.
-- name: earlier_versions_to_narrow
WITH RECURSIVE
    every AS MATERIALIZED (SELECT id, agent_id, supersedes, superseded_by, sensitivity, tags, storage, key, scope, team_id,
                                  tenant_id, source_session, by_host, status FROM memories_all),
    -- another agent's row superseded into the chain only when it is a version of it (the newer one names it in
    -- supersedes): an agent that gave in on a dispute, its claim superseded by the winner, keeps its own sensitivity;
    -- and the rows exported under the fact's key before it was written again (exported_under_key)
    chain(id, agent_id, prev) AS (
        SELECT e.id, e.agent_id, e.supersedes FROM every e JOIN every t ON t.id = $id::UUID
        WHERE e.id = t.id OR exported_under_key(e, t)
        UNION SELECT e.id, e.agent_id, e.supersedes FROM every e JOIN chain c
              ON e.superseded_by = c.id AND (e.agent_id = c.agent_id OR c.prev = e.id))
SELECT e.id, e.storage = 'archive' AS archived, e.sensitivity, e.tags FROM every e JOIN chain c ON e.id = c.id
WHERE ($sensitivity = 'sensitive' AND e.sensitivity <> 'sensitive')
   OR ($sensitivity = 'personal' AND e.sensitivity = 'normal')
   OR ($unshare AND list_contains(e.tags, 'share:personal'))
ORDER BY e.id;

-- name: narrow_version
UPDATE memories
SET sensitivity = CASE WHEN $sensitivity = 'sensitive' OR ($sensitivity = 'personal' AND sensitivity = 'normal')
                       THEN $sensitivity ELSE sensitivity END,
    tags = CASE WHEN $unshare THEN list_filter(tags, t -> t <> 'share:personal') ELSE tags END,
    row_version = nextval('memory_row_version_seq')
WHERE id = $id;

-- The versions superseded into memory $id, directly or through others (an update's earlier version, a contradiction's
-- loser), by its own author (agent and host mark), live or in the Parquet archive (storage): forgetting a fact
-- forgets them too, or recall(include_archived=True) answered with its earlier version (and get() with an exported
-- one after gc).
-- name: earlier_versions_to_forget
WITH RECURSIVE
    every AS MATERIALIZED (SELECT * FROM memories_all),
    older(id) AS (  -- UNION: a cycle of superseded_by ends
        SELECT id FROM every WHERE superseded_by = $id
        UNION
        SELECT m.id FROM every m JOIN older o ON m.superseded_by = o.id
    )
SELECT m.* FROM every m JOIN memories head ON head.id = $id
WHERE ((m.id IN (SELECT id FROM older) AND m.status = 'superseded')
       -- a keyed fact's rows exported under the same key and scope before it was written again (version_chain_all)
       OR exported_under_key(m, head))
  AND m.agent_id = head.agent_id AND coalesce(m.by_host, false) = coalesce(head.by_host, false)
ORDER BY m.version;

-- name: set_memory_status
UPDATE memories SET status = $status, updated_at = greatest(updated_at, $now), row_version = nextval('memory_row_version_seq')
WHERE id = $id;

-- The live episode summaries of memory $id's owner of the episodes it was consolidated in, or citing a message it
-- came from (write/quoting.py reads which of them quote it), and the texts of those messages.
-- name: summaries_of_sources_of
SELECT e.id, e.content FROM memories e, (SELECT agent_id, source_refs FROM memories WHERE id = $id) f
WHERE e.tier = 'episodic' AND e.status = 'active' AND e.agent_id = f.agent_id
  AND (list_has_any(e.source_refs, list_filter(f.source_refs, r -> starts_with(r, 'message:')))
       OR list_contains(list_transform(list_filter(f.source_refs, r -> starts_with(r, 'episode:')), r -> r[9:]),
                        e.episode_id::VARCHAR));

-- Only the owner's own messages: a write may cite any id, and whether another agent's message quotes a summary
-- must not show in what forget() flags.
-- name: source_message_texts
SELECT m.content FROM messages m, (SELECT agent_id, source_refs FROM memories WHERE id = $id) f
WHERE m.agent_id = f.agent_id AND list_contains(f.source_refs, 'message:' || m.id::VARCHAR);

-- Every version of the chain that contains $id, oldest first: live rows and versions already exported to
-- the Parquet archive (memories_all), so history outlives the export; for a keyed fact also the rows its owner held
-- under the key in that scope (a fact exported and written again later starts at version 1 again).
-- name: version_chain
WITH RECURSIVE
    every AS MATERIALIZED (SELECT * FROM memories_all),
    seed AS (  -- and the rows its writer exported under the same key in the same scope (version_chain_all says why)
        SELECT e.id, e.supersedes, e.superseded_by FROM every e JOIN every t ON t.id = $id
        WHERE e.id = t.id OR (exported_under_key(e, t))
    ),
    older(id, prev, depth) AS (
        SELECT id, supersedes, 0 FROM seed
        UNION ALL
        SELECT m.id, m.supersedes, o.depth + 1 FROM every m JOIN older o ON m.id = o.prev WHERE o.depth < 10000
    ),
    newer(id, next, depth) AS (
        SELECT id, superseded_by, 0 FROM seed
        UNION ALL
        SELECT m.id, m.superseded_by, n.depth + 1 FROM every m JOIN newer n ON m.id = n.next WHERE n.depth < 10000
    )
SELECT m.* EXCLUDE (storage) FROM every m
WHERE m.id IN (SELECT id FROM older UNION SELECT id FROM newer)
ORDER BY m.created_at, m.version;

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

-- The memories visible to the caller whose id starts with a short prefix (the 8 characters every
-- table prints); at most 5, so an ambiguous prefix can be reported with its candidates.
-- name: visible_by_id_prefix
SELECT * FROM visible_memories($caller_agent, $caller_session)
WHERE starts_with(id::VARCHAR, lower($prefix))
ORDER BY created_at
LIMIT 5;

-- The quarantined memories whose id starts with a short prefix: the caller's own, any agent's for an admin handle (a
-- person reviews them all: write/review.py approve and reject).
-- name: quarantined_by_id_prefix
SELECT * FROM memories
WHERE status = 'quarantined' AND starts_with(id::VARCHAR, lower($prefix)) AND ($any_agent OR agent_id = $caller_agent)
ORDER BY created_at
LIMIT 5;

-- The review queue: every agent's held writes, oldest first (an admin's held(); echo-duck list --status quarantined
-- --admin).
-- name: held_memories
SELECT * FROM memories WHERE status = 'quarantined' ORDER BY created_at, id LIMIT $limit;

-- The newest visible memory with a key, whatever its status (history of a forgotten or superseded fact).
-- name: visible_latest_by_key
SELECT * FROM visible_memories($caller_agent, $caller_session)
WHERE key = $key
ORDER BY created_at DESC, version DESC
LIMIT 1;

-- An import's duplicate check (echo_duck/io/importers.py): the live (or $statuses) memories the importing caller may
-- see whose content is one of $contents; a trusted restore (admin) reads every owner's, archived versions too
-- (import_stored_any_owner: restoring a backup into its own store wrote them again, over the live fact).
-- name: import_stored
SELECT agent_id, scope, key, type, content, coalesce(by_host, false) AS by_host
FROM visible_memories($agent, $session::VARCHAR)
WHERE list_contains($statuses::VARCHAR[], status) AND list_contains($contents::VARCHAR[], content);

-- name: import_stored_any_owner
SELECT agent_id, scope, key, type, content, coalesce(by_host, false) AS by_host
FROM memories_all
WHERE list_contains($statuses::VARCHAR[], status) AND list_contains($contents::VARCHAR[], content);

-- An export (echo_duck/io/exporters.py): the memories the caller may see, the live ones or ($history) every version
-- but those held for review, oldest first.
-- name: export_visible
SELECT * FROM visible_memories($agent, $session) WHERE ($history AND status <> 'quarantined') OR status = 'active'
ORDER BY created_at, id;

-- The host's export (an admin handle: a backup, restored by a trusted import): every agent's memories, whatever their
-- scope or sensitivity, with $history also the versions moved to the Parquet archive (memories_all), but those held
-- for review, oldest first.
-- name: export_everything
SELECT * FROM memories_all WHERE ($history AND status <> 'quarantined') OR status = 'active'
ORDER BY created_at, id;

-- Usage an import carries over (echo_duck/io/import_trust.py): added to the counts, the later last access kept.
-- name: usage_of
SELECT access_count, last_accessed FROM memories WHERE id = $id;

-- name: apply_import_usage
UPDATE memories SET access_count = access_count + $count,
                    last_accessed = CASE WHEN $last::TIMESTAMP IS NULL THEN last_accessed
                                         ELSE greatest(coalesce(last_accessed, $last::TIMESTAMP), $last::TIMESTAMP) END,
                    row_version = nextval('memory_row_version_seq')
WHERE id = $id;

-- A quarantined memory approved by a person: live from now on, as the next version of the live memory it
-- replaces (same key and scope), if any.
-- name: approve_quarantined
UPDATE memories SET status = 'active', version = $version, supersedes = $supersedes, updated_at = greatest(updated_at, $now),
    row_version = nextval('memory_row_version_seq')
WHERE id = $id AND status = 'quarantined';
