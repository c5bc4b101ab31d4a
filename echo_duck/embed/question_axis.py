"""A question as the vector arm reads it: without the direction every question shares.

An embedding model places a question near other questions: "What do you usually watch on it?" is the nearest
memory to "What type of videos does Calvin usually watch?" in a chat log, closer than the turn that answers it
("I usually watch music videos and documentaries"). Asking and telling differ along one direction of the
model's space, whatever the topic and the language: the mean of (question - statement) over pairs on the same
topic (``fit_axis``). Recall takes that direction out of the question's vector (``as_question``): the
similarity then measures what the question is about, not that it asks. Memories are stored as they are, so
nothing is re-embedded; a caller's own ``query_vector`` is used as given.

The default model's direction is fitted once on ``data_fixtures/question_pairs`` (pairs in nine languages
written for this, on topics of no benchmark) and shipped as ``resources/question_axis/<model_id>.npy``
(``python -m echo_duck.embed.question_axis`` writes it again; a test holds it equal to a refit). A model without
a shipped direction reads questions unchanged: a caller's own embedder, the hash embedder of the tests, and
MiniLM, which was trained on question-answer pairs and already tells them apart (its direction, fitted the same
way, moved LoCoMo's R@10 by -0.003 and chat_holdout's MRR by +0.007: not shipped).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

PAIRS = Path(__file__).resolve().parent.parent.parent / "data_fixtures" / "question_pairs" / "pairs.jsonl"


def _resource(model_id: str):
    return importlib.resources.files("echo_duck").joinpath(f"resources/question_axis/{model_id}.npy")


@functools.lru_cache(maxsize=8)
def axis(model_id: str) -> np.ndarray | None:
    """The shipped unit direction of asking for ``model_id``, or None when there is none."""
    if "/" in model_id or "\\" in model_id or model_id.startswith("."):
        return None
    try:
        with _resource(model_id).open("rb") as f:
            vector = np.load(f, allow_pickle=False)
    except (OSError, ValueError):
        return None
    return np.asarray(vector, dtype=np.float32)


def as_question(vector: np.ndarray, model_id: str) -> np.ndarray:
    """``vector`` (a question's embedding) without its component along the model's direction of asking,
    at unit length again (float32); unchanged when the model has no direction or nothing would be left."""
    u = axis(str(model_id))
    vector = np.asarray(vector, dtype=np.float32)
    if u is None or u.shape != vector.shape:
        return vector
    projected = vector - np.float32(vector @ u) * u
    norm = float(np.linalg.norm(projected))
    return (projected / np.float32(norm)).astype(np.float32) if norm > 1e-6 else vector


def read_pairs(path: Path = PAIRS) -> list[tuple[str, str]]:
    """[(question, statement)] from a pairs.jsonl file."""
    with open(path, encoding="utf-8") as f:
        return [(row["question"], row["statement"]) for row in map(json.loads, filter(str.strip, f))]


def fit_axis(embedder: Any, pairs: Iterable[tuple[str, str]]) -> np.ndarray:
    """The unit mean of (question - statement) over ``pairs``, each text embedded alone."""
    pairs = list(pairs)
    questions = _each(embedder, [q for q, _ in pairs])
    statements = _each(embedder, [s for _, s in pairs])
    direction = (questions - statements).mean(axis=0)
    return (direction / np.linalg.norm(direction)).astype(np.float32)


def _each(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    return np.stack([np.asarray(embedder.embed([t])[0], np.float64) for t in texts])


def main() -> None:  # pragma: no cover - writes the shipped resources
    from .embedder import embedder_by_name

    folder = Path(__file__).resolve().parent.parent / "resources" / "question_axis"
    folder.mkdir(parents=True, exist_ok=True)
    pairs = read_pairs()
    for name in ("use-multilingual",):
        embedder = embedder_by_name(name)
        if embedder is None:
            print(f"{name}: not installed, skipped")
            continue
        np.save(folder / f"{embedder.model_id}.npy", fit_axis(embedder, pairs))
        print(f"{embedder.model_id}: fitted on {len(pairs)} pairs")


if __name__ == "__main__":  # pragma: no cover
    main()
