-- 10_scope: who may see a memory. Every read path (find, get, recall, snapshot, audit) goes through
-- these, so a memory outside the caller's visibility is never returned.
--
-- can_see(...) -> BOOLEAN for one row, given the caller's agent id and current session (NULL if none).
--   private: the owner agent only
--   session: the owner, inside source_session (or anywhere if it has no source_session or is tagged 'global')
--   team / tenant: agents with a membership that is not revoked (revocation takes effect on the next query)
--   public: everyone
-- and, whatever the scope, sensitivity (another_agent_may_see; named to sort before can_see, as IMPORT
-- DATABASE creates macros alphabetically and a macro must exist before one that calls it):
--   sensitive: the owner agent only
--   personal: the owner only, unless the owner shared it explicitly (tag 'share:personal')
CREATE OR REPLACE MACRO another_agent_may_see(m_sensitivity, m_tags) AS
    m_sensitivity = 'normal' OR (m_sensitivity = 'personal' AND list_contains(m_tags, 'share:personal'));

CREATE OR REPLACE MACRO can_see(m_scope, m_agent_id, m_team_id, m_tenant_id, m_source_session, m_tags, m_sensitivity,
                                caller_agent, caller_session) AS
    (m_agent_id = caller_agent OR another_agent_may_see(m_sensitivity, m_tags)) AND
    CASE m_scope
        WHEN 'public' THEN true
        WHEN 'private' THEN m_agent_id = caller_agent
        WHEN 'session' THEN m_agent_id = caller_agent
            AND (m_source_session IS NULL OR m_source_session = caller_session OR list_contains(m_tags, 'global'))
        -- IN over an uncorrelated subquery (a semi join), not a correlated EXISTS: at 100k rows the
        -- EXISTS form cost ~35 ms of delim joins per recall.
        WHEN 'team' THEN m_team_id IN (SELECT g.group_id FROM memberships g
                                       WHERE g.agent_id = caller_agent AND g.kind = 'team' AND g.revoked_at IS NULL)
        WHEN 'tenant' THEN m_tenant_id IN (SELECT g.group_id FROM memberships g
                                           WHERE g.agent_id = caller_agent AND g.kind = 'tenant' AND g.revoked_at IS NULL)
        ELSE false
    END;

-- can_see_as(..., caller_teams, caller_tenants) -> BOOLEAN: can_see with the caller's current team and
-- tenant ids given as lists (caller_groups() below), so the hot recall query plans no subqueries
-- (their planning cost ~7 ms per recall at 100k rows).
CREATE OR REPLACE MACRO can_see_as(m_scope, m_agent_id, m_team_id, m_tenant_id, m_source_session, m_tags,
                                   m_sensitivity, caller_agent, caller_session, caller_teams, caller_tenants) AS
    (m_agent_id = caller_agent OR another_agent_may_see(m_sensitivity, m_tags)) AND
    CASE m_scope
        WHEN 'public' THEN true
        WHEN 'private' THEN m_agent_id = caller_agent
        WHEN 'session' THEN m_agent_id = caller_agent
            AND (m_source_session IS NULL OR m_source_session = caller_session OR list_contains(m_tags, 'global'))
        WHEN 'team' THEN coalesce(list_contains(caller_teams, m_team_id), false)
        WHEN 'tenant' THEN coalesce(list_contains(caller_tenants, m_tenant_id), false)
        ELSE false
    END;

-- caller_groups(caller_agent) -> one row: the caller's current team ids and tenant ids (lists).
CREATE OR REPLACE MACRO caller_groups(caller_agent) AS TABLE
    SELECT coalesce(list(group_id ORDER BY group_id) FILTER (WHERE kind = 'team'), []) AS teams,
           coalesce(list(group_id ORDER BY group_id) FILTER (WHERE kind = 'tenant'), []) AS tenants
    FROM memberships WHERE agent_id = caller_agent AND revoked_at IS NULL;

-- Macros that call others are named to sort after them: COPY FROM DATABASE (lifecycle/erasure.py) recreates them in
-- name order, and a macro whose callee does not exist yet is refused.
-- approval_never_given(m_id) -> BOOLEAN: did the write scanner hold this row (created quarantined: its 'create'
-- event's reason starts with 'quarantined', which no caller's reason may since migration 0014; the create events
-- written before that with such a reason on a row that was not held are in reasons_not_held) with no person
-- approving it since, whatever its status now? A quarantined row waits for a person; its writer may reject or forget
-- it, a purge may flag it: none of that approves it.
CREATE OR REPLACE MACRO approval_never_given(m_id) AS
    coalesce(m_id IN (SELECT memory_id FROM memory_events
                      WHERE action = 'create' AND starts_with(reason, 'quarantined') AND memory_id IS NOT NULL
                        AND event_id NOT IN (SELECT event_id FROM reasons_not_held))
             AND m_id NOT IN (SELECT memory_id FROM memory_events WHERE action = 'approve' AND memory_id IS NOT NULL),
             false);

