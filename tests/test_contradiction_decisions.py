"""Every decision on a contradiction is kept (contradiction_decisions, migration 0012): a later review must not change
what a read as of an earlier instant returns (snapshot, recall, the audit's contradiction rate)."""
from datetime import timedelta

from conftest import Clock, plain_connection

import echo_duck
from echo_duck.lifecycle.verify import Verdict
from echo_duck.storage.schema import current_version

OLD, NEW = "The staging database listens on port 5432", "The staging database listens on port 6543"


def unsure(a, b):  # under contradiction_auto_confidence: the dispute waits for the user
    return Verdict(("5432" in a.content) != ("5432" in b.content), 0.6, "the port differs")


def _settled_by_recency(path, clock):
    mem = echo_duck.open(path, agent_id="alice", embedder="hash", now=clock)
    mem.remember(OLD, type="environment", tags=["db"])
    clock.advance(hours=1)
    mem.remember(NEW, type="environment", tags=["db"])
    clock.advance(hours=1)
    (c,) = mem.contradictions("resolved")
    assert c.resolution == "newer"
    return mem, c


def test_a_review_keeps_the_recency_decision_readable_as_of_before_it(tmp_path):
    clock = Clock()
    mem, c = _settled_by_recency(tmp_path / "s.duckdb", clock)
    with mem:
        between = clock.now
        before = mem.snapshot(as_of=between)
        assert "Settled by recency, not reviewed" in before
        clock.advance(days=1)
        mem.resolve(c.id, c.winner)  # the user confirms it a day later
        clock.advance(hours=1)
        assert mem.snapshot(as_of=between) == before
        assert "Settled by recency" not in mem.snapshot()  # reviewed now


def test_a_reversal_does_not_reopen_the_dispute_in_an_earlier_recall(tmp_path):
    clock = Clock()
    with echo_duck.open(tmp_path / "s.duckdb", agent_id="alice", embedder="hash", now=clock, verifier=unsure) as mem:
        old = mem.remember(OLD, type="environment", tags=["db"])
        clock.advance(hours=1)
        new = mem.remember(NEW, type="environment", tags=["db"])
        clock.advance(hours=1)
        (c,) = mem.contradictions("pending")
        during = clock.now - timedelta(minutes=30)
        mem.resolve(c.id, new.id)  # the user picks the new port
        clock.advance(hours=1)
        between = clock.now

        def read(ts):
            return [(h.content, bool(h.conflicts_with)) for h in mem.recall("staging database port", as_of=ts)]

        assert read(during)[0] == (NEW, True)  # still open then
        before = read(between)
        assert before[0] == (NEW, False)
        clock.advance(days=1)
        mem.resolve(c.id, old.id, provenance="user_stated")  # on review the old port was right after all
        clock.advance(hours=1)
        assert read(between) == before
        assert read(during)[0] == (NEW, True)


def test_the_past_contradiction_rate_stays_after_a_review(tmp_path):
    clock = Clock()
    path = tmp_path / "s.duckdb"
    with echo_duck.open(path, agent_id="alice", embedder="hash", now=clock, verifier=unsure) as mem:
        old = mem.remember(OLD, type="environment", tags=["db"])
        clock.advance(hours=1)
        new = mem.remember(NEW, type="environment", tags=["db"])
        clock.advance(hours=1)
        (c,) = mem.contradictions("pending")
        mem.recall("staging database port")  # while open: counts
        clock.advance(minutes=5)
        mem.resolve(c.id, new.id)
        clock.advance(minutes=5)
        mem.recall("staging database port")  # decided: does not count
        rate = mem.audit()["memory_health"]["contradiction_rate"].item()
        assert 0 < rate < 1  # the hits of the first recall count, the second's not
        clock.advance(days=1)
        mem.resolve(c.id, old.id, provenance="user_stated")
        assert mem.audit()["memory_health"]["contradiction_rate"].item() == rate


def test_a_store_from_before_0012_keeps_its_decisions(tmp_path):
    clock = Clock()
    path = tmp_path / "s.duckdb"
    mem, c = _settled_by_recency(path, clock)
    between = clock.now
    with mem:
        before = mem.snapshot(as_of=between)
    con = plain_connection(path)  # as a store written before migration 0012 looked
    con.execute("DROP TABLE contradiction_decisions")
    con.execute("DROP SEQUENCE contradiction_decision_seq")
    con.execute("DELETE FROM schema_version WHERE version = 12")
    con.close()
    with echo_duck.open(path, admin=True, embedder="hash", now=clock) as admin:
        assert admin.schema_version == current_version()
        rows = admin.sql("SELECT contradiction_id::VARCHAR, resolution FROM contradiction_decisions").rows()
        assert rows == [(c.id, "newer")]
    with echo_duck.open(path, agent_id="alice", embedder="hash", now=clock) as mem:
        assert mem.snapshot(as_of=between) == before


def test_a_purge_takes_the_decisions_with_the_contradiction(tmp_path):
    clock = Clock()
    path = tmp_path / "s.duckdb"
    mem, c = _settled_by_recency(path, clock)
    with mem:
        mem.resolve(c.id, c.winner)
    with echo_duck.open(path, admin=True, embedder="hash", now=clock) as admin:
        assert admin.sql("SELECT count(*) FROM contradiction_decisions").item() == 2
        admin.forget(c.winner, purge=True, reason="the user asked")
        assert admin.sql("SELECT count(*) FROM contradictions").item() == 0
        assert admin.sql("SELECT count(*) FROM contradiction_decisions").item() == 0
