-- 0001_core: the authoritative tables of an echo_duck store.
-- Run once, inside one transaction together with its schema_version row. Never edit after release:
-- a change is a new numbered file.

-- One row per version of a fact. Superseded versions stay (status 'superseded', tier 'archival')
-- so history can be read back; working memory is never persisted, hence no 'working' tier here.
CREATE TABLE memories (
    id              UUID PRIMARY KEY,
    agent_id        VARCHAR NOT NULL,
    type            VARCHAR NOT NULL CHECK (type IN ('user', 'environment', 'procedure', 'self')),
    tier            VARCHAR NOT NULL DEFAULT 'semantic' CHECK (tier IN ('episodic', 'semantic', 'archival')),
    key             VARCHAR CHECK (key IS NULL OR length(key) BETWEEN 1 AND 200),
    content         VARCHAR NOT NULL CHECK (length(content) >= 1),
    tags            VARCHAR[] NOT NULL DEFAULT [],
    entities        VARCHAR[] NOT NULL DEFAULT [],
    scope           VARCHAR NOT NULL DEFAULT 'private'
                    CHECK (scope IN ('private', 'session', 'team', 'tenant', 'public')),
    team_id         VARCHAR,
    tenant_id       VARCHAR,
    source_session  VARCHAR,
    source_refs     VARCHAR[] NOT NULL DEFAULT [],
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL,
    observed_at     TIMESTAMP,
    importance      DOUBLE NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
    confidence      DOUBLE NOT NULL DEFAULT 0.8 CHECK (confidence BETWEEN 0 AND 1),
    access_count    INTEGER NOT NULL DEFAULT 0 CHECK (access_count >= 0),
    last_accessed   TIMESTAMP,
    helpful_count   INTEGER NOT NULL DEFAULT 0 CHECK (helpful_count >= 0),
    unhelpful_count INTEGER NOT NULL DEFAULT 0 CHECK (unhelpful_count >= 0),
    episode_id      UUID,
    version         INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
    supersedes      UUID,
    superseded_by   UUID,
    provenance      TINYINT NOT NULL CHECK (provenance BETWEEN 0 AND 3),
    pinned          BOOLEAN NOT NULL DEFAULT false,
    sensitivity     VARCHAR NOT NULL DEFAULT 'normal' CHECK (sensitivity IN ('normal', 'personal', 'sensitive')),
    status          VARCHAR NOT NULL DEFAULT 'active'
                    CHECK (status IN ('active', 'pending', 'superseded', 'forgotten', 'flagged')),
    CHECK (scope <> 'team' OR team_id IS NOT NULL),
    CHECK (scope <> 'tenant' OR tenant_id IS NOT NULL),
    CHECK (status <> 'superseded' OR superseded_by IS NOT NULL),
    CHECK (updated_at >= created_at)
);

COMMENT ON TABLE memories IS 'Every version of every persisted memory (episodic, semantic, archival). Live facts have status = ''active''.';
COMMENT ON COLUMN memories.id IS 'uuid of this version';
COMMENT ON COLUMN memories.agent_id IS 'agent that owns (wrote) the memory';
COMMENT ON COLUMN memories.type IS 'user (who the user is, never decays) | environment (project facts, decays) | procedure (behaviour rules) | self (the agent''s own capabilities)';
COMMENT ON COLUMN memories.tier IS 'episodic | semantic | archival (superseded or decayed; restorable)';
COMMENT ON COLUMN memories.key IS 'semantic key: a write with the same key in the same scope creates a new version';
COMMENT ON COLUMN memories.scope IS 'visibility: private (owner agent) | session (owner, in source_session) | team (team_id members) | tenant (tenant_id members) | public';
COMMENT ON COLUMN memories.source_refs IS 'what it was derived from: message:<id>, episode:<id>, memory:<id>';
COMMENT ON COLUMN memories.importance IS '0..1, decays with time since last access (see memory_decay)';
COMMENT ON COLUMN memories.confidence IS '0..1, how sure the writer was';
COMMENT ON COLUMN memories.provenance IS '3 user_stated > 2 consolidated > 1 model_inferred > 0 legacy; a lower value never replaces a higher one';
COMMENT ON COLUMN memories.supersedes IS 'id of the previous version';
COMMENT ON COLUMN memories.superseded_by IS 'id of the next version (set when this one was replaced)';
COMMENT ON COLUMN memories.status IS 'active | pending (awaits a contradiction decision) | superseded | forgotten | flagged (derived from deleted content)';

-- One vector per memory, stamped with the model that made it so a model switch can find stale rows.
CREATE TABLE memory_vectors (
    memory_id   UUID PRIMARY KEY,
    model_id    VARCHAR NOT NULL,
    dim         INTEGER NOT NULL CHECK (dim > 0),
    vector      FLOAT[] NOT NULL USING COMPRESSION uncompressed,  -- ALPRD made exact scans 8x slower
    embedded_at TIMESTAMP NOT NULL,
    CHECK (len(vector) = dim)
);
COMMENT ON TABLE memory_vectors IS 'Embedding of each memory, with the model_id and dim that produced it';