-- barred_from(m_id, m_status, m_agent_id, caller_agent) -> BOOLEAN: is this row text the write scanner held, which only
-- its writer (and an admin, who reads the table) may read? Another agent's quarantined or never approved row.
CREATE OR REPLACE MACRO barred_from(m_id, m_status, m_agent_id, caller_agent) AS
    m_agent_id IS DISTINCT FROM caller_agent AND (m_status = 'quarantined' OR approval_never_given(m_id));

-- visible_memories(caller_agent, caller_session) -> the memories rows (every status) the caller may see, less the
-- rows the scanner held (barred_from): a team member does not read text the scanner held as a possible injection.
CREATE OR REPLACE MACRO visible_memories(caller_agent, caller_session) AS TABLE
    SELECT m.*
    FROM memories m
    WHERE can_see(m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity,
                  caller_agent, caller_session)
      AND NOT barred_from(m.id, m.status, m.agent_id, caller_agent);

-- counted_memories(caller_agent, caller_session, caller_teams, caller_tenants) -> (id): the memories a caller's
-- recall statistics count: the BM25 document count, length and term frequencies (keyword_bm25, keyword_common_words)
-- and the query's similarity mean and spread (query_similarity_stats) are over these rows only, whatever their
-- status, as visible_memories takes them. Over every row, a score would move when another agent wrote a word in
-- a memory this caller cannot see: a probe with a memory of its own would tell whether anyone's private notes
-- hold "diabetes". Rows the scanner held from the caller (barred_from) are left out: a word of a teammate's rejected
-- note would move the caller's scores.
CREATE OR REPLACE MACRO counted_memories(caller_agent, caller_session, caller_teams, caller_tenants) AS TABLE
    SELECT m.id
    FROM memories m
    WHERE can_see_as(m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity,
                     caller_agent, caller_session, caller_teams, caller_tenants)
      AND NOT barred_from(m.id, m.status, m.agent_id, caller_agent);

-- same_scope_owner(scope, a…, b…) -> BOOLEAN: do two memories of this scope belong to the same owner,
-- so that one key names one fact? (private/session: agent, and session for session scope;
-- team/tenant: the group; public: everyone shares it.)
CREATE OR REPLACE MACRO same_scope_owner(m_scope, a_agent, a_session, a_team, a_tenant,
                                         b_agent, b_session, b_team, b_tenant) AS
    CASE m_scope
        WHEN 'private' THEN a_agent = b_agent
        WHEN 'session' THEN a_agent = b_agent AND a_session IS NOT DISTINCT FROM b_session
        WHEN 'team' THEN a_team = b_team
        WHEN 'tenant' THEN a_tenant = b_tenant
        ELSE true
    END;

-- may_dispute(o…, m…) -> BOOLEAN: may memories o and m meet in a contradiction check (contradiction_candidates,
-- higher_trust_candidates)? One agent's own memories in any two scopes (an imported private note against the fact it
-- published to its team: recorded, never settled automatically), or two authors' in the same scope (and team or
-- tenant); and each author may see the other's memory: a claim its writer cannot read disputes nothing, and a dispute
-- must not tell either of them what the other hid (sensitive, unshared personal). The host sees every memory: a
-- row it wrote itself (o_by_host, m_by_host) meets what its scope reaches, whether or not its agent id is a member
-- (a member's claim against the host's team fact was never checked when the host's id was no member).
CREATE OR REPLACE MACRO may_dispute(o_scope, o_agent, o_team, o_tenant, o_session, o_tags, o_sensitivity,
                                    m_scope, m_agent, m_team, m_tenant, m_session, m_tags, m_sensitivity,
                                    o_by_host := false, m_by_host := false) AS
    (o_agent = m_agent
     OR (o_scope = m_scope AND CASE m_scope
                                   WHEN 'team' THEN o_team = m_team
                                   WHEN 'tenant' THEN o_tenant = m_tenant
                                   WHEN 'public' THEN true
                                   ELSE false
                               END))
    AND (m_by_host OR can_see(o_scope, o_agent, o_team, o_tenant, o_session, o_tags, o_sensitivity, m_agent, m_session))
    AND (o_by_host OR can_see(m_scope, m_agent, m_team, m_tenant, m_session, m_tags, m_sensitivity, o_agent, o_session));
