"""The vector arm reads the question without the words more than half of the store holds (recall/vector_text.py)."""

import pytest

import echo_duck
from echo_duck.embed.embedder import default_embedder
from echo_duck.recall.vector_text import vector_question


@pytest.mark.parametrize("question, common, expected", [
    ("What is the name of Andrew's childhood dog?", ["andrew"], "What is the name of childhood dog?"),
    ("What did Andrew say?", ["andrew"], "What did say?"),  # "Andrew?" is one token, indexed as "andrew"
    ("Does Alice-Bob like tea?", ["alice"], "Does Alice-Bob like tea?"),  # "bob" is not common: the token stays
    ("Alice Alice", ["alice"], "Alice Alice"),  # nothing else to read: the question whole
    ("用户 Alice 喜欢 什么", ["alice"], "用户 喜欢 什么"),
    ("用户喜欢什么", ["用户"], "用户喜欢什么"),  # no space to drop at: read whole
    ("What is the plan?", [], "What is the plan?"),
])
def test_tokens_made_of_common_words_are_left_out(question, common, expected):
    assert vector_question(question, common) == expected


CHAT = [
    "Audrey: Yeah, they really do enjoy the mountain life. Regular grooming is essential to keep them looking good.",
    "Andrew: Wow, they look like they're loving the mountain life! How do you keep them looking good out there?",
    "Andrew: I finally tried the new bakery downtown, the croissants were amazing.",
    "Andrew: Work has been hectic lately, lots of late nights at the office.",
    "Andrew: We went hiking last weekend and saw a few deer on the trail.",
    "Audrey: I started agility classes with my pups at the dog park.",
    "Andrew: My girlfriend and I are thinking about adopting a dog soon.",
    "Audrey: My sister is visiting in June, we plan a road trip.",
]


def test_a_name_most_memories_hold_does_not_pull_the_vector_arm_to_that_speaker(tmp_path):
    """A question that credits Andrew with what Audrey said (LoCoMo's adversarial questions): read whole, the
    model's nearest memory is whatever Andrew said that looks alike; without "Andrew" it is the answer."""
    model = default_embedder()
    if model is None:
        pytest.skip("the default embedding model is not installed")
    question = "What is essential to keep the dogs looking good according to Andrew?"
    with echo_duck.open(tmp_path / "chat.duckdb") as mem:
        mem.remember_many([dict(content=c, type="user") for c in CHAT])
        hits = mem.recall(question, k=3, arms=("vector",), explain=True, reinforce=False)
        assert hits[0].memory.content == CHAT[0]
        assert hits[0].explanation.vector_question == "What is essential to keep the dogs looking good according to"
        whole = mem.recall(question, k=3, arms=("vector",), reinforce=False, query_vector=model.embed([question])[0])
        assert whole[0].memory.content == CHAT[1]  # what the arm ranked first before
        both = mem.recall(question, k=3, explain=True, reinforce=False)
        assert both[0].memory.content == CHAT[0]
        assert mem.recall("Audrey's trip", k=1, explain=True)[0].explanation.vector_question is None  # 3 of 8: read whole
