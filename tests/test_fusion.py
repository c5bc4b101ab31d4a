"""The in-process fusion (echo_duck/recall/fusion.py) against its definition, the recall_fused macro in SQL.

A recall ranks in Python over the candidates the in-process copy keeps (eligibility.py, as
recall_eligible and recall_fused's filters keep them); the analysts' recall_hits, and filtered recalls
inside a transaction, run recall_fused. Given the same two arms, both must return the same memories
in the same order with the same score and explain values, whatever the store holds: other agents'
private rows, team, tenant and session scopes, superseded versions, archived rows, feedback, pinned and
USER memories, decayed importance, queries that trip either gate, and filters.
"""

from __future__ import annotations

import math
import shutil
from datetime import datetime, timedelta

import pytest

import echo_duck
from echo_duck.text import segment as text
from echo_duck.bench import synthetic
from echo_duck.index.keyword import query_text
from echo_duck.recall.hybrid import OVERFETCH, keyword_cut, shape_literal


FIELDS = ("bm25_rank", "bm25_score", "vec_rank", "similarity", "keyword_weight", "vector_weight", "entropy",
          "rrf_score", "gate", "effective_importance", "tier_weight", "feedback_weight", "decay_factor", "score")
QUERIES = [q.text for q in synthetic.queries(24)] + ["the", "deploy", "部署", "nothing-matches-zzzz", "the of and"]


def both_rankings(mem, query: str, k: int, include_archived: bool) -> tuple[list[dict], list[dict]]:
    """The same arms fused by recall.py's in-process path and by the recall_fused macro."""
    caller = mem.caller
    teams, tenants, settings = mem.recaller.caller_context(caller.agent_id)
    keyword = mem.indexer.keyword_search.search(query_text(query), keyword_cut(settings))
    vectors = mem.indexer.vectors
    vec_ids, vec_sims = vectors.search(vectors.embed([query])[0], int(settings["vector_pool"]) * OVERFETCH)
    who = dict(p_caller_agent=caller.agent_id, p_caller_session=caller.session_id, p_caller_teams=teams,
               p_caller_tenants=tenants)
    shape = text.query_shape(query)
    entropy = dict(p_entropy=1.0 if shape is None else None, p_shape=shape_literal(shape))
    in_process = mem.recaller._fused_in_process(keyword, vec_ids, vec_sims, who, include_archived, shape, k, None,
                                                settings)
    sims = [float(s) for s in vec_sims]  # repr reads back the very doubles fusion.py ranked
    in_sql = mem.db.dicts("recall", **keyword.as_sql(), p_vec_ids="[" + ",".join(vec_ids) + "]" if vec_ids else None,
                          p_vec_sims="[" + ",".join(map(repr, sims)) + "]" if vec_ids else None, **who, p_k=k,
                          **entropy, p_types=None, p_tiers=None, p_tags=None, p_entities=None, p_since=None,
                          p_until=None, p_session=None, p_include_superseded=include_archived, p_now=mem.now())
    return in_process, in_sql


def assert_same(mem, query: str, k: int, include_archived: bool = False) -> list[dict]:
    got, expected = both_rankings(mem, query, k, include_archived)
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
    with echo_duck.open(path, agent_id="alice", session_id="s1", embedder="hash", now=clock, admin=True) as alice:
        alice.grant(team="core")
        alice.grant(tenant="acme")
        stored = alice.remember_many(synthetic.memories(400))
        alice.remember_many([{**r, "scope": "session", "source_session": s}
                             for r, s in zip(synthetic.memories(40, seed=9), ["s1", "s2"] * 20)])
        for i in range(12):  # superseded versions, visible only with include_archived
            for version in range(3):
                alice.remember(f"deploy borealis uses port {8000 + 10 * i + version}", type="environment",
                               key=f"borealis.port.{i}", provenance="user_stated")
        for m in stored[:40]:
            alice.remember(f"pinned rule {m.content}", type="procedure", pinned=True)
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


