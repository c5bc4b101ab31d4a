"""Memory semantics over time a review found broken (session 53): a forgotten fact's earlier versions, an unreviewed
decision by recency after archive(), and a decayed memory exported to Parquet (SPEC L2: restore brings it back)."""
from __future__ import annotations

import contextlib
import shutil
import threading
from datetime import timedelta

import pyarrow.dataset as ds
import pytest
from conftest import Clock

import echo_duck
from echo_duck.errors import InvalidInput
from echo_duck.lifecycle import archive, erasure, returning
from echo_duck.lifecycle.archive import archive_dir
from echo_duck.store import doctor


def test_forgetting_a_fact_forgets_its_earlier_versions(tmp_path):
    clock = Clock()
    with echo_duck.open(tmp_path / "s.duckdb", agent_id="alice", embedder="hash", now=clock) as mem:
        mem.remember("The Zebulon project codename is Falcon", type="environment", key="codename")
        clock.advance(hours=1)
        mem.update("codename", "The Zebulon project codename is Osprey")
        clock.advance(hours=1)
        before = clock.now
        clock.advance(hours=1)
        mem.forget("codename", reason="the user asked", provenance="user_stated")
        assert mem.recall("Zebulon project codename", include_archived=True) == []
        versions = mem.history("codename").versions
        assert [v.status for v in versions] == ["forgotten", "forgotten"]
        assert [v.status for v in mem.history("codename", as_of=before).versions] == ["superseded", "active"]


def test_forgetting_leaves_another_author_s_versions_alone(tmp_path):
    clock = Clock()
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash", now=clock) as host:
        host.grant(team="red", agent_id="alice", publish=True)
        host.grant(team="red", agent_id="bob", publish=True)
        alice, bob = host.for_agent("alice", team_id="red"), host.for_agent("bob", team_id="red")
        mine = alice.remember("The staging database listens on port 5432", type="environment", scope="team",
                              tags=["db"])
        clock.advance(hours=1)
        bob.remember("The staging database listens on port 6543", type="environment", scope="team", tags=["db"])
        clock.advance(hours=1)
        for c in alice.contradictions("pending"):
            alice.resolve(c.id, next(s for s in (c.memory_a, c.memory_b) if s != mine.id), provenance="user_stated")
        (theirs,) = bob.find(tags=["db"])
        bob.forget(theirs.id, reason="bob was wrong")
        assert alice.get(mine.id).status == "superseded"  # alice's claim is hers: bob's forget does not reach it


@contextlib.contextmanager
def _recency_store(tmp_path):
    """(the host, agent alice, her dispute settled by recency and not reviewed, the clock)."""
    clock = Clock()
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash", now=clock) as host:
        alice = host.for_agent("alice")
        yield host, alice, _superseded_by_recency(alice, clock), clock


def _superseded_by_recency(mem, clock):
    mem.remember("The staging database listens on port 5432", type="environment", tags=["db"])
    clock.advance(hours=1)
    mem.remember("The staging database listens on port 6543", type="environment", tags=["db"])
    (c,) = mem.contradictions("resolved")
    return c


def test_archive_keeps_both_sides_of_an_unreviewed_recency_decision(tmp_path):
    with _recency_store(tmp_path) as (host, alice, c, clock):
        clock.advance(days=2000)
        host.decay()  # the winner decays too (active, tier archival): a second review found it exported
        clock.advance(days=400)
        host.archive()
        assert "Settled by recency, not reviewed" in alice.snapshot()
        assert [x.id for x in alice.contradictions("resolved")] == [c.id]
        loser = c.memory_a if c.winner == c.memory_b else c.memory_b
        alice.resolve(c.id, loser)  # the review can still reverse it
        assert "5432" in alice.find(tags=["db"])[0].content
        clock.advance(days=400)
        host.archive()  # reviewed: its versions go to Parquet as any other's
        assert host.sql("SELECT count(*) FROM memories_all WHERE storage = 'archive'").item() >= 1


def _decayed_and_exported(tmp_path, clock):
    host = echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash", now=clock)
    alice = host.for_agent("alice")
    alice.remember("The cache cluster has three nodes", type="environment", key="cache")
    clock.advance(hours=1)
    v2 = alice.update("cache", "The cache cluster has five nodes")
    clock.advance(days=2000)
    host.decay()
    clock.advance(days=400)
    assert host.archive(older_than_days=30).exported == 2
    return host, alice, v2


