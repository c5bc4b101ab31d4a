"""Recall's in-process caches (issue 22) against reading everything again: the caller's groups, the settings
and the open contradictions (recall/store_reads.py), the winners' rows (eligibility.py), the BM25 state and
query terms (keyword_search.py), and the copies skipping their state queries while nothing was written.
After every kind of write through echo_duck, a recall through the warm caches returns exactly what it
returns once they are all dropped and read again (which test_fusion and test_eligibility hold equal to
SQL); writes through the bare connection are seen after ``refresh()``."""

from __future__ import annotations

import uuid

import pytest

import echo_duck
from echo_duck.bench import synthetic
from echo_duck.index.keyword import query_text

from test_eligibility import world, world_file  # noqa: F401 - the fixtures: alice, bob, carol, every scope and tier

QUERIES = ["deploy borealis postgres", "borealis port", "数据库 迁移", "kestrel queue", "Café résumé naïve"]
FILTERED = dict(types=["environment", "procedure"])


def _recalls(mem) -> list:
    out = []
    for agent, session in (("alice", "s1"), ("bob", "b1"), ("carol", None)):
        handle = mem.for_agent(agent, session_id=session)
        for q in QUERIES:
            for filters in ({}, FILTERED):
                hits = handle.recall(q, 8, reinforce=False, explain=True, **filters)
                out.append([{**h.to_dict(), "recall_id": None} for h in hits])
    return out


def _drop_caches(mem) -> None:
    """What refresh() drops, but the vector matrix: a reloaded matrix sums the query's similarity statistics
    in another order (last-bit differences; test_quantised_scan holds it to SQL on its own)."""
    mem.db.wrote()
    mem.indexer.keyword_search.invalidate()
    mem.recaller.eligibility.invalidate()
    mem.recaller.reads.invalidate()


def _same_as_fresh(mem, step: str) -> None:
    cached = _recalls(mem)
    _drop_caches(mem)
    assert _recalls(mem) == cached, step


@pytest.mark.slow  # the whole matrix; the fast loop keeps the other SQL-equality tests of this file
def test_cached_recall_equals_a_fresh_read_after_every_kind_of_write(world):
    mem, clock = world
    _same_as_fresh(mem, "start")
    steps = {
        "remember": lambda: mem.remember("the kestrel queue drains every night", type="environment"),
        "new version": lambda: mem.remember("borealis listens on port 9000", type="environment", key="borealis.port"),
        "restate": lambda: mem.remember("borealis listens on port 9000", type="environment", key="borealis.port",
                                        tags=["again"]),
        "forget": lambda: mem.forget(mem.recall("kestrel queue", 1)[0].id),
        "mark": lambda: mem.mark(mem.recall("borealis port", 1)[0], helpful=False),
        "recalls reinforced and written behind": lambda: ([mem.recall(q, 5) for q in QUERIES], mem.db.catch_up()),
        "decay": lambda: (clock.advance(days=400), mem.decay()),
        "restore": lambda: mem.restore(mem.sql("SELECT id FROM memories WHERE tier = 'archival' AND status = "
                                               "'active' AND agent_id = 'alice' LIMIT 1").item()),
        "revoke": lambda: mem.revoke(team="core"),
        "grant": lambda: mem.grant(team="other"),
        "grant bob": lambda: mem.grant(tenant="zeta", agent_id="carol"),
        "setting": lambda: mem.set_setting("unhelpful_penalty", 0.4),
        "contradiction": lambda: _contradiction(mem),
        "resolve": lambda: mem.resolve(mem.contradictions()[0].id, mem.contradictions()[0].memory_a),
        "purge": lambda: mem.forget(mem.find(limit=1)[0].id, purge=True),
        "many": lambda: mem.remember_many(synthetic.memories(15, seed=11)),
        "raw sql": lambda: mem.sql("UPDATE memories SET scope = 'public' WHERE agent_id = 'bob' AND scope = 'private' "
                                   "AND id IN (SELECT id FROM memories WHERE agent_id = 'bob' LIMIT 5)", write=True),
        "raw sql, settings": lambda: mem.sql("UPDATE settings SET value = 30 WHERE name = 'importance_decay_days'",
                                             write=True),
    }
    for name, step in steps.items():
        _recalls(mem)  # warm every cache
        step()
        _same_as_fresh(mem, name)


