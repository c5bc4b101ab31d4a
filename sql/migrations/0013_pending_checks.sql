-- 0013_pending_checks: the contradiction checks a write still owes.
-- Run once, inside one transaction with its schema_version row. Never edit after release.
--
-- A write commits first and is checked for contradictions after (the verifier may be slow: an LLM), in later
-- transactions. A process killed between the two left a lower-trust claim beside the user's fact, undisputed, for
-- good: nothing said a check was owed. Each write now records its new rows here in its own transaction; the check
-- deletes them when it has run, and the next writable open runs what a crash left owed (against the live facts of
-- higher provenance, and a new version against the one it replaced: the bulk write's check).

CREATE TABLE pending_checks (
    memory_id UUID PRIMARY KEY,
    owed_at   TIMESTAMP NOT NULL
);
