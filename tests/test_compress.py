"""Compression (SPEC L7, echo_duck/lifecycle/compress.py) and restatements at write time: near-duplicates
fold into one memory that keeps every source, near misses stay apart, a restated fact is reinforced.
Folding needs meaning: these tests use the packaged model."""

from __future__ import annotations

import threading

import pytest

import echo_duck
from echo_duck.lifecycle.compress import restatement
from echo_duck.models import Memory

RESTATED = ["The auth service listens on port 8001.", "auth service listens on port 8001",
            "The auth service is listening on port 8001."]
NEAR_MISSES = ["The auth service listens on port 8002.", "The billing service listens on port 8001.",
               "The auth service no longer listens on port 8001."]


def test_compress_folds_restatements_into_one_that_keeps_every_source(db_path, clock):
    with echo_duck.open(db_path, now=clock) as mem:
        first = mem.remember_many([dict(content=t, type="environment", source_session=f"s{i}",
                                        source_refs=[f"message:m{i}"]) for i, t in enumerate(RESTATED)])
        misses = mem.remember_many([dict(content=t, type="environment") for t in NEAR_MISSES])
        plan = mem.compress(dry_run=True)
        assert (plan.groups, plan.folded, plan.dry_run) == (1, 2, True)
        assert {m.id for m in first} == set(plan.clusters[0])
        assert all(m.status == "active" for m in mem.find(limit=100))  # a dry run changes nothing
        clock.advance(minutes=1)
        done = mem.compress()
        (kept_id,) = done.kept
        kept = mem.get(kept_id)
        rep = mem.get(kept.supersedes)
        assert rep.id in {m.id for m in first} and kept.content == rep.content and kept.version == 2
        for i, m in enumerate(first):  # every source is kept: refs, sessions, and the folded memories
            assert f"message:m{i}" in kept.source_refs
            assert f"session:s{i}" in kept.source_refs
            if m.id != rep.id:
                assert f"memory:{m.id}" in kept.source_refs
                folded = mem.get(m.id)
                assert (folded.status, folded.superseded_by) == ("superseded", kept.id)
                assert [e.action for e in mem.history(m.id).events][-1] == "merge"
        assert {m.status for m in (mem.get(x.id) for x in misses)} == {"active"}  # near misses stay
        live = {m.content for m in mem.find(limit=100)}
        assert live == {kept.content, *NEAR_MISSES}
        assert mem.compress().groups == 0  # nothing left to fold


def test_a_restatement_at_write_time_reinforces_instead_of_adding_a_live_row(db_path, clock):
    with echo_duck.open(db_path, now=clock) as mem:
        original = mem.remember(RESTATED[0], type="environment", source_session="standup")
        clock.advance(hours=1)
        again = mem.remember(RESTATED[2], type="environment", source_session="retro",
                             source_refs=["message:r7"], importance=0.8)
        assert again.id == original.id  # the one already there stands
        assert again.access_count == 1 and again.last_accessed == clock.now and again.importance == 0.8
        assert {"session:retro", "message:r7"} <= set(again.source_refs)
        (restated,) = [m for m in mem.find(status="superseded") if m.content == RESTATED[2]]
        assert f"memory:{restated.id}" in again.source_refs and restated.superseded_by == original.id
        assert [m.id for m in mem.find(text="auth service")] == [original.id]
        assert "restate" in [e.action for e in mem.history(original.id).events]
        other = mem.remember(NEAR_MISSES[0], type="environment")  # a near miss is its own memory
        assert other.id != original.id and other.status == "active"


def test_each_thread_folds_the_row_its_own_write_inserted(db_path):
    """remember() folds a restatement only for a row its write inserted; which rows that were is kept per
    thread, so another thread's write between the two (threads sharing one facade) cannot hide it."""
    with echo_duck.open(db_path, embedder="hash") as mem:
        mine = mem.remember("The first thread's note about the build cache", type="environment")
        theirs = {}

        def other() -> None:
            m = mem.remember("Another thread's note about lunch", type="environment")
            theirs.update(id=m.id, inserted=mem.writer.last_inserted)

        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert mem.writer.last_inserted == {mine.id}
        assert theirs["inserted"] == {theirs["id"]}


def test_the_same_words_again_update_what_the_restatement_adds(db_path, clock):
    with echo_duck.open(db_path, now=clock, embedder="hash") as mem:
        m = mem.remember("Never force-push to main", type="procedure", key="rule:push", importance=0.6)
        clock.advance(minutes=1)
        again = mem.remember("Never force-push to main", type="procedure", key="rule:push", pinned=True,
                             tags=["git"], importance=0.4, confidence=0.9, source_session="s2")
        assert again.id == m.id and again.version == 1
        assert (again.pinned, again.tags, again.importance, again.confidence) == (True, ("git",), 0.6, 0.9)
        assert again.access_count == 1 and "session:s2" in again.source_refs
        keyless = mem.remember("The repo is a monorepo", type="environment")
        assert mem.remember("The repo is a monorepo", type="environment", pinned=True).pinned
        assert mem.get(keyless.id).pinned
        boast = mem.remember("I write flawless SQL", type="self")
        assert mem.remember("I write flawless SQL", type="self", confidence=0.99).confidence == boast.confidence


def mem_(content: str, **kw) -> Memory:
    row = dict(id="x", agent_id="a", type="environment", tier="semantic", key=None, content=content, tags=(),
               entities=(), scope="private", team_id=None, tenant_id=None, source_session=None, source_refs=(),
               created_at=None, updated_at=None, observed_at=None, importance=0.5, confidence=0.8, access_count=0,
               last_accessed=None, helpful_count=0, unhelpful_count=0, episode_id=None, version=1, supersedes=None,
               superseded_by=None, provenance=1, pinned=False, sensitivity="normal", status="active")
    row.update(kw)
    return Memory(**row)


@pytest.mark.parametrize("a, b, same", [
    ("The user has two cats.", "The user has 2 cats.", True),
    ("User lives in Lisbon.", "User lives in Lisbon, Portugal.", True),  # trailing detail
    ("The user is vegetarian.", "The user is vegeterian.", True),  # a typo
    ("The user's manager is Priya.", "Priya is the user's manager.", True),
    ("The user's manager is Priya.", "Priya's manager is the user.", False),  # roles swapped
    ("Bob is the user's cofounder.", "Bob is the user's former cofounder.", False),
    ("The user moved to Austin in 2022.", "The user moved out of Austin in 2022.", False),
    ("The user drives a blue Subaru.", "The user drives a red Subaru.", False),
    ("用户不会开车。", "用户不想开车。", False),
    ("Backups run nightly at 02:00 UTC.", "Backups run nightly at 2:00 UTC.", True),
])
def test_what_counts_as_a_restatement(a, b, same):
    assert restatement(mem_(a), mem_(b), 0.95, 0.8, 1.0) is same
    assert restatement(mem_(a), mem_(b), 0.5, 0.8, 1.0) is False  # never without meaning close enough
