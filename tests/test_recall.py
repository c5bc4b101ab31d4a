"""Hybrid recall (echo_duck/recall/hybrid.py, sql/macros/40_recall.sql): fusion math, the gate, entropy
weighting, decay, archived and superseded rows, filters, scope isolation, reinforcement, feedback,
conflicts, the keyword-only fallback, and the real ONNX model."""

from __future__ import annotations

import math
import uuid
import warnings
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import echo_duck
from echo_duck import InvalidInput
from echo_duck.index import quantised_scan
from echo_duck.bench import synthetic
from echo_duck.index.keyword import query_text
from echo_duck.models import TYPES
from echo_duck.recall.hits import RecallQuery
from echo_duck.recall.hybrid import _conflicts_by_side
from echo_duck.text.when import text_script
from echo_duck.write.writer import Caller, prepare

T0 = datetime(2026, 1, 1, 12, 0, 0)  # the start of conftest.Clock


def ids(hits) -> list[str]:
    return [h.id for h in hits]


def set_setting(mem, name: str, value: float) -> None:
    mem.sql("UPDATE settings SET value = $v WHERE name = $n", {"v": value, "n": name}, write=True)


FILLER = ("Grafana dashboards show p95 latency", "The coffee machine sits on floor three",
          "新同事下周一入职", "Invoices go out quarterly", "The office wifi password rotates monthly")


def add_filler(mem) -> None:
    """Unrelated memories, so a word in one or two test memories is rare (the gate keeps it)."""
    mem.remember_many([dict(content=t, type="environment") for t in FILLER])


@pytest.fixture
def hmem(db_path, clock):
    """A store with the fast deterministic hash embedder and a controllable clock."""
    with echo_duck.open(db_path, embedder="hash", now=clock, admin=True) as m:
        yield m


# -- the calibrated relevance -------------------------------------------------------------------

def ranking_settings(mem) -> dict[str, float]:
    return dict(mem.sql("SELECT name, value FROM settings").rows())


def _relevance_by_hand(mem, query: str, hits) -> dict[str, float]:
    """calibrated_score (sql/macros/20_ranking.sql) recomputed from keyword_bm25, the stored vectors and the
    explain fields: max(keyword_conf × bm25 / bm25_max + 0.5 × coverage, script_credit) + 0.2 × vector_conf ×
    max(z, 0), script_credit = keyword_conf × (1.5 in another script than the question's, else 1) × max(z, 0) /
    the best z."""
    bm25 = {str(r[0]): r[1:] for r in mem.sql("SELECT memory_id::VARCHAR, score, covered_idf, query_idf_all "
                                              "FROM keyword_bm25($q, 'default', NULL, [], [])",
                                              {"q": query_text(query)}).rows()}
    vectors = mem.indexer.vectors
    qvec = vectors.embed([query])[0]
    stats = mem.sql("SELECT stats FROM query_similarity_stats($q, $m, 'default', NULL, [], [])",
                    {"q": "[" + ",".join(f"{x:.9g}" for x in qvec) + "]", "m": vectors.model_id}).item()
    bm25_max = max(v[0] for v in bm25.values()) if bm25 else None
    keyword_conf = max(v[1] / v[2] for v in bm25.values()) if bm25 else None
    z_top = max((h.explanation.similarity_z for h in hits if h.explanation.similarity_z is not None), default=None)
    out = {}
    for h in hits:
        e = h.explanation
        words = credit = meaning = 0.0
        if e.bm25_rank is not None:
            score, covered, idf_all = bm25[h.id]
            assert e.bm25_score == pytest.approx(score, rel=1e-9) and e.coverage == pytest.approx(covered / idf_all)
            assert e.keyword_conf == pytest.approx(keyword_conf, rel=1e-9)
            words = keyword_conf * score / bm25_max + 0.5 * covered / idf_all
        if e.vector_rank is not None:
            script = mem.sql("SELECT content_script(content) FROM memories WHERE id = $id", {"id": h.id}).item()
            z = (e.similarity - stats[2 * script]) / stats[2 * script + 1]
            assert e.similarity_z == pytest.approx(z, abs=1e-6)  # stats from the scan, exact at this size
            meaning = 0.2 * e.vector_conf * max(z, 0.0)
            if keyword_conf is not None and z_top > 0:
                credit = keyword_conf * (1.5 if script != text_script(query) else 1.0) * max(z, 0.0) / z_top
        total = max(words, credit) + meaning
        out[h.id] = total
    return out


def _deploy_store(mem):
    both = mem.remember("The deploy key lives in vault under ops/deploy", type="environment")
    kw_only = mem.remember("Rotate the deploy key every quarter", type="environment")
    add_filler(mem)
    return both, kw_only


QUERY = "where is the deploy key in vault?"


def test_relevance_is_the_calibrated_score_and_the_final_score_its_product(hmem):
    both, kw_only = _deploy_store(hmem)
    hits = hmem.recall(QUERY, explain=True, reinforce=False)
    assert ids(hits)[:2] == [both.id, kw_only.id]
    by_hand = _relevance_by_hand(hmem, QUERY, hits)
    s = ranking_settings(hmem)
    for h in hits:
        e = h.explanation
        assert e.relevance == pytest.approx(by_hand[h.id], abs=1e-6)
        assert (e.recency_boost, e.time_boost) == (1.0, 1.0)  # the question names no time
        assert e.decay_factor == pytest.approx(
            s["importance_floor"] + (1 - s["importance_floor"]) * e.effective_importance, abs=1e-12)
        assert h.score == pytest.approx(e.relevance * e.decay_factor * e.tier_weight * e.feedback_weight, rel=1e-12)
    e = hits[0].explanation
    assert e.coverage == pytest.approx(e.keyword_conf)  # the best match covers what the arm's best covers
    assert 0 < e.keyword_conf <= 1 and 0 <= e.vector_conf <= 1


def test_a_match_on_a_word_in_every_row_counts_for_little(hmem):
    """keyword_conf: a query whose only known word is in most rows (a user's name in a question in
    another language) is not a full keyword match; the coverage counts the terms no row has."""
    rows = hmem.remember_many([dict(content=f"Lin Wei likes {thing}", type="user")
                               for thing in ("tea", "hiking", "jazz", "chess", "rain", "trains")])
    named = hmem.recall("Lin Wei", explain=True, reinforce=False)
    other = hmem.recall("what does Lin Wei play on weekends, chess or go?", explain=True, reinforce=False)
    assert named[0].explanation.keyword_conf == pytest.approx(1.0)  # every word of the query is in the row
    assert other[0].id == rows[3].id  # chess
    e = other[0].explanation
    assert 0 < e.keyword_conf < 0.6 and e.coverage == pytest.approx(e.keyword_conf)
    weak = [h.explanation.coverage for h in other[1:] if h.explanation.coverage is not None]
    assert weak and max(weak) < e.coverage / 2  # "Lin Wei" alone: low IDF in a store where every row has it


