-- Example queries for analysts: each answers one common question about an agent's memory. They run
-- as they are in the duckdb CLI or Python on a store file (see sql/REFERENCE.md, which renders them),
-- and each is executed by tests/test_docs.py. The comment line just above each `-- name:` is the
-- question (the reference page's heading); a second comment line, if any, explains.
-- Times in a store are naive UTC: compare them with utc_now(), not now().

-- Which memories decayed this week?
-- The decay job archives what fell below archive_threshold and logs an 'archive' event for each.
-- name: example_decayed_this_week
SELECT e.occurred_at AS archived_at, m.type, m.key, m.content, m.importance, m.access_count,
       m.last_accessed, m.storage
FROM memory_events e
JOIN memories_all m ON m.id = e.memory_id
WHERE e.action = 'archive' AND e.occurred_at >= utc_now() - INTERVAL 7 DAY
ORDER BY e.occurred_at DESC, m.key;

-- Which memories will decay in the next 30 days?
-- memory_decay_at(ts) evaluates the forgetting curve at any time; compare it with now.
-- name: example_decaying_soon
SELECT later.key, later.type, round(now_.effective_importance, 3) AS importance_now,
       round(later.effective_importance, 3) AS importance_in_30_days, later.half_life_days
FROM memory_decay_at(utc_now() + INTERVAL 30 DAY) later
JOIN memory_decay now_ ON now_.id = later.id
WHERE later.below_threshold AND NOT now_.below_threshold
ORDER BY later.effective_importance, later.key;

-- Which sources produced the most contradictions?
-- A source is the session a memory was learned in, with its provenance; "lost" counts the
-- contradictions decided against it. memories_all: the losing sides may have moved to Parquet.
-- name: example_contradictions_by_source
WITH sides AS (
    SELECT c.id, c.status, c.resolution, c.winner, unnest([c.memory_a, c.memory_b]) AS memory_id
    FROM contradictions c
)
SELECT coalesce(m.source_session, '(no session)') AS source_session,
       CASE m.provenance WHEN 3 THEN 'user_stated' WHEN 2 THEN 'consolidated'
                         WHEN 1 THEN 'model_inferred' ELSE 'legacy' END AS provenance,
       count(DISTINCT s.id) AS contradictions,
       count(DISTINCT s.id) FILTER (WHERE s.status = 'pending') AS pending,
       count(DISTINCT s.id) FILTER (WHERE s.winner = m.id) AS won,
       count(DISTINCT s.id) FILTER (WHERE s.status = 'resolved' AND s.resolution <> 'dismissed'
                                      AND s.winner IS DISTINCT FROM m.id) AS lost
FROM sides s
JOIN memories_all m ON m.id = s.memory_id
GROUP BY ALL
ORDER BY contradictions DESC, source_session, provenance;

-- How were contradictions resolved?
-- name: example_contradiction_resolutions
SELECT status, coalesce(resolution, '(waiting for the user)') AS resolution, detected_by,
       count(*) AS contradictions, round(avg(confidence), 2) AS avg_confidence
FROM contradictions
GROUP BY ALL
ORDER BY contradictions DESC, status, resolution;

-- What did the agent recall for this query yesterday?
-- Replace 'package manager' with words of the query. memories_all also finds memories that have
-- since moved to the Parquet archive.
-- name: example_recalled_yesterday
SELECT h.occurred_at, h.agent_id, h.query, h.rank, round(h.score, 4) AS score,
       m.type, m.key, m.content, m.storage
FROM recall_hits_log h
JOIN memories_all m ON m.id = h.memory_id
WHERE h.query ILIKE '%package manager%'
  AND h.occurred_at >= utc_now()::DATE - INTERVAL 1 DAY
  AND h.occurred_at < utc_now()::DATE
ORDER BY h.occurred_at, h.recall_id, h.rank;

-- How many attacks were blocked, by reason?
-- name: example_blocked_by_reason
SELECT reason, count(*) AS attempts, count(DISTINCT agent_id) AS agents,
       list(DISTINCT path ORDER BY path) AS write_paths,
       min(occurred_at) AS first_seen, max(occurred_at) AS last_seen
FROM blocked_writes
GROUP BY reason
ORDER BY attempts DESC, reason;

-- What is in the Parquet archive?
-- memories_all reads the live table and the Hive-partitioned Parquet files as one table.
-- name: example_parquet_archive
SELECT agent_id, year(created_at) AS year, type, status, count(*) AS memories,
       min(updated_at) AS oldest_change, max(updated_at) AS newest_change
FROM memories_all
WHERE storage = 'archive'
GROUP BY ALL
ORDER BY ALL;

-- How did one fact change over time?
-- Replace 'package_manager' with the key. Every version (also those moved to Parquet), and every
-- event on them, oldest first.
-- name: example_fact_history
SELECT e.event_id, e.occurred_at, e.actor, e.action, e.reason, m.version, m.status, m.content, m.storage
FROM memory_events e
JOIN memories_all m ON m.id = e.memory_id
WHERE m.key = 'package_manager'
ORDER BY e.event_id;

-- Which memories help, and which never come back?
-- Live memories with their recall count and outcome feedback, least used first.
-- name: example_memory_usage
SELECT type, key, content, access_count, helpful_count, unhelpful_count,
       date_diff('day', created_at, utc_now()) AS age_days
FROM memories
WHERE status = 'active'
ORDER BY access_count, helpful_count - unhelpful_count, created_at, key;

-- How much does each agent recall per day?
-- name: example_recalls_per_day
SELECT occurred_at::DATE AS day, agent_id, count(*) AS recalls,
       round(avg(len(memory_ids)), 1) AS avg_hits,
       count(*) FILTER (WHERE len(memory_ids) = 0) AS empty_recalls
FROM recall_log
GROUP BY ALL
ORDER BY day, agent_id;
