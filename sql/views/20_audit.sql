-- 20_audit: the quality and audit report (SPEC Q, seed 001). Each view answers one question;
-- memory_health sums them up in one row for a nightly job. Leakage and staleness must be 0.

-- How much is stored, by tier, type, provenance, scope and status.
-- The aggregate views are over the whole store (an analyst's, an admin's audit); their visible_* macros count
-- only what an agent may see (audit() on an agent handle): over every row, a count would move when another agent
-- wrote a private or sensitive note. seen_by(m_id, …, p_agent, p_session): p_agent NULL is everyone (the store).
CREATE OR REPLACE MACRO seen_by(m_id, m_scope, m_agent_id, m_team_id, m_tenant_id, m_source_session, m_tags,
                                m_sensitivity, m_status, p_agent, p_session) AS
    p_agent IS NULL OR (can_see(m_scope, m_agent_id, m_team_id, m_tenant_id, m_source_session, m_tags, m_sensitivity,
                                p_agent, p_session)
                        AND NOT barred_from(m_id, m_status, m_agent_id, p_agent));

CREATE OR REPLACE MACRO visible_memory_counts(p_agent, p_session) AS TABLE
SELECT tier, type, provenance, scope, status, count(*) AS memories
FROM memories m
WHERE seen_by(m.id, m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity, m.status,
              p_agent, p_session)
GROUP BY ALL ORDER BY ALL;

CREATE OR REPLACE VIEW memory_counts AS SELECT * FROM visible_memory_counts(NULL, NULL);
COMMENT ON VIEW memory_counts IS 'Number of memories in the memories table by tier, type, provenance, scope and status (rows exported to the Parquet archive are counted in memories_all)';

-- Which live memories can say where they came from (source_refs or a source session).
CREATE OR REPLACE MACRO visible_provenance_coverage(p_agent, p_session) AS TABLE
SELECT type, provenance, count(*) AS memories,
       count(*) FILTER (WHERE len(source_refs) > 0) AS with_source_refs,
       count(*) FILTER (WHERE len(source_refs) > 0 OR source_session IS NOT NULL) AS with_any_source,
       round(count(*) FILTER (WHERE len(source_refs) > 0 OR source_session IS NOT NULL) / count(*), 3) AS coverage
FROM memories m
WHERE status = 'active'
  AND seen_by(m.id, m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity, m.status,
              p_agent, p_session)
GROUP BY ALL ORDER BY ALL;

CREATE OR REPLACE VIEW provenance_coverage AS SELECT * FROM visible_provenance_coverage(NULL, NULL);
COMMENT ON VIEW provenance_coverage IS 'Share of live memories with a recorded source, by type and provenance';

-- Contradictions still waiting for a decision, with both sides.
CREATE OR REPLACE VIEW open_contradictions AS
SELECT c.id, c.detected_at, c.confidence, c.description, c.detected_by,
       a.id AS memory_a, a.content AS content_a, a.provenance AS provenance_a, a.source_session AS source_a,
       b.id AS memory_b, b.content AS content_b, b.provenance AS provenance_b, b.source_session AS source_b
FROM contradictions c
JOIN memories a ON a.id = c.memory_a
JOIN memories b ON b.id = c.memory_b
WHERE c.status = 'pending'
ORDER BY c.detected_at;
COMMENT ON VIEW open_contradictions IS 'Pending contradictions with both memories and their sources';

-- Every recalled memory, one row per (recall, memory), with the caller.
CREATE OR REPLACE MACRO each_recalled_memory() AS TABLE
SELECT r.id AS recall_id, r.occurred_at, r.agent_id, r.session_id, r.query, r.include_archived,
       unnest(r.memory_ids) AS memory_id, unnest(r.scores) AS score, generate_subscripts(r.memory_ids, 1) AS rank
FROM recall_log r;

CREATE OR REPLACE VIEW recall_hits_log AS SELECT * FROM each_recalled_memory();
COMMENT ON VIEW recall_hits_log IS 'recall_log unnested: one row per memory each recall returned, with its rank and score';

-- Recalls that returned a version already superseded or forgotten at the time (when not asked for history).
CREATE OR REPLACE MACRO stale_recalls_all() AS TABLE
SELECT h.*, m.status, m.updated_at AS status_since
FROM each_recalled_memory() h JOIN memories m ON m.id = h.memory_id
WHERE NOT h.include_archived
  AND m.status IN ('superseded', 'forgotten', 'pending', 'flagged')
  AND m.updated_at <= h.occurred_at;