# -- the gate (SPEC R4): labels and order, never a cut -------------------------------------------

def _project_store(mem) -> tuple[list, object]:
    common = mem.remember_many([dict(content=f"project note {i}: the {w} module", type="environment")
                                for i, w in enumerate(["billing", "search", "auth", "export", "import", "audit",
                                                       "mail", "cache", "queue", "upload", "report", "admin",
                                                       "login", "backup", "sync", "theme", "i18n", "metrics",
                                                       "alerts", "webhooks"])])
    unique = mem.remember("project zebra: the new pricing page", type="environment")
    return common, unique


def test_keyword_only_matches_on_a_common_term_come_last_not_gone(hmem):
    common, unique = _project_store(hmem)
    set_setting(hmem, "vector_pool", 1)  # the vector arm finds one row: every other candidate is keyword-only
    hits = hmem.recall("project zebra", k=50, explain=True, reinforce=False)
    assert hits[0].id == unique.id and hits[0].explanation.gate == "kept" and hits[0].explanation.vector_rank == 1
    assert len(hits) == 21  # 20 rows match only "project", which is in 21 of 21 rows: ranked after, not dropped
    assert {h.explanation.gate for h in hits[1:]} == {"ranked last: only common keywords"}
    set_setting(hmem, "gate_df_ratio", 1.0)  # no such label: the same rows, all kept
    again = hmem.recall("project zebra", k=50, explain=True, reinforce=False)
    assert sorted(ids(again)) == sorted(ids(hits)) and {h.explanation.gate for h in again} == {"kept"}


def test_weak_vector_only_matches_come_last_and_min_score_drops_them(hmem):
    add_filler(hmem)
    hmem.remember("the zzqx incident report is in the wiki", type="environment")
    hits = hmem.recall("zzqx unrelated gibberish", k=50, explain=True, reinforce=False)
    assert len(hits) == len(FILLER) + 1  # every row, the keyword match first
    assert hits[0].explanation.bm25_rank == 1 and hits[0].explanation.gate == "kept"
    gates = [h.explanation.gate for h in hits]
    assert gates == sorted(gates, key=lambda g: g != "kept")  # kept first
    assert all(h.explanation.similarity >= 0.2 for h in hits if h.explanation.gate == "kept"
               and h.explanation.bm25_rank is None)
    assert any(g == "ranked last: weak meaning match" for g in gates)
    # "nothing relevant": a floor on relevance leaves only the keyword match
    floor = hits[0].explanation.relevance / 2
    kept = hmem.recall("zzqx unrelated gibberish", k=50, explain=True, reinforce=False, min_score=floor)
    assert ids(kept) == [hits[0].id] or all(h.explanation.relevance >= floor for h in kept)
    assert hmem.recall("zzqx unrelated gibberish", k=50, reinforce=False, min_score=10) == []
    for bad in ("0.5", float("nan"), True, [1]):
        with pytest.raises(InvalidInput, match="min_score"):
            hmem.recall("zzqx", min_score=bad)


# -- decay, archived and superseded rows (SPEC R6) -----------------------------------------------

def test_stale_environment_memory_ranks_below_an_equally_relevant_fresh_one(hmem, clock):
    old = hmem.remember("The deploy key lives in vault path alpha", type="environment")
    clock.advance(days=365)
    fresh = hmem.remember("The deploy key lives in vault path bravo", type="environment")
    add_filler(hmem)
    hits = hmem.recall("deploy key vault path", explain=True, reinforce=False)
    assert ids(hits)[:2] == [fresh.id, old.id]
    e_old, e_fresh = hits[1].explanation, hits[0].explanation
    assert e_fresh.effective_importance == pytest.approx(0.5)
    assert e_old.effective_importance == pytest.approx(0.5 * 0.5 ** (365 / 30), rel=1e-9)
    assert e_old.decay_factor < e_fresh.decay_factor


def test_user_memories_do_not_decay(hmem, clock):
    old = hmem.remember("The user keeps the deploy key in vault path alpha", type="user")
    pinned = hmem.remember("The pinned deploy key note for vault path charlie", type="environment", pinned=True)
    clock.advance(days=365)
    fresh = hmem.remember("The user keeps the deploy key in vault path bravo", type="environment")
    add_filler(hmem)
    hits = {h.id: h.explanation for h in hmem.recall("deploy key vault path", explain=True, reinforce=False)}
    assert hits[old.id].effective_importance == pytest.approx(0.5)
    assert hits[pinned.id].effective_importance == pytest.approx(0.5)
    assert hits[old.id].decay_factor == pytest.approx(hits[fresh.id].decay_factor)


def test_archival_rows_are_weighted_down(hmem):
    a = hmem.remember("The deploy key lives in vault path alpha", type="environment")
    b = hmem.remember("The deploy key lives in vault path bravo", type="environment")
    add_filler(hmem)
    before = {h.id: h for h in hmem.recall("deploy key vault path", explain=True, reinforce=False)}
    top = ids(hmem.recall("deploy key vault path", reinforce=False))[0]
    demoted = top
    hmem.sql("UPDATE memories SET tier = 'archival' WHERE id = $id", {"id": demoted}, write=True)
    hits = hmem.recall("deploy key vault path", explain=True, reinforce=False)
    by_id = {h.id: h for h in hits}
    assert by_id[demoted].explanation.tier_weight == 0.5
    assert by_id[demoted].score == pytest.approx(before[demoted].score * 0.5)
    other = b.id if demoted == a.id else a.id
    assert ids(hits).index(other) < ids(hits).index(demoted)


def test_superseded_versions_are_hidden_unless_include_archived(hmem):
    v1 = hmem.remember("The project uses npm workspaces", type="environment", key="package_manager")
    v2 = hmem.remember("The project uses pnpm workspaces", type="environment", key="package_manager")
    add_filler(hmem)
    assert v1.id not in ids(hmem.recall("npm workspaces", k=50, reinforce=False))
    hits = hmem.recall("npm workspaces", k=50, include_archived=True, explain=True, reinforce=False)
    by_id = {h.id: h for h in hits}
    assert v1.id in by_id and v2.id in by_id
    assert by_id[v1.id].memory.status == "superseded"
    assert by_id[v1.id].explanation.tier_weight == 0.5


