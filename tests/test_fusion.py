"""The in-process fusion (echo_duck/recall/fusion.py) against its definition, the recall_fused macro in SQL.

A recall ranks in Python over the candidates the in-process copy keeps (eligibility.py, as
recall_eligible and recall_fused's filters keep them); the analysts' recall_hits, and filtered recalls
inside a transaction, run recall_fused. Given the same two arms, both must return the same memories
in the same order with the same score and explain values, whatever the store holds: other agents'
private rows, team, tenant and session scopes, superseded versions, archived rows, feedback, pinned and
USER memories, decayed importance, queries that trip either gate, questions about the current state
and about a time window, questions asking when, a minimum relevance, and filters.
"""

from __future__ import annotations

import math
import shutil
from datetime import datetime, timedelta

import pytest

import echo_duck
from echo_duck.bench import synthetic
from echo_duck.index.keyword import query_text
from echo_duck.index.keyword_search import NO_MATCH
from echo_duck.recall import bridge_arm, fusion
from echo_duck.recall.hybrid import OVERFETCH, keyword_cut
from echo_duck.text.when import text_script


FIELDS = ("bm25_rank", "bm25_score", "vec_rank", "similarity", "keyword_conf", "vector_conf", "coverage",
          "similarity_z", "script_credit", "bridge_coverage", "session_credit", "update_credit", "relevance",
          "recency_boost", "time_boost", "asking_weight", "gate", "effective_importance", "tier_weight",
          "feedback_weight", "decay_factor", "score")
QUERIES = [q.text for q in synthetic.queries(24)] + ["the", "deploy", "部署", "nothing-matches-zzzz", "the of and",
                                                      "what is the current deploy port now", "部署 上个月",
                                                      "which database do we deploy", "数据库 部署 端口",
                                                      "when did we deploy borealis", "数据库 什么时候 部署",
                                                      "which host does the borealis deploy run on now",
                                                      "部署 数据库 现在 在 哪台 主机",
                                                      "kestrel staging bucket"]
# Older facts, then statements that change them (states_change): on a current-state question the newer takes the
# older's relevance (update_credit), unless its provenance is lower or another agent wrote it.
CHANGES = [("the borealis deploy runs on host db1 with postgres 14", "the borealis deploy moved from host db1 to db7"),
           ("部署 数据库 在 主机 db2 上 运行 postgres", "部署 数据库 已经 换到 主机 db8 上 运行 postgres"),
           ("the kestrel deploy runs on host db3 with postgres 15", "the kestrel deploy switched from host db3 to db9")]
# Turns that ask (mostly_asks: their score × asking_weight), and two that do not: one says something of its writer,
# one tells more than it asks.
ASKING = ["Bob: which host does the borealis deploy run on?", "部署 数据库 现在 在 哪台 主机？",
          "what port does the kestrel deploy use? which database?", "can you tell me which host my deploy runs on?",
          "the borealis deploy moved to a new host with postgres 14 last week. Which one?"]


def vector_arm(mem, query: str, n: int, keep=None, counted=None) -> fusion.VectorArm:
    vectors = mem.indexer.vectors
    ids, sims, scripts, sums = vectors.search_with_stats(vectors.embed([query])[0], n, keep, counted)
    return fusion.VectorArm(ids, sims, scripts, fusion.calibration_stats(*sums), text_script(query), vectors.model_id)


