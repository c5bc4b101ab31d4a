-- Time travel (echo_duck/recall/asof.py): the reads of the facade, over memories_as_of($ts)
-- (sql/macros/70_asof.sql) instead of the live table. Visibility is checked with the caller's rights now.

-- name: visible_memory_as_of
SELECT * FROM memories_as_of($ts::TIMESTAMP) m
WHERE m.id = $id
  AND can_see(m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity,
              $caller_agent, $caller_session::VARCHAR)
  AND NOT barred_from(m.id, m.status, m.agent_id, $caller_agent);  -- as visible_memories: the writer's alone

-- name: find_memories_as_of
SELECT * FROM memories_as_of($ts::TIMESTAMP) m
WHERE NOT exported_by(m.id, $ts::TIMESTAMP)  -- as find() reads the live table only
  AND can_see(m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity,
              $caller_agent, $caller_session::VARCHAR)
  AND NOT barred_from(m.id, m.status, m.agent_id, $caller_agent)  -- as visible_memories: the writer's alone
  AND ($key::VARCHAR IS NULL OR key = $key)
  AND ($types::VARCHAR[] IS NULL OR list_contains($types::VARCHAR[], type))
  AND ($tiers::VARCHAR[] IS NULL OR list_contains($tiers::VARCHAR[], tier))
  AND ($statuses::VARCHAR[] IS NULL OR list_contains($statuses::VARCHAR[], status))
  AND ($tags::VARCHAR[] IS NULL OR list_has_all(tags, $tags::VARCHAR[]))
  AND ($scopes::VARCHAR[] IS NULL OR list_contains($scopes::VARCHAR[], scope))
  AND ($text::VARCHAR IS NULL OR contains(lower(content), lower($text)))
ORDER BY pinned DESC, updated_at DESC, id
LIMIT $limit;

-- name: events_for_memories_as_of
SELECT event_id, occurred_at, actor, action, memory_id, reason, before::VARCHAR AS before, after::VARCHAR AS after
FROM memory_events
WHERE list_contains($ids::UUID[], memory_id) AND occurred_at <= $ts::TIMESTAMP
ORDER BY event_id;

-- What recall_eligible computes, over the memories as they were at $ts (no queued reviews: the past is
-- written), with recall's filters: the candidates the caller may see and asked for, and their decay terms.
-- name: recall_eligible_as_of
SELECT m.id::VARCHAR AS memory_id,
       effective_importance(m.importance, m.type, m.pinned, m.access_count, coalesce(m.last_accessed, m.created_at),
                            $ts::TIMESTAMP, $p_decay_days::DOUBLE) AS effective_importance,
       CASE WHEN m.tier = 'archival' THEN $p_archived_weight::DOUBLE ELSE 1.0 END AS tier_weight,
       pow(1 - $p_unhelpful_penalty::DOUBLE, greatest(m.unhelpful_count - m.helpful_count, 0)) AS feedback_weight,
       m.status = 'active' AS active, epoch_us(coalesce(m.observed_at, m.created_at)) AS at_us,
       m.agent_id AS agent, m.source_session AS session, epoch_us(m.created_at) AS created_us,
       states_time(m.content) AS states_time, states_change(m.content) AS states_change,
       mostly_asks(m.content) AS mostly_asks,
       m.provenance::BIGINT AS provenance, coalesce(m.by_host, false) AS by_host
FROM memories_as_of($ts::TIMESTAMP) m
WHERE (m.status = 'active' OR ($p_include_superseded AND m.status = 'superseded'))
  AND NOT exported_by(m.id, $ts::TIMESTAMP)  -- as recall reads the live table only
  AND can_see(m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity,
              $caller_agent, $caller_session::VARCHAR)
  AND ($p_types::VARCHAR[] IS NULL OR list_contains($p_types::VARCHAR[], m.type))
  AND ($p_tiers::VARCHAR[] IS NULL OR list_contains($p_tiers::VARCHAR[], m.tier))
  AND ($p_tags::VARCHAR[] IS NULL OR list_has_all(m.tags, $p_tags::VARCHAR[]))
  AND ($p_entities::VARCHAR[] IS NULL OR list_has_any(m.entities, $p_entities::VARCHAR[]))
  AND ($p_since::TIMESTAMP IS NULL OR coalesce(m.observed_at, m.created_at) >= $p_since::TIMESTAMP)
  AND ($p_until::TIMESTAMP IS NULL OR coalesce(m.observed_at, m.created_at) <= $p_until::TIMESTAMP)
  AND ($p_session::VARCHAR IS NULL OR m.source_session = $p_session::VARCHAR);

