-- 50_snapshot: what goes into the prompt snapshot (SPEC R12, seed 004's injection), block by block,
-- in order. The renderer (echo_duck/recall/snapshot.py with snapshot_blocks.py) fills each block up
-- to its character budget in this order.
--
-- memory_source(source_session, source_refs, agent_id) -> VARCHAR: where a memory came from, in a few
-- words: its source session, else its first source ref, else the agent that wrote it.
CREATE OR REPLACE MACRO memory_source(m_source_session, m_source_refs, m_agent_id) AS
    coalesce(m_source_session, m_source_refs[1], 'agent ' || m_agent_id);

-- memory_author(p_agent, p_by_host) -> VARCHAR: who wrote a memory, as the snapshot's disputes count authors: its agent,
-- or the host for what the host wrote itself (memories.by_host: an agent handle may carry the host's agent id, and
-- its claim against the host's fact counted as one agent's second thought). The caller is
-- memory_author(agent, admin): on an admin handle, the host.
CREATE OR REPLACE MACRO memory_author(p_agent, p_by_host) AS
    CASE WHEN coalesce(p_by_host, false) THEN p_agent || chr(0) || 'host' ELSE p_agent END;

-- pool_group(p_agent, p_by_host, p_caller_agent, p_caller_host) -> INTEGER: the group a recall candidate is pooled in
-- (recall_fused's pooled step takes each arm's best keyword_pool / vector_pool of each): 0 the caller's own (by
-- author, memory_author), 1 the rows the host wrote itself (by_host), 2 every other author's.
CREATE OR REPLACE MACRO pool_group(p_agent, p_by_host, p_caller_agent, p_caller_host) AS
    CASE WHEN memory_author(p_agent, p_by_host) = memory_author(p_caller_agent, p_caller_host) THEN 0
         WHEN coalesce(p_by_host, false) THEN 1 ELSE 2 END;

-- dispute_stands(p_agent, p_provenance, p_other_agent, p_other_provenance, p_caller_agent) -> BOOLEAN: whether
-- a memory on one side of a pending contradiction stays in the caller's prompt (the agents are authors,
-- memory_author). Between two memories of one
-- agent, the side of higher provenance stands. Provenance is what the writer claims, so between two agents it
-- decides nothing: the caller's own memory stands against another agent's claim (the claim leaves the shared
-- block; the Conflicts block names it), and two other agents' memories both stay in the shared block, each the
-- claim of its author (a dispute an agent starts must not take a third agent's, or the host's, rules out of the
-- prompt). Between the host's memory and an agent's under the host's agent id (agent "default"), the host's stands
-- for every caller, that agent included: the agent's claim, whatever it claims, is not the host's word (as its own
-- memory against the host's, it took the host's fact out of its own prompt).
CREATE OR REPLACE MACRO dispute_stands(p_agent, p_provenance, p_other_agent, p_other_provenance, p_caller_agent) AS
    CASE WHEN p_agent = p_other_agent THEN p_provenance > p_other_provenance
         WHEN split_part(p_agent, chr(0), 1) = split_part(p_other_agent, chr(0), 1)
             THEN ends_with(p_agent, chr(0) || 'host')
         ELSE p_other_agent IS DISTINCT FROM p_caller_agent END;