def test_forgotten_and_pending_memories_are_never_recalled(hmem):
    gone = hmem.remember("The deploy key lives in vault path alpha", type="environment")
    hmem.forget(gone.id)
    hmem.remember("answer in Chinese", type="user", key="lang", provenance="user_stated")
    spec = prepare(hmem.caller, "answer in English", type="user", key="lang", provenance="consolidated")
    pending = hmem.writer.remember(hmem.caller, spec, on_lower_provenance="record")
    add_filler(hmem)
    for include in (False, True):
        options = dict(k=50, include_archived=include, reinforce=False)
        assert gone.id not in ids(hmem.recall("deploy key vault alpha", **options))
        assert pending.id not in ids(hmem.recall("answer in English", **options))


# -- filters -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def filtered_store(tmp_path_factory):
    """Built once: every filter test only reads it (reinforce=False)."""
    with echo_duck.open(tmp_path_factory.mktemp("filters") / "mem.duckdb", embedder="hash", now=T0, admin=True) as mem:
        m1 = mem.remember("widget colour preference is teal", type="user", tags=["ui"], entities=["Alice"],
                          observed_at=T0 - timedelta(days=10), source_session="s1")
        m2 = mem.remember("widget builds run on the ops runner", type="environment", tags=["ops", "ui"],
                          entities=["Bob"], observed_at=T0 - timedelta(days=5), source_session="s2")
        m3 = mem.remember("widget release checklist: tag, build, publish", type="procedure", tags=["ops"],
                          entities=["Alice", "Bob"], observed_at=T0 - timedelta(days=1), source_session="s1")
        m4 = mem.remember("I tend to over-explain widget internals", type="self", tier="episodic")
        add_filler(mem)
        yield mem, {"m1": m1.id, "m2": m2.id, "m3": m3.id, "m4": m4.id}


@pytest.mark.parametrize("filters, expected", [
    ({}, {"m1", "m2", "m3", "m4"}),
    ({"types": ["user", "procedure"]}, {"m1", "m3"}),
    ({"types": "self"}, {"m4"}),
    ({"tiers": ["episodic"]}, {"m4"}),
    ({"tiers": ["semantic"]}, {"m1", "m2", "m3"}),
    ({"tags": ["ops"]}, {"m2", "m3"}),
    ({"tags": ["ops", "ui"]}, {"m2"}),
    ({"entities": ["Alice"]}, {"m1", "m3"}),
    ({"entities": ["Alice", "Bob"]}, {"m1", "m2", "m3"}),
    ({"since": T0 - timedelta(days=6)}, {"m2", "m3", "m4"}),
    ({"until": T0 - timedelta(days=2)}, {"m1", "m2"}),
    ({"since": T0 - timedelta(days=6), "until": T0 - timedelta(days=2)}, {"m2"}),
    ({"session": "s1"}, {"m1", "m3"}),
    ({"session": "s9"}, set()),
    ({"types": ["procedure"], "tags": ["ops"], "session": "s1"}, {"m3"}),
])
def test_filters(filtered_store, filters, expected):
    mem, names = filtered_store
    hits = mem.recall("widget", k=50, explain=True, reinforce=False, **filters)
    widget_ids = {names[n] for n in expected}
    assert {h.id for h in hits if "widget" in h.content} == widget_ids
    if filters:
        # filters apply to both arms: every hit is one the filters keep (the unrelated filler only as a weak
        # meaning match, ranked after the widget rows)
        kept = [h for h in hits if h.explanation.gate == "kept"]
        assert {h.id for h in kept} == widget_ids and ids(hits)[:len(kept)] == ids(kept)
        assert all(h.content in FILLER and h.memory.type == "environment" and h.memory.tier == "semantic"
                   for h in hits[len(kept):])
        assert len(hits) == len(kept) or filters.keys() <= {"tiers", "since", "until", "types"}
        assert all(h.explanation.vector_arm == "exact (in-process, filtered)" for h in hits)
        with mem.db.transaction("comparing"):  # there the SQL arms and recall_fused decide
            in_sql = mem.recall("widget", k=50, explain=True, reinforce=False, **filters)
        assert {h.id for h in in_sql} == {h.id for h in hits}
        assert all(h.explanation.vector_arm == "exact (sql)" for h in in_sql)
    else:
        assert all(h.explanation.vector_arm == "exact (in-process)" for h in hits)


# -- scope isolation (SPEC R8): a property test ---------------------------------------------------

AGENTS = ("a0", "a1")
GROUPS = ("g0", "g1")
SESSIONS = (None, "s0", "s1")
WORDS = ("deploy", "billing", "backup", "pricing", "数据库", "例会")

memory_st = st.tuples(
    st.sampled_from(AGENTS),
    st.sampled_from(("private", "session", "team", "tenant", "public")),
    st.sampled_from(GROUPS),
    st.sampled_from(SESSIONS),
    st.booleans(),  # tagged 'global'
    st.sampled_from(WORDS),
    st.sampled_from(TYPES),
)
membership_st = st.frozensets(st.tuples(st.sampled_from(AGENTS), st.sampled_from(("team", "tenant")),
                                        st.sampled_from(GROUPS)))


def can_see(m: dict, agent: str, session: str | None, memberships: set) -> bool:
    """sql/macros/10_scope.sql, restated independently."""
    if m["scope"] == "public":
        return True
    if m["scope"] == "private":
        return m["agent"] == agent
    if m["scope"] == "session":
        return m["agent"] == agent and (m["session"] is None or m["session"] == session or m["global"])
    return (agent, m["scope"], m["group"]) in memberships


@pytest.fixture
def scope_world(tmp_path):
    """One store for every example; each example uses its own agent and group names."""
    with echo_duck.open(tmp_path / "scopes.duckdb", embedder="hash", admin=True) as mem:
        set_setting(mem, "gate_df_ratio", 1.0)  # the gate is not under test here; keep every keyword match
        yield {"mem": mem, "memories": {}, "memberships": set(), "n": 0}


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(memories=st.lists(memory_st, min_size=1, max_size=8), memberships=membership_st,
       word=st.sampled_from(WORDS), filtered=st.booleans())
