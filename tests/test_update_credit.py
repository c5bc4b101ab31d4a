"""update_credit: on a question about the current state, a memory that says something changed (states_change) takes
the relevance of an older memory of the same owner that it changes (their vectors at least UPDATE_SIMILARITY close,
the older of no higher provenance), and recency then puts the newer first (sql/macros/40_recall.sql, recall_fused's
updates step). With the real model, in English and Chinese. tests/test_fusion.py holds the in-process ranking equal
to the macro, update_credit included."""

from __future__ import annotations

from datetime import datetime

import pytest

import echo_duck

GOLF, TESLA = "I drive a 2016 Volkswagen Golf to work.", "I sold the Golf and bought a Tesla Model 3 instead."
HAIER, MIDEA = "家里的冰箱是海尔的双门冰箱。", "冰箱换了，现在是美的十字对开门的。"
OTHERS = ["My sister lives in Lyon and teaches maths.", "I take the dog to the park every morning.",
          "周末常去超市买菜。", "I started learning Spanish on Duolingo."]
JANUARY, JUNE = datetime(2026, 1, 5), datetime(2026, 6, 1)


def _remember(mem, facts, provenance="user_stated"):
    mem.remember_many([dict(content=text, type="user", observed_at=at, provenance=provenance) for text, at in facts])


def _hits(mem, question: str) -> dict[str, object]:
    hits = mem.recall(question, 5, explain=True, reinforce=False)
    return {h.memory.content: (i, h.explanation) for i, h in enumerate(hits)}


@pytest.fixture
def store(tmp_path):
    with echo_duck.open(tmp_path / "updates.duckdb", agent_id="a") as mem:  # the default embedder: the real model
        _remember(mem, [(GOLF, JANUARY), (HAIER, JANUARY), *((t, JANUARY) for t in OTHERS)])
        yield mem


def test_a_change_answers_a_question_about_now(store):
    _remember(store, [(TESLA, JUNE), (MIDEA, JUNE)])
    for question, old, new in [("What car do I drive now?", GOLF, TESLA), ("家里现在用的是什么冰箱？", HAIER, MIDEA)]:
        hits = _hits(store, question)
        (rank_new, e_new), (rank_old, e_old) = hits[new], hits[old]
        assert (rank_new, rank_old) == (0, 1), question
        assert e_new.update_credit == e_old.relevance == e_new.relevance  # the older one's words, the newer's time
        assert e_new.recency_boost > e_old.recency_boost and e_old.update_credit is None


def test_a_question_not_about_now_keeps_the_older_fact_first(store):
    _remember(store, [(TESLA, JUNE), (MIDEA, JUNE)])
    for question, old in [("What car do I drive?", GOLF), ("家里用的是什么冰箱？", HAIER)]:
        hits = _hits(store, question)
        assert hits[old][0] == 0 and all(e.update_credit is None for _, e in hits.values()), question


def test_a_lower_provenance_or_an_earlier_change_earns_no_credit(store):
    _remember(store, [(TESLA, JUNE)], provenance="model_inferred")  # the user said Golf; a guess says Tesla
    _remember(store, [(MIDEA, datetime(2025, 6, 1))])  # "changed" before the fact it would change was observed
    for question, old, new in [("What car do I drive now?", GOLF, TESLA), ("家里现在用的是什么冰箱？", HAIER, MIDEA)]:
        hits = _hits(store, question)
        assert hits[new][1].update_credit is None and hits[old][0] == 0, question


def test_another_agent_cannot_ride_on_the_callers_fact(tmp_path):
    """Bob publishes the change; Alice sees it, but it does not take her fact's relevance: another agent cannot
    displace a memory by claiming it changed. Bob's own change does take his fact's."""
    path = tmp_path / "shared.duckdb"
    with echo_duck.open(path, agent_id="host", admin=True) as host:
        host.grant_right("bob", "publish:public")
    with echo_duck.open(path, agent_id="alice") as alice:
        _remember(alice, [(GOLF, JANUARY), *((t, JANUARY) for t in OTHERS)])
    with echo_duck.open(path, agent_id="bob") as bob:
        bob.remember_many([dict(content=TESLA, type="user", observed_at=JUNE, scope="public",
                                provenance="user_stated")])
    with echo_duck.open(path, agent_id="alice") as alice:
        hits = _hits(alice, "What car do I drive now?")
        assert TESLA in hits and hits[TESLA][1].update_credit is None and hits[GOLF][0] == 0
    with echo_duck.open(path, agent_id="bob") as bob:
        _remember(bob, [(GOLF, JANUARY)])
        hits = _hits(bob, "What car do I drive now?")
        assert hits[TESLA][1].update_credit == pytest.approx(hits[GOLF][1].relevance) and hits[TESLA][0] == 0