def both_rankings(mem, query: str, k: int, include_archived: bool, time: fusion.TimeTerms | None = None,
                  min_score: float | None = None, asked: int | None = None) -> tuple[list[dict], list[dict]]:
    """The same arms (over the rows the caller may see, as recall computes them) fused by recall.py's in-process
    path and by the recall_fused macro."""
    caller = mem.caller
    teams, tenants, settings = mem.recaller.caller_context(caller.agent_id)
    who = dict(p_caller_agent=caller.agent_id, p_caller_session=caller.session_id, p_caller_teams=teams,
               p_caller_tenants=tenants, p_caller_host=caller.admin)
    counted = mem.recaller.eligibility.counted("keyword", who)
    keyword = mem.indexer.keyword_search.search(query_text(query), keyword_cut(settings), counted=counted)
    vector = vector_arm(mem, query, int(settings["vector_pool"]) * OVERFETCH,
                        counted=mem.recaller.eligibility.counted("vector", who))
    time = mem.recaller.time_terms(query) if time is None else time
    bridge_words = bridge_arm.bridged_words(query, vector)
    bridged = None
    if bridge_words:  # as recall reads it, and every match: recall_fused uses only the other script's candidates
        bridged = bridge_arm.bridge_coverage(bridge_words, vector, mem.indexer.keyword_search, counted)
        every = mem.indexer.keyword_search.search(bridge_words, None, counted=counted)
        assert all(dict(zip(every.ids, every.covered))[i] == c for i, c in zip(bridged.ids, bridged.covered))
        assert bridged.query_idf_all == every.query_idf_all
    in_process = mem.recaller._fused_in_process(keyword, vector, who, include_archived, time, min_score, k, None,
                                                settings, bridged, asked)
    in_sql = mem.db.dicts("recall", **keyword.as_sql(), **vector.as_sql(), **(bridged or NO_MATCH).as_bridge_sql(),
                          **who, p_k=k, **time.as_sql(),
                          p_min_score=min_score, p_types=None, p_tiers=None, p_tags=None, p_entities=None,
                          p_since=None, p_until=None, p_session=None, p_include_superseded=include_archived,
                          p_now=mem.now(), p_asked=asked)
    return in_process, in_sql


def assert_same(mem, query: str, k: int, include_archived: bool = False, time: fusion.TimeTerms | None = None,
                min_score: float | None = None, asked: int | None = None) -> list[dict]:
    got, expected = both_rankings(mem, query, k, include_archived, time, min_score, asked)
    assert [str(r["id"]) for r in got] == [str(r["id"]) for r in expected], query
    for g, e in zip(got, expected):
        for field in FIELDS:
            # the same operations in the same order: equal to the last bit, not merely close
            assert g[field] == e[field] or (_nan(g[field]) and _nan(e[field])), (query, field, g[field], e[field])
        assert g["content"] == e["content"] and g["conflicts_with"] == e["conflicts_with"]
    return got