@pytest.mark.slow
def test_no_recall_returns_a_memory_outside_the_callers_scope(scope_world, memories, memberships, word, filtered):
    """Random memories in random scopes and memberships; every caller (agent x session) asks."""
    mem, world = scope_world["mem"], scope_world
    world["n"] += 1
    x = f"x{world['n']}"  # this example's namespace: agents, groups and unique words
    name = lambda s: None if s is None else f"{x}{s}"  # noqa: E731
    written, specs = [], {}
    for i, (agent, scope, group, session, tag_global, word, type_) in enumerate(memories):
        caller = Caller(agent_id=name(agent))
        if scope in ("team", "tenant"):  # the writer must be a member with the right to publish there
            mem.grant(**{scope: name(group)}, agent_id=caller.agent_id, publish=True)
        elif scope == "public":
            mem.grant_right(caller.agent_id, "publish:public")
        spec = prepare(caller, f"{word} note {x}u{i} {x}all", type=type_, scope=scope, source_session=name(session),
                       tags=["global"] if tag_global else [],
                       team_id=name(group) if scope == "team" else None,
                       tenant_id=name(group) if scope == "tenant" else None)
        record = {"agent": caller.agent_id, "scope": scope, "group": name(group), "session": name(session),
                  "global": tag_global}
        specs.setdefault(caller.agent_id, []).append((spec, record))
    for agent_id, pairs in specs.items():  # one transaction per writer
        stored = mem.writer.remember_many(Caller(agent_id=agent_id), [spec for spec, _ in pairs])
        for m, (_, record) in zip(stored, pairs):
            world["memories"][m.id] = record
            if m.status != "quarantined":  # a note the scanner holds for review is never recalled
                written.append((m.id, record))
    # the final memberships of this example's agents are exactly the drawn ones
    for agent in AGENTS:
        for kind in ("team", "tenant"):
            for group in GROUPS:
                member = (agent, kind, group) in memberships
                getattr(mem, "grant" if member else "revoke")(**{kind: name(group)}, agent_id=name(agent))
                key = (name(agent), kind, name(group))
                world["memberships"].add(key) if member else world["memberships"].discard(key)

    mine = {memory_id for memory_id, _ in written}
    types = list(TYPES) if filtered else None  # any filter switches recall to the SQL vector arm
    for agent in AGENTS:
        for session in SESSIONS:
            caller = Caller(agent_id=name(agent), session_id=name(session))
            # "{x}all" is in every memory of this example (and the vector arm adds others' memories)
            got = ids(mem.recaller.recall(caller, RecallQuery.build(f"{word} {x}all", k=200, types=types,
                                                                    reinforce=False)))
            for memory_id in got:
                assert can_see(world["memories"][memory_id], caller.agent_id, caller.session_id,
                               world["memberships"]), (memory_id, world["memories"][memory_id], caller)
            expected = {m for m, record in written
                        if can_see(record, caller.agent_id, caller.session_id, world["memberships"])}
            assert set(got) & mine == expected, (caller, written)


# -- reinforcement (SPEC R10) --------------------------------------------------------------------

def test_reinforcement_persists_across_reopen(db_path, clock):
    with echo_duck.open(db_path, embedder="hash", now=clock, admin=True) as mem:
        hit_me = mem.remember("The deploy key lives in vault", type="environment")
        other = mem.remember("Invoices go out quarterly", type="environment")
        clock.advance(days=3)
        hits = mem.recall("deploy key vault", k=1)
        assert ids(hits) == [hit_me.id] and hits[0].recall_id is not None
        recall_id = hits[0].recall_id
    with echo_duck.open(db_path, embedder="hash", now=clock, admin=True) as mem:
        got = mem.get(hit_me.id)
        assert (got.access_count, got.last_accessed) == (1, clock.now)
        assert mem.get(other.id).access_count == 0
        log = mem.sql("SELECT agent_id, query, k, memory_ids::VARCHAR[] AS ids, scores, reinforced, occurred_at, "
                      "model_id FROM recall_log WHERE id = $id", {"id": recall_id}).row(0, named=True)
        assert log["agent_id"] == "default" and log["query"] == "deploy key vault" and log["k"] == 1
        assert log["ids"] == [hit_me.id] and log["reinforced"] is True
        assert log["scores"] == pytest.approx([hits[0].score])
        assert (log["occurred_at"], log["model_id"]) == (clock.now, "hash-64")


def test_reinforce_false_leaves_counts_alone_but_is_logged(db_path, clock):
    with echo_duck.open(db_path, embedder="hash", now=clock, admin=True) as mem:
        m = mem.remember("The deploy key lives in vault", type="environment")
        for _ in range(3):
            assert ids(mem.recall("deploy key vault", reinforce=False)) == [m.id]
    with echo_duck.open(db_path, embedder="hash", now=clock, admin=True) as mem:
        got = mem.get(m.id)
        assert (got.access_count, got.last_accessed) == (0, None)
        assert mem.sql("SELECT count(*) FROM recall_log WHERE NOT reinforced").item() == 3


def test_reinforcement_slows_decay(hmem, clock):
    a = hmem.remember("The deploy key lives in vault path alpha", type="environment")
    b = hmem.remember("The deploy key lives in vault path bravo", type="environment")
    add_filler(hmem)
    for _ in range(3):
        hmem.recall("vault path alpha", k=1)  # reinforces a only
    clock.advance(days=60)
    hits = {h.id: h.explanation for h in hmem.recall("deploy key vault path", explain=True, reinforce=False)}
    assert hits[a.id].effective_importance > hits[b.id].effective_importance


# -- outcome feedback (SPEC R13) -----------------------------------------------------------------

def test_unhelpful_marks_lower_the_weight_and_the_rank(hmem):
    a = hmem.remember("The deploy key lives in vault path alpha", type="environment")
    b = hmem.remember("The deploy key lives in vault path bravo", type="environment")
    add_filler(hmem)
    first = hmem.recall("deploy key vault path", explain=True, reinforce=False)
    top, second = first[0], first[1]
    assert {top.id, second.id} == {a.id, b.id}
    weights, scores = [], []
    hit = top
    for _ in range(3):  # three recalls, each hit found unhelpful
        marked = hmem.mark(hit, helpful=False)
        hit = {h.id: h for h in hmem.recall("deploy key vault path", explain=True, reinforce=False)}[top.id]
        weights.append(hit.explanation.feedback_weight)
        scores.append(hit.score)
    assert marked.unhelpful_count == 3
    assert weights == pytest.approx([0.8, 0.64, 0.512])
    assert scores[0] > scores[1] > scores[2]
    assert ids(hmem.recall("deploy key vault path", reinforce=False))[:2] == [second.id, top.id]
    assert hmem.mark(top, helpful=False).unhelpful_count == 3  # the first recall's hit again: one outcome, told twice
    assert hmem.sql("SELECT count(*) FILTER (counted) AS counted, count(*) AS told FROM memory_feedback "
                    "WHERE NOT helpful AND recall_id = $r", {"r": top.recall_id}).row() == (1, 2)


