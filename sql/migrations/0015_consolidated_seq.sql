-- 0015_consolidated_seq: how far consolidation has read a session, by message seq.
-- Run once, inside one transaction with its schema_version row. Never edit after release.
--
-- A consolidation reads facts only from the messages after the last run that finished. Told by time
-- (consolidated_at), a message with the same timestamp as the mark (a fixed or coarse clock, replays) or an
-- earlier one (a clock that went back) was behind it for good. A run records the last seq it read; marks only move
-- forward. A session consolidated before this version counts the messages written by its mark as read.

ALTER TABLE sessions ADD COLUMN consolidated_seq INTEGER;

UPDATE sessions SET consolidated_seq = (
    SELECT max(m.seq) FROM messages m
    WHERE m.agent_id = sessions.agent_id AND m.session_id = sessions.id AND m.created_at <= sessions.consolidated_at)
WHERE consolidated_at IS NOT NULL;
