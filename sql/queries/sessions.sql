-- Sessions and their messages (SPEC M4). A session row is created with its first message.

-- name: session_by_id
SELECT * FROM sessions WHERE id = $id AND agent_id = $agent_id;

-- name: sessions_by_suffix
SELECT id FROM sessions WHERE agent_id = $agent_id AND ends_with(id, $suffix) ORDER BY id LIMIT 3;

-- name: insert_session
INSERT INTO sessions (id, agent_id, title, started_at, last_message_at)
VALUES ($id, $agent_id, $title, $now, $now);

-- name: next_message_seq
SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session_id = $session_id;

-- name: insert_message
INSERT INTO messages (id, session_id, seq, role, content, created_at)
VALUES ($id, $session_id, $seq, $role, $content, $now);

-- name: touch_session
UPDATE sessions SET last_message_at = $now WHERE id = $session_id;

-- name: end_session
UPDATE sessions SET ended_at = $now WHERE id = $session_id AND ended_at IS NULL;

-- name: list_sessions
SELECT s.*, (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS message_count
FROM sessions s
WHERE s.agent_id = $agent_id
ORDER BY s.last_message_at DESC, s.id
LIMIT $limit;

-- name: session_messages
SELECT * FROM messages WHERE session_id = $session_id ORDER BY seq;

-- Case-insensitive substring search over the caller's own messages; one row per session.
-- name: search_sessions
SELECT s.id, s.title, s.started_at, s.last_message_at,
       count(*) AS matches,
       arg_min(m.content, m.seq) AS first_match
FROM messages m JOIN sessions s ON s.id = m.session_id
WHERE s.agent_id = $agent_id AND contains(lower(m.content), lower($text))
GROUP BY ALL
ORDER BY s.last_message_at DESC, s.id
LIMIT $limit;

-- Sessions left without messages (e.g. by an older writer) are removed.
-- name: clean_empty_sessions
DELETE FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id);

-- name: session_owner
SELECT agent_id FROM sessions WHERE id = $id;

-- name: session_with_count
SELECT s.*, (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS message_count
FROM sessions s
WHERE s.id = $id AND s.agent_id = $agent_id;