@pytest.mark.parametrize("text, changed", [
    ("I sold the Golf and bought a Tesla instead.", True), ("We moved to Lyon in May.", True),
    ("She no longer eats meat.", True), ("Switched the CI from Jenkins to GitHub Actions.", True),
    ("冰箱换了，现在是美的。", True), ("健身房他不去了。", True), ("辭職了，下個月開始找工作。", True),
    ("I drive a Golf.", False), ("He moves fast.", False), ("家里的冰箱是海尔的。", False), ("周末常去超市买菜。", False),
])
def test_states_change(store, text, changed):
    assert store.db.con.execute("SELECT states_change(?)", [text]).fetchone()[0] is changed


def test_an_as_of_recall_credits_only_the_changes_made_by_then(tmp_path):
    """The store's clock decides what was written when: asked as of before the change, the Golf is the answer; as
    of after it, the Tesla, by the same rule as a live recall."""
    clock = [datetime(2026, 1, 10)]
    with echo_duck.open(tmp_path / "asof.duckdb", agent_id="a", now=lambda: clock[0]) as mem:
        _remember(mem, [(GOLF, JANUARY), *((t, JANUARY) for t in OTHERS)])
        clock[0] = datetime(2026, 6, 2)
        _remember(mem, [(TESLA, JUNE)])
        clock[0] = datetime(2026, 7, 1)
        before = mem.recall("What car do I drive now?", 3, as_of=datetime(2026, 3, 1), explain=True)
        after = mem.recall("What car do I drive now?", 3, as_of=datetime(2026, 6, 30), explain=True)
        live = mem.recall("What car do I drive now?", 3, explain=True, reinforce=False)
    assert before[0].memory.content == GOLF and TESLA not in [h.memory.content for h in before]
    assert [h.memory.content for h in after[:2]] == [TESLA, GOLF] == [h.memory.content for h in live[:2]]
    assert after[0].explanation.update_credit == after[1].explanation.relevance


def test_recall_hits_in_sql_ranks_the_change_as_the_agent_does(tmp_path):
    """An analyst's recall_hits with a recency weight credits the change through its model's stored vectors."""
    from echo_duck.index.keyword import query_text
    from echo_duck.recall.vector_text import vector_question
    from echo_duck.text.when import text_script

    question = "What car do I drive now?"
    with echo_duck.open(tmp_path / "sql.duckdb", agent_id="a", admin=True) as mem:
        _remember(mem, [(GOLF, JANUARY), (TESLA, JUNE), *((t, JANUARY) for t in OTHERS)])
        hits = mem.recall(question, 3, reinforce=False, explain=True)
        common = [w for (w,) in mem.sql("SELECT word FROM bm25_common_words($q)", {"q": query_text(question)}).rows()]
        qvec = mem.indexer.vectors.embed_question(vector_question(question, common))
        rows = mem.sql(
            "SELECT content, update_credit, score FROM recall_hits($q, $qvec, $model, 'a', NULL, 3, 0.5, NULL, NULL, "
            "NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, $now, p_query_script := $script)",
            {"q": query_text(question), "qvec": "[" + ",".join(repr(float(x)) for x in qvec) + "]",
             "model": mem.indexer.vectors.model_id, "now": mem.now(), "script": text_script(question)}).rows()
    assert [r[0] for r in rows[:2]] == [TESLA, GOLF] == [h.memory.content for h in hits[:2]]
    assert rows[0][1] == pytest.approx(hits[0].explanation.update_credit, rel=1e-6) and rows[1][1] is None
