-- 0013_pending_checks: the contradiction checks a write still owes.
-- Run once, inside one transaction with its schema_version row. Never edit after release.
--
-- A write commits first and is checked for contradictions after (the verifier may be slow: an LLM), in later
-- transactions. A process killed between the two left a lower-trust claim beside the user's fact, undisputed, for
-- good: nothing said a check was owed. Each write now records its new rows here in its own transaction; the check
-- deletes them when it has run, and the next writable open runs what a crash left owed: the check the write was
-- to get (kind: 'full' as remember() and update() run it, 'apart' as an import does, its rows not against each other,
-- 'bulk' as remember_many() does). A held (quarantined) row keeps its debt until a person approves it.

CREATE TABLE pending_checks (
    memory_id UUID PRIMARY KEY,
    owed_at   TIMESTAMP NOT NULL,
    kind      VARCHAR NOT NULL CHECK (kind IN ('full', 'apart', 'bulk'))
);