def test_helpful_marks_raise_confidence_and_offset_unhelpful_ones(hmem):
    m = hmem.remember("The deploy key lives in vault", type="environment", confidence=0.8)
    hmem.mark(m.id, helpful=False)
    after = hmem.mark(m.id, helpful=True)
    assert after.confidence == pytest.approx(0.82)
    assert (after.helpful_count, after.unhelpful_count) == (1, 1)
    assert hmem.mark(m.id, helpful=True).confidence == pytest.approx(0.838)
    hit = hmem.recall("deploy key vault", explain=True, reinforce=False)[0]
    assert hit.explanation.feedback_weight == 1.0  # net helpful: no penalty
    with pytest.raises(InvalidInput):
        hmem.mark(m.id, helpful="no")


# -- conflicts (SPEC R11) ------------------------------------------------------------------------

def test_pending_contradiction_is_shown_on_the_hit(hmem):
    truth = hmem.remember("Always answer in Chinese", type="user", key="lang", provenance="user_stated")
    spec = prepare(hmem.caller, "Always answer in English", type="user", key="lang", provenance="consolidated")
    pending = hmem.writer.remember(hmem.caller, spec, on_lower_provenance="record")
    calm = hmem.remember("Answer briefly", type="user")
    add_filler(hmem)
    hits = {h.id: h for h in hmem.recall("answer language", k=50, reinforce=False)}
    assert hits[truth.id].conflicts_with == (pending.id,)
    assert hits[calm.id].conflicts_with == ()
    hmem.sql("UPDATE contradictions SET status = 'resolved', resolution = 'user', "
             "resolved_at = TIMESTAMP '2026-01-02'", write=True)
    hits = {h.id: h for h in hmem.recall("answer language", k=50, reinforce=False)}
    assert hits[truth.id].conflicts_with == ()


def test_several_pending_contradictions_are_listed_as_the_recall_macro_lists_them(hmem, clock):
    """Oldest first, then by id; resolved ones left out. The in-process path reads them with a query of
    its own (recall_conflicts); inside a transaction a filtered recall gets them from recall_fused."""
    truth = hmem.remember("Always answer in Chinese", type="user", key="lang", provenance="user_stated")
    other = hmem.remember("Deploy on Fridays", type="environment", key="deploy", provenance="user_stated")

    def challenge(content, key="lang"):
        spec = prepare(hmem.caller, content, type="user" if key == "lang" else "environment", key=key,
                       provenance="consolidated")
        return hmem.writer.remember(hmem.caller, spec, on_lower_provenance="record")

    first, second = challenge("Always answer in English"), challenge("Always answer in French")  # same instant
    clock.advance(minutes=5)
    third = challenge("Always answer in German")
    challenge("Never deploy on Fridays", key="deploy")
    clock.advance(minutes=5)
    resolved = challenge("Always answer in Dutch")
    hmem.sql("UPDATE contradictions SET status = 'resolved', resolution = 'user', resolved_at = TIMESTAMP '2026-01-02' "
             "WHERE memory_b = $id OR memory_a = $id", {"id": resolved.id}, write=True)
    add_filler(hmem)
    hits = {h.id: h.conflicts_with for h in hmem.recall("answer language deploy Fridays", k=50, reinforce=False)}
    assert hits[truth.id] == (*sorted([first.id, second.id]), third.id)
    assert len(hits[other.id]) == 1 and all(resolved.id not in c for c in hits.values())
    with hmem.db.transaction("comparing with the macro"):
        in_sql = hmem.recall("answer language deploy Fridays", k=50, reinforce=False, types=["user", "environment"])
    assert {h.id: h.conflicts_with for h in in_sql} == hits


def test_pending_conflicts_are_listed_per_winner_by_detection_time_then_other_id():
    """The rows recall_conflicts returns, either side a winner, listed as recall_fused lists them."""
    winner, loser = "00000000-0000-0000-0000-00000000000a", "00000000-0000-0000-0000-00000000000b"
    low, high, late = (uuid.UUID(int=n) for n in (1, 2, 3))
    noon, later = datetime(2026, 1, 1, 12), datetime(2026, 1, 1, 13)
    pending = [(uuid.UUID(winner), late, noon, True), (high, uuid.UUID(winner), noon, False),
               (uuid.UUID(winner), low, later, True), (uuid.UUID(loser), uuid.UUID(winner), later, True),
               (low, high, noon, True)]  # the last touches no winner
    listed = _conflicts_by_side(pending, {winner: {}, loser: {}})
    assert listed == [(winner, high, False), (winner, late, True), (winner, low, True), (winner, uuid.UUID(loser), True),
                      (loser, uuid.UUID(winner), True)]


# -- keyword-only fallback -----------------------------------------------------------------------