def _contradiction(mem) -> None:
    a, b = mem.for_agent("alice", session_id="s1").recall("deploy borealis postgres", 2, reinforce=False)
    with mem.db.transaction("a test's contradiction"):
        mem.db.run("insert_pending_contradiction", id=uuid.uuid4(), memory_a=a.id, memory_b=b.id, description="test",
                   confidence=0.5, detected_by="test", now=mem.now())


def test_a_rolled_back_write_is_not_kept(world):
    mem, _ = world
    before = _recalls(mem)
    with pytest.raises(RuntimeError, match="abandon"):
        with mem.db.transaction("test"):
            mem.db.run("revoke_membership", agent_id="alice", kind="team", group_id="core", now=mem.now())
            mem.remember("the kestrel queue drains every night", type="environment")
            raise RuntimeError("abandon")
    assert _recalls(mem) == before
    _same_as_fresh(mem, "rollback")


def test_bare_connection_writes_are_seen_after_refresh(world):
    mem, _ = world
    alice = mem.for_agent("alice", session_id="s1")
    def contents() -> dict[str, str]:
        return {h.id: h.content for h in alice.recall("borealis port", 10, reinforce=False)}

    top = alice.recall("borealis port", 1, reinforce=False)[0]
    mem.db.con.execute("UPDATE memories SET content = 'rewritten behind echo_duck' WHERE id = $id", {"id": top.id})
    mem.db.con.execute("UPDATE settings SET value = 0.9 WHERE name = 'unhelpful_penalty'")
    assert contents()[top.id] == top.content  # documented: not seen
    mem.refresh()
    assert contents()[top.id] == "rewritten behind echo_duck"  # still found by its old vector, shown as it is now
    _same_as_fresh(mem, "bare connection, refreshed")
    assert mem.recaller.reads.caller_context("alice")[2]["unhelpful_penalty"] == 0.9


def test_query_terms_split_in_process_are_the_ones_sql_derives(world):
    """QueryTerms splits ASCII and CJK queries itself and asks SQL per new word; every other query (accents,
    other scripts, tabs) goes to SQL whole. Either way: keyword_query_terms' terms."""
    mem, _ = world
    searcher = mem.indexer.keyword_search
    texts = [*QUERIES, "DEPLOY the Borealis POSTGRES", "the a of", "", "  double  spaces ", "Ünïcödé Straße",
             "tab\tseparated", "数据库迁移到新的集群", "ＦＵＬＬ width", "don't stop-words: it's e.g. x86_64"]
    with mem.db.reading():
        written = mem.db.writes_but_reviews
        for text in texts:
            q = query_text(text)
            sql = mem.db.scalar("keyword_query_terms", q=q) or []
            assert sorted(searcher._terms.of(q, written)) == sorted(sql), text
            assert sorted(searcher._terms.of(q, written)) == sorted(sql), text  # from the kept words
            assert sorted(searcher._terms.of(q, None)) == sorted(sql), text  # inside a transaction: SQL


def test_a_kept_visibility_mask_is_dropped_when_a_write_changes_what_a_filter_keeps(tmp_path):
    """A filtered recall keeps the caller's mask over the vectors until the next write (eligibility.py). A write
    that changes a row in place (the same fact restated with a new tag, forgetting it) changes what the filter
    keeps without adding a vector: the next filtered recall must see it, as a fresh read does."""
    import echo_duck

    with echo_duck.open(tmp_path / "m.duckdb", embedder="hash", agent_id="alice") as mem:
        mem.remember_many([dict(content=f"note {i} about the kestrel queue", type="environment", tags=["db"])
                           for i in range(30)])
        target = mem.remember("the borealis database listens on port 5432", type="environment")

        def found() -> bool:
            hits = mem.recall("borealis database port", 5, tags=["db"], arms=["vector"], reinforce=False)
            return target.id in [h.id for h in hits]

        assert not found() and not found()  # the second recall reuses the kept mask
        mem.remember("the borealis database listens on port 5432", type="environment", tags=["db"])  # restated
        assert list(mem.get(target.id).tags) == ["db"]
        assert found()
        _drop_caches(mem)
        assert found()
        mem.forget(target.id, reason="moved")
        assert not found()


