-- 0014_reasons_not_held: create events whose reason reads like a held write's though the row was not held.
-- Run once, inside one transaction with its schema_version row. Never edit after release.
--
-- approval_never_given (sql/macros/10_scope.sql) knows a row the write scanner held by its create event: reason
-- 'quarantined…' and the row it wrote in status 'quarantined'. An update's reason is the caller's free text, so the
-- reason alone could be forged ("quarantined the old date"), and reading every create event's row (JSON) to tell
-- the two apart cost ~10 ms a call at 20,000 events, on every recall after a write. From this version on a caller's
-- reason may not start with 'quarantined' (validate.reason; log_event refuses such a create event too), and the create
-- events written before that with such a reason on a row that was not held are listed here, once.

CREATE TABLE reasons_not_held (
    event_id BIGINT PRIMARY KEY
);

INSERT INTO reasons_not_held
SELECT event_id FROM memory_events
WHERE action = 'create' AND starts_with(reason, 'quarantined')
  AND json_extract_string(after, '$.status') IS DISTINCT FROM 'quarantined';
