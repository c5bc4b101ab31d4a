-- 0005_row_version: a change counter per memory row, so an in-process copy of the columns recall
-- ranks on (echo_duck/eligibility.py) can fetch just the rows changed since it last looked.
-- Run once, inside one transaction with its schema_version row. Never edit after release.

-- Values only grow (a rolled-back nextval is not handed out again), so "row_version > the highest
-- seen" finds every row inserted or updated since. New rows take one by default; every UPDATE of
-- memories in sql/ sets row_version = nextval('memory_row_version_seq') (tests/test_eligibility.py
-- holds each statement to it). Existing rows are numbered by this migration.
CREATE SEQUENCE memory_row_version_seq;
ALTER TABLE memories ADD COLUMN row_version BIGINT DEFAULT nextval('memory_row_version_seq');
COMMENT ON COLUMN memories.row_version IS 'change counter: set from memory_row_version_seq by every insert and update (for in-process copies)';
