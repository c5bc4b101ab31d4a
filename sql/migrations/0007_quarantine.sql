-- 0007_quarantine: a memory status for writes the scanner is unsure about (issue 19).
-- Run once, inside one transaction with its schema_version row. Never edit after release.
--
-- A quarantined write is stored with status 'quarantined': returned to the writer, shown to the person who
-- approves or rejects it, and never recalled, snapshotted, exported, consolidated or published until
-- approved (every read path filters status = 'active'). DuckDB cannot drop or change a CHECK constraint,
-- so the table is rebuilt with the same columns, data and row_version sequence, and the wider status list.
-- The macros and views are reinstalled after this migration (their recorded checksum is cleared), which
-- also puts back the column comments that views/90_comments.sql owns.

CREATE TABLE memories_0007 (
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
                    CHECK (status IN ('active', 'pending', 'superseded', 'forgotten', 'flagged', 'quarantined')),
    row_version     BIGINT DEFAULT nextval('memory_row_version_seq'),
    CHECK (scope <> 'team' OR team_id IS NOT NULL),
    CHECK (scope <> 'tenant' OR tenant_id IS NOT NULL),
    CHECK (status <> 'superseded' OR superseded_by IS NOT NULL),
    CHECK (updated_at >= created_at)
);

INSERT INTO memories_0007 BY NAME SELECT * FROM memories;
DROP TABLE memories;
ALTER TABLE memories_0007 RENAME TO memories;

COMMENT ON TABLE memories IS 'Every version of every persisted memory (episodic, semantic, archival). Live facts have status = ''active''; a quarantined write waits for a person with status = ''quarantined''.';
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
COMMENT ON COLUMN memories.status IS 'active | pending (awaits a contradiction decision) | superseded | forgotten | flagged (derived from deleted content) | quarantined (the write scanner was unsure: stored, never recalled, snapshotted, exported or consolidated until approve(); reject() forgets it)';
COMMENT ON COLUMN memories.row_version IS 'change counter: set from memory_row_version_seq by every insert and update (for in-process copies)';

CREATE TABLE IF NOT EXISTS schema_objects (checksum VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL);
DELETE FROM schema_objects;