def test_keyword_only_fallback_warns_once_and_says_so(db_path):
    with echo_duck.open(db_path, embedder="none", admin=True) as mem:
        m = mem.remember("The deploy key lives in vault", type="environment")
        add_filler(mem)
        assert mem.sql("SELECT count(*) FROM memory_vectors").item() == 0
        with pytest.warns(RuntimeWarning, match="pip install") as record:
            hits = mem.recall("deploy key vault", explain=True)
        assert len([w for w in record if issubclass(w.category, RuntimeWarning)]) == 1
        assert ids(hits) == [m.id]
        e = hits[0].explanation
        assert e.vector_arm.startswith("unavailable")
        assert (e.vector_rank, e.similarity, e.bm25_rank) == (None, None, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a second warning would raise here
            assert ids(mem.recall("deploy key vault", types=["environment"])) == [m.id]
        with pytest.raises(echo_duck.EchoDuckError, match="pip install"):
            mem.reembed()


def test_keyword_only_recall_finds_the_only_memory(db_path):
    """With no model the gate has no vector arm to defer to: a keyword match must still come back."""
    with echo_duck.open(db_path, embedder="none", admin=True) as mem:
        m = mem.remember("The deploy key lives in vault", type="environment")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            assert ids(mem.recall("vault")) == [m.id]


# -- odd queries and read-only stores -------------------------------------------------------------

@pytest.fixture(scope="module")
def odd_store(tmp_path_factory):
    with echo_duck.open(tmp_path_factory.mktemp("odd") / "mem.duckdb", embedder="hash", admin=True) as mem:
        m = mem.remember("The deploy key lives in vault", type="environment")
        add_filler(mem)
        yield mem, m


@pytest.mark.parametrize("query", ["???", "the of and", "🙂", "%", "'; DROP TABLE memories; --", "vault " * 1600,
                                   "ＶＡＵＬＴ", "Vault's", "$p_query"])
def test_odd_queries_are_just_text(odd_store, query):
    mem, m = odd_store
    hits = mem.recall(query, explain=True, reinforce=False)
    assert len(hits) == 1 + len(FILLER)  # a small store: every row, the weak ones ranked last
    assert {h.explanation.gate for h in hits} <= {"kept", "ranked last: weak meaning match"}
    if "vault" in query.lower() or "ＶＡＵＬＴ" in query:
        assert ids(hits)[0] == m.id and hits[0].explanation.bm25_rank == 1
    assert mem.sql("SELECT count(*) FROM memories").item() == 1 + len(FILLER)


def test_read_only_store_recalls_without_writing(db_path, clock):
    with echo_duck.open(db_path, embedder="hash", now=clock, admin=True) as mem:
        m = mem.remember("The deploy key lives in vault", type="environment")
        add_filler(mem)
    with echo_duck.open(db_path, embedder="hash", now=clock, read_only=True, admin=True) as mem:
        hits = mem.recall("deploy key vault", explain=True)
        assert ids(hits)[0] == m.id and hits[0].recall_id is None
        assert hits[0].explanation.vector_rank == 1
        assert mem.get(m.id).access_count == 0
        assert mem.sql("SELECT count(*) FROM recall_log").item() == 0


# -- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("query, kwargs", [
    ("deploy", {"k": 0}), ("deploy", {"k": "x"}), ("deploy", {"k": True}), ("deploy", {"k": 1001}),
    ("deploy", {"types": "robot"}), ("deploy", {"types": ["user", "robot"]}), ("deploy", {"tiers": "cold"}),
    ("", {}), ("   ", {}), (None, {}), ("deploy", {"since": "yesterday"}), ("deploy", {"include_archived": 1}),
    ("deploy", {"explain": "yes"}), ("deploy", {"reinforce": None}), ("deploy", {"tags": "ops"}),
])
def test_bad_input_raises_invalid_input(filtered_store, query, kwargs):
    mem, _ = filtered_store
    with pytest.raises(InvalidInput):
        mem.recall(query, **kwargs)


# -- the real ONNX model (the default embedder) ---------------------------------------------------

@pytest.fixture(scope="module")
def onnx_mem(tmp_path_factory):
    """Built once; the tests only read it (reinforce=False)."""
    path = tmp_path_factory.mktemp("onnx") / "mem.duckdb"
    with echo_duck.open(path, now=T0, admin=True) as mem:  # embedder="default": USE-multilingual ONNX
        assert mem.indexer.vectors is not None and mem.indexer.vectors.model_id == "use-multilingual-v3-int8"
        mem.remember_many([
            dict(content="项目使用 pnpm 管理依赖", type="environment"),
            dict(content="用户喜欢深色主题", type="user"),
            dict(content="数据库每周五凌晨自动备份", type="environment"),
            dict(content="The user prefers short answers without emojis", type="user"),
            dict(content="Deploys go through ArgoCD on the staging cluster", type="environment"),
            dict(content="Run the test suite with pytest -x before every commit", type="procedure"),
            dict(content="The office coffee machine is on the third floor", type="environment"),
            dict(content="Invoices are sent to customers at the end of each quarter", type="environment"),
        ])
        yield mem


def test_onnx_chinese_query_finds_chinese_memory(onnx_mem):
    hits = onnx_mem.recall("数据库什么时候备份？", k=3, explain=True, reinforce=False)
    assert hits[0].content == "数据库每周五凌晨自动备份"
    hits = onnx_mem.recall("编辑器的颜色偏好", k=3, explain=True, reinforce=False)  # shares no word with it
    assert hits[0].content == "用户喜欢深色主题"
    assert hits[0].explanation.bm25_rank is None and hits[0].explanation.vector_rank == 1


def test_onnx_cross_lingual_query(onnx_mem):
    hits = onnx_mem.recall("which package manager does the project use?", k=3, explain=True, reinforce=False)
    assert hits[0].content == "项目使用 pnpm 管理依赖"
    assert hits[0].explanation.bm25_rank is None  # found by meaning alone
    hits = onnx_mem.recall("咖啡机在哪里？", k=3, explain=True, reinforce=False)
    assert hits[0].content == "The office coffee machine is on the third floor"
    assert hits[0].explanation.bm25_rank is None


def test_onnx_explain_fields_are_populated(onnx_mem):
    hits = onnx_mem.recall("how do deploys reach staging?", k=3, explain=True, reinforce=False)
    top = hits[0]
    assert top.content == "Deploys go through ArgoCD on the staging cluster"
    e = top.explanation
    assert e.vector_arm == "exact (in-process)"
    assert isinstance(e.bm25_rank, int) and isinstance(e.vector_rank, int)
    for value in (e.bm25_score, e.similarity, e.keyword_conf, e.vector_conf, e.coverage, e.similarity_z, e.relevance,
                  e.recency_boost, e.time_boost, e.effective_importance, e.decay_factor, e.tier_weight,
                  e.feedback_weight):
        assert isinstance(value, float) and math.isfinite(value), value
    assert 0 < e.similarity <= 1 and 0 < e.keyword_conf <= 1 and 0 <= e.vector_conf <= 1 and e.similarity_z > 0
    assert e.gate == "kept" and e.provenance == "model_inferred" and e.source_refs == ()
    assert e.rerank is None and e.rerank_score is None
    assert top.to_dict()["explanation"]["vector_rank"] == e.vector_rank


@pytest.mark.parametrize("query, types", [
    ("which package manager does the project use?", ["environment"]),
    ("how do deploys reach staging?", ["environment", "procedure"]),
    ("what does the user like?", ["user"]),
])
def test_onnx_filtered_queries_agree_in_process_and_in_sql(onnx_mem, query, types):
    unfiltered = onnx_mem.recall(query, k=8, explain=True, reinforce=False)
    filtered = onnx_mem.recall(query, k=8, types=types, explain=True, reinforce=False)
    assert {h.explanation.vector_arm for h in filtered} == {"exact (in-process, filtered)"}
    expected = [h for h in unfiltered if h.memory.type in types]
    assert filtered[0].id == expected[0].id
    # same vectors, same similarities: the filtered arm computes what the unfiltered scan does
    sims = {h.id: h.explanation.similarity for h in unfiltered}
    for h in filtered:
        if h.id in sims and sims[h.id] is not None:
            assert h.explanation.similarity == pytest.approx(sims[h.id], abs=1e-5)
    with onnx_mem.db.transaction("comparing"):  # inside a transaction both arms and the ranking run in SQL
        in_sql = onnx_mem.recall(query, k=8, types=types, explain=True, reinforce=False)
    assert {h.explanation.vector_arm for h in in_sql} == {"exact (sql)"}
    assert [h.id for h in in_sql] == [h.id for h in filtered]
    assert [h.score for h in in_sql] == pytest.approx([h.score for h in filtered], rel=1e-5)


