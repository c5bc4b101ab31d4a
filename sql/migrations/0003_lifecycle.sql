-- 0003_lifecycle: bookkeeping for forgetting and learning: Parquet archive exports (a manifest so a
-- crash can never leave a row in both places or in neither), the consolidation job queue, and the
-- lifecycle tunables. Run once, inside one transaction with its schema_version row.

-- One row per archive export; status: staged (files written to a staging folder, rows still live) →
-- moved (files in the archive, rows still live) → done (rows removed from memories).
CREATE TABLE archive_exports (
    id          UUID PRIMARY KEY,
    created_at  TIMESTAMP NOT NULL,
    status      VARCHAR NOT NULL CHECK (status IN ('staged', 'moved', 'done', 'abandoned')),
    rows        INTEGER NOT NULL,
    files       VARCHAR[] NOT NULL DEFAULT [],
    finished_at TIMESTAMP
);
COMMENT ON TABLE archive_exports IS 'Parquet archive exports and their progress (staged, moved, done)';

CREATE TABLE archive_export_rows (
    export_id  UUID NOT NULL,
    memory_id  UUID NOT NULL,
    PRIMARY KEY (export_id, memory_id)
);
COMMENT ON TABLE archive_export_rows IS 'Which memories each archive export carried';

-- One job per session at a time: a repeat request while one is pending is the same job.
CREATE TABLE consolidation_jobs (
    session_id      VARCHAR PRIMARY KEY,
    agent_id        VARCHAR NOT NULL,
    status          VARCHAR NOT NULL CHECK (status IN ('pending', 'running', 'done')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    requested_at    TIMESTAMP NOT NULL,
    next_attempt_at TIMESTAMP NOT NULL,
    started_at      TIMESTAMP,
    finished_at     TIMESTAMP,
    last_error      VARCHAR,
    result          JSON
);
COMMENT ON TABLE consolidation_jobs IS 'Sleep-time consolidation queue: a failed job stays pending with backoff, never dropped';

INSERT INTO settings VALUES
    ('archive_retention_days', 90, 'archived and superseded rows older than this move to the Parquet archive'),
    ('gc_retention_days', 30, 'forgotten rows, old recall_log and blocked_writes rows older than this may be purged by gc'),
    ('contradiction_similarity', 0.75, 'vector similarity above which two memories are checked for a contradiction'),
    ('contradiction_min_confidence', 0.5, 'verdicts below this are not recorded'),
    ('contradiction_auto_confidence', 0.75, 'verdicts at or above this are resolved by provenance, then recency'),
    ('consolidation_idle_minutes', 30, 'a session idle this long is consolidated by the background worker'),
    ('consolidation_lease_minutes', 10, 'a running job older than this is presumed crashed and retried');
