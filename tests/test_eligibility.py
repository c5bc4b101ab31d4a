"""The in-process copy behind recall (echo_duck/recall/eligibility.py) against its definitions in SQL: the named
query recall_eligible (the same rows kept, with the same decay terms to the last bit) and, for filtered
recalls, exact_vector_candidates (the same rows kept by the filters, the same exact vector top-N); for
every kind of caller, and still after every kind of write, since the copy follows the table by
row_version.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from conftest import Clock, copy_store, plain_connection

import echo_duck
from echo_duck.bench import synthetic
from echo_duck.recall.recall_log import reviews_json
from echo_duck.storage import sqlfiles

SETTINGS = ("importance_decay_days", "archived_weight", "unhelpful_penalty")


def both(mem, *, agent: str, session: str | None, include_superseded: bool, reviews=None, now=None, gone=()):
    """(the copy's rows, recall_eligible's rows) for every id in the store and the ``gone`` ones (deleted:
    a stale arm may still offer them), as {id: row} each."""
    reviews = reviews or {}
    now = now or mem.now()
    who = _who(mem, agent, session)
    settings = dict(mem.db.run("ranking_settings_plain").fetchall())
    ids = [str(i) for (i,) in mem.db.con.execute("SELECT id FROM memories").fetchall()] + list(gone)
    copy = mem.recaller.eligibility.rows(ids, who=who, include_superseded=include_superseded, now=now,
                                         settings=settings, reviews=reviews)
    sql = mem.db.dicts("recall_eligible", p_ids="[" + ",".join(ids) + "]", p_reviews=reviews_json(reviews), **who,
                       p_include_superseded=include_superseded, p_now=now,
                       p_decay_days=settings["importance_decay_days"], p_archived_weight=settings["archived_weight"],
                       p_unhelpful_penalty=settings["unhelpful_penalty"])
    return {i: copy[i] for i in copy}, {r["memory_id"]: r for r in sql}


def assert_same(mem, **caller) -> int:
    copy, sql = both(mem, **caller)
    assert copy.keys() == sql.keys(), caller
    for memory_id, row in sql.items():
        assert copy[memory_id] == row, (caller, memory_id)  # equal, not close: the same libm calls in order
    return len(sql)


CALLERS = [dict(agent="alice", session="s1"), dict(agent="alice", session=None), dict(agent="alice", session="s2"),
           dict(agent="bob", session="b1"), dict(agent="carol", session=None)]


def check_all(mem, **extra) -> list[int]:
    return [assert_same(mem, **c, include_superseded=s, **extra) for c in CALLERS for s in (False, True)]


@pytest.fixture(scope="module")
def world_file(tmp_path_factory):
    """Alice's and Bob's memories in every scope, status and tier; Carol belongs to nothing. Built once per
    module; each test opens its own copy of the closed file (``world``)."""
    clock = Clock(datetime(2026, 1, 1, 12, 0, 0, 250_000))
    path = tmp_path_factory.mktemp("eligibility") / "eligibility.duckdb"
    with echo_duck.open(path, agent_id="bob", session_id="b1", embedder="hash", now=clock, admin=True) as bob:
        bob.grant(team="core")
        bob.grant(team="other")
        bob.grant(tenant="acme")
        bob.remember_many(synthetic.memories(40, seed=3))
        bob.remember_many([{**r, "scope": "team", "team_id": "core"} for r in synthetic.memories(20, seed=4)])
        bob.remember_many([{**r, "scope": "team", "team_id": "other"} for r in synthetic.memories(10, seed=5)])
        bob.remember_many([{**r, "scope": "public"} for r in synthetic.memories(10, seed=6)])
        bob.remember_many([{**r, "scope": "tenant", "tenant_id": "acme"} for r in synthetic.memories(10, seed=8)])
        bob.remember_many([{**r, "scope": "session", "source_session": "b1"} for r in synthetic.memories(5, seed=7)])
    mem = echo_duck.open(path, agent_id="alice", session_id="s1", embedder="hash", now=clock, admin=True)
    mem.grant(team="core")
    mem.grant(tenant="acme")
    mem.remember_many([{**r, "entities": ["Alice"] * (i % 3 == 0) + ["Bob"] * (i % 4 == 0),
                        "tags": r.get("tags", []) + ["ops"] * (i % 5 == 0),
                        "observed_at": datetime(2025, 12, 1) + timedelta(days=i % 20, microseconds=i)}
                       for i, r in enumerate(synthetic.memories(60))])
    mem.remember_many([{**r, "scope": "session", "source_session": s, "tags": ["global"] if i % 5 == 0 else []}
                       for i, (r, s) in enumerate(zip(synthetic.memories(20, seed=9), ["s1", "s2"] * 10))])
    mem.remember_many([{**r, "scope": "session"} for r in synthetic.memories(4, seed=10)])  # no source session
    for version in range(3):
        mem.remember(f"borealis listens on port {8000 + version}", type="environment", key="borealis.port")
    mem.remember("always run the linter first", type="procedure", pinned=True)
    clock.advance(days=120, seconds=7, microseconds=500_001)
    mem.decay()
    clock.advance(days=3, microseconds=999_999)
    for j, hit in enumerate(mem.recall("deploy borealis postgres", 20)):
        mem.mark(hit, helpful=j % 3 == 0)
    mem.mark(mem.recall("数据库", 5)[0], helpful=False)
    clock.advance(hours=5)
    mem.close()
    return path, clock.now


@pytest.fixture
def world(world_file, tmp_path):
    template, now = world_file
    path = tmp_path / "eligibility.duckdb"
    copy_store(template, path)
    clock = Clock(now)
    mem = echo_duck.open(path, agent_id="alice", session_id="s1", embedder="hash", now=clock, admin=True)
    yield mem, clock
    mem.close()


def test_the_callers_groups_are_the_ones_caller_groups_lists(world):
    """recall.py reads memberships plainly (caller_context); caller_groups (sql/macros/10_scope.sql)
    is the definition: same groups, same order, revoked ones left out, re-granted ones back."""
    mem, clock = world
    mem.grant(team="a-team")
    mem.grant(tenant="zeta")
    mem.revoke(team="core")
    clock.advance(seconds=1)
    mem.grant(team="core")
    mem.revoke(tenant="acme")
    for agent in ("alice", "bob", "carol", "nobody"):
        teams, tenants, settings = mem.recaller.caller_context(agent)
        assert [teams, tenants] == list(mem.db.con.execute("SELECT * FROM caller_groups(?)", [agent]).fetchone())
        assert settings == dict(mem.db.con.execute("SELECT name, value FROM settings").fetchall())
    assert mem.recaller.caller_context("alice")[:2] == (["a-team", "core"], ["zeta"])


def test_every_update_of_memories_sets_a_new_row_version():
    """The copy finds changed rows by row_version: a statement in sql/ that changes memories without
    setting a new one would leave the copy behind, so every one must."""
    found = 0
    for query in sqlfiles.queries().values():
        for statement in re.split(r";\s*(?:\n|$)", re.sub(r"--[^\n]*", "", query.sql)):
            if re.match(r"\s*UPDATE\s+memories\b", statement, re.I):
                found += 1
                assert "row_version = nextval('memory_row_version_seq')" in statement, query.name
            if re.match(r"\s*INSERT\s+INTO\s+memories\b", statement, re.I):
                found += 1
                columns = re.match(r"\s*INSERT\s+INTO\s+memories\s*\(([^)]*)\)", statement, re.I)
                by_name = re.match(r"\s*INSERT\s+INTO\s+memories\s+BY\s+NAME\s+SELECT\s+\*\s+EXCLUDE\s*\(([^)]*)\)",
                                   statement, re.I)  # every column but those excluded
                assert (columns and "row_version" not in columns.group(1)) or \
                    (by_name and "row_version" in by_name.group(1)), query.name  # the default numbers it
    for path in [*(sqlfiles.sql_dir() / "macros").glob("*.sql"), *(sqlfiles.sql_dir() / "views").glob("*.sql")]:
        assert not re.search(r"\b(UPDATE|INSERT\s+INTO)\s+memories\b", path.read_text(), re.I), path.name
    assert found >= 10


def test_the_copy_keeps_what_recall_eligible_keeps(world):
    mem, _ = world
    kept = check_all(mem)
    assert min(kept) > 0 and len(set(kept)) > 3  # the callers see different rows
    statuses = dict(mem.sql("SELECT status, count(*) FROM memories GROUP BY ALL").rows())
    tiers = dict(mem.sql("SELECT tier, count(*) FROM memories GROUP BY ALL").rows())
    assert statuses.get("superseded") and tiers.get("archival")  # the fixture has what it claims
    assert mem.sql("SELECT count(*) FROM memories WHERE unhelpful_count > helpful_count").item() > 0


def test_queued_reviews_count_as_written(world):
    mem, clock = world
    ids = [str(i) for (i,) in mem.db.con.execute("SELECT id FROM memories ORDER BY id LIMIT 30").fetchall()]
    reviews = {i: (1 + n % 4, clock() - timedelta(hours=n, microseconds=n * 37)) for n, i in enumerate(ids)}
    check_all(mem, reviews=reviews)


@pytest.mark.parametrize("changes", [
    {"importance_decay_days": 0.25},  # below one day: greatest(days, 1)
    {"importance_decay_days": 3.0, "archived_weight": 0.1, "unhelpful_penalty": 0.5},
])
def test_changed_settings_and_times(world, changes):
    mem, clock = world
    for name, value in changes.items():
        mem.sql("UPDATE settings SET value = $v WHERE name = $n", {"v": value, "n": name}, write=True)
    check_all(mem)
    check_all(mem, now=clock() + timedelta(days=900, microseconds=3))
    check_all(mem, now=datetime(2025, 6, 1))  # before every row: ages clamp to zero


def test_timestamps_before_1970(world):
    """date_diff counts second boundaries crossed: rounding toward zero instead would differ before 1970."""
    mem, _ = world
    mem.sql("UPDATE memories SET created_at = TIMESTAMP '1969-12-31 23:59:58.75', last_accessed = NULL, "
            "updated_at = greatest(updated_at, TIMESTAMP '1970-01-01') WHERE type <> 'user' AND NOT pinned", write=True)
    check_all(mem, now=datetime(1970, 1, 1, 0, 0, 0, 500_000))
    check_all(mem)


def _loaded(mem) -> None:
    """Load the copy (as a recall would), so what follows tests it following the table."""
    assert_same(mem, agent="alice", session="s1", include_superseded=True)
    assert mem.recaller.eligibility._seen_version is not None


def test_the_copy_follows_every_kind_of_write(world):
    mem, clock = world
    _loaded(mem)
    every_id = set(mem.sql("SELECT id::VARCHAR FROM memories").to_series().to_list())
    steps = {
        "remember": lambda: mem.remember("the staging box is called kestrel", type="environment"),
        "new version": lambda: mem.remember("borealis listens on port 9000", type="environment", key="borealis.port"),
        "forget": lambda: mem.forget(mem.find(limit=1)[0].id),
        "mark": lambda: mem.mark(mem.recall("kestrel", 1)[0], helpful=False),
        "recall (reinforced, written behind)": lambda: mem.recall("deploy postgres", 10),
        "decay": lambda: (clock.advance(days=400), mem.decay()),
        "restore": lambda: mem.restore(mem.sql("SELECT id FROM memories WHERE tier = 'archival' AND status = "
                                               "'active' AND agent_id = 'alice' LIMIT 1").item()),
        "revoke": lambda: mem.revoke(team="core"),
        "grant": lambda: mem.grant(team="other"),
        "purge": lambda: mem.forget(mem.find(limit=1)[0].id, purge=True),
        "many": lambda: mem.remember_many(synthetic.memories(15, seed=11)),
        "raw sql": lambda: mem.sql("UPDATE memories SET scope = 'public' WHERE agent_id = 'bob' AND scope = 'private' "
                                   "AND id IN (SELECT id FROM memories WHERE agent_id = 'bob' LIMIT 5)", write=True),
    }
    for name, step in steps.items():
        step()
        now = set(mem.sql("SELECT id::VARCHAR FROM memories").to_series().to_list())
        gone = sorted(every_id - now)
        every_id |= now
        for c in CALLERS:
            assert_same(mem, **c, include_superseded=False, gone=gone), name
        assert_same(mem, agent="alice", session="s1", include_superseded=True, gone=gone)
    assert gone  # the purge deleted a row the copy had


def test_a_rolled_back_write_leaves_the_copy_as_the_table(world):
    mem, _ = world
    _loaded(mem)
    victim = mem.find(limit=1)[0].id
    with pytest.raises(RuntimeError, match="abandon"):
        with mem.db.transaction("test"):
            mem.db.run("set_memory_status", status="forgotten", id=victim, now=mem.now())
            # inside the transaction the uncommitted change counts: recall asks SQL, not the copy
            copy, sql = both(mem, agent="alice", session="s1", include_superseded=False)
            assert victim not in copy and copy == sql
            raise RuntimeError("abandon")
    copy, sql = both(mem, agent="alice", session="s1", include_superseded=False)
    assert victim in copy and copy == sql


def test_recall_ranks_with_the_copy_as_it_follows_writes(world):
    """End to end: after writes, an unfiltered recall returns what the SQL macro ranks first."""
    mem, _ = world
    first = mem.recall("borealis port", 5)
    mem.remember("borealis listens on port 9100", type="environment", key="borealis.port")
    after = mem.recall("borealis port", 5)
    assert after[0].content == "borealis listens on port 9100"
    assert first[0].id != after[0].id
    assert all(h.memory.status == "active" for h in after)


FILTERS = [
    dict(types=["environment"]), dict(types=["user", "procedure"]), dict(types=[]), dict(tiers=["archival"]),
    dict(tiers=["semantic", "episodic"]), dict(tags=["ops"]), dict(tags=["ops", "infra"]), dict(tags=[]),
    dict(entities=["Alice"]), dict(entities=["Alice", "Bob"]), dict(entities=["nobody"]),
    dict(since=datetime(2025, 12, 10, 0, 0, 0, 9)), dict(until=datetime(2025, 12, 10, 0, 0, 0, 9)),  # one row on each bound
    dict(since=datetime(2025, 12, 5), until=datetime(2025, 12, 12)), dict(session="s1"), dict(session="s2"),
    dict(session="nowhere"), dict(types=["environment", "procedure"], tags=["ops"], entities=["Alice", "Bob"]),
]


def _filter_params(f: dict) -> dict:
    return {f"p_{name}": f.get(name) for name in ("types", "tiers", "tags", "entities", "since", "until", "session")}


def _who(mem, agent: str, session: str | None) -> dict:
    teams, tenants = mem.db.con.execute("SELECT teams, tenants FROM caller_groups(?)", [agent]).fetchone()
    return dict(p_caller_agent=agent, p_caller_session=session, p_caller_teams=teams, p_caller_tenants=tenants)


def _sql_vector_arm(mem, qvec, n: int, who: dict, include_superseded: bool, f: dict) -> dict[str, float]:
    """exact_vector_candidates: recall_fused's visibility and filters, over every row with a vector."""
    literal = "[" + ",".join(f"{float(x):.9g}" for x in qvec) + "]"
    ids, sims, _ = mem.db.run("exact_vector_candidates", p_qvec=literal, p_model=mem.indexer.vectors.model_id, p_n=n,
                           **who, **_filter_params(f), p_include_superseded=include_superseded).fetchone()
    return dict(zip(ids, sims))


