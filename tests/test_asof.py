"""Time travel (SPEC X, echo_duck/recall/asof.py, sql/macros/70_asof.sql): get, find, history, recall and
snapshot as of a past instant, rebuilt from the event log — content, status, confidence, importance,
pins, counts — including versions exported to Parquet since, never a purged memory."""

from __future__ import annotations

from datetime import timedelta

import pytest

import echo_duck

# Writes under one fixed clock reading get times a few microseconds apart (write/writer.py): "just after".
SETTLED = timedelta(seconds=1)


@pytest.fixture
def timeline(db_path, clock):
    """One fact through its life; returns the open store and the instants worth asking about."""
    mem = echo_duck.open(db_path, now=clock, embedder="hash", admin=True)
    t = {}
    v1 = mem.remember("The nightly build runs on the old Jenkins box", type="environment", key="build:runner",
                      confidence=0.7, importance=0.6, source_session="s1")
    other = mem.remember("Release notes live in docs/releases", type="environment", importance=0.5)
    t["created"] = clock.now + SETTLED
    clock.advance(days=1)
    mem.recall("nightly build Jenkins", k=3)  # reviewed
    mem.mark(v1.id, True)  # helpful: confidence 0.7 -> 0.73
    t["marked"] = clock.now + SETTLED
    clock.advance(days=1)
    mem.remember("The nightly build runs on the old Jenkins box", type="environment", key="build:runner",
                 confidence=0.7, pinned=True)  # restated, now pinned
    t["pinned"] = clock.now + SETTLED
    clock.advance(days=1)
    v2 = mem.update("build:runner", "The nightly build runs on GitHub Actions")
    t["updated"] = clock.now + SETTLED
    clock.advance(days=1)
    mem.forget(other.id, "obsolete")
    t["forgot"] = clock.now + SETTLED
    clock.advance(days=1)
    yield mem, t, v1, v2, other
    mem.close()


def test_get_rebuilds_every_changed_column_at_each_instant(timeline, clock):
    mem, t, v1, v2, other = timeline
    before = t["created"] - SETTLED - timedelta(seconds=1)
    with pytest.raises(echo_duck.MemoryNotFound):
        mem.get(v1.id, as_of=before)  # it did not exist yet
    created = mem.get(v1.id, as_of=t["created"])
    assert (created.status, created.confidence, created.pinned, created.access_count) == ("active", 0.7, False, 0)
    marked = mem.get(v1.id, as_of=t["marked"])
    assert marked.confidence == pytest.approx(0.73) and marked.helpful_count == 1 and marked.access_count == 1
    pinned = mem.get(v1.id, as_of=t["pinned"])
    assert pinned.pinned and pinned.access_count == 2  # the restatement was a review too
    replaced = mem.get(v1.id, as_of=t["updated"])
    assert (replaced.status, replaced.superseded_by) == ("superseded", v2.id)
    assert mem.get(other.id, as_of=t["updated"]).status == "active"
    assert mem.get(other.id, as_of=t["forgot"]).status == "forgotten"
    now = mem.get(v1.id)
    assert mem.get(v1.id, as_of=clock.now + SETTLED) == now  # as of now is the live row


def test_find_and_history_as_of(timeline):
    mem, t, v1, v2, other = timeline
    assert [m.content for m in mem.find(key="build:runner", as_of=t["marked"])] == [v1.content]
    assert [m.content for m in mem.find(key="build:runner", as_of=t["updated"])] == [v2.content]
    assert {m.id for m in mem.find(as_of=t["marked"])} == {v1.id, other.id}
    assert {m.id for m in mem.find(as_of=t["forgot"])} == {v2.id}
    then = mem.history(v2.id, as_of=t["pinned"])
    assert [v.id for v in then.versions] == [v1.id] and then.versions[0].pinned
    assert all(e.occurred_at <= t["pinned"] for e in then.events)
    assert {e.action for e in then.events} >= {"create", "reinforce", "feedback", "restate"}
    assert [v.id for v in mem.history(v2.id, as_of=t["updated"]).versions] == [v1.id, v2.id]


def test_recall_and_snapshot_as_of(timeline, clock):
    mem, t, v1, v2, other = timeline
    then = [h.id for h in mem.recall("nightly build", k=2, as_of=t["marked"])]  # a small store: every memory, ranked
    assert then[0] == v1.id and v2.id not in then
    later = [h.id for h in mem.recall("nightly build", k=2, as_of=t["updated"])]
    assert later[0] == v2.id and v1.id not in later
    assert other.id in {h.id for h in mem.recall("release notes docs", as_of=t["updated"])}
    assert other.id not in {h.id for h in mem.recall("release notes docs", as_of=t["forgot"])}
    logged = mem.sql("SELECT count(*) AS n FROM recall_log")["n"][0]
    mem.recall("nightly build", as_of=t["marked"])
    assert mem.sql("SELECT count(*) AS n FROM recall_log")["n"][0] == logged  # reading the past changes nothing
    assert "old Jenkins box" in mem.snapshot(as_of=t["pinned"]) and "GitHub Actions" not in mem.snapshot(as_of=t["pinned"])
    assert "GitHub Actions" in mem.snapshot(as_of=t["updated"])
    assert mem.snapshot(as_of=t["created"] - SETTLED - timedelta(seconds=1)) == ""
    assert mem.snapshot(as_of=clock.now + SETTLED) == mem.snapshot()


