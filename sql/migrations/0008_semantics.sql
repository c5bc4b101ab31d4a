-- 0008_semantics: what faithful memory semantics need (issue 20): the session a feedback came from
-- (self-knowledge counts distinct sessions), which hits a recall reinforced, the sources of both
-- sides of a contradiction (kept even after a side moves to the Parquet archive), and the tunables
-- of self-knowledge, reinforcement and compression.
-- Run once, inside one transaction with its schema_version row. Never edit after release.
--
-- Event actions this migration's code adds to memory_events (the action column is free text):
--   feedback   a helpful/unhelpful mark: before/after hold helpful_count, unhelpful_count, confidence
--   reinforce  recall reviewed the memory: before/after hold access_count, last_accessed
--   restate    the same fact written again: reinforced, new sources merged (before/after: the changed fields)
--   adjust     the same fact written again with new pinned/importance/confidence/tags (full row after)
--   merge      compression folded a near-duplicate into a kept memory (the folded one is superseded)
--   reverse    a contradiction's decision was reversed by the user (the earlier loser's text comes back)

ALTER TABLE memory_feedback ADD COLUMN session_id VARCHAR;
ALTER TABLE memory_feedback ADD COLUMN counted BOOLEAN;
COMMENT ON COLUMN memory_feedback.session_id IS 'session of the caller who gave the feedback (self-knowledge counts distinct sessions)';
COMMENT ON COLUMN memory_feedback.counted IS 'false when the mark did not move a SELF memory''s confidence (its session had counted already, or the day''s gain was used up); NULL before schema 8';

ALTER TABLE recall_log ADD COLUMN reinforced_ids UUID[];
COMMENT ON COLUMN recall_log.reinforced_ids IS 'the hits this recall reinforced (passed the relevance floor); NULL on rows older than schema 8';

ALTER TABLE contradictions ADD COLUMN source_a VARCHAR;
ALTER TABLE contradictions ADD COLUMN source_b VARCHAR;
COMMENT ON COLUMN contradictions.source_a IS 'where memory_a came from when the conflict was found: session, refs, writer';
COMMENT ON COLUMN contradictions.source_b IS 'where memory_b came from when the conflict was found: session, refs, writer';

INSERT INTO settings VALUES
    ('self_confidence_cap', 0.5, 'a new SELF memory starts at most this confident, whatever its writer claims (seed 001: self-report is no proof)'),
    ('self_snapshot_threshold', 0.7, 'a SELF memory enters the prompt snapshot only at or above this confidence'),
    ('self_helpful_step', 0.05, 'confidence a SELF memory gains per helpful outcome from a session not counted before'),
    ('self_daily_gain', 0.1, 'most confidence a SELF memory can gain in one UTC day'),
    ('self_unhelpful_step', 0.1, 'confidence a SELF memory loses per unhelpful outcome'),
    ('reinforce_min_relevance', 0.5, 'a recall reinforces a hit only if its score is at least this share of the top hit''s'),
    ('reinforce_top', 3, 'a recall reinforces at most this many of its hits (the best ones)'),
    ('compress_similarity', 0.8, 'vector similarity at or above which two memories of one type and scope may be restatements'),
    ('compress_term_overlap', 1.0, 'share of the shorter memory''s content words the other must have for a merge (1 = all; typos aside)');
