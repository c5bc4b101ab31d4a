-- Sleep-time consolidation (echo_duck/lifecycle/consolidate.py): episodes and the durable job queue.

-- name: episode_of_session
SELECT * FROM episodes WHERE agent_id = $agent_id AND session_id = $session_id AND status = 'active'
ORDER BY created_at DESC LIMIT 1;

-- The messages of a session whose facts (or summary) its agent's memories forgot or rejected: a summary made again
-- leaves them out (consolidate.py), as the forget left the old one out of recall.
-- name: session_messages_withdrawn
SELECT DISTINCT substr(ref, 9) AS message_id
FROM memories, unnest(source_refs) AS u(ref)
WHERE agent_id = $agent_id AND source_session = $session_id AND status IN ('forgotten', 'rejected')
  AND starts_with(ref, 'message:');

-- name: insert_episode
INSERT INTO episodes (id, agent_id, session_id, session_key, summary, first_seq, last_seq, entities, importance,
                      started_at, ended_at, created_at)
VALUES ($id, $agent_id, $session_id, $session_key, $summary, $first_seq, $last_seq, $entities, $importance,
        $started_at, $ended_at, $now);

-- name: retire_episode
UPDATE episodes SET status = 'forgotten' WHERE id = $id;

-- name: mark_session_consolidated
UPDATE sessions SET consolidated_at = $now, consolidated_seq = greatest(coalesce(consolidated_seq, 0), $seq)
WHERE agent_id = $agent_id AND id = $session_id;  -- how far it read only moves forward

-- A repeat request while a job is pending or running is the same job; a finished one is reopened.
-- name: request_job
INSERT INTO consolidation_jobs (session_id, agent_id, status, attempts, requested_at, next_attempt_at)
VALUES ($session_id, $agent_id, 'pending', 0, $now, $now)
ON CONFLICT DO UPDATE SET
    status = CASE WHEN consolidation_jobs.status = 'done' THEN 'pending' ELSE consolidation_jobs.status END,
    attempts = CASE WHEN consolidation_jobs.status = 'done' THEN 0 ELSE consolidation_jobs.attempts END,
    requested_at = CASE WHEN consolidation_jobs.status = 'done' THEN excluded.requested_at ELSE consolidation_jobs.requested_at END,
    next_attempt_at = CASE WHEN consolidation_jobs.status = 'done' THEN excluded.next_attempt_at ELSE consolidation_jobs.next_attempt_at END;

-- Due jobs: pending and due, or running longer than the lease (the worker that held it crashed).
-- name: due_jobs
SELECT session_id FROM consolidation_jobs
WHERE agent_id = $agent_id
  AND ((status = 'pending' AND next_attempt_at <= $now)
       OR (status = 'running' AND started_at < $now - to_minutes(setting('consolidation_lease_minutes')::BIGINT)))
ORDER BY next_attempt_at, session_id
LIMIT $limit;

-- name: claim_job
UPDATE consolidation_jobs SET status = 'running', started_at = $now, attempts = attempts + 1
WHERE agent_id = $agent_id AND session_id = $session_id;

-- name: finish_job
UPDATE consolidation_jobs SET status = 'done', finished_at = $now, last_error = NULL, result = $result::JSON
WHERE agent_id = $agent_id AND session_id = $session_id;

-- A failed job is retried later (exponential backoff, at most a day), never dropped.
-- name: fail_job
UPDATE consolidation_jobs
SET status = 'pending', last_error = $error,
    next_attempt_at = $now + to_seconds(least(60 * pow(2, attempts - 1), 86400)::BIGINT)
WHERE agent_id = $agent_id AND session_id = $session_id;

-- Sessions idle long enough, with messages after the last one consolidation read.
-- name: idle_sessions
SELECT id FROM sessions
WHERE agent_id = $agent_id
  AND last_message_at < $now - to_minutes(setting('consolidation_idle_minutes')::BIGINT)
  AND coalesce(consolidated_seq, 0) < (SELECT max(m.seq) FROM messages m
                                       WHERE m.agent_id = sessions.agent_id AND m.session_id = sessions.id)
  AND id NOT IN (SELECT session_id FROM consolidation_jobs
                 WHERE agent_id = $agent_id AND status IN ('pending', 'running'))
ORDER BY last_message_at
LIMIT $limit;

-- name: unconsolidated_sessions
SELECT id FROM sessions
WHERE agent_id = $agent_id
  AND coalesce(consolidated_seq, 0) < (SELECT max(m.seq) FROM messages m
                                       WHERE m.agent_id = sessions.agent_id AND m.session_id = sessions.id)
ORDER BY last_message_at;

-- name: jobs
SELECT * FROM consolidation_jobs WHERE agent_id = $agent_id ORDER BY requested_at DESC, session_id;