def _parquet_ids(path) -> set[str]:
    files = [str(f) for f in archive_dir(str(path)).rglob("*.parquet")]
    if not files:
        return set()
    return {str(i) for i in ds.dataset(files, format="parquet").to_table(columns=["id"]).column("id").to_pylist()}


def test_a_decayed_memory_exported_to_parquet_is_reached_and_restored(tmp_path):
    clock = Clock()
    host, alice, v2 = _decayed_and_exported(tmp_path, clock)
    with host:
        assert alice.get(v2.id).content == "The cache cluster has five nodes"
        assert alice.get(v2.id[:8]).id == v2.id  # the short id tables print reaches it too
        with pytest.raises(echo_duck.MemoryNotFound):
            host.for_agent("bob").get(v2.id[:8])  # but not for another agent
        assert [v.content for v in alice.history("cache").versions] == ["The cache cluster has three nodes",
                                                                        "The cache cluster has five nodes"]
        assert alice.recall("cache cluster nodes") == []  # out of the live table, out of recall
        restored = alice.restore("cache")
        assert (restored.id, restored.tier, restored.status) == (v2.id, "semantic", "active")
        assert [h.id for h in alice.recall("cache cluster nodes")] == [v2.id]
        assert host.sql(f"SELECT storage FROM memories_all WHERE id = '{v2.id}'").item() == "live"
        assert v2.id not in _parquet_ids(tmp_path / "s.duckdb")
        alice.forget("cache", reason="the user asked")
        clock.advance(days=1)
        # the forgotten row and its earlier version (brought back from Parquet, forgotten) leave: no copy comes back
        assert host.gc(retention_days=0, dry_run=False).forgotten_memories == 2
        assert host.sql(f"SELECT count(*) FROM memories_all WHERE id = '{v2.id}'").item() == 0


def test_a_restore_interrupted_before_the_archive_is_rewritten_finishes_on_open(tmp_path, monkeypatch):
    clock = Clock()
    host, alice, v2 = _decayed_and_exported(tmp_path, clock)
    with host:
        with monkeypatch.context() as m:
            m.setattr(returning, "finish", lambda db, root: 0)  # the process dies after the commit
            alice.restore(v2.id)
        assert v2.id in _parquet_ids(tmp_path / "s.duckdb")
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash", now=clock) as host:
        assert v2.id not in _parquet_ids(tmp_path / "s.duckdb")
        assert host.sql(f"SELECT storage FROM memories_all WHERE id = '{v2.id}'").item() == "live"
        assert host.sql(f"SELECT value FROM store_info WHERE name = '{returning.RETURNS}'").item() == "{}"


def test_decay_evaluated_for_another_instant_is_dated_when_it_is_made(tmp_path):
    clock = Clock()
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash", now=clock) as host:
        alice = host.for_agent("alice")
        memory = alice.remember("The cache cluster has three nodes", type="environment")
        clock.advance(days=1)
        assert host.decay(now=clock.now + timedelta(days=3000)).archived == 1
        (event,) = [e for e in alice.history(memory.id).events if e.action == "archive"]
        assert event.occurred_at == clock.now
        assert alice.get(memory.id, as_of=clock.now).tier == "archival"


# -- a second review of the fixes above

@contextlib.contextmanager
def _two_versions_past_retention(tmp_path):
    """(the host, agent alice, the first of her two versions of key "vault", the clock): past archive retention."""
    clock = Clock()
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash", now=clock) as host:
        alice = host.for_agent("alice")
        v1 = alice.remember("The Zebulon vault code is 4471", type="environment", key="vault")
        clock.advance(hours=1)
        alice.update("vault", "The Zebulon vault code is 9902")
        clock.advance(days=400)
        yield host, alice, v1, clock


def test_forgetting_a_fact_forgets_its_versions_already_in_parquet(tmp_path):
    with _two_versions_past_retention(tmp_path) as (host, alice, v1, clock):
        assert host.archive(older_than_days=30).exported == 1  # v1 in Parquet
        alice.forget("vault", reason="the user asked", provenance="user_stated")
        assert alice.get(v1.id).status == "forgotten"
        clock.advance(days=1)
        host.gc(retention_days=0, dry_run=False)
        assert host.sql(f"SELECT count(*) FROM memories_all WHERE id = '{v1.id}'").item() == 0
        assert v1.id not in _parquet_ids(tmp_path / "s.duckdb")