@pytest.mark.parametrize("include_superseded", [False, True])
def test_filters_keep_what_the_sql_filters_keep(world, include_superseded):
    mem, clock = world
    settings = dict(mem.db.run("ranking_settings_plain").fetchall())
    ids = [str(i) for (i,) in mem.db.con.execute("SELECT id FROM memories").fetchall()]
    qvec = mem.indexer.vectors.embed(["anything"])[0]
    sizes = []
    for f in FILTERS:
        for c in CALLERS:
            who = _who(mem, c["agent"], c["session"])
            expected = _sql_vector_arm(mem, qvec, 10**6, who, include_superseded, f)  # every kept row
            kept = mem.recaller.eligibility.rows(ids, who=who, include_superseded=include_superseded, now=clock(),
                                                 settings=settings, reviews={}, filters=f)
            assert set(kept) == set(expected), (f, c)
            sizes.append(len(expected))
    assert 0 in sizes and max(sizes) > 20 and len(set(sizes)) > 10  # the filters really select


@pytest.mark.parametrize("query", ["deploy borealis postgres", "数据库", "what does the user prefer", "ops"])
def test_filtered_vector_arm_is_the_exact_top_n_of_the_kept_rows(world, query):
    mem, _ = world
    vectors = mem.indexer.vectors
    qvec = vectors.embed([query])[0]
    for f in FILTERS:
        for c in CALLERS[:4]:
            who = _who(mem, c["agent"], c["session"])
            ids, sims = mem.recaller.eligibility.vector_candidates(vectors.search, qvec, 12, who=who,
                                                                   include_superseded=False, filters=f)
            expected = _sql_vector_arm(mem, qvec, 10**6, who, False, f)
            want = sorted(expected.values(), reverse=True)[:12]
            assert len(ids) == len(set(ids)) == len(want), (f, c)
            for memory_id, sim in zip(ids, sims):
                assert expected[memory_id] == pytest.approx(float(sim), abs=1e-6)
            assert list(sims) == pytest.approx(want, abs=1e-6)  # the best, best first (ties may swap)