def _nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Alice's view of a store shared with Bob: every kind of row recall must rank or leave out.
    Built once; each test works on a copy (some change settings)."""
    path, now = tmp_path_factory.mktemp("fusion") / "fusion.duckdb", [datetime(2026, 1, 1, 12)]

    def clock() -> datetime:
        return now[0]

    with echo_duck.open(path, agent_id="bob", session_id="b1", embedder="hash", now=clock, admin=True) as bob:
        bob.grant(team="core")
        bob.grant(team="other")
        bob.grant(tenant="acme")
        bob.remember_many(synthetic.memories(150, seed=3))  # private: never Alice's
        bob.remember_many([{**r, "scope": "team", "team_id": "core"} for r in synthetic.memories(60, seed=4)])
        bob.remember_many([{**r, "scope": "team", "team_id": "other"} for r in synthetic.memories(30, seed=5)])
        bob.remember_many([{**r, "scope": "public"} for r in synthetic.memories(40, seed=6)])
        bob.remember_many([{**r, "scope": "tenant", "tenant_id": "acme"} for r in synthetic.memories(30, seed=8)])
        bob.remember_many([{**r, "source_session": "c0"} for r in synthetic.memories(30, seed=13)])  # private, c0
        bob.remember_many([{"content": f"the kestrel staging bucket is kestrel-stage-{i} in region {i}",
                            "type": "environment", "scope": "team", "team_id": "core", "pinned": True}
                           for i in range(6)])
    with echo_duck.open(path, agent_id="alice", session_id="s1", embedder="hash", now=clock, admin=True) as alice:
        alice.grant(team="core")
        alice.grant(tenant="acme")
        stored = alice.remember_many(synthetic.memories(400))
        # three conversations (source sessions), a day each: within a day the write order is the turn order
        alice.remember_many([{**r, "source_session": f"c{i % 3}", "observed_at": datetime(2025, 12, 1 + i % 3)}
                             for i, r in enumerate(synthetic.memories(90, seed=12))])
        alice.remember_many([{**r, "scope": "session", "source_session": s}
                             for r, s in zip(synthetic.memories(40, seed=9), ["s1", "s2"] * 20)])
        for version in range(3):  # superseded versions, visible only with include_archived
            alice.remember_many([{"content": f"deploy borealis uses port {8000 + 10 * i + version}",
                                  "type": "environment", "key": f"borealis.port.{i}", "provenance": "user_stated"}
                                 for i in range(12)])
        alice.remember_many([{"content": f"pinned rule {m.content}", "type": "procedure", "pinned": True}
                             for m in stored[:40]])
        for i, (old, new) in enumerate(CHANGES):  # the last change is written with a lower provenance: no credit
            alice.remember_many([{"content": old, "type": "environment", "observed_at": datetime(2025, 11, 1),
                                  "provenance": "user_stated"},
                                 {"content": new, "type": "environment", "observed_at": datetime(2025, 12, 20),
                                  "provenance": "model_inferred" if i == 2 else "user_stated"}])
        # a pending dispute (two scopes of one owner) with her own fact of higher provenance: her team claim is ranked
        # after the kept
        alice.remember("deploy borealis canary uses port 7000", type="environment", provenance="user_stated")
        alice.remember("deploy borealis canary uses port 7001", type="environment", scope="team", team_id="core")
        assert len(alice.contradictions(status="pending")) == 1
        alice.remember_many([{"content": text, "type": "user", "source_session": "c1",
                               "observed_at": datetime(2025, 12, 2, 9, i)} for i, text in enumerate(ASKING)])
        now[0] += timedelta(days=200)
        alice.decay()  # archives what decayed: weighted down by archived_weight
        now[0] += timedelta(days=30)
        for j, hit in enumerate(alice.recall("deploy borealis postgres", 30)):  # reinforced: access counts differ
            alice.mark(hit, helpful=j % 3 == 0)
        alice.mark(alice.recall("部署 数据库", 5)[0], helpful=False)
        now[0] += timedelta(days=3)
    return path, now[0]


@pytest.fixture
def world(built, tmp_path):
    path, now = built
    copy = tmp_path / "world.duckdb"
    shutil.copyfile(path, copy)
    with echo_duck.open(copy, agent_id="alice", session_id="s1", embedder="hash", now=now, admin=True) as alice:
        yield alice


def test_half_the_list_is_kept_for_the_callers_own_alike(world):
    """Half the hits asked for is kept for Alice's own kept candidates: Bob's past the rest are ranked after the kept
    (gate CROWDED), in process as in SQL. His six kestrel notes outscore all of Alice's and take the other half."""
    for k in (4, 7, 8, 40):
        ranked = [assert_same(world, q, k) for q in QUERIES]
        kestrel, room = [r["agent_id"] for r in ranked[-1]], min(k // 2, 6)
        assert kestrel[:room] == ["bob"] * room and (k > 12 or kestrel.count("bob") == room)
    # a reranker reads more than the k asked for: the crowded follow the kept
    read = assert_same(world, "kestrel staging bucket", 12, min_score=1.2, asked=4)  # three of Alice's kept
    assert [(r["agent_id"], r["gate"]) for r in read] == ([("bob", fusion.KEPT)] * 2 + [("alice", fusion.KEPT)] * 3
                                                          + [("bob", fusion.CROWDED)] * 4)
    only_bob = assert_same(world, "kestrel staging bucket", 6, min_score=2.0)  # nothing of Alice's: all of his kept
    assert [r["gate"] for r in only_bob] == [fusion.KEPT] * 6


@pytest.mark.slow
@pytest.mark.parametrize("include_archived", [False, True])
def test_in_process_fusion_equals_the_sql_macro(world, include_archived):
    ranked = [assert_same(world, q, 40, include_archived) for q in QUERIES]
    # the fixture reaches every branch the comparison is meant to cover
    assert any(r["bm25_rank"] is None for rows in ranked for r in rows)  # vector-only hits
    assert any(r["vec_rank"] is None for rows in ranked for r in rows)  # keyword-only hits
    assert any(r["tier_weight"] < 1 for rows in ranked for r in rows)  # archived rows
    assert any(r["feedback_weight"] < 1 for rows in ranked for r in rows)  # unhelpful marks
    assert any(r["gate"] == fusion.OUTRANKED for rows in ranked for r in rows)  # a claim disputed by a higher fact
    assert {r["scope"] for rows in ranked for r in rows} >= {"private", "team", "public", "tenant", "session"}
    # a candidate lifted by the one before it in its source session (session_credit)
    assert any(r["session_credit"] is not None and r["relevance"] == r["session_credit"] for rows in ranked for r in rows)
    # a change statement lifted to the relevance of the fact it changes (update_credit)
    assert any(r["update_credit"] is not None and r["relevance"] == r["update_credit"] for rows in ranked for r in rows)
    # turns that ask keep asking_weight of their score; the two that do not ask keep all of it
    weights = {r["content"]: r["asking_weight"] for rows in ranked for r in rows if r["content"] in ASKING}
    assert weights == {**{t: fusion.ASKING_WEIGHT for t in ASKING[:3]}, **{t: 1.0 for t in ASKING[3:]}}
    assert all(r["agent_id"] == "alice" or r["scope"] != "private" for rows in ranked for r in rows)
    assert all(r["team_id"] in (None, "core") for rows in ranked for r in rows)
    if include_archived:
        assert any(r["status"] == "superseded" for rows in ranked for r in rows)
    else:
        assert all(r["status"] == "active" for rows in ranked for r in rows)


@pytest.mark.slow
def test_small_k_and_changed_settings(world):
    for k in (1, 3):
        for q in QUERIES[:8]:
            assert_same(world, q, k)
    for name, value in [("keyword_pool", 5), ("vector_pool", 7), ("gate_df_ratio", 0.01),
                        ("vector_min_similarity", 0.5), ("importance_floor", 0.9)]:
        world.sql("UPDATE settings SET value = $v WHERE name = $n", {"v": value, "n": name}, write=True)
        for q in QUERIES[:10]:
            assert_same(world, q, 10)


def test_gates_order_the_list_and_never_shorten_it(world):
    def ranked() -> list[list[dict]]:
        return [assert_same(world, q, 1000) for q in QUERIES]

    world.sql("UPDATE settings SET value = 1 WHERE name = 'gate_df_ratio'", write=True)
    world.sql("UPDATE settings SET value = -1 WHERE name = 'vector_min_similarity'", write=True)
    ungated = ranked()
    # every keyword-only match now counts as common, and most vector-only ones as weak
    world.sql("UPDATE settings SET value = 0.001 WHERE name = 'gate_df_ratio'", write=True)
    world.sql("UPDATE settings SET value = 0.3 WHERE name = 'vector_min_similarity'", write=True)
    gated = ranked()
    # the gates these settings move (a claim a higher-provenance fact disputes is ranked last whatever they are)
    assert all(r["gate"] in ("kept", fusion.OUTRANKED) for rows in ungated for r in rows)
    labels = {r["gate"] for rows in gated for r in rows}
    assert labels == {"kept", "ranked last: only common keywords", "ranked last: weak meaning match", fusion.OUTRANKED}
    for before, after in zip(ungated, gated):
        assert sorted(r["id"] for r in before) == sorted(r["id"] for r in after)  # nothing dropped
        kept = [r["gate"] == "kept" for r in after]
        assert kept == sorted(kept, reverse=True)  # the kept first, then the gated
        for part in ([r for r in after if r["gate"] == "kept"], [r for r in after if r["gate"] != "kept"]):
            assert [r["score"] for r in part] == sorted((r["score"] for r in part), reverse=True)


@pytest.mark.slow  # the whole matrix; the fast loop keeps the other SQL-equality tests of this file
def test_time_terms_and_min_score_are_applied_the_same_way(world):
    now = world.now()
    windows = [(now - timedelta(days=40), now - timedelta(days=20)), (now - timedelta(days=400), now),
               (now + timedelta(days=1), now + timedelta(days=2))]
    boosted = lifted = twice = 0
    for query in QUERIES[:12]:
        for recency in (None, 0.5, 3.0):
            for window, asks_when in zip((None, *windows, None, windows[1]), (False,) * 4 + (True,) * 2):
                rows = assert_same(world, query, 30, include_archived=True,
                                   time=fusion.TimeTerms(recency, window, asks_when))
                boosted += sum(r["time_boost"] > 1 for r in rows)
                twice += sum(r["time_boost"] == 2.25 for r in rows)  # in the window and stating a time
                lifted += sum(r["recency_boost"] > 1 for r in rows)
                assert all(r["recency_boost"] == 1 for r in rows if r["status"] != "active")  # provenance first
        relevances = [r["relevance"] for r in assert_same(world, query, 1000)]
        if relevances:
            cut = sorted(relevances)[len(relevances) // 2]
            kept = assert_same(world, query, 1000, min_score=cut)
            assert kept and all(r["relevance"] >= cut for r in kept)
            assert len(kept) == sum(r >= cut for r in relevances)
    assert boosted and lifted and twice


def test_the_constants_are_the_sql_ones(world):
    (row,) = world.sql("SELECT unnest(calibration_constants())").to_dicts()
    assert row == dict(coverage_weight=fusion.COVERAGE_WEIGHT, vector_weight=fusion.VECTOR_WEIGHT,
                       gap_scale=fusion.GAP_SCALE, recency_weight=fusion.RECENCY_WEIGHT, time_weight=fusion.TIME_WEIGHT,
                       prior_rows=fusion.PRIOR_ROWS, prior_mean=fusion.PRIOR_MEAN, prior_sd=fusion.PRIOR_SD,
                       follow_weight=fusion.FOLLOW_WEIGHT, update_similarity=fusion.UPDATE_SIMILARITY,
                       asking_weight=fusion.ASKING_WEIGHT)
    for sums in [(0, 0, 0, 0, 0, 0), (5, 1.0, 0.5, 0, 0, 0), (300, 21.5, 4.25, 7, 1.5, 0.75), (2, 0.6, 0.2, 1, 0.2, 0.04)]:
        (expected,) = world.sql("SELECT calibration_stats($a, $b, $c, $d, $e, $f)",
                                dict(zip("abcdef", sums))).rows()[0]
        assert fusion.calibration_stats(*sums) == pytest.approx(expected, rel=1e-12)


def test_recall_uses_the_in_process_path_and_returns_what_sql_ranks(world):
    credited = followed = updated = 0
    for q in QUERIES[:10] + ["部署", "部署 上个月"] + QUERIES[-2:]:  # the Chinese ones credit English rows (script_credit)
        hits = world.recall(q, 10, reinforce=False, explain=True)
        expected, _ = both_rankings(world, q, 10, False)
        assert [h.id for h in hits] == [str(r["id"]) for r in expected]
        assert [h.score for h in hits] == [r["score"] for r in expected]
        assert all(h.explanation.vector_arm == "exact (in-process)" for h in hits)
        assert [h.explanation.script_credit for h in hits] == [r["script_credit"] for r in expected]
        assert [h.explanation.session_credit for h in hits] == [r["session_credit"] for r in expected]
        assert [h.explanation.update_credit for h in hits] == [r["update_credit"] for r in expected]
        credited += sum(h.explanation.script_credit is not None for h in hits)
        followed += sum(h.explanation.session_credit is not None for h in hits)
        updated += sum(h.explanation.update_credit is not None for h in hits)
    assert credited > 0 and followed > 0 and updated > 0


FILTERED = [dict(types=["environment", "procedure"]), dict(tiers=["archival"]), dict(tags=["infra"]),
            dict(session="s1"), dict(types=["user"], tags=["prefs"]), dict(since=datetime(2026, 1, 1))]


@pytest.mark.parametrize("include_archived", [False, True])
def test_filtered_in_process_ranking_equals_the_sql_macro(world, include_archived):
    """A filtered recall ranks in process too: given the same arms (every keyword match, the vector top-N
    among the kept rows), it returns what recall_fused returns with the same filters, to the last bit."""
    caller, vectors = world.caller, world.indexer.vectors
    teams, tenants, settings = world.recaller.caller_context(caller.agent_id)
    vector_pool = int(settings["vector_pool"])
    who = dict(p_caller_agent=caller.agent_id, p_caller_session=caller.session_id, p_caller_teams=teams,
               p_caller_tenants=tenants, p_caller_host=caller.admin)
    compared = 0
    for f in FILTERED:
        params = {f"p_{name}": f.get(name) for name in ("types", "tiers", "tags", "entities", "since", "until", "session")}
        for query in QUERIES[:12]:
            keyword = world.indexer.keyword_search.search(query_text(query), None)  # every match
            ids, sims, scripts, sums = world.recaller.eligibility.vector_candidates(
                vectors.search_with_stats, vectors.embed([query])[0], vector_pool * OVERFETCH, who=who,
                include_superseded=include_archived, filters={k[2:]: v for k, v in params.items()})
            vector = fusion.VectorArm(ids, sims, scripts, fusion.calibration_stats(*sums), text_script(query),
                                      vectors.model_id)
            time = world.recaller.time_terms(query)
            got = world.recaller._fused_in_process(keyword, vector, who, include_archived, time, None, 30,
                                                   {k[2:]: v for k, v in params.items()}, settings)
            expected = world.db.dicts(
                "recall", **keyword.as_sql(), **vector.as_sql(), **NO_MATCH.as_bridge_sql(), **who, p_k=30,
                **time.as_sql(), p_min_score=None,
                **params, p_include_superseded=include_archived, p_now=world.now(), p_asked=None)
            assert [str(r["id"]) for r in got] == [str(r["id"]) for r in expected], (f, query)
            for g, e in zip(got, expected):
                for field in FIELDS:
                    assert g[field] == e[field] or (_nan(g[field]) and _nan(e[field])), (f, query, field)
            compared += len(expected)
    assert compared > 100


def test_one_authors_near_copies_do_not_push_the_callers_own_out_of_the_pool(world):
    # reviewer AR (session 58): each arm was cut to its pool over every author before the share ran, so 60 of a
    # teammate's near-copies left no candidate of Alice's for the share to keep; each author group is pooled alone
    world.grant(team="core", agent_id="bob", publish=True)
    bob = world.for_agent("bob", team_id="core")
    bob.remember_many([{"content": f"which bucket does staging use? the staging bucket is bucket-{i} in cold storage",
                        "type": "environment", "scope": "team", "team_id": "core"} for i in range(60)])
    fact = world.remember("the staging bucket is alice-stage in cold storage", type="environment",
                          provenance="user_stated")
    for q in ("which staging bucket", "the staging bucket in cold storage"):
        ranked = assert_same(world, q, 5)
        assert str(fact.id) in [str(r["id"]) for r in ranked], q


def test_a_filtered_keyword_arm_keeps_each_authors_best_with_their_ranks_among_all(world):
    # reviewer AT (session 58): the filtered in-process keyword arm read the best keyword_pool matches of all, which
    # fusion's per-author pools no longer equal; it keeps each author's best, and every match ranked before them, so
    # the ranks explain shows are those recall_fused gives among every match
    world.grant(team="core", agent_id="bob", publish=True)
    world.for_agent("bob", team_id="core").remember_many([
        {"content": f"kestrel staging bucket? note {i}: the kestrel staging bucket kestrel-{i}", "type": "environment",
         "scope": "team", "team_id": "core"} for i in range(70)])
    fact = world.remember("the kestrel staging bucket for alice is alice-stage", type="environment",
                          provenance="user_stated")
    for q in ("kestrel staging bucket", "which kestrel bucket", "deploy borealis postgres"):
        for arms in (("keyword",), ("keyword", "vector")):
            in_process = world.recall(q, 8, explain=True, reinforce=False, types=["environment"], arms=arms)
            with world.db.transaction("the macro"):
                in_sql = world.recall(q, 8, explain=True, reinforce=False, types=["environment"], arms=arms)
            assert [h.id for h in in_process] == [h.id for h in in_sql], (q, arms)
            for a, b in zip(in_process, in_sql):
                assert (a.explanation.gate, a.explanation.bm25_rank) == (b.explanation.gate, b.explanation.bm25_rank)
                assert a.score == pytest.approx(b.score, rel=1e-6)
        if q.startswith("kestrel"):
            assert fact.id in [h.id for h in in_process]