def test_a_restore_from_parquet_does_not_stand_beside_the_key_s_new_fact(tmp_path):
    clock = Clock()
    host, alice, v2 = _decayed_and_exported(tmp_path, clock)
    with host:
        alice.remember("The cache cluster has seven nodes", type="environment", key="cache")
        with pytest.raises(InvalidInput, match="written again since it was archived"):
            alice.restore(v2.id)
        assert [m.content for m in alice.find(key="cache")] == ["The cache cluster has seven nodes"]


@pytest.mark.parametrize("how", ["purge", "forget"])
def test_a_key_written_again_after_its_fact_went_to_parquet_takes_the_exported_one_with_it(tmp_path, how):
    """Reviewer AF (session 56): the new write of the key starts at version 1, linked to nothing, so history(key)
    left out the exported fact and forget(key, purge=True) left it in Parquet: restore() brought the purged fact back
    and recall returned it."""
    clock = Clock()
    host, alice, v2 = _decayed_and_exported(tmp_path, clock)
    with host:
        bob = host.for_agent("bob")
        theirs = bob.remember("The cache cluster has three nodes", type="environment", key="cache")
        new = alice.remember("The cache cluster has seven nodes", type="environment", key="cache")
        assert [v.content for v in alice.history("cache").versions] == [
            "The cache cluster has three nodes", "The cache cluster has five nodes", "The cache cluster has seven nodes"]
        if how == "purge":
            alice.forget("cache", purge=True, reason="the user asked")
            assert host.sql(f"SELECT count(*) FROM memories_all WHERE id = '{v2.id}'").item() == 0
            assert v2.id not in _parquet_ids(tmp_path / "s.duckdb")
        else:
            alice.forget("cache", reason="the user asked")
            assert alice.get(v2.id).status == "forgotten"
            assert alice.recall("cache cluster nodes", include_archived=True) == []
        with pytest.raises((echo_duck.MemoryNotFound, InvalidInput)):  # purged; forgotten
            alice.restore(v2.id)
        assert alice.recall("cache cluster nodes", include_archived=True) == []
        assert bob.get(theirs.id).status == "active"  # another agent's row under the same key is its own fact
        assert new.version == 1  # known and left: the new write does not read the archive (TRUST.md)


def test_an_as_of_recall_keeps_a_conflict_whose_other_side_went_to_parquet_since(tmp_path):
    with _recency_store(tmp_path) as (host, alice, c, clock):
        clock.advance(minutes=1)
        then = clock.now
        live = [(h.content, h.conflicts_with) for h in alice.recall("staging database port")]
        assert live[0][1]
        clock.advance(minutes=1)
        alice.resolve(c.id, c.winner)  # reviewed: the loser may go to Parquet
        clock.advance(days=400)
        host.archive(older_than_days=30)
        assert [(h.content, h.conflicts_with) for h in alice.recall("staging database port", as_of=then)] == live


# -- a third review

@contextlib.contextmanager
def _archive_rewrite_fails(monkeypatch):
    """The Parquet rewrite after a commit fails (a full disk): the call raises, what it committed stays."""
    with monkeypatch.context() as m:
        m.setattr(erasure, "rewrite_archive", lambda *a, **k: (_ for _ in ()).throw(OSError("disk full")))
        with pytest.raises(OSError):
            yield


def test_forget_reaches_a_fact_exported_to_parquet(tmp_path):
    clock = Clock()
    host, alice, v2 = _decayed_and_exported(tmp_path, clock)
    with host:
        alice.forget("cache", reason="the user asked")
        assert alice.get(v2.id).status == "forgotten"
        assert {v.status for v in alice.history(v2.id).versions} == {"forgotten"}
        clock.advance(days=1)
        host.gc(retention_days=0, dry_run=False)
        assert host.sql("SELECT count(*) FROM memories_all").item() == 0


def test_a_forget_that_fails_on_an_exported_version_forgets_nothing(tmp_path, monkeypatch):
    clock = Clock()
    host, alice, v2 = _decayed_and_exported(tmp_path, clock)
    with host:
        monkeypatch.setattr(returning, "bring_back", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt("killed")))
        with pytest.raises(KeyboardInterrupt):
            alice.forget(v2.id, reason="the user asked")
        assert alice.get(v2.id).status == "active"  # one transaction: nothing half done


