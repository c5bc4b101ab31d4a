-- 20_audit: the quality and audit report (SPEC Q, seed 001). Each view answers one question;
-- memory_health sums them up in one row for a nightly job. Leakage and staleness must be 0.

-- How much is stored, by tier, type, provenance, scope and status.
CREATE OR REPLACE VIEW memory_counts AS
SELECT tier, type, provenance, scope, status, count(*) AS memories
FROM memories GROUP BY ALL ORDER BY ALL;
COMMENT ON VIEW memory_counts IS 'Number of memories by tier, type, provenance, scope and status';

-- Which live memories can say where they came from (source_refs or a source session).
CREATE OR REPLACE VIEW provenance_coverage AS
SELECT type, provenance, count(*) AS memories,
       count(*) FILTER (WHERE len(source_refs) > 0) AS with_source_refs,
       count(*) FILTER (WHERE len(source_refs) > 0 OR source_session IS NOT NULL) AS with_any_source,
       round(count(*) FILTER (WHERE len(source_refs) > 0 OR source_session IS NOT NULL) / count(*), 3) AS coverage
FROM memories WHERE status = 'active'
GROUP BY ALL ORDER BY ALL;
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
CREATE OR REPLACE MACRO leaked_recalls_all() AS TABLE
SELECT h.*, m.scope, m.agent_id AS owner_agent, m.team_id, m.tenant_id
FROM each_recalled_memory() h JOIN memories m ON m.id = h.memory_id
WHERE NOT (m.agent_id = h.agent_id OR another_agent_may_see(m.sensitivity, m.tags))
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
CREATE OR REPLACE VIEW decay_histogram AS
SELECT least(floor(effective_importance * 10), 9) / 10 AS bucket_from, count(*) AS memories,
       count(*) FILTER (WHERE exempt) AS exempt
FROM memory_decay_at(utc_now()) GROUP BY ALL ORDER BY bucket_from;
COMMENT ON VIEW decay_histogram IS 'Live memories by effective importance (now), in buckets of 0.1';

CREATE OR REPLACE VIEW blocked_writes_by_reason AS
SELECT reason, path, count(*) AS attempts, max(occurred_at) AS last_seen
FROM blocked_writes GROUP BY ALL ORDER BY attempts DESC, reason;
COMMENT ON VIEW blocked_writes_by_reason IS 'Refused writes by scanner reason and write path';

-- One row for a nightly health check.
CREATE OR REPLACE VIEW memory_health AS
SELECT (SELECT count(*) FROM memories WHERE status = 'active') AS live_memories,
       (SELECT count(*) FROM memories WHERE status = 'active' AND tier = 'archival') AS archived,
       (SELECT count(*) FROM memories WHERE status = 'superseded') AS superseded,
       (SELECT round(avg(CASE WHEN len(source_refs) > 0 OR source_session IS NOT NULL THEN 1 ELSE 0 END), 3)
        FROM memories WHERE status = 'active') AS provenance_coverage,
       (SELECT count(*) FROM contradictions WHERE status = 'pending') AS open_contradictions,
       -- seed 001: the share of retrieved results carrying a conflict nobody had resolved at the time
       (SELECT round(coalesce(avg(CASE WHEN EXISTS (
                   SELECT 1 FROM contradictions c
                   WHERE (c.memory_a = h.memory_id OR c.memory_b = h.memory_id) AND c.detected_at <= h.occurred_at
                     AND (c.resolved_at IS NULL OR c.resolved_at > h.occurred_at)) THEN 1.0 ELSE 0.0 END), 0), 4)
        FROM each_recalled_memory() h WHERE NOT h.include_archived) AS contradiction_rate,
       (SELECT count(*) FROM stale_recalls_all()) AS stale_recalls,
       (SELECT count(*) FROM leaked_recalls_all()) AS leaked_recalls,
       (SELECT round(sum(helpful_count) / greatest(sum(helpful_count + unhelpful_count), 1), 3) FROM memories) AS helpful_share,
       (SELECT count(*) FROM memory_decay_at(utc_now()) WHERE below_threshold) AS due_for_archive,
       (SELECT count(*) FROM blocked_writes) AS blocked_writes,
       (SELECT count(*) FROM stale_vectors_now()) AS stale_vectors,
       (SELECT count(*) FROM consolidation_jobs WHERE status <> 'done') AS pending_jobs;
COMMENT ON VIEW memory_health IS 'One-row health report: coverage, contradictions, staleness, leakage (must be 0), feedback, decay, blocked writes, stale vectors, pending jobs';
