-- 0009_session_keys: a session id names a conversation of one agent, not of the store.
-- Run once, inside one transaction with its schema_version row. Never edit after release.
--
-- Before, sessions.id was the primary key of the whole file: an agent adding a message to an id another
-- agent held was refused (telling it that the other agent's conversation exists), and the first agent to
-- use a free id owned it (squatting the id a host would later hand to another agent). Now sessions are
-- keyed by (agent_id, id); messages carry the agent whose session they belong to, and the consolidation
-- queue is keyed the same way. Episodes and memories already carry agent_id beside session_id.
-- DuckDB cannot change a primary key, so the three tables are rebuilt with the same data. The macros and
-- views are reinstalled after this migration (their recorded checksum is cleared).

CREATE TABLE sessions_0009 (
    id              VARCHAR NOT NULL,
    agent_id        VARCHAR NOT NULL,
    title           VARCHAR,
    started_at      TIMESTAMP NOT NULL,
    last_message_at TIMESTAMP NOT NULL,
    ended_at        TIMESTAMP,
    consolidated_at TIMESTAMP,
    PRIMARY KEY (agent_id, id)
);
INSERT INTO sessions_0009 BY NAME SELECT * FROM sessions;

-- A message whose session row is gone (an older writer) keeps an empty agent: no agent reads it.
CREATE TABLE messages_0009 (
    id          UUID PRIMARY KEY,
    agent_id    VARCHAR NOT NULL,
    session_id  VARCHAR NOT NULL,
    seq         INTEGER NOT NULL CHECK (seq >= 1),
    role        VARCHAR NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    content     VARCHAR NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    UNIQUE (agent_id, session_id, seq)
);
INSERT INTO messages_0009 (id, agent_id, session_id, seq, role, content, created_at)
SELECT m.id, coalesce(s.agent_id, ''), m.session_id, m.seq, m.role, m.content, m.created_at
FROM messages m LEFT JOIN sessions s ON s.id = m.session_id;

CREATE TABLE consolidation_jobs_0009 (
    session_id      VARCHAR NOT NULL,
    agent_id        VARCHAR NOT NULL,
    status          VARCHAR NOT NULL CHECK (status IN ('pending', 'running', 'done')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    requested_at    TIMESTAMP NOT NULL,
    next_attempt_at TIMESTAMP NOT NULL,
    started_at      TIMESTAMP,
    finished_at     TIMESTAMP,
    last_error      VARCHAR,
    result          JSON,
    PRIMARY KEY (agent_id, session_id)
);
INSERT INTO consolidation_jobs_0009 BY NAME SELECT * FROM consolidation_jobs;

DROP TABLE messages;
DROP TABLE sessions;
DROP TABLE consolidation_jobs;
ALTER TABLE sessions_0009 RENAME TO sessions;
ALTER TABLE messages_0009 RENAME TO messages;
ALTER TABLE consolidation_jobs_0009 RENAME TO consolidation_jobs;

COMMENT ON TABLE sessions IS 'Conversations, one id space per agent; a row exists only once the session has a message';
COMMENT ON TABLE messages IS 'Raw messages of each session, in order (seq); the source episodes point into';
COMMENT ON TABLE consolidation_jobs IS 'Sleep-time consolidation queue: a failed job stays pending with backoff, never dropped';

CREATE TABLE IF NOT EXISTS schema_objects (checksum VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL);
DELETE FROM schema_objects;