def test_a_returns_marker_left_by_a_failed_finish_spares_a_later_export(tmp_path, monkeypatch):
    clock = Clock()
    host, alice, v2 = _decayed_and_exported(tmp_path, clock)
    with host:
        with _archive_rewrite_fails(monkeypatch):
            alice.restore(v2.id)  # committed; its Parquet copy stays, the marker names it
        clock.advance(days=2000)
        host.decay()
        clock.advance(days=400)
        host.archive(older_than_days=30)  # finishes the marker first, then exports the row again
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash", now=clock) as host:
        assert host.for_agent("alice").get(v2.id).content == "The cache cluster has five nodes"


def test_gc_finishes_a_pending_return_before_it_deletes(tmp_path, monkeypatch):
    clock = Clock()
    host, alice, _ = _decayed_and_exported(tmp_path, clock)
    with host:
        with _archive_rewrite_fails(monkeypatch):
            alice.forget("cache", reason="the user asked")
        clock.advance(days=1)
        host.gc(retention_days=0, dry_run=False)
        assert host.sql("SELECT count(*) FROM memories_all").item() == 0


# -- a fourth review: another thread during archive(), a rewrite that fails half-way

def test_a_forget_from_another_thread_waits_for_archive_and_stays(tmp_path, monkeypatch):
    with _two_versions_past_retention(tmp_path) as (host, alice, v1, clock):
        forgetting = threading.Thread(target=alice.forget, args=("vault",),
                                      kwargs={"reason": "the user asked", "provenance": "user_stated"})
        finish = archive._finish

        def racing(*args):  # alice forgets while the export's files are written, before its rows leave the table
            forgetting.start()
            forgetting.join(0.5)
            assert forgetting.is_alive()  # it waits for the store lock archive() holds
            return finish(*args)

        monkeypatch.setattr(archive, "_finish", racing)
        host.archive(older_than_days=30)
        forgetting.join()
        assert alice.get(v1.id).status == "forgotten"
        clock.advance(days=1)
        host.gc(retention_days=0, dry_run=False)
        assert host.sql(f"SELECT count(*) FROM memories_all WHERE id = '{v1.id}'").item() == 0


def test_a_rewrite_that_fails_half_way_leaves_the_archive_readable(tmp_path, monkeypatch):
    clock = Clock()
    host, alice, v2 = _decayed_and_exported(tmp_path, clock)
    with host:
        rewrite = erasure.rewrite_archive

        def half_way(root, ids, below=None):
            rewrite(root, ids, below)  # the files are rewritten (old ones deleted) …
            raise OSError("disk full")  # … and then something fails

        with monkeypatch.context() as m:
            m.setattr(erasure, "rewrite_archive", half_way)
            with pytest.raises(OSError):
                alice.restore(v2.id)
        assert host.sql("SELECT count(*) FROM memories_all").item() == 2  # the view names only files that exist
        assert alice.history("cache").versions[0].content == "The cache cluster has three nodes"


def test_archive_s_progress_callback_may_wait_on_another_thread_of_the_store(tmp_path):
    with _two_versions_past_retention(tmp_path) as (host, alice, _, _):
        finished = []

        def progress(done, total):  # a host's status callback that asks the store something from another thread
            asking = threading.Thread(target=lambda: finished.append(alice.recall("vault code")))
            asking.start()
            asking.join(10)

        host.archive(older_than_days=30, progress=progress)
        assert len(finished) == 2


def test_decay_and_audit_hold_at_the_largest_access_count(tmp_path):
    """Reviewer AF (session 56): half_life_days computed 1 + access_count in INTEGER, which reinforcement stops at
    2^31 - 1: decay(), audit() and the memory_decay view failed for the whole store, while recall (BIGINT) did not."""
    clock = Clock()
    with echo_duck.open(tmp_path / "s.duckdb", embedder="hash", admin=True, now=clock) as host:
        often = host.remember("The gadget sprocket is reviewed very often", type="environment")
        host.remember("The old staging box is called kestrel", type="environment", importance=0.05)
        host.sql("UPDATE memories SET access_count = 2147483647 WHERE id = $id", {"id": often.id}, write=True)
        clock.advance(days=400)
        assert host.sql("SELECT count(*) FROM memory_decay").item() == 2
        assert host.decay().archived == 1
        assert host.audit() is not None
        (hit,) = host.recall("gadget sprocket", 1, explain=True, reinforce=False)
        expected = host.sql("SELECT effective_importance FROM memory_decay_at($t::TIMESTAMP) WHERE id = $id",
                            {"t": clock.now, "id": often.id}).item()
        assert hit.explanation.effective_importance == expected


