-- 0006_trust: trust boundaries (issue 18). Publishing rights granted by an admin, a hash chain over
-- memory_events, a marker for purges whose file rewrite is still due, owners and scopes for
-- knowledge-base documents, and the end of neighbour context in the indexes.
-- Run once, inside one transaction with its schema_version row. Never edit after release.

-- Rights an admin grants an agent, one row per grant period (revoked_at set when taken away).
-- 'publish:public', 'publish:team:<team id>', 'publish:tenant:<tenant id>' ('*' for any group the
-- agent is a member of): writing a memory or a knowledge-base document in that scope needs it.
CREATE TABLE agent_rights (
    agent_id   VARCHAR NOT NULL,
    "right"    VARCHAR NOT NULL CHECK (regexp_matches("right", '^publish:(public|team:.+|tenant:.+)$')),
    granted_at TIMESTAMP NOT NULL,
    granted_by VARCHAR NOT NULL,
    revoked_at TIMESTAMP,
    PRIMARY KEY (agent_id, "right", granted_at),
    CHECK (revoked_at IS NULL OR revoked_at >= granted_at)
);
COMMENT ON TABLE agent_rights IS 'Rights an admin granted an agent (publish:public, publish:team:<id>, publish:tenant:<id>); revoked_at set when taken away';

-- The event log as a hash chain: content_digest = sha256 over (salt, reason, before, after);
-- hash = sha256 over (prev_hash, event_id, occurred_at, actor, action, memory_id, content_digest).
-- A purge redacts an event by clearing reason, before, after and salt; content_digest stays, so the
-- chain still verifies and the removed content cannot be guessed back from it.
ALTER TABLE memory_events ADD COLUMN salt VARCHAR;
ALTER TABLE memory_events ADD COLUMN content_digest VARCHAR;
ALTER TABLE memory_events ADD COLUMN prev_hash VARCHAR;
ALTER TABLE memory_events ADD COLUMN hash VARCHAR;
COMMENT ON COLUMN memory_events.salt IS 'random hex mixed into content_digest; NULL once a purge redacted the event';
COMMENT ON COLUMN memory_events.content_digest IS 'sha256(salt, reason, before, after): what the chain covers of the content';
COMMENT ON COLUMN memory_events.prev_hash IS 'hash of the event before this one (by event_id); NULL for the first';
COMMENT ON COLUMN memory_events.hash IS 'sha256(prev_hash, event_id, occurred_at, actor, action, memory_id, content_digest); set when the writing transaction commits';

-- A purge deletes rows at once, but DuckDB keeps freed blocks in the file: the file is rewritten
-- into a fresh one after the purge commits. Until that rewrite is done these rows stay, so a crash
-- in between is finished on the next writable open.
CREATE TABLE pending_purges (
    memory_id    UUID PRIMARY KEY,
    requested_at TIMESTAMP NOT NULL
);
COMMENT ON TABLE pending_purges IS 'Purged memories whose store-file rewrite (and archive rewrite) is still due; resumed on the next writable open';

-- Knowledge-base documents belong to an agent and a scope, like memories. Documents added before
-- this migration were shared by every agent of the store: they stay public, owned by no agent.
ALTER TABLE kb_documents ADD COLUMN agent_id VARCHAR;
ALTER TABLE kb_documents ADD COLUMN scope VARCHAR DEFAULT 'private';
ALTER TABLE kb_documents ADD COLUMN team_id VARCHAR;
ALTER TABLE kb_documents ADD COLUMN tenant_id VARCHAR;
ALTER TABLE kb_documents ADD COLUMN sensitivity VARCHAR DEFAULT 'normal';
UPDATE kb_documents SET agent_id = '', scope = 'public', sensitivity = 'normal';
COMMENT ON COLUMN kb_documents.agent_id IS 'agent that added the document (empty: added before documents had owners)';
COMMENT ON COLUMN kb_documents.scope IS 'visibility, as for memories: private | session | team | tenant | public';
COMMENT ON COLUMN kb_documents.sensitivity IS 'normal | personal | sensitive, as for memories';

-- Neighbour context is gone: a memory is indexed with its own text only. Vectors that were computed
-- with the previous memory of the session prepended are dropped here and listed by stale_vectors
-- until `echo-duck reembed` (or mem.reembed()) recomputes them; the BM25 postings are rebuilt on the
-- next writable open (the keyword index signature changed).
DELETE FROM memory_vectors WHERE memory_id IN (
    SELECT id FROM (
        SELECT id, lag(id) OVER (PARTITION BY agent_id, source_session
                                 ORDER BY coalesce(observed_at, created_at), created_at, id) AS previous
        FROM memories WHERE source_session IS NOT NULL
    ) WHERE previous IS NOT NULL
);
DELETE FROM settings WHERE name = 'context_neighbors';
