-- 50_snapshot: what goes into the prompt snapshot (SPEC R12, seed 004's injection), block by block,
-- in order. The renderer (echo_duck/recall/snapshot.py with snapshot_blocks.py) fills each block up
-- to its character budget in this order.
--
-- memory_source(source_session, source_refs, agent_id) -> VARCHAR: where a memory came from, in a few
-- words: its source session, else its first source ref, else the agent that wrote it.
CREATE OR REPLACE MACRO memory_source(m_source_session, m_source_refs, m_agent_id) AS
    coalesce(m_source_session, m_source_refs[1], 'agent ' || m_agent_id);

-- snapshot_candidates(p_caller_agent, p_caller_session, p_min_confidence, p_self_threshold) -> the live,
-- visible, non-episodic memories that may enter the snapshot, each with its block:
--   profile      USER memories keyed 'profile:<section>' (the user profile, injected whole, by section)
--   user         other USER memories (facts about the user)
--   rules        every active PROCEDURE (behaviour rules, injected every turn; they do not decay away)
--   environment  ENVIRONMENT memories (project facts, tools, paths) not archived by decay
--   self         SELF memories at or above p_self_threshold confidence (earned self-knowledge)
-- Episodes (tier 'episodic') are what happened, not facts: never here. A memory on either side of a
-- pending contradiction is left out of its block (snapshot_conflicts lists it, marked as disputed), unless its
-- provenance is higher than the other side's: then it stands, and the other is named as a claim against it.
-- Order within a block: pinned first, then confidence, then recency (last access or update).
CREATE OR REPLACE MACRO snapshot_candidates(p_caller_agent, p_caller_session, p_min_confidence, p_self_threshold) AS TABLE
    WITH open_conflicts AS (  -- pending, between two live memories (a lower-provenance claim awaiting
        SELECT c.memory_a, c.memory_b,  -- review has status 'pending' and never disputes a live fact here)
               a.provenance AS provenance_a, b.provenance AS provenance_b
        FROM contradictions c JOIN memories a ON a.id = c.memory_a JOIN memories b ON b.id = c.memory_b
        WHERE c.status = 'pending' AND a.status = 'active' AND b.status = 'active'
          -- a dispute the caller can see both sides of: a hidden memory neither takes the caller's fact out of
          -- its block nor tells, by doing so, that it exists
          AND can_see(a.scope, a.agent_id, a.team_id, a.tenant_id, a.source_session, a.tags, a.sensitivity,
                      p_caller_agent, p_caller_session)
          AND can_see(b.scope, b.agent_id, b.team_id, b.tenant_id, b.source_session, b.tags, b.sensitivity,
                      p_caller_agent, p_caller_session)
    ),
    -- the side of higher provenance stands in its block (the Conflicts block names the claim against it): a
    -- model's inference, or another agent's, never takes what the user stated out of the prompt
    disputed AS (SELECT memory_a AS id FROM open_conflicts WHERE provenance_a <= provenance_b
                 UNION SELECT memory_b FROM open_conflicts WHERE provenance_b <= provenance_a)
    SELECT m.*,
           CASE WHEN m.type = 'user' AND starts_with(coalesce(m.key, ''), 'profile:') THEN 'profile'
                WHEN m.type = 'user' THEN 'user'
                WHEN m.type = 'procedure' THEN 'rules'
                WHEN m.type = 'self' THEN 'self'
                ELSE 'environment' END AS block
    FROM memories m
    WHERE m.status = 'active' AND (m.tier = 'semantic' OR (m.type = 'procedure' AND m.tier = 'archival'))
      AND m.confidence >= CASE WHEN m.type = 'self' THEN greatest(p_min_confidence, p_self_threshold)
                               ELSE p_min_confidence END
      AND m.id NOT IN (SELECT id FROM disputed)
      AND can_see(m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity,
                  p_caller_agent, p_caller_session)
    ORDER BY m.pinned DESC, m.confidence DESC, coalesce(m.last_accessed, m.updated_at) DESC, m.id;

-- snapshot_conflicts(p_caller_agent, p_caller_session) -> the conflicts to show in the snapshot, newest
-- first: pending contradictions between two live memories (both sides, neither is asserted), and
-- conflicts settled by recency that nobody reviewed yet (the newer side stands; the older is named).
-- Only conflicts whose both sides the caller may see. resolution is NULL while pending.
CREATE OR REPLACE MACRO snapshot_conflicts(p_caller_agent, p_caller_session) AS TABLE
    SELECT c.id, c.status, c.resolution, c.winner, c.detected_at,
           a.id AS memory_a, a.content AS content_a, a.type AS type_a,
           coalesce(c.source_a, memory_source(a.source_session, a.source_refs, a.agent_id)) AS source_a,
           b.id AS memory_b, b.content AS content_b, b.type AS type_b,
           coalesce(c.source_b, memory_source(b.source_session, b.source_refs, b.agent_id)) AS source_b,
           a.provenance AS provenance_a, b.provenance AS provenance_b
    FROM contradictions c
    JOIN memories a ON a.id = c.memory_a
    JOIN memories b ON b.id = c.memory_b
    WHERE ((c.status = 'pending' AND a.status = 'active' AND b.status = 'active')
           OR (c.status = 'resolved' AND c.resolution = 'newer'
               AND (CASE WHEN c.winner = a.id THEN a.status ELSE b.status END) = 'active'))
      AND a.tier <> 'episodic' AND b.tier <> 'episodic'
      AND can_see(a.scope, a.agent_id, a.team_id, a.tenant_id, a.source_session, a.tags, a.sensitivity,
                  p_caller_agent, p_caller_session)
      AND can_see(b.scope, b.agent_id, b.team_id, b.tenant_id, b.source_session, b.tags, b.sensitivity,
                  p_caller_agent, p_caller_session)
    ORDER BY c.detected_at DESC, c.id;