def test_a_new_version_of_a_pinned_fact_written_by_key_stays_pinned(tmp_path):
    """Reviewer AF (session 56): update() and a restatement kept the pin, remember(key=) dropped it, so the newest
    version of a fact the user pinned decayed and was archived within a year."""
    with echo_duck.open(tmp_path / "s.duckdb", embedder="hash", admin=True) as host:
        host.remember("Reply to the user in English", type="environment", key="reply_language", pinned=True)
        again = host.remember("Reply to the user in Portuguese", type="environment", key="reply_language")
        assert again.version == 2 and again.pinned
        assert not host.update("reply_language", pinned=False).pinned  # taken off the way it is documented


def test_a_decayed_memory_in_use_again_is_not_exported(tmp_path):
    """Reviewer AF (session 56): each include_archived recall reviews the hit, but archive() counted retention from
    updated_at, which a review does not move: the memory was exported a day after its last use and recall lost it."""
    clock = Clock()
    with echo_duck.open(tmp_path / "s.duckdb", embedder="hash", admin=True, now=clock) as host:
        alice = host.for_agent("alice")
        vpn = alice.remember("The VPN gateway for the lab is vpn-lab-3", type="environment", key="vpn")
        clock.advance(days=300)
        host.decay()
        assert alice.get(vpn.id).tier == "archival"
        for _ in range(7):
            clock.advance(days=14)
            assert [h.id for h in alice.recall("lab VPN gateway", k=1, include_archived=True)] == [vpn.id]
        clock.advance(days=1)
        assert host.archive().exported == 0
        assert [h.id for h in alice.recall("lab VPN gateway", k=1, include_archived=True)] == [vpn.id]
        clock.advance(days=400)  # unused again past retention: it goes
        assert host.archive().exported == 1


def _exported(path, clock):
    with echo_duck.open(path, admin=True, embedder="hash", now=clock) as host:
        note = host.for_agent("alice").remember("Alice is treated for diabetes at St Mary clinic", type="environment",
                                                sensitivity="sensitive", importance=0.05)
        clock.advance(days=600)
        host.decay()
        clock.advance(days=400)
        assert host.archive(older_than_days=30).exported == 1
    return note


def test_stores_that_share_a_stem_keep_their_archives_apart(tmp_path):
    """Reviewer AH (session 56): team.duckdb, team.db and team.bak all used team_archive/, so another store's admin
    SQL and its agent alice read team.duckdb's archived (sensitive) row."""
    clock = Clock()
    note = _exported(tmp_path / "team.duckdb", clock)
    for other in ("team.db", "team"):
        with echo_duck.open(tmp_path / other, admin=True, embedder="hash") as store:
            assert store.archive_dir != archive_dir(str(tmp_path / "team.duckdb"))
            assert store.sql("SELECT count(*) FROM memories_all").item() == 0
            with pytest.raises(echo_duck.MemoryNotFound):
                store.for_agent("alice").get(note.id)


def test_a_store_not_named_duckdb_says_where_its_old_archive_folder_is_and_moves_nothing(tmp_path, monkeypatch):
    """The old folder is never moved by an open: reviewers AI and AJ (session 56) showed a copy team.bak of team.duckdb
    (whose view names team_archive's files) taking the live store's folder away on its first open."""
    clock, path = Clock(), tmp_path / "team.db"
    legacy = tmp_path / "team_archive"
    monkeypatch.setattr("echo_duck.store.facade.archive_dir", lambda p: legacy)  # the name it had before
    note = _exported(path, clock)
    monkeypatch.undo()
    live = tmp_path / "team.duckdb"  # the store that also owns team_archive now; a copy of team.db stands for it
    shutil.copy(path, live)
    for _ in range(2):  # the writable open records the folder, so the next opens and doctor still say it
        with pytest.warns(RuntimeWarning, match=f"mv {legacy} {archive_dir(str(path))}"):
            with echo_duck.open(path, admin=True, embedder="hash") as host:
                assert host.sql("SELECT count(*) FROM memories_all WHERE id = $id", {"id": note.id}).item() == 0
    assert legacy.is_dir() and not archive_dir(str(path)).exists()
    (check,) = [c for c in doctor.check_store(path) if c.name == "archive"]
    assert check.status == "warn" and f"mv {legacy}" in check.fix
    with echo_duck.open(live, admin=True, embedder="hash") as owner:  # the live store keeps reading its folder
        assert owner.for_agent("alice").get(note.id).content == note.content
    legacy.rename(archive_dir(str(path)))  # the person moves it, as told
    with echo_duck.open(path, admin=True, embedder="hash") as host:
        assert host.for_agent("alice").get(note.id).content == note.content