@pytest.fixture(scope="module")
def onnx_synthetic(tmp_path_factory):
    """300 bilingual memories from the bench's generator, embedded with the real model, and a vector
    pool of 5 (20 candidates), so that the int8 first pass has rows to rule out."""
    with echo_duck.open(tmp_path_factory.mktemp("onnx300") / "mem.duckdb", now=T0, admin=True) as mem:
        mem.remember_many(synthetic.memories(300))
        mem.sql("UPDATE settings SET value = 5 WHERE name = 'vector_pool'", write=True)
        yield mem


# How far the int8 statistics may move a score: up to 0.2% here (the 7-bit queries of quantised_scan.py); two hits
# closer than that may change places, and the 10th place go to the 11th.
DRIFT = 1e-2


@pytest.mark.parametrize("filters", [{}, {"types": ["environment"]}, {"tags": ["ops"]}], ids=str)
def test_onnx_recall_is_the_same_with_the_int8_first_pass(onnx_synthetic, monkeypatch, filters):
    """Above 16,384 rows the vector arm packs full blocks as int8 (quantised_scan.py); here blocks of
    16 rows stand in. Every hit, rank and similarity must be the float32 scan's; the similarity statistics
    then come from the int8 scores of the packed rows, so scores move by a hair (and two hits that far apart
    may change places)."""
    mem, index = onnx_synthetic, onnx_synthetic.indexer.vectors
    queries = [q.text for q in synthetic.queries(12)]

    def recall_all():
        index.invalidate()  # reload the matrix, packed or not
        return [mem.recall(q, k=10, explain=True, reinforce=False, **filters) for q in queries]

    plain = recall_all()
    assert index._scan.sealed == 0
    monkeypatch.setattr(quantised_scan, "BLOCK_ROWS", 16)
    packed = recall_all()
    assert index._scan.sealed == 288
    for before, after in zip(plain, packed):
        # the same hits in the same order, but for two whose scores are within DRIFT of each other (the last
        # place may then go to the 11th)
        assert len(after) == len(before)
        for a, b in zip(after, before):
            assert a.id == b.id or a.score == pytest.approx(b.score, rel=DRIFT), (a.id, b.id)
        before_by_id = {h.id: h for h in before}
        both = [h for h in after if h.id in before_by_id]
        assert len(both) >= len(after) - 1
        assert [h.score for h in both] == pytest.approx([before_by_id[h.id].score for h in both], rel=DRIFT)
        assert [h.explanation.vector_rank for h in both] == [before_by_id[h.id].explanation.vector_rank for h in both]
        for a, b in ((a, before_by_id[a.id]) for a in both):
            assert (a.explanation.similarity is None) == (b.explanation.similarity is None)
            if a.explanation.similarity is not None:
                assert a.explanation.similarity == pytest.approx(b.explanation.similarity, abs=1e-6)
    assert sum(h.explanation.vector_rank is not None for hits in packed for h in hits) > 40
    if filters:  # and both equal the SQL path's (inside a transaction a filtered recall runs in SQL)
        with mem.db.transaction("comparing"):
            in_sql = [mem.recall(q, k=10, explain=True, reinforce=False, **filters) for q in queries]
        for hits, sql_hits in zip(plain, in_sql):  # the float32 scan's statistics are the SQL's
            assert [h.id for h in sql_hits] == [h.id for h in hits]
    index.invalidate()


# -- updates and time (issue 21) -------------------------------------------------------------------

def test_a_question_about_now_prefers_the_newest_and_one_naming_a_time_that_time(hmem, clock):
    add_filler(hmem)
    t = clock()
    old = hmem.remember("The team standup happens in room Tulip", type="environment", observed_at=t - timedelta(days=90))
    mid = hmem.remember("The team standup happens in room Orchid", type="environment", observed_at=t - timedelta(days=20))
    new = hmem.remember("The team standup happens in room Lotus", type="environment", observed_at=t + timedelta(days=18))
    clock.advance(days=20)  # now is in the month after the middle one
    plain = hmem.recall("team standup room", k=3, explain=True, reinforce=False)
    assert {h.explanation.recency_boost for h in plain} == {1.0} and {h.explanation.time_boost for h in plain} == {1.0}
    current = hmem.recall("which room is the team standup in now?", k=3, explain=True, reinforce=False)
    assert ids(current)[0] == new.id
    boosts = {h.id: h.explanation.recency_boost for h in current}
    assert boosts[new.id] > boosts[mid.id] > boosts[old.id] >= 1.0
    last_month = hmem.recall("which room was the team standup in last month?", k=3, explain=True, reinforce=False)
    assert ids(last_month)[0] == mid.id and last_month[0].explanation.time_boost == 1.5
    zh = hmem.recall("上个月 team standup 在哪个 room", k=3, explain=True, reinforce=False)
    assert {h.id for h in zh if h.explanation.time_boost > 1} == {mid.id}


def test_a_question_naming_a_date_or_a_holiday_prefers_what_was_observed_then(hmem, clock):
    add_filler(hmem)
    year = clock().year - 1
    october = hmem.remember("我们去黄山爬山了，住在山顶的酒店", type="environment", observed_at=datetime(year, 10, 3))
    may = hmem.remember("我们去泰山爬山了，住在山脚的酒店", type="environment", observed_at=datetime(year, 5, 2))
    holiday = hmem.recall("去年国庆我们去哪儿爬山了？", k=2, explain=True, reinforce=False)
    assert ids(holiday) == [october.id, may.id] and holiday[0].explanation.time_boost == 1.5
    # explain says which window the question named: 国庆 (1-7 October) and a week either side
    assert {h.explanation.time_window for h in holiday} == {(f"{year}-09-21T00:00:00", f"{year}-10-17T00:00:00")}
    dated = hmem.recall(f"{year}年5月2日我们去哪儿爬山了？", k=2, explain=True, reinforce=False)
    assert ids(dated)[0] == may.id and {h.id for h in dated if h.explanation.time_boost > 1} == {may.id}
    summer = hmem.recall("去年夏天我们去哪儿爬山了？", k=2, explain=True, reinforce=False)  # June-August: neither
    assert {h.explanation.time_boost for h in summer} == {1.0}
    assert summer[0].explanation.time_window == (f"{year}-06-01T00:00:00", f"{year}-09-01T00:00:00")
    plain = hmem.recall("我们去哪儿爬山了？", k=2, explain=True, reinforce=False)
    assert {h.explanation.time_window for h in plain} == {None}


