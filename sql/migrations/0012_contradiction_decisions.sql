-- 0012_contradiction_decisions: every decision on a contradiction, not only the last.
-- Run once, inside one transaction with its schema_version row. Never edit after release.
--
-- contradictions.status / resolution / winner / resolved_at hold the current decision, and a review (the user
-- confirming or reversing a decision made by provenance, recency or an earlier review) overwrote them: a read as of
-- an instant between the two decisions (snapshot(as_of=), recall(as_of=), memory_health's contradiction rate) read
-- the later one, so the past changed after the fact. Each decision is now also appended here; the as-of readers
-- take the last one made by their instant (contradictions_as_of, sql/macros/70_asof.sql). Contradictions resolved
-- before this migration keep the one decision recorded (their earlier ones were overwritten). Append-only: nothing
-- updates these rows; a privacy purge deletes them with their contradiction.

CREATE SEQUENCE contradiction_decision_seq START 1;
CREATE TABLE contradiction_decisions (
    seq              BIGINT PRIMARY KEY DEFAULT nextval('contradiction_decision_seq'),
    contradiction_id UUID NOT NULL,
    decided_at       TIMESTAMP NOT NULL,
    resolution       VARCHAR NOT NULL
        CHECK (resolution IN ('higher_provenance', 'newer', 'user', 'dismissed')),
    winner           UUID
);
INSERT INTO contradiction_decisions (contradiction_id, decided_at, resolution, winner)
SELECT id, resolved_at, resolution, winner FROM contradictions
WHERE status = 'resolved' AND resolution IS NOT NULL
ORDER BY resolved_at, id;