def test_as_of_now_ranks_exactly_as_recall(db_path, clock):
    with echo_duck.open(db_path, now=clock, embedder="hash", admin=True) as mem:
        from echo_duck.bench import synthetic

        mem.remember_many(synthetic.memories(300))
        clock.advance(days=3)
        for q in ("deploy borealis", "postgres backup schedule", "which editor"):
            live = mem.recall(q, k=10, reinforce=False, explain=True)
            past = mem.recall(q, k=10, as_of=clock.now, explain=True)  # the writes were 3 days ago
            assert [(h.id, h.score) for h in past] == [(h.id, h.score) for h in live], q
            assert [h.explanation.effective_importance for h in past] == \
                [h.explanation.effective_importance for h in live]
        # a question naming what most memories hold: both read it without that word (recall/vector_text.py)
        mem.remember_many([dict(content=f"Alice note {i}: the deploy of service {i} went fine", type="user") for i in range(400)])
        clock.advance(days=1)
        q = "What did Alice say about the deploy of service 7?"
        live = mem.recall(q, k=10, reinforce=False, explain=True)
        past = mem.recall(q, k=10, as_of=clock.now, explain=True)
        assert [(h.id, h.score) for h in past] == [(h.id, h.score) for h in live]
        dropped = "What did say about the of 7?"  # alice, deploy, service: each in 400 of 700 memories
        assert live[0].explanation.vector_question == past[0].explanation.vector_question == dropped


def test_exported_versions_come_back_and_purged_ones_never(db_path, clock):
    with echo_duck.open(db_path, now=clock, embedder="hash", admin=True) as mem:
        v1 = mem.remember("The VPN endpoint is vpn-old.example.com", type="environment", key="vpn")
        secret = mem.remember("The user's passport number is X1234567", type="user")
        t0 = clock.now + SETTLED
        clock.advance(days=1)
        v2 = mem.update("vpn", "The VPN endpoint is vpn.example.com")
        mem.forget(secret.id, "privacy request", purge=True)
        clock.advance(days=120)
        assert mem.archive().exported == 1  # v1 left for Parquet
        assert mem.sql("SELECT count(*) AS n FROM memories WHERE id = ?", [v1.id])["n"][0] == 0
        assert mem.get(v1.id, as_of=t0).content == v1.content
        assert [v.version for v in mem.history(v2.id).versions] == [1, 2]
        assert [h.id for h in mem.recall("VPN endpoint", k=1, as_of=t0)] == [v1.id]
        with pytest.raises(echo_duck.MemoryNotFound):
            mem.get(secret.id, as_of=t0)
        assert "X1234567" not in mem.snapshot(as_of=t0)
        assert all(m.id != secret.id for m in mem.find(as_of=t0))


def test_history_as_of_rebuilds_a_chain_gc_removed_as_get_does(db_path, clock):
    with echo_duck.open(db_path, now=clock, embedder="hash", admin=True) as host:
        alice = host.for_agent("alice")
        v1 = alice.remember("The vault code is 4471", type="environment", key="vault")
        clock.advance(hours=1)
        v2 = alice.update("vault", "The vault code is 9902")
        t = clock.now + SETTLED
        clock.advance(hours=1)
        alice.forget("vault", "obsolete")
        clock.advance(days=2)
        assert host.gc(retention_days=1, dry_run=False).forgotten_memories == 2
        with pytest.raises(echo_duck.MemoryNotFound):
            alice.history(v2.id)  # gone today
        assert alice.get(v2.id, as_of=t).content == "The vault code is 9902"
        for target in (v1.id, v2.id, v2):
            history = alice.history(target, as_of=t)
            assert [(v.version, v.status) for v in history.versions] == [(1, "superseded"), (2, "active")]
            assert {e.memory_id for e in history.events} == {v1.id, v2.id}
        bob = host.for_agent("bob")
        with pytest.raises(echo_duck.MemoryNotFound):  # alice's private fact was never bob's, then or now
            bob.history(v2.id, as_of=t)


def test_the_past_obeys_todays_rights(db_path, clock):
    with echo_duck.open(db_path, now=clock, embedder="hash", admin=True) as host:
        host.grant(team="core", agent_id="alice", publish=True)
        host.grant(team="core", agent_id="bob")
        alice = host.for_agent("alice")
        shared = alice.remember("The core team's bridge is room 4471", type="environment", scope="team", team_id="core")
        t0 = clock.now + SETTLED
        clock.advance(hours=1)
        host.revoke(team="core", agent_id="bob")
    with echo_duck.open(db_path, now=clock, embedder="hash", agent_id="bob") as bob:
        with pytest.raises(echo_duck.MemoryNotFound):
            bob.get(shared.id, as_of=t0)
        assert bob.find(as_of=t0) == [] and bob.recall("bridge room", as_of=t0) == []
        assert "4471" not in bob.snapshot(as_of=t0)


def test_bad_as_of_is_refused(db_path):
    with echo_duck.open(db_path, embedder="hash", admin=True) as mem:
        for bad in ("yesterday", 12, object()):
            with pytest.raises(echo_duck.InvalidInput):
                mem.find(as_of=bad)
