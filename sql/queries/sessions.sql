-- Sessions and their messages (SPEC M4). A session row is created with its first message.

-- name: session_by_id
SELECT * FROM sessions WHERE id = $id AND agent_id = $agent_id;

-- name: sessions_by_suffix
SELECT id FROM sessions WHERE agent_id = $agent_id AND ends_with(id, $suffix) ORDER BY id LIMIT 3;

-- name: insert_session
INSERT INTO sessions (id, agent_id, title, started_at, last_message_at)
VALUES ($id, $agent_id, $title, $now, $now);

-- name: next_message_seq
SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE agent_id = $agent_id AND session_id = $session_id;

-- name: insert_message
INSERT INTO messages (id, agent_id, session_id, seq, role, content, created_at)
VALUES ($id, $agent_id, $session_id, $seq, $role, $content, $now);

-- name: touch_session
UPDATE sessions SET last_message_at = $now WHERE agent_id = $agent_id AND id = $session_id;

-- name: end_session
UPDATE sessions SET ended_at = $now WHERE agent_id = $agent_id AND id = $session_id AND ended_at IS NULL;

-- name: list_sessions
SELECT s.*, (SELECT count(*) FROM messages m WHERE m.agent_id = s.agent_id AND m.session_id = s.id) AS message_count
FROM sessions s
WHERE s.agent_id = $agent_id
ORDER BY s.last_message_at DESC, s.id
LIMIT $limit;

-- name: session_messages
SELECT * FROM messages WHERE agent_id = $agent_id AND session_id = $session_id ORDER BY seq;

-- Case-insensitive substring search over the caller's own messages; one row per session.
-- name: search_sessions
SELECT s.id, s.title, s.started_at, s.last_message_at,
       count(*) AS matches,
       arg_min(m.content, m.seq) AS first_match
FROM messages m JOIN sessions s ON s.agent_id = m.agent_id AND s.id = m.session_id
WHERE s.agent_id = $agent_id AND contains(lower(m.content), lower($text))
GROUP BY ALL
ORDER BY s.last_message_at DESC, s.id
LIMIT $limit;

-- Sessions left without messages (e.g. by an older writer) are removed.
-- name: clean_empty_sessions
DELETE FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.agent_id = s.agent_id AND m.session_id = s.id);

-- name: session_with_count
SELECT s.*, (SELECT count(*) FROM messages m WHERE m.agent_id = s.agent_id AND m.session_id = s.id) AS message_count
FROM sessions s
WHERE s.id = $id AND s.agent_id = $agent_id;

-- A session without a title takes one from its first user message (seed 004).
-- name: title_if_missing
UPDATE sessions SET title = $title WHERE agent_id = $agent_id AND id = $session_id AND title IS NULL;

-- The sessions and titles of these messages ($ids: message ids as text), to tell a title made from one.
-- name: titles_of_messages
SELECT m.agent_id, m.session_id, m.content, s.title
FROM messages m JOIN sessions s ON s.agent_id = m.agent_id AND s.id = m.session_id
WHERE list_contains($ids::VARCHAR[], m.id::VARCHAR) AND m.role = 'user';

-- name: first_user_message
SELECT content FROM messages
WHERE agent_id = $agent_id AND session_id = $session_id AND role = 'user' AND trim(content) <> ''
ORDER BY seq LIMIT 1;

-- name: set_session_title
UPDATE sessions SET title = $title WHERE agent_id = $agent_id AND id = $session_id;