-- The rows of $ids ('[uuid, …]') as they were at $ts, and whether each still has a live vector.
-- name: rows_as_of
SELECT m.*, EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id) AS has_vector
FROM memories_as_of($ts::TIMESTAMP) m WHERE m.id IN (SELECT unnest($ids::VARCHAR::UUID[]));

-- Memories active at $ts whose vector is gone (exported to Parquet since): the as-of recall embeds them.
-- name: active_without_vector_as_of
SELECT m.id::VARCHAR AS id, m.content FROM memories_as_of($ts::TIMESTAMP) m
WHERE m.status = 'active' AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id)
LIMIT $limit;

-- The contradictions open at $ts touching $ids: found by then and not yet resolved (pending), or settled
-- by recency by then and not reviewed since.
-- name: conflicts_as_of
SELECT memory_a, memory_b, detected_at, status = 'pending' AS pending FROM contradictions_as_of($ts::TIMESTAMP)
WHERE (status = 'pending' OR resolution = 'newer')
  AND (list_contains($ids::VARCHAR::UUID[], memory_a) OR list_contains($ids::VARCHAR::UUID[], memory_b));

-- name: snapshot_candidates_as_of
-- Only what a block can show: every profile section and rule (up to 100: a 2,000-character block holds
-- fewer), the first $limit of the others; counted apart for the caller's own memories and other agents'
-- (those go to the separate shared block: they must not crowd out the caller's own).
SELECT * EXCLUDE (block_rank, author_turn) FROM (
    -- the caller's own: what the host wrote itself first (an agent handle may carry the host's agent id: twenty pinned
    -- user_stated rules of such a handle filled the host's rules block), then by rank; within a turn, other agents'
    -- memories the host's first (by_host), then by when they were written (their provenance and pin are their
    -- authors' claims: two members claiming pinned user_stated took the host's earlier rule's place)
    SELECT *, row_number() OVER (PARTITION BY block, agent_id = $caller_agent
                                 ORDER BY CASE WHEN agent_id = $caller_agent THEN NOT coalesce(by_host, false) END,
                                          author_turn, CASE WHEN agent_id <> $caller_agent THEN NOT coalesce(by_host, false) END,
                                          CASE WHEN agent_id <> $caller_agent THEN created_at END,
                                          provenance DESC, pinned DESC, confidence DESC,
                                          coalesce(last_accessed, updated_at) DESC, id) AS block_rank
    FROM (
        -- other agents take turns (each one's first, then seconds …): one author's many memories cannot fill the
        -- shared block's share alone (for the caller's own memories the turn is the rank itself); what the host
        -- wrote itself takes its own turns, whatever agent id an agent handle carries
        SELECT c.*, row_number() OVER (PARTITION BY c.block, c.agent_id, coalesce(c.by_host, false)
                                       ORDER BY c.provenance DESC, c.pinned DESC, c.confidence DESC,
                                                coalesce(c.last_accessed, c.updated_at) DESC, c.id) AS author_turn
        FROM snapshot_candidates_as_of($caller_agent, $caller_session::VARCHAR, $min_confidence,
                                       setting('self_snapshot_threshold'), $ts::TIMESTAMP,
                                       p_caller_host := $caller_host::BOOLEAN) c
        -- each author's first few per block are all the outer ranking can take (and all it has to sort)
        QUALIFY author_turn <= CASE WHEN c.block IN ('profile', 'rules') THEN 100 ELSE $limit END
    )
)
WHERE block_rank <= CASE WHEN block IN ('profile', 'rules') THEN 100 ELSE $limit END
ORDER BY coalesce(by_host, false) DESC, provenance DESC, pinned DESC, confidence DESC, coalesce(last_accessed, updated_at) DESC, id;

-- name: snapshot_conflicts_as_of
SELECT * FROM snapshot_conflicts_as_of($caller_agent, $caller_session::VARCHAR, $ts::TIMESTAMP,
                                       p_caller_host := $caller_host::BOOLEAN) LIMIT $limit;