-- dispute_loss(p_pending, p_stands, p_winner, p_id, p_by_host, p_provenance) -> INTEGER: how trusted the memory on
-- one side of a contradiction is (10 for the host's own, then its provenance) when the dispute took it out of the
-- caller's prompt (pending: it does not stand; resolved: a newer fact replaced it), else NULL. The Conflicts block
-- lists the disputes that took the most trusted memory out first.
CREATE OR REPLACE MACRO dispute_loss(p_pending, p_stands, p_winner, p_id, p_by_host, p_provenance) AS
    CASE WHEN CASE WHEN p_pending THEN NOT p_stands ELSE p_winner IS DISTINCT FROM p_id END
         THEN 10 * coalesce(p_by_host, false)::INTEGER + p_provenance END;

-- snapshot_candidates(p_caller_agent, p_caller_session, p_min_confidence, p_self_threshold, p_caller_host) -> the live,
-- visible, non-episodic memories that may enter the snapshot, each with its block:
--   profile      USER memories keyed 'profile:<section>' (the user profile, injected whole, by section)
--   user         other USER memories (facts about the user)
--   rules        every active PROCEDURE (behaviour rules, injected every turn; they do not decay away)
--   environment  ENVIRONMENT memories (project facts, tools, paths) not archived by decay
--   self         SELF memories at or above p_self_threshold confidence (earned self-knowledge)
-- Episodes (tier 'episodic') are what happened, not facts: never here. A memory on either side of a
-- pending contradiction is left out of its block (snapshot_conflicts lists it, marked as disputed), unless it
-- stands (dispute_stands): then the other is named as a claim against it.
-- Order within a block: what the host wrote itself first (memories.by_host: an agent handle may carry the host's
-- agent id, and its pinned user_stated rules filled the host's rules block), then provenance (a pin never lifts a
-- lower-trust memory above what the user stated: an agent or an import may pin), then pinned, confidence, recency
-- (last access or update).
CREATE OR REPLACE MACRO snapshot_candidates(p_caller_agent, p_caller_session, p_min_confidence, p_self_threshold,
                                            p_caller_host := NULL) AS TABLE
    WITH open_conflicts AS (  -- pending, between two live memories (a lower-provenance claim awaiting
        SELECT c.memory_a, c.memory_b,  -- review has status 'pending' and never disputes a live fact here)
               a.provenance AS provenance_a, b.provenance AS provenance_b,
               memory_author(a.agent_id, a.by_host) AS agent_a, memory_author(b.agent_id, b.by_host) AS agent_b
        FROM contradictions c JOIN memories a ON a.id = c.memory_a JOIN memories b ON b.id = c.memory_b
        WHERE c.status = 'pending' AND a.status = 'active' AND b.status = 'active'
          -- a dispute the caller can see both sides of: a hidden memory neither takes the caller's fact out of
          -- its block nor tells, by doing so, that it exists
          AND can_see(a.scope, a.agent_id, a.team_id, a.tenant_id, a.source_session, a.tags, a.sensitivity,
                      p_caller_agent, p_caller_session)
          AND can_see(b.scope, b.agent_id, b.team_id, b.tenant_id, b.source_session, b.tags, b.sensitivity,
                      p_caller_agent, p_caller_session)
    ),
    -- the side that stands keeps its block (the Conflicts block names the claim against it): a model's inference
    -- never takes what the user stated out of the prompt, and another agent's claim never takes the caller's own
    disputed AS (
        SELECT memory_a AS id FROM open_conflicts
        WHERE NOT dispute_stands(agent_a, provenance_a, agent_b, provenance_b, memory_author(p_caller_agent, p_caller_host))
        UNION SELECT memory_b FROM open_conflicts
        WHERE NOT dispute_stands(agent_b, provenance_b, agent_a, provenance_a, memory_author(p_caller_agent, p_caller_host)))
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
    ORDER BY coalesce(m.by_host, false) DESC, m.provenance DESC, m.pinned DESC, m.confidence DESC,
             coalesce(m.last_accessed, m.updated_at) DESC, m.id;

-- snapshot_conflicts(p_caller_agent, p_caller_session, p_caller_host) -> the conflicts to show in the snapshot, the
-- caller's own first, then other authors' claims by turns, newest first:
-- pending contradictions between two live memories (both sides, neither is asserted), and
-- conflicts settled by recency that nobody reviewed yet (the newer side stands; the older is named).
-- Only conflicts whose both sides the caller may see and one side is the caller's own (its author's: on an admin
-- handle the host's, so agent "default"'s dispute with a member is not the host's to doubt; or both sides are one
-- author's under the caller's agent id: agent "default"'s own dispute, which takes both sides out of the host's
-- block, is listed there, or a tool's claim replaced a fact in the host's prompt without a trace): two other agents'
-- dispute is theirs (both sides stay in the shared block as claims), and listing it as unconfirmed in the caller's
-- own block would let one agent cast doubt on, or crowd out, what others told it. Authors are memory_author's (the
-- host's own rows and an agent's under the host's agent id are two). resolution is NULL while pending; stands_a /
-- stands_b: the side that keeps its block (dispute_stands); same_agent: both sides are one author's; same_id: one
-- agent id's (the host's and an agent's under it, when same_agent is not); agent_a / agent_b: the sides' agents.
CREATE OR REPLACE MACRO snapshot_conflicts(p_caller_agent, p_caller_session, p_caller_host := NULL) AS TABLE
    SELECT c.id, c.status, c.resolution, c.winner, c.detected_at,
           a.id AS memory_a, a.content AS content_a, a.type AS type_a,
           coalesce(c.source_a, memory_source(a.source_session, a.source_refs, a.agent_id)) AS source_a,
           b.id AS memory_b, b.content AS content_b, b.type AS type_b,
           coalesce(c.source_b, memory_source(b.source_session, b.source_refs, b.agent_id)) AS source_b,
           a.provenance AS provenance_a, b.provenance AS provenance_b,
           a.pinned AS pinned_a, b.pinned AS pinned_b, coalesce(a.by_host, false) AS by_host_a,
           coalesce(b.by_host, false) AS by_host_b,
           c.status = 'pending' AND dispute_stands(a.author, a.provenance, b.author, b.provenance, c.caller) AS stands_a,
           c.status = 'pending' AND dispute_stands(b.author, b.provenance, a.author, a.provenance, c.caller) AS stands_b,
           a.author = b.author AS same_agent, a.agent_id = b.agent_id AS same_id, a.agent_id AS agent_a,
           b.agent_id AS agent_b
    FROM (SELECT *, memory_author(p_caller_agent, p_caller_host) AS caller FROM contradictions) c
    JOIN (SELECT *, memory_author(agent_id, by_host) AS author FROM memories) a ON a.id = c.memory_a
    JOIN (SELECT *, memory_author(agent_id, by_host) AS author FROM memories) b ON b.id = c.memory_b
    WHERE ((c.status = 'pending' AND a.status = 'active' AND b.status = 'active')
           OR (c.status = 'resolved' AND c.resolution = 'newer'
               AND (CASE WHEN c.winner = a.id THEN a.status ELSE b.status END) = 'active'))
      AND a.tier <> 'episodic' AND b.tier <> 'episodic'
      AND (a.agent_id = p_caller_agent OR b.agent_id = p_caller_agent)
      AND (c.caller IN (a.author, b.author) OR a.author = b.author)
      AND can_see(a.scope, a.agent_id, a.team_id, a.tenant_id, a.source_session, a.tags, a.sensitivity,
                  p_caller_agent, p_caller_session)
      AND can_see(b.scope, b.agent_id, b.team_id, b.tenant_id, b.source_session, b.tags, b.sensitivity,
                  p_caller_agent, p_caller_session)
    -- first the disputes that took the most trusted memory out of the caller's prompt (a side that does not stand,
    -- or the one a newer fact replaced: the host's first, then by provenance; unlisted, a fact left the prompt without a trace: a member's claims
    -- against the host's facts crowded out agent "default"'s own dispute in the host's block, a member's imports
    -- the line naming the host's fact its claim took out, agent default's own pairs the host's dispute in its own
    -- prompt), then those touching the caller's own words (on an admin handle the host's: an
    -- agent under the host's id disputing its own facts filled the block), of those the caller's own (both sides its
    -- own: the user's word contested), the most trusted (the lower side's provenance, then the higher's) first, then
    -- other authors' claims against its memories, the host's first (its fact left a member's prompt, and two newer
    -- claims pushed the line naming it out), taking turns, one per author, newest first: six claims by a member, or
    -- the agent's own inferences against the user's facts, must not push the user's own dispute (user_stated against
    -- user_stated) out of the block's five lines
    ORDER BY greatest(dispute_loss(c.status = 'pending', stands_a, c.winner, a.id, a.by_host, a.provenance),
                      dispute_loss(c.status = 'pending', stands_b, c.winner, b.id, b.by_host, b.provenance))
                 DESC NULLS LAST,
             c.caller IN (a.author, b.author) DESC, a.author = b.author DESC,
             CASE WHEN a.author = b.author THEN least(a.provenance, b.provenance) END DESC NULLS LAST,
             CASE WHEN a.author = b.author THEN greatest(a.provenance, b.provenance) END DESC NULLS LAST,
             coalesce(a.by_host, false) OR coalesce(b.by_host, false) DESC,
             row_number() OVER (PARTITION BY CASE WHEN a.author = c.caller THEN b.author ELSE a.author END
                                ORDER BY c.detected_at DESC, c.id),
             c.detected_at DESC, c.id;