def test_the_filtered_vector_arm_follows_writes(world):
    mem, _ = world
    vectors = mem.indexer.vectors
    who = _who(mem, "alice", "s1")
    f = dict(types=["environment"], tags=["ops"])

    def top(query):
        return mem.recaller.eligibility.vector_candidates(vectors.search, vectors.embed([query])[0], 5, who=who,
                                                          include_superseded=False, filters=f)[0]

    new = mem.remember("the kestrel queue drains every night", type="environment", tags=["ops"])
    assert top("the kestrel queue drains every night")[0] == new.id
    mem.forget(new.id)
    assert new.id not in top("the kestrel queue drains every night")
    ops = top("the kestrel queue")
    # a write that changes tags and sets a row_version (as every UPDATE in sql/ must) is followed, not reloaded;
    # through the bare connection it is seen once counted (Db.wrote(), as every write through echo_duck is)
    mem.db.con.execute("UPDATE memories SET tags = ['dev'], row_version = nextval('memory_row_version_seq') "
                       "WHERE id = $id", {"id": ops[0]})
    assert ops[0] in top("the kestrel queue")  # not counted: not seen (EchoDuck.refresh() is for that)
    mem.db.wrote()
    assert ops[0] not in top("the kestrel queue")
    mem.db.con.execute("UPDATE memories SET tags = ['ops'], row_version = nextval('memory_row_version_seq') "
                       "WHERE id = $id", {"id": ops[0]})
    mem.db.wrote()
    assert top("the kestrel queue") == ops
    again = mem.remember("the kestrel queue drains every hour", type="environment", tags=["ops"])
    mem.sql("UPDATE memories SET tags = ['dev'] WHERE id = $id", {"id": again.id}, write=True)  # raw: drops the copy
    assert again.id not in top("the kestrel queue drains every hour")


