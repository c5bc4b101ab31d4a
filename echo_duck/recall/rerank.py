"""Optional rerank of the fused top hits (SPEC R5), never at the cost of an answer.

A reranker scores (query, text) pairs. It runs on the top ``top_k`` fused hits in a worker thread;
if it fails or takes longer than ``timeout_s`` the fused order is returned unchanged. ``min_score``
drops low-scoring hits but never empties the result. Hits the gate ranked last stay after the others.
``fusion`` says how the scores reorder the hits: ``"replace"`` sorts them by score; ``"rrf"`` adds
1 / (RRF_K + rank) of the fused order and of the reranker's, and a hit the reranker gave None (a text
it does not read) keeps its fused rank as its reranker rank. ``top_k`` and ``fusion`` default to the
reranker's own ``top_k`` / ``fusion`` attributes, else 10 and "replace". None is on by default (a
cross-encoder costs milliseconds a pair); cross_encoder.py holds the ONNX ones, the shipped English one
among them.
"""

from __future__ import annotations

import concurrent.futures
import math
import time
from dataclasses import dataclass, replace
from typing import Any, Collection, Protocol, Sequence

from ..write import validate

FUSIONS = ("replace", "rrf")
RRF_K = 5  # fitted with the shipped reranker on bench recall's fit parts (K 5 / 20 / 60; weights 0.5 / 1 / 2)


class Reranker(Protocol):
    def score(self, query: str, texts: Sequence[str]) -> Sequence[float | None]: ...


@dataclass(frozen=True)
class RerankSettings:
    top_k: int | None = None  # None: the reranker's top_k attribute, else 10
    timeout_s: float = 5.0
    min_score: float | None = None
    fusion: str | None = None  # None: the reranker's fusion attribute, else "replace"

    def __post_init__(self) -> None:
        if self.top_k is not None:
            validate.positive_int(self.top_k, "rerank_top_k", maximum=1000)
        if self.fusion is not None:
            validate.choice(self.fusion, "rerank_fusion", FUSIONS)
        if self.min_score is not None:
            validate.real(self.min_score, "rerank_min_score")  # NaN: every comparison false, nothing ever left out
        if isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, (int, float)) or not self.timeout_s > 0:
            raise validate.InvalidInput(f"rerank_timeout_s must be a positive number, got {self.timeout_s!r}")


def rerank(query: str, hits: list, reranker: Reranker, settings: RerankSettings,
           gated: Collection[str] = frozenset()) -> tuple[list, str]:
    """(hits in their new order, what happened: 'reranked' | 'not read: …' | 'timeout …' | 'failed: …').
    ``gated``: ids of hits the gate ranked last; they stay after the others, reordered among themselves."""
    top_k = top_k_of(reranker, settings)
    fusion = settings.fusion or getattr(reranker, "fusion", None) or "replace"
    head, tail = hits[:top_k], hits[top_k:]
    if not head:
        return hits, "reranked"
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="echo-duck-rerank")
    try:
        # a reranker that takes a deadline drops its own work once the recall has stopped waiting for it
        more = {"deadline": time.monotonic() + settings.timeout_s} if getattr(reranker, "takes_deadline", False) else {}
        future = pool.submit(reranker.score, query, [h.content for h in head], **more)
        scores = [None if s is None else float(s) for s in future.result(timeout=settings.timeout_s)]
        if len(scores) != len(head) or any(s is not None and math.isnan(s) for s in scores):
            raise ValueError(f"reranker returned {len(scores)} scores for {len(head)} texts (or NaN)")
        if fusion not in FUSIONS:
            raise ValueError(f"reranker fusion must be one of {', '.join(FUSIONS)}, got {fusion!r}")
        if fusion == "replace" and None in scores:
            raise ValueError("reranker returned None for a text; only rerank_fusion='rrf' keeps such a text's place")
    except concurrent.futures.TimeoutError:
        return hits, f"timeout after {settings.timeout_s:g} s: fused order kept"
    except Exception as e:  # any reranker failure falls back to the fused order
        return hits, f"failed: {type(e).__name__}: {e}: fused order kept"
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    if all(s is None for s in scores):
        return hits, "not read: the reranker reads none of these (the question or the memories): fused order kept"
    order = sorted(range(len(head)), key=lambda i: -scores[i]) if fusion == "replace" else rrf_order(scores)
    order = [i for i in order if head[i].id not in gated] + [i for i in order if head[i].id in gated]
    ranked = [(head[i], scores[i]) for i in order]
    if settings.min_score is not None:
        kept = [(h, s) for h, s in ranked if s is None or s >= settings.min_score]
        ranked = kept or ranked[:1]  # never empty the result
        tail = tail if kept else []
    return [_with_score(h, s) for h, s in ranked] + tail, "reranked"


def reranked(query: str, hits: list, reranker: Reranker | None, settings: RerankSettings,
             gated: Collection[str] = frozenset()) -> list:
    """``rerank``'s order, each explanation noting what happened (its ``rerank``); the hits as they are without a
    reranker. Recall and an as_of recall both end with it."""
    if reranker is None:
        return hits
    hits, status = rerank(query, hits, reranker, settings, gated)
    return [replace(h, explanation=replace(h.explanation, rerank=status)) if h.explanation else h for h in hits]


def fetched(k: int, reranker: Reranker | None, settings: RerankSettings) -> int:
    """How many fused hits a recall of ``k`` ranks: k, or what the reranker reads when that is more."""
    return k if reranker is None else max(k, top_k_of(reranker, settings))


def top_k_of(reranker: Reranker, settings: RerankSettings) -> int:
    """How many fused hits the reranker reads: rerank_top_k, else the reranker's own top_k, else 10."""
    return settings.top_k or getattr(reranker, "top_k", None) or 10


def rrf_order(scores: Sequence[float | None]) -> list[int]:
    """Positions of the fused head in their new order: by 1 / (RRF_K + fused rank) + 1 / (RRF_K + reranker rank),
    ties to the fused order. The scored hits share the positions scored hits hold, best score first; a hit scored
    None keeps its own position as its reranker rank."""
    scored = [i for i, s in enumerate(scores) if s is not None]
    by_model = {i: i for i in range(len(scores))}
    for position, i in zip(scored, sorted(scored, key=lambda i: (-scores[i], i))):
        by_model[i] = position
    return sorted(range(len(scores)), key=lambda i: (-(1 / (RRF_K + i + 1) + 1 / (RRF_K + by_model[i] + 1)), i))


def _with_score(hit: Any, score: float | None) -> Any:
    if hit.explanation is None:
        return hit
    return replace(hit, explanation=replace(hit.explanation, rerank_score=score))
