"""The direction of asking (embed/question_axis.py): shipped per model, taken out of every question's vector."""

from __future__ import annotations

import numpy as np
import pytest

import echo_duck
from echo_duck.embed import question_axis
from echo_duck.embed.embedder import HashEmbedder, default_embedder

USE = "use-multilingual-v3-int8"


@pytest.fixture(scope="module")
def model():
    embedder = default_embedder()
    if embedder is None:
        pytest.skip("the default model is not installed")
    return embedder


def test_the_default_model_ships_a_unit_axis_and_minilm_none():
    use = question_axis.axis(USE)
    assert use is not None and use.shape == (512,) and abs(float(np.linalg.norm(use)) - 1) < 1e-5
    assert question_axis.axis("all-minilm-l6-v2-int8") is None  # trained on question-answer pairs already


def test_projection_leaves_nothing_along_the_axis_and_stays_unit():
    u = question_axis.axis(USE)
    rng = np.random.default_rng(3)
    v = rng.normal(size=512).astype(np.float32)
    v /= np.linalg.norm(v)
    v += 0.5 * u  # a question-like vector
    v /= np.linalg.norm(v)
    q = question_axis.as_question(v, USE)
    assert q.dtype == np.float32
    assert abs(float(q @ u)) < 1e-5 and abs(float(np.linalg.norm(q)) - 1) < 1e-5
    assert float(v @ u) > 0.4  # the input did lean that way


@pytest.mark.parametrize("model_id", ["hash-64", "all-minilm-l6-v2-int8", "someone-elses-model", "../scan/classifier",
                                      "/etc/passwd"])
def test_a_model_without_a_shipped_axis_reads_questions_unchanged(model_id):
    v = np.ones(64, np.float32) / 8
    assert question_axis.axis(model_id) is None
    assert question_axis.as_question(v, model_id) is v or np.array_equal(question_axis.as_question(v, model_id), v)


def test_the_shipped_axis_is_what_the_fixture_gives(model):
    refit = question_axis.fit_axis(model, question_axis.read_pairs())
    assert float(refit @ question_axis.axis(model.model_id)) > 0.9999


def test_questions_and_statements_fall_on_either_side(model):
    """On pairs the axis was not fitted on, a question sits further along it than its answer."""
    u = question_axis.axis(model.model_id)
    pairs = [("Which hotel did they book in Lisbon?", "They booked the Hotel Avenida in Lisbon for four nights."),
             ("谁负责下周的值班？", "下周由小陈负责值班。"),
             ("¿A qué hora cierra la farmacia?", "La farmacia cierra a las nueve de la noche."),
             ("Did the plumber fix the leak?", "The plumber fixed the leak under the sink on Friday.")]
    for question, statement in pairs:
        assert float(model.embed([question])[0] @ u) > float(model.embed([statement])[0] @ u) + 0.1


def test_recall_searches_with_the_projected_question(tmp_path, model):
    """recall's vector arm scores memories against the question less its asking: a memory that asks about the
    same thing loses ground to the one that answers it; a caller's own query_vector is used as given."""
    question = "What type of videos does Calvin usually watch?"
    answer = "Calvin: Mostly music videos, live concerts and documentaries about artists."
    asking = "Dave: Nice setup! What do you usually watch on it?"
    with echo_duck.open(tmp_path / "m.duckdb") as mem:
        mem.remember_many([{"content": answer, "type": "environment"}, {"content": asking, "type": "environment"}])

        def similarities(**kwargs):
            hits = mem.recall(question, 2, arms=("vector",), explain=True, reinforce=False, **kwargs)
            return {h.memory.content: h.explanation.similarity for h in hits}

        raw_vector = model.embed([question])[0]
        projected, raw = similarities(), similarities(query_vector=raw_vector)
        expected = question_axis.as_question(raw_vector, model.model_id)
        for text in (answer, asking):
            assert raw[text] == pytest.approx(float(model.embed([text])[0] @ raw_vector), abs=1e-5)
            assert projected[text] == pytest.approx(float(model.embed([text])[0] @ expected), abs=1e-5)
        assert projected[answer] - projected[asking] > raw[answer] - raw[asking] + 0.02


def test_hash_embedder_stores_recall_as_before(tmp_path):
    """No axis for the tests' hash embedder: its query vector is the plain embedding."""
    embedder = HashEmbedder(dim=64)
    with echo_duck.open(tmp_path / "h.duckdb", embedder=embedder) as mem:
        mem.remember("the deploy key lives in the vault", type="environment")
        hit = mem.recall("where is the deploy key?", 1, arms=("vector",), explain=True, reinforce=False)[0]
        read = hit.explanation.vector_question or "where is the deploy key?"  # less the store's common words
        plain = float(embedder.embed([read])[0] @ embedder.embed([hit.memory.content])[0])
        assert hit.explanation.similarity == pytest.approx(plain, abs=1e-6)