-- Raw conversation: a session row is written together with its first message, never empty.
CREATE TABLE sessions (
    id              VARCHAR PRIMARY KEY,
    agent_id        VARCHAR NOT NULL,
    title           VARCHAR,
    started_at      TIMESTAMP NOT NULL,
    last_message_at TIMESTAMP NOT NULL,
    ended_at        TIMESTAMP,
    consolidated_at TIMESTAMP
);
COMMENT ON TABLE sessions IS 'Conversations; a row exists only once the session has a message';

CREATE TABLE messages (
    id          UUID PRIMARY KEY,
    session_id  VARCHAR NOT NULL,
    seq         INTEGER NOT NULL CHECK (seq >= 1),
    role        VARCHAR NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    content     VARCHAR NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    UNIQUE (session_id, seq)
);
COMMENT ON TABLE messages IS 'Raw messages of each session, in order (seq); the source episodes point into';

CREATE TABLE episodes (
    id          UUID PRIMARY KEY,
    agent_id    VARCHAR NOT NULL,
    session_id  VARCHAR NOT NULL,
    session_key VARCHAR,
    summary     VARCHAR NOT NULL,
    first_seq   INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,
    entities    VARCHAR[] NOT NULL DEFAULT [],
    importance  DOUBLE NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
    started_at  TIMESTAMP NOT NULL,
    ended_at    TIMESTAMP NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    status      VARCHAR NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'flagged', 'forgotten')),
    CHECK (last_seq >= first_seq)
);
COMMENT ON TABLE episodes IS 'One summary per session (or chunk of one): what happened, which messages, which entities';

CREATE TABLE contradictions (
    id           UUID PRIMARY KEY,
    memory_a     UUID NOT NULL,
    memory_b     UUID NOT NULL,
    description  VARCHAR NOT NULL,
    confidence   DOUBLE NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    detected_by  VARCHAR NOT NULL,
    detected_at  TIMESTAMP NOT NULL,
    status       VARCHAR NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'resolved')),
    resolution   VARCHAR CHECK (resolution IS NULL OR resolution IN ('higher_provenance', 'newer', 'user', 'dismissed')),
    winner       UUID,
    resolved_at  TIMESTAMP,
    CHECK (memory_a <> memory_b),
    CHECK (status = 'pending' OR resolved_at IS NOT NULL)
);
COMMENT ON TABLE contradictions IS 'Every detected conflict between two memories and how it was resolved';

-- Append-only: nothing updates or deletes these rows except a privacy purge, which blanks content.
CREATE SEQUENCE memory_event_seq START 1;
CREATE TABLE memory_events (
    event_id   BIGINT PRIMARY KEY DEFAULT nextval('memory_event_seq'),
    occurred_at TIMESTAMP NOT NULL,
    actor      VARCHAR NOT NULL,
    action     VARCHAR NOT NULL,
    memory_id  UUID,
    reason     VARCHAR,
    before     JSON,
    after      JSON
);
COMMENT ON TABLE memory_events IS 'Append-only log of every change: who (actor), what (action, before/after row as JSON), why (reason)';

-- Writes the scanner refused: an excerpt with secrets masked, never the full payload.
CREATE SEQUENCE blocked_write_seq START 1;
CREATE TABLE blocked_writes (
    id        BIGINT PRIMARY KEY DEFAULT nextval('blocked_write_seq'),
    occurred_at TIMESTAMP NOT NULL,
    actor     VARCHAR NOT NULL,
    agent_id  VARCHAR NOT NULL,
    path      VARCHAR NOT NULL,
    field     VARCHAR NOT NULL,
    reason    VARCHAR NOT NULL,
    detail    VARCHAR NOT NULL,
    excerpt   VARCHAR NOT NULL
);
COMMENT ON TABLE blocked_writes IS 'Quarantine of refused writes (reason, redacted excerpt) for auditing attacks';

-- Team and tenant membership, one row per grant period: revoking sets revoked_at, which hides that
-- group's memories at once, on every path; a later grant adds a new row. The periods stay so the
-- leakage audit can judge past recalls by the rights they had then.
CREATE TABLE memberships (
    agent_id   VARCHAR NOT NULL,
    kind       VARCHAR NOT NULL CHECK (kind IN ('team', 'tenant')),
    group_id   VARCHAR NOT NULL,
    granted_at TIMESTAMP NOT NULL,
    revoked_at TIMESTAMP,
    PRIMARY KEY (agent_id, kind, group_id, granted_at),
    CHECK (revoked_at IS NULL OR revoked_at >= granted_at)
);
COMMENT ON TABLE memberships IS 'Which agents belong to which team/tenant (revoked_at set when taken away); scope checks read it on every query';

-- Tunables read by the SQL macros (decay base, archive threshold, …).
CREATE TABLE settings (
    name  VARCHAR PRIMARY KEY,
    value DOUBLE NOT NULL,
    note  VARCHAR
);
COMMENT ON TABLE settings IS 'Numeric tunables used by the SQL macros and views';
INSERT INTO settings VALUES
    ('importance_decay_days', 30, 'base half-life in days; clamped to >= 1'),
    ('archive_threshold', 0.05, 'effective importance below which a decaying memory is archived');