def test_the_cli_explain_says_when_a_hit_was_observed_in_the_time_asked_about(tmp_path):
    from click.testing import CliRunner

    from echo_duck.cli.main import cli

    year = datetime.now().year - 1  # the CLI reads the wall clock: 去年 is last year
    with echo_duck.open(tmp_path / "trips.duckdb", agent_id="a") as mem:  # the real model
        mem.remember("我们去黄山爬山了，住在山顶的酒店", type="environment", observed_at=datetime(year, 10, 3))
        mem.remember("我们去泰山爬山了，住在山脚的酒店", type="environment", observed_at=datetime(year, 5, 2))
    said = CliRunner().invoke(cli, ["--db", str(tmp_path / "trips.duckdb"), "--agent", "a", "recall",
                                    "去年国庆我们去哪儿爬山了？", "-k", "2", "--explain", "--no-reinforce"])
    assert said.exit_code == 0, said.output
    lines = said.output.splitlines()
    noted = [i for i, line in enumerate(lines)
             if line.endswith(f"observed in the time the question names ({year}-09-21 to {year}-10-17)")]
    assert len(noted) == 1 and "黄山" in lines[noted[0] - 1]  # the October trip, not the May one


TOKYO = ["Calvin: the Tokyo concert was packed, the whole concert crowd sang along",
         "Calvin: we flew out to Tokyo for a concert last Saturday"]


def test_a_question_asking_when_prefers_a_memory_that_says_when(hmem):
    add_filler(hmem)
    crowd, saturday = (hmem.remember(t, type="environment") for t in TOKYO)
    how = hmem.recall("How was Calvin's concert in Tokyo?", k=2, explain=True, reinforce=False)
    assert ids(how) == [crowd.id, saturday.id] and {h.explanation.time_boost for h in how} == {1.0}
    when = hmem.recall("When was Calvin's concert in Tokyo?", k=2, explain=True, reinforce=False)
    assert ids(when) == [saturday.id, crowd.id]
    by_id = {h.id: h.explanation for h in when}
    assert by_id[saturday.id].time_boost == 1.5 and by_id[crowd.id].time_boost == 1.0
    assert by_id[saturday.id].relevance < by_id[crowd.id].relevance  # the boost decided, not the words


def test_onnx_a_question_asking_when_prefers_a_memory_that_says_when(tmp_path):
    with echo_duck.open(tmp_path / "when.duckdb", now=T0, admin=True) as mem:  # the real model
        add_filler(mem)
        crowd, saturday = (mem.remember(t, type="environment") for t in TOKYO)
        for question in ("When was Calvin's concert in Tokyo?", "Calvin 东京的演唱会是什么时候？"):
            hits = mem.recall(question, k=2, explain=True, reinforce=False)
            assert ids(hits) == [saturday.id, crowd.id], question
            assert [h.explanation.time_boost for h in hits] == [1.5, 1.0], question


def test_recency_never_lifts_a_superseded_version(hmem, clock):
    first = hmem.remember("deploys run from the release branch", type="procedure", key="deploy.branch",
                          provenance="user_stated")
    clock.advance(days=10)
    second = hmem.remember("deploys run from the main branch", type="procedure", key="deploy.branch",
                           provenance="user_stated")
    add_filler(hmem)
    hits = hmem.recall("which branch do deploys run from now?", k=5, explain=True, reinforce=False,
                       include_archived=True)
    by_id = {h.id: h.explanation for h in hits}
    assert hmem.get(first.id).status == "superseded" and by_id[first.id].recency_boost == 1.0
    assert by_id[second.id].recency_boost > 1.0 and ids(hits)[0] == second.id


def test_a_facts_older_versions_never_crowd_a_live_memory_out_of_the_vector_arm(tmp_path):
    # session 55 (reviewer AD): the in-process scan took the vector_pool × 4 nearest rows the caller may see, of any
    # status, and dropped superseded ones after: a fact updated more often than that hid a live memory the SQL
    # definition (exact_vector_candidates, eligible rows first) returns
    with echo_duck.open(tmp_path / "s.duckdb", embedder="hash", admin=True) as mem:
        mem.set_setting("vector_pool", 2)  # 8 candidates
        target = mem.remember("falcon launch window moved to friday", type="environment")
        mem.remember_many([{"content": f"misc note {w} about the office", "type": "environment"}
                           for w in ("alpha", "beta", "gamma")])
        for i in range(12):
            mem.remember(f"falcon launch checklist item number {i}", type="environment", key="falcon_status")
        hits = mem.recall("falcon launch checklist", 5, reinforce=False, arms=("vector",))
        assert target.id in [h.id for h in hits]
        with mem.db.transaction("the same recall in SQL"):  # inside a transaction recall runs the macros
            in_sql = mem.recall("falcon launch checklist", 5, reinforce=False, arms=("vector",))
        assert [h.id for h in in_sql] == [h.id for h in hits]


def test_recall_hits_takes_the_min_score_recall_takes(tmp_path):
    # session 55 (reviewer AD): recall(min_score=) filters before the k best are taken; recall_hits had no such
    # parameter, and filtering its rows on relevance afterwards gave another answer (here none)
    now = [T0]
    with echo_duck.open(tmp_path / "s.duckdb", embedder="hash", admin=True, now=lambda: now[0]) as mem:
        mem.remember("the heron project uses rust", type="user", importance=1.0)
        mem.remember("heron project: rust toolchain pinned", type="environment", importance=0.2)
        mem.remember_many([{"content": f"filler note {i} about lunch", "type": "environment"} for i in range(6)])
        now[0] = T0 + timedelta(days=400)
        q = "heron project rust toolchain"
        hits = mem.recall(q, 5, reinforce=False, arms=("keyword",), explain=True)
        low, high = sorted(h.explanation.relevance for h in hits[:2])
        floor = (low + high) / 2
        got = [h.id for h in mem.recall(q, 1, reinforce=False, arms=("keyword",), min_score=floor)]
        rows = mem.sql("SELECT id::VARCHAR AS id FROM recall_hits($q, NULL, NULL, 'default', NULL, 1, NULL, NULL, NULL, "
                       "NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, $now, p_min_score := $x)",
                       {"q": query_text(q), "now": mem.now(), "x": floor})
        assert got == rows["id"].to_list() and len(got) == 1
