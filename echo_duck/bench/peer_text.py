"""What every peer system in ``bench perf`` shares: echo_duck's segmentation for their keyword arms,
the candidate pool per arm and the reciprocal rank fusion they all use."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

from ..text.segment import STOP_WORDS, segment

POOL = 50  # candidates per arm (echo_duck: keyword_pool = vector_pool = 50)
RRF_K = 60


def tokens(text: str) -> list[str]:
    """What the peers index and query: echo_duck's segmentation minus its stop words."""
    return [t for t in segment(text) if t not in STOP_WORDS]


def segmented(text: str) -> str:
    return " ".join(tokens(text))


def rrf(*ranked: Sequence[Any], k: int = RRF_K) -> list[tuple[Any, float]]:
    """Reciprocal rank fusion of ranked id lists: sum of 1 / (k + rank), rank from 1; ties by id."""
    scores: dict[Any, float] = defaultdict(float)
    for ids in ranked:
        for rank, i in enumerate(ids, 1):
            scores[i] += 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