def _team_fact(host):
    host.grant(team="t", agent_id="alice", publish=True)
    host.grant(team="t", agent_id="bob")
    alice = host.for_agent("alice")
    return alice, alice.remember("the release train leaves on tuesday", type="environment", scope="team", team_id="t")


def _seen_by_both(host, memory_id):
    for agent in (host.for_agent("alice"), host.for_agent("bob")):
        assert memory_id in [h.id for h in agent.recall("release train", reinforce=False)]
        assert host.sql(f"SELECT count(*) AS n FROM visible_memories('{agent.caller.agent_id}', NULL) "
                        f"WHERE id = '{memory_id}'")["n"][0] == 1


def test_a_reason_that_reads_like_the_scanners_is_refused(tmp_path):
    # session 55 (reviewer AD): approval_never_given read a held row from its create event's reason, which is the
    # caller's free text on an update: "quarantined …" hid the owner's live fact from its own recall (the copy) while
    # recall_hits still returned it to a teammate. Such a reason is refused now (the macro reads the reason alone)
    with echo_duck.open(tmp_path / "s.duckdb", embedder="hash", admin=True) as host:
        alice, fact = _team_fact(host)
        events = host.sql("SELECT count(*) FROM memory_events").item()
        with pytest.raises(echo_duck.InvalidInput, match="reason may not start with 'quarantined'"):
            alice.update(fact.id, "the release train leaves on wednesday", reason="quarantined the old date")
        with pytest.raises(echo_duck.InvalidInput, match="reason may not start with 'quarantined'"):
            alice.forget(fact.id, reason="quarantined by hand")
        assert host.sql("SELECT count(*) FROM memory_events").item() == events  # nothing written
        assert [m.content for m in alice.history(fact.id).versions] == ["the release train leaves on tuesday"]
        new = alice.update(fact.id, "the release train leaves on wednesday", reason="held back: the old date")
        assert new.status == "active"
        _seen_by_both(host, new.id)
        with pytest.raises(echo_duck.InvalidInput, match="only for a row the scanner held"):  # the SQL's own guard
            host.db.run("log_event", now=host.now(), actor="test", action="create", memory_id=new.id,
                        reason="quarantined the old date", before=None)


def test_a_store_from_before_0014_keeps_a_row_updated_with_such_a_reason_live(tmp_path):
    path = tmp_path / "s.duckdb"
    with echo_duck.open(path, embedder="hash", admin=True) as host:
        alice, fact = _team_fact(host)
        new = alice.update(fact.id, "the release train leaves on wednesday")
    con = plain_connection(path)  # as an update with that reason was written before migration 0014
    con.execute("INSERT INTO memory_events (occurred_at, actor, action, memory_id, reason, after) "
                "SELECT now()::TIMESTAMP, 'agent:alice', 'create', id, 'quarantined the old date', to_json(m) "
                "FROM memories m WHERE id = ?", [new.id])
    con.execute("DROP TABLE reasons_not_held")
    con.execute("DELETE FROM schema_version WHERE version = 14")
    con.close()
    with echo_duck.open(path, embedder="hash", admin=True) as host:
        assert host.sql("SELECT count(*) FROM reasons_not_held").item() == 1
        _seen_by_both(host, new.id)