def test_a_keys_exported_rows_are_its_writers_only_and_not_a_forgotten_fact(tmp_path):
    """Reviewer AJ (session 56): the key seed took the host's exported rule into an agent's history under the host's
    id (and an admin purge of the agent's row erased it), and a forgotten earlier fact into the new one's history,
    which gc() then changed for the same instant."""
    clock = Clock()
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash", now=clock) as host:
        rule = host.remember("Deploys need two approvals", type="environment", key="deploy")
        clock.advance(days=2000)
        host.decay()
        clock.advance(days=400)
        assert host.archive(older_than_days=30).exported == 1
        agent = host.for_agent("default")
        junk = agent.remember("Deploys need one approval", type="environment", key="deploy")
        assert [v.content for v in agent.history(junk.id).versions] == ["Deploys need one approval"]
        host.forget(junk.id, purge=True, reason="the agent's write was wrong")
        assert host.sql("SELECT storage FROM memories_all WHERE id = $id", {"id": rule.id}).item() == "archive"
        first = host.remember("The printer is on floor 1", type="environment", key="printer")
        host.forget("printer", reason="moved")
        again = host.remember("The printer is on floor 5", type="environment", key="printer")
        assert [v.content for v in host.history(again.id).versions] == ["The printer is on floor 5"]
        assert host.get(first.id).status == "forgotten"


@pytest.mark.parametrize("purge", [False, True])
def test_a_keys_exported_user_stated_fact_outlives_an_agents_lower_request(tmp_path, purge):
    """Reviewer AI (session 56): forget/purge of a key reached the owner's exported rows without the provenance check
    a forget of that row gets: alice's model_inferred forget('vpn') forgot (or purged) what the user stated."""
    clock = Clock()
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash", now=clock) as host:
        alice = host.for_agent("alice")
        stated = alice.remember("The lab VPN gateway is vpn3", type="environment", key="vpn", provenance="user_stated",
                                importance=0.05)
        clock.advance(days=600)
        host.decay()
        clock.advance(days=400)
        assert host.archive(older_than_days=30).exported == 1
        guess = alice.remember("The lab VPN gateway is probably vpn9", type="environment", key="vpn")
        with pytest.raises(echo_duck.ProvenanceConflict):
            alice.forget(stated.id, purge=purge)
        alice.forget("vpn", purge=purge, reason="wrong guess")
        assert host.sql("SELECT status FROM memories_all WHERE id = $id", {"id": stated.id}).item() == "active"
        if purge:
            with pytest.raises(echo_duck.MemoryNotFound):
                alice.get(guess.id)
        else:
            assert alice.get(guess.id).status == "forgotten"


def test_time_travel_leaves_out_what_was_in_parquet_then_as_the_live_reads_do(tmp_path):
    """Reviewer AJ (session 56): memories_as_of ignores 'export' events, so find(as_of=T) and recall(as_of=T) returned
    a fact that was in Parquet at T beside the key's newer fact, where find() and recall() at T returned one."""
    clock = Clock()
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash", now=clock) as host:
        alice = host.for_agent("alice")
        old = alice.remember("The build server is hal", type="environment", key="build")
        clock.advance(days=2000)
        host.decay()
        clock.advance(days=400)
        assert host.archive(older_than_days=30).exported == 1
        alice.remember("The build server is orac", type="environment", key="build")
        at = clock.now
        then = ([m.content for m in alice.find(key="build")],
                [h.content for h in alice.recall("build server", reinforce=False)])
        clock.advance(days=1)
        assert ([m.content for m in alice.find(key="build", as_of=at)],
                [h.content for h in alice.recall("build server", as_of=at)]) == then == (
            ["The build server is orac"], ["The build server is orac"])
        assert alice.get(old.id, as_of=at).content == old.content  # get reaches the archive, then as now