@pytest.mark.slow
@pytest.mark.parametrize("include_archived", [False, True])
def test_in_process_fusion_equals_the_sql_macro(world, include_archived):
    ranked = [assert_same(world, q, 40, include_archived) for q in QUERIES]
    # the fixture reaches every branch the comparison is meant to cover
    assert any(r["bm25_rank"] is None for rows in ranked for r in rows)  # vector-only hits
    assert any(r["vec_rank"] is None for rows in ranked for r in rows)  # keyword-only hits
    assert any(r["tier_weight"] < 1 for rows in ranked for r in rows)  # archived rows
    assert any(r["feedback_weight"] < 1 for rows in ranked for r in rows)  # unhelpful marks
    assert {r["scope"] for rows in ranked for r in rows} >= {"private", "team", "public", "tenant", "session"}
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
    for name, value in [("keyword_pool", 5), ("vector_pool", 7), ("rrf_k", 10), ("keyword_score_power", 0),
                        ("vector_score_power", 2), ("gate_df_ratio", 0.01), ("importance_floor", 0.9)]:
        world.sql("UPDATE settings SET value = $v WHERE name = $n", {"v": value, "n": name}, write=True)
        for q in QUERIES[:10]:
            assert_same(world, q, 10)


def test_gates_are_applied_the_same_way(world):
    def kept_per_query() -> list[int]:
        return [len(assert_same(world, q, 1000)) for q in QUERIES]

    world.sql("UPDATE settings SET value = 1 WHERE name = 'gate_df_ratio'", write=True)
    world.sql("UPDATE settings SET value = 0 WHERE name = 'vector_min_similarity'", write=True)
    ungated = kept_per_query()
    # every keyword-only match now counts as common, and most vector-only ones as weak
    world.sql("UPDATE settings SET value = 0.001 WHERE name = 'gate_df_ratio'", write=True)
    world.sql("UPDATE settings SET value = 0.3 WHERE name = 'vector_min_similarity'", write=True)
    gated = kept_per_query()
    assert sum(gated) < sum(ungated)
    assert all(g <= u for g, u in zip(gated, ungated))


def test_recall_uses_the_in_process_path_and_returns_what_sql_ranks(world):
    for q in QUERIES[:10]:
        hits = world.recall(q, 10, reinforce=False, explain=True)
        expected, _ = both_rankings(world, q, 10, False)
        assert [h.id for h in hits] == [str(r["id"]) for r in expected]
        assert [h.score for h in hits] == [r["score"] for r in expected]
        assert all(h.explanation.vector_arm == "exact (in-process)" for h in hits)


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
               p_caller_tenants=tenants)
    compared = 0
    for f in FILTERED:
        params = {f"p_{name}": f.get(name) for name in ("types", "tiers", "tags", "entities", "since", "until", "session")}
        for query in QUERIES[:12]:
            keyword = world.indexer.keyword_search.search(query_text(query), None)  # every match
            vec_ids, vec_sims = world.recaller.eligibility.vector_candidates(
                vectors.search, vectors.embed([query])[0], vector_pool * OVERFETCH, who=who,
                include_superseded=include_archived, filters={k[2:]: v for k, v in params.items()})
            shape = text.query_shape(query)
            got = world.recaller._fused_in_process(keyword, vec_ids, vec_sims, who, include_archived, shape, 30,
                                                   {k[2:]: v for k, v in params.items()}, settings)
            sims = [float(s) for s in vec_sims]
            expected = world.db.dicts(
                "recall", **keyword.as_sql(), p_vec_ids="[" + ",".join(vec_ids) + "]" if vec_ids else None,
                p_vec_sims="[" + ",".join(map(repr, sims)) + "]" if vec_ids else None, **who, p_k=30,
                p_entropy=1.0 if shape is None else None, p_shape=shape_literal(shape), **params,
                p_include_superseded=include_archived, p_now=world.now())
            assert [str(r["id"]) for r in got] == [str(r["id"]) for r in expected], (f, query)
            for g, e in zip(got, expected):
                for field in FIELDS:
                    assert g[field] == e[field] or (_nan(g[field]) and _nan(e[field])), (f, query, field)
            compared += len(expected)
    assert compared > 100
