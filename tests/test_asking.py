"""asking_weight: a memory that mostly asks (mostly_asks in sql/macros/20_ranking.sql: at least half of it is questions
that say nothing of the one asking) keeps asking_weight of its score. In a conversation the turn that asks shares the
words of a later question about the answer, and the model puts questions near questions, so it outranked the turn
that answers. With the real model, in English and Chinese; tests/test_fusion.py holds the in-process ranking equal to
the macro, asking_weight included."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

import echo_duck
from echo_duck.index.keyword import query_text
from echo_duck.recall import fusion
from echo_duck.recall.vector_text import vector_question
from echo_duck.text.when import asks_when, text_script

ASKS_EN = "Nate: What specifically are you allergic to?"
ANSWER_EN = "Joanna: Mostly reptiles and animals with fur, so no pets for me, sadly."
ASKS_ZH = "小王：你最近在读什么书？"
ANSWER_ZH = "小李：在读《三体》，刚看完第二部，太精彩了。"
CHAT = [("Joanna: I finished the first draft of my screenplay last night!", "s1"),
        ("Nate: Congrats! My turtles are doing great, by the way.", "s1"),
        ("Joanna: I'd love to pet them, but allergies make that hard.", "s1"),
        (ASKS_EN, "s1"), (ANSWER_EN, "s1"),
        ("小李：周末去爬了白云山，风景很好。", "s2"), ("小王：我最近迷上了做饭。", "s2"), (ASKS_ZH, "s2"), (ANSWER_ZH, "s2")]


@pytest.fixture
def store(tmp_path):
    with echo_duck.open(tmp_path / "asking.duckdb", agent_id="a", admin=True) as mem:  # the real model (default)
        start = datetime(2026, 3, 1, 20)
        mem.remember_many([dict(content=text, type="user", source_session=session,
                                observed_at=start + timedelta(minutes=i)) for i, (text, session) in enumerate(CHAT)])
        yield mem


@pytest.mark.parametrize("question, asks, answer", [("What is Joanna allergic to?", ASKS_EN, ANSWER_EN),
                                                     ("小李最近在读什么书？", ASKS_ZH, ANSWER_ZH)])
def test_the_answer_ranks_above_the_question_that_asked_for_it(store, question, asks, answer):
    hits = store.recall(question, 5, explain=True, reinforce=False)
    ranked = [h.content for h in hits]
    e = {h.content: h.explanation for h in hits}
    assert ranked.index(answer) < ranked.index(asks), ranked
    assert e[asks].asking_weight == fusion.ASKING_WEIGHT and e[answer].asking_weight == 1.0
    # the weight is what put the answer first: the asking turn is the more relevant of the two by the words and the
    # model, and the answer still takes session_credit from it (follow_weight × its relevance)
    assert e[asks].relevance > e[answer].relevance
    assert e[answer].session_credit == fusion.FOLLOW_WEIGHT * e[asks].relevance


def test_a_question_that_tells_of_its_writer_is_not_demoted(store):
    store.remember("Can you suggest a quiet hotel near the Colosseum for my trip to Rome in May?", type="user")
    store.remember("我下个月去成都出差，有什么好吃的推荐吗？", type="user")
    for question, text in [("Where am I going in May?", "Can you suggest a quiet hotel near the Colosseum for my "
                                                        "trip to Rome in May?"),
                           ("我下个月去哪里出差？", "我下个月去成都出差，有什么好吃的推荐吗？")]:
        (hit,) = [h for h in store.recall(question, 5, explain=True, reinforce=False) if h.content == text]
        assert hit.explanation.asking_weight == 1.0, question


@pytest.mark.parametrize("text, asks", [
    ("Caroline: What kind of yoga is it?", True),
    ("Melanie: Wow, that looks great! What kind of yoga is it?", True),  # more asking than telling
    ("你最近在读什么书？", True),
    ("What time is the standup? And which room?", True),
    ("Nate: Sorry to hear that. Allergies can be tough. What specifically are you allergic to?", False),
    ("Can you suggest a hotel for my trip to Rome?", False),  # says something of its writer
    ("我们什么时候去？", False),
    ("I live in Berlin.", False), ("", False), (None, False),
])
def test_mostly_asks(store, text, asks):
    assert store.sql("SELECT mostly_asks($t) AS a", {"t": text}).to_dicts() == [{"a": asks}]


def test_analysts_recall_hits_ranks_as_recall_does(store):
    """recall_hits (SQL) weighs a turn that asks as the agent's recall does (in process), with the real model."""
    question = "What is Joanna allergic to?"
    hits = store.recall(question, 5, explain=True, reinforce=False)
    common = [w for (w,) in store.sql("SELECT word FROM bm25_common_words($q)", {"q": query_text(question)}).rows()]
    qvec = store.indexer.vectors.embed_question(vector_question(question, common))
    rows = store.sql("SELECT content, asking_weight, score FROM recall_hits($q, $qvec, $model, 'a', NULL, 5, NULL, "
                     "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, $now, p_query_script := $script, "
                     "p_asks_when := $asks_when)",
                     {"q": query_text(question), "qvec": "[" + ",".join(repr(float(x)) for x in qvec) + "]",
                      "model": store.indexer.vectors.model_id, "now": store.now(), "script": text_script(question),
                      "asks_when": asks_when(question)}).to_dicts()
    assert [h.content for h in hits] == [r["content"] for r in rows]
    assert [h.explanation.asking_weight for h in hits] == [r["asking_weight"] for r in rows]
    assert [h.score for h in hits] == pytest.approx([r["score"] for r in rows], rel=1e-6)  # float32 similarities
    assert {r["content"]: r["asking_weight"] for r in rows}[ASKS_EN] == fusion.ASKING_WEIGHT
