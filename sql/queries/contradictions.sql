-- Contradiction detection and resolution (echo_duck/lifecycle/contradictions.py).

-- Live memories that might contradict $id: same scope owner, and a similar key, a shared tag, or a
-- vector neighbour ($neighbours, '[uuid, …]' text from the exact vector search). Newest first.
-- name: contradiction_candidates
WITH me AS (SELECT * FROM memories WHERE id = $id)
SELECT o.*,
       (o.key IS NOT NULL AND me.key IS NOT NULL AND o.key = me.key) AS same_key
FROM memories o, me
WHERE o.id <> me.id AND o.status = 'active'
  -- $apart: memories written together (one imported file) are checked against the store, not one another: their
  -- order in the file, not a shared timestamp, says which came later
  AND NOT list_contains(CAST($apart AS VARCHAR)::UUID[], o.id)
  AND o.tier <> 'episodic' AND me.tier <> 'episodic'  -- an episode records what happened; it states no fact
  AND may_dispute(o.scope, o.agent_id, o.team_id, o.tenant_id, o.source_session, o.tags, o.sensitivity,
                  me.scope, me.agent_id, me.team_id, me.tenant_id, me.source_session, me.tags, me.sensitivity,
                  o_by_host := o.by_host, m_by_host := me.by_host)
  AND ((o.key IS NOT NULL AND me.key IS NOT NULL AND jaro_winkler_similarity(o.key, me.key) >= 0.9)
       OR len(list_intersect(o.tags, me.tags)) > 0
       OR list_contains(CAST($neighbours AS VARCHAR)::UUID[], o.id))
  AND NOT EXISTS (SELECT 1 FROM contradictions c
                  WHERE (c.memory_a = o.id AND c.memory_b = me.id) OR (c.memory_a = me.id AND c.memory_b = o.id))
-- another author's memories first: an agent's own near-copies of its claim must not push a teammate's fact out of the
-- candidates the check reads; then the nearest ($neighbours lists the vector neighbours, then the keyword matches,
-- best first)
ORDER BY same_key DESC, o.agent_id = me.agent_id,
         coalesce(list_position(CAST($neighbours AS VARCHAR)::UUID[], o.id), 2147483647), o.updated_at DESC, o.id
LIMIT $limit;

-- name: vector_of
SELECT vector FROM memory_vectors WHERE memory_id = $id AND model_id = $model_id;

-- Of the memories $ids ('[uuid, …]' text), those whose vector of model $model_id is at least $threshold close to $id's.
-- Every team and tenant live memories name: the groups a row the host wrote reaches (candidates.py).
-- name: every_team
SELECT DISTINCT team_id FROM memories WHERE team_id IS NOT NULL AND status = 'active';

-- name: every_tenant
SELECT DISTINCT tenant_id FROM memories WHERE tenant_id IS NOT NULL AND status = 'active';