CREATE OR REPLACE VIEW stale_recalls AS SELECT * FROM stale_recalls_all();
COMMENT ON VIEW stale_recalls IS 'Recalls that returned a superseded/forgotten memory (must be empty)';

-- Recalls that returned a memory the caller could not see at that moment (must be empty): outside its
-- scope, or another agent's sensitive (or unshared personal) memory.
-- Sensitivity and tags as they were at the recall (memory_events): an owner narrowing a memory later does not make
-- an earlier, allowed recall of it a leak (nor tell the recaller's audit that it was narrowed).
CREATE OR REPLACE MACRO leaked_recalls_all() AS TABLE
WITH at_recall AS (
    SELECT h.recall_id, h.memory_id,
           arg_max(CAST(e.after ->> 'sensitivity' AS VARCHAR), e.event_id)
               FILTER (WHERE json_exists(e.after, '$.sensitivity')) AS sensitivity,
           arg_max(CAST(e.after -> 'tags' AS VARCHAR[]), e.event_id) FILTER (WHERE json_exists(e.after, '$.tags')) AS tags
    FROM each_recalled_memory() h JOIN memory_events e ON e.memory_id = h.memory_id AND e.occurred_at <= h.occurred_at
    WHERE e.after IS NOT NULL
    GROUP BY ALL)
SELECT h.*, m.scope, m.agent_id AS owner_agent, m.team_id, m.tenant_id
FROM each_recalled_memory() h JOIN memories m ON m.id = h.memory_id
LEFT JOIN at_recall t ON t.recall_id = h.recall_id AND t.memory_id = h.memory_id
WHERE NOT (m.agent_id = h.agent_id
           OR another_agent_may_see(coalesce(t.sensitivity, m.sensitivity), coalesce(t.tags, m.tags)))
   OR NOT CASE m.scope
        WHEN 'public' THEN true
        WHEN 'private' THEN m.agent_id = h.agent_id
        WHEN 'session' THEN m.agent_id = h.agent_id
            AND (m.source_session IS NULL OR m.source_session = h.session_id OR list_contains(m.tags, 'global'))
        WHEN 'team' THEN EXISTS (SELECT 1 FROM memberships g
            WHERE g.agent_id = h.agent_id AND g.kind = 'team' AND g.group_id = m.team_id
              AND g.granted_at <= h.occurred_at AND (g.revoked_at IS NULL OR g.revoked_at > h.occurred_at))
        WHEN 'tenant' THEN EXISTS (SELECT 1 FROM memberships g
            WHERE g.agent_id = h.agent_id AND g.kind = 'tenant' AND g.group_id = m.tenant_id
              AND g.granted_at <= h.occurred_at AND (g.revoked_at IS NULL OR g.revoked_at > h.occurred_at))
        ELSE false
      END;

CREATE OR REPLACE VIEW leaked_recalls AS SELECT * FROM leaked_recalls_all();
COMMENT ON VIEW leaked_recalls IS 'Recalls that returned a memory outside the caller''s visibility at the time (must be empty)';

-- Outcome feedback per memory.
CREATE OR REPLACE VIEW memory_utility AS
SELECT m.id, m.type, m.key, m.content, m.helpful_count, m.unhelpful_count,
       m.helpful_count - m.unhelpful_count AS net_helpful, m.access_count
FROM memories m
WHERE m.helpful_count + m.unhelpful_count > 0
ORDER BY net_helpful, m.id;
COMMENT ON VIEW memory_utility IS 'Memories that received outcome feedback, least useful first';

-- Effective importance of live memories in ten buckets of 0.1.
CREATE OR REPLACE MACRO visible_decay_histogram(p_agent, p_session) AS TABLE
SELECT least(floor(d.effective_importance * 10), 9) / 10 AS bucket_from, count(*) AS memories,
       count(*) FILTER (WHERE d.exempt) AS exempt
FROM memory_decay_at(utc_now()) d JOIN memories m ON m.id = d.id
WHERE seen_by(m.id, m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity, m.status,
              p_agent, p_session)
GROUP BY ALL ORDER BY bucket_from;

CREATE OR REPLACE VIEW decay_histogram AS SELECT * FROM visible_decay_histogram(NULL, NULL);
COMMENT ON VIEW decay_histogram IS 'Live memories by effective importance (now), in buckets of 0.1';

CREATE OR REPLACE MACRO visible_blocked_writes(p_agent) AS TABLE  -- an agent's own refused writes
SELECT reason, path, count(*) AS attempts, max(occurred_at) AS last_seen
FROM blocked_writes WHERE p_agent IS NULL OR agent_id = p_agent GROUP BY ALL ORDER BY attempts DESC, reason;

CREATE OR REPLACE VIEW blocked_writes_by_reason AS SELECT * FROM visible_blocked_writes(NULL);
COMMENT ON VIEW blocked_writes_by_reason IS 'Refused writes by scanner reason and write path';

-- One row for a nightly health check.
CREATE OR REPLACE MACRO visible_memory_health(p_agent, p_session) AS TABLE
WITH seen AS MATERIALIZED (
    SELECT m.* FROM memories m
    WHERE seen_by(m.id, m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity, m.status,
                  p_agent, p_session)),
recalled AS (SELECT * FROM each_recalled_memory() WHERE p_agent IS NULL OR agent_id = p_agent)
SELECT (SELECT count(*) FROM seen WHERE status = 'active') AS live_memories,
       (SELECT count(*) FROM seen WHERE status = 'active' AND tier = 'archival') AS archived,
       (SELECT count(*) FROM seen WHERE status = 'superseded') AS superseded,
       (SELECT round(avg(CASE WHEN len(source_refs) > 0 OR source_session IS NOT NULL THEN 1 ELSE 0 END), 3)
        FROM seen WHERE status = 'active') AS provenance_coverage,
       (SELECT count(*) FROM contradictions c
        WHERE c.status = 'pending' AND c.memory_a IN (SELECT id FROM seen) AND c.memory_b IN (SELECT id FROM seen))
           AS open_contradictions,
       -- seed 001: the share of retrieved results carrying a conflict nobody had resolved at the time; for an agent,
       -- only a conflict it can see both sides of (a teammate's private note against its shared fact is not its to know)
       (SELECT round(coalesce(avg(CASE WHEN EXISTS (
                   SELECT 1 FROM contradictions c
                   WHERE (c.memory_a = h.memory_id OR c.memory_b = h.memory_id) AND c.detected_at <= h.occurred_at
                     AND NOT EXISTS (SELECT 1 FROM contradiction_decisions d  -- not yet decided then (0012)
                                     WHERE d.contradiction_id = c.id AND d.decided_at <= h.occurred_at)
                     AND (p_agent IS NULL OR (c.memory_a IN (SELECT id FROM seen) AND c.memory_b IN (SELECT id FROM seen))))
                   THEN 1.0 ELSE 0.0 END), 0), 4)
        FROM recalled h WHERE NOT h.include_archived) AS contradiction_rate,
       (SELECT count(*) FROM stale_recalls_all() WHERE p_agent IS NULL OR agent_id = p_agent) AS stale_recalls,
       (SELECT count(*) FROM leaked_recalls_all() WHERE p_agent IS NULL OR agent_id = p_agent) AS leaked_recalls,
       (SELECT round(sum(helpful_count) / greatest(sum(helpful_count + unhelpful_count), 1), 3) FROM seen)
           AS helpful_share,
       (SELECT count(*) FROM memory_decay_at(utc_now())  -- rows decay() already moved wait for the archive export
        WHERE below_threshold AND tier <> 'archival' AND id IN (SELECT id FROM seen))
           AS due_for_archive,
       (SELECT count(*) FROM blocked_writes WHERE p_agent IS NULL OR agent_id = p_agent) AS blocked_writes,
       (SELECT count(*) FROM stale_vectors_now() WHERE memory_id IN (SELECT id FROM seen)) AS stale_vectors,
       (SELECT count(*) FROM consolidation_jobs WHERE status <> 'done' AND (p_agent IS NULL OR agent_id = p_agent))
           AS pending_jobs;

CREATE OR REPLACE VIEW memory_health AS SELECT * FROM visible_memory_health(NULL, NULL);
COMMENT ON VIEW memory_health IS 'One-row health report: coverage, contradictions, staleness, leakage (must be 0), feedback, decay, blocked writes, stale vectors, pending jobs';