def test_masks_outlive_a_recalls_reinforcement_but_not_a_write_that_changes_who_sees_a_row(tmp_path):
    """A recall's reinforcement writes access counts only: the masks stay (session 55's p95 at 100k rose when every
    such write dropped them); a write that changes what a mask reads (sensitivity, status) drops them."""
    import echo_duck

    with echo_duck.open(tmp_path / "m.duckdb", embedder="hash", admin=True) as host:
        for agent in ("alice", "bob"):
            host.grant(team="red", agent_id=agent, publish=True)
        alice, bob = host.for_agent("alice", team_id="red"), host.for_agent("bob", team_id="red")
        alice.remember_many([dict(content=f"note {i} about the kestrel queue", type="environment", scope="team")
                             for i in range(30)])
        target = alice.remember("the borealis database listens on port 5432", type="environment", scope="team")
        copy = host.recaller.eligibility

        def found() -> bool:
            return target.id in [h.id for h in bob.recall("borealis database port", 5, arms=["vector"])]

        def own() -> bool:  # a recall reinforces the caller's own memories
            return target.id in [h.id for h in alice.recall("borealis database port", 5, arms=["vector"])]

        assert found() and own()
        kept = dict(copy._masks)
        for _ in range(70):  # past a batch of queued reviews: their write reaches the table
            assert own() and found()
        assert alice.get(target.id).access_count > 0 and kept and all(copy._masks[k] is v for k, v in kept.items())
        alice.update(target.id, sensitivity="sensitive", reason="keep it to myself")
        assert not found()
        _drop_caches(host)
        assert not found()


def test_a_setting_read_in_process_is_what_sql_reads_after_every_way_of_changing_it(tmp_path):
    """Db.setting() (contradictions, restatements, archive and gc) keeps the settings table until a write."""
    with echo_duck.open(tmp_path / "s.duckdb", embedder="hash", admin=True) as mem:
        def same(step: str) -> None:
            for name in ("contradiction_similarity", "compress_similarity", "archive_retention_days"):
                assert mem.db.setting(name) == mem.sql("SELECT setting($n)", {"n": name}).item(), (step, name)

        same("start")
        mem.set_setting("compress_similarity", 0.5)
        same("set_setting")
        mem.sql("UPDATE settings SET value = 0.25 WHERE name = 'contradiction_similarity'", write=True)
        same("sql(write=True)")
        mem.remember("a write between two reads", type="user")
        same("remember")
        with pytest.raises(RuntimeError), mem.db.transaction("a write that rolls back"):
            mem.db.con.execute("UPDATE settings SET value = 7 WHERE name = 'archive_retention_days'")
            assert mem.db.setting("archive_retention_days") == 7  # its own uncommitted row, inside the transaction
            raise RuntimeError("roll back")
        same("rolled back")
        mem.db.con.execute("UPDATE settings SET value = 0.75 WHERE name = 'compress_similarity'")
        assert mem.db.setting("compress_similarity") == 0.5  # documented: a bare write is not seen ...
        mem.refresh()
        assert mem.db.setting("compress_similarity") == 0.75  # ... until refresh()
        same("bare connection, refreshed")
        assert mem.db.setting("no such setting") is None


def test_reinforced_winners_keep_their_rows_as_sql_has_them(tmp_path):
    """Reinforcing the hits (written behind the recall) changes access_count, last_accessed and row_version:
    the kept winners' rows take those values from the write itself, so the next recall reads no row again,
    and every kept row stays exactly what recall_rows returns."""
    from echo_duck.storage.db import uuid_list

    with echo_duck.open(tmp_path / "r.duckdb", embedder="hash", admin=True) as mem:
        mem.remember_many(synthetic.memories(200))
        for _ in range(3):
            hits = mem.recall("deploy borealis postgres", 5)
            mem.db.catch_up()
        kept = mem.recaller.eligibility._stored
        reinforced = [h.id for h in hits[:3]]
        assert set(reinforced) <= set(kept), "the reinforced winners are still kept"
        assert all(kept[i]["access_count"] >= 3 for i in reinforced)
        fresh = {str(r["id"]): r for r in mem.db.dicts("recall_rows", ids=uuid_list(list(kept)))}
        assert {i: kept[i] for i in fresh} == fresh
        again = mem.recall("deploy borealis postgres", 5, reinforce=False)
        assert [h.memory for h in again] == [mem.get(h.id) for h in again]