-- ($id's vector as a scalar subquery: joining the table to itself read ~17 ms of vectors at 20,000 rows, this ~8)
-- name: similar_among
SELECT o.memory_id FROM memory_vectors o
WHERE o.model_id = $model_id AND o.memory_id IN (SELECT unnest(CAST($ids AS VARCHAR)::UUID[]))
  AND list_inner_product(o.vector, (SELECT vector FROM memory_vectors
                                    WHERE memory_id = $id AND model_id = $model_id)) >= $threshold;

-- Both memories still active and no contradiction recorded between them: checked inside the transaction
-- that records one (the verifier ran outside the store lock, so another thread may have written since).
-- name: contradiction_still_open
SELECT (SELECT count(*) FROM memories WHERE id IN ($a::UUID, $b::UUID) AND status = 'active') = 2
   AND NOT EXISTS (SELECT 1 FROM contradictions c WHERE (c.memory_a = $a::UUID AND c.memory_b = $b::UUID)
                                                    OR (c.memory_a = $b::UUID AND c.memory_b = $a::UUID));

-- name: insert_contradiction
INSERT INTO contradictions (id, memory_a, memory_b, description, confidence, detected_by, detected_at,
                            status, resolution, winner, resolved_at, source_a, source_b)
VALUES ($id, $memory_a, $memory_b, $description, $confidence, $detected_by, $now,
        $status, $resolution, $winner, CASE WHEN $status = 'resolved' THEN $now::TIMESTAMP END, $source_a, $source_b);
INSERT INTO contradiction_decisions (contradiction_id, decided_at, resolution, winner)
SELECT id, resolved_at, resolution, winner FROM contradictions WHERE id = $id AND status = 'resolved';

-- Of the memories $ids ('[uuid, …]' text), the new versions whose predecessor came from another source
-- (memory_source: session, first ref, agent) with other content: old_* and new_* columns.
-- name: replaced_from_another_source
SELECT COLUMNS(o.*) AS "old_\0", COLUMNS(n.*) AS "new_\0"
FROM memories n JOIN memories o ON o.id = n.supersedes
WHERE n.id IN (SELECT unnest($ids::VARCHAR::UUID[]))
  AND n.tier <> 'episodic' AND o.content <> n.content
  AND memory_source(o.source_session, o.source_refs, o.agent_id) <> memory_source(n.source_session, n.source_refs, n.agent_id)
  AND NOT EXISTS (SELECT 1 FROM contradictions c WHERE c.memory_a = o.id AND c.memory_b = n.id);

-- The live version of the fact $id belongs to (following superseded_by), if there is one.
-- name: live_head_of
WITH RECURSIVE newer(id, next, depth) AS (
    SELECT id, superseded_by, 0 FROM memories WHERE id = $id
    UNION ALL
    SELECT m.id, m.superseded_by, n.depth + 1 FROM memories m JOIN newer n ON m.id = n.next WHERE n.depth < 10000
)
SELECT m.* FROM memories m WHERE m.id IN (SELECT id FROM newer) AND m.status = 'active' LIMIT 1;

-- A claim held for review (status pending, lower provenance) that the user picked becomes live.
-- name: activate_pending
UPDATE memories SET status = 'active', updated_at = greatest(updated_at, $now), row_version = nextval('memory_row_version_seq')
WHERE id = $id AND status = 'pending';

-- name: contradiction_by_id
SELECT * FROM contradictions WHERE id = $id;

-- The current decision on the row, and every decision appended (contradiction_decisions: as-of reads).
-- name: resolve_contradiction
UPDATE contradictions SET status = 'resolved', resolution = $resolution, winner = $winner, resolved_at = $now
WHERE id = $id;
INSERT INTO contradiction_decisions (contradiction_id, decided_at, resolution, winner)
SELECT id, resolved_at, resolution, winner FROM contradictions WHERE id = $id;

-- The loser of a contradiction leaves recall: superseded by the winner, archived, history kept.
-- name: supersede_by_winner
UPDATE memories SET status = 'superseded', tier = 'archival', superseded_by = $winner,
                    updated_at = greatest(updated_at, $now), row_version = nextval('memory_row_version_seq')
WHERE id = $loser AND status = 'active';

-- name: contradictions_of
SELECT * FROM contradictions WHERE memory_a = $id OR memory_b = $id ORDER BY detected_at;

-- name: visible_contradictions
SELECT c.* FROM contradictions c
WHERE ($status::VARCHAR IS NULL OR c.status = $status)
  AND ($any_agent OR (c.memory_a IN (SELECT id FROM visible_memories($caller_agent, $caller_session))
                      AND c.memory_b IN (SELECT id FROM visible_memories($caller_agent, $caller_session))))
ORDER BY c.detected_at, c.id;

-- The highest provenance of a live fact: a bulk write with no record below it has nothing to check (after_bulk).
-- name: highest_live_provenance
SELECT max(provenance) FROM memories WHERE status = 'active' AND tier <> 'episodic';

-- A bulk write's records below a live fact of higher provenance (remember_many), in one query for the batch: for
-- each new memory in $ids, the live facts of higher provenance it may contradict, by contradiction_candidates' rules
-- (may_dispute; a similar key, a shared tag, or a vector at $threshold or above, exact here over the facts of higher
-- provenance), at most $limit each, another author's first.
-- Episodes are neither side, as there. A lower-trust claim must not sit beside a higher-trust fact undisputed, and
-- a query per record made bulk writes ~8x slower in any store holding one user-stated fact.
-- name: higher_trust_candidates
WITH me AS MATERIALIZED (
    SELECT m.*, v.vector AS new_vector FROM memories m
    LEFT JOIN memory_vectors v ON v.memory_id = m.id AND v.model_id = $model_id
    WHERE m.id IN (SELECT unnest($ids::VARCHAR::UUID[])) AND m.status = 'active' AND m.tier <> 'episodic'
),
hi AS MATERIALIZED (
    SELECT o.*, v.vector AS old_vector FROM memories o
    LEFT JOIN memory_vectors v ON v.memory_id = o.id AND v.model_id = $model_id
    WHERE o.status = 'active' AND o.tier <> 'episodic' AND o.provenance > (SELECT min(provenance) FROM me)
),
pairs AS (
    SELECT me.id AS new_id, o.* EXCLUDE (old_vector),
           (o.key IS NOT NULL AND me.key IS NOT NULL AND o.key = me.key) AS same_key,
           o.agent_id = me.agent_id AS same_author
    FROM me JOIN hi o ON o.provenance > me.provenance AND o.id <> me.id
    WHERE may_dispute(o.scope, o.agent_id, o.team_id, o.tenant_id, o.source_session, o.tags, o.sensitivity,
                      me.scope, me.agent_id, me.team_id, me.tenant_id, me.source_session, me.tags, me.sensitivity,
                      o_by_host := o.by_host, m_by_host := me.by_host)
      AND ((o.key IS NOT NULL AND me.key IS NOT NULL AND jaro_winkler_similarity(o.key, me.key) >= 0.9)
           OR len(list_intersect(o.tags, me.tags)) > 0
           OR list_cosine_similarity(o.old_vector, me.new_vector) >= $threshold)
      AND NOT EXISTS (SELECT 1 FROM contradictions c
                      WHERE (c.memory_a = o.id AND c.memory_b = me.id) OR (c.memory_a = me.id AND c.memory_b = o.id))
)
SELECT * EXCLUDE (same_author) FROM pairs
QUALIFY row_number() OVER (PARTITION BY new_id ORDER BY same_key DESC, same_author, updated_at DESC, id) <= $limit
ORDER BY new_id, same_key DESC, same_author, updated_at DESC, id;

-- The checks a write owes (migration 0013): its new rows, in its own transaction; deleted once checked.
-- name: owe_checks
INSERT OR IGNORE INTO pending_checks SELECT unnest(CAST($ids AS VARCHAR)::UUID[]), $now::TIMESTAMP, $kind;

-- name: checks_paid
DELETE FROM pending_checks WHERE memory_id IN (SELECT unnest(CAST($ids AS VARCHAR)::UUID[]));

-- The checks a crash left owed, oldest first, of rows still live (a forgotten one is checked no more; a held one
-- when approved).
-- name: owed_checks
SELECT p.memory_id::VARCHAR AS id, p.kind FROM pending_checks p JOIN memories m ON m.id = p.memory_id
WHERE m.status = 'active'
ORDER BY p.owed_at, p.memory_id;

-- name: any_owed_checks
SELECT count(*) > 0 FROM pending_checks
WHERE memory_id NOT IN (SELECT id FROM memories WHERE status = 'quarantined');

-- A held row keeps its debt: approve() runs its check.
-- name: forget_owed_checks
DELETE FROM pending_checks
WHERE memory_id NOT IN (SELECT id FROM memories WHERE status = 'quarantined');
