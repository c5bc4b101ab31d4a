"""Fusion in process: what ``recall_fused`` (sql/macros/40_recall.sql) does after its ``eligible`` step,
for a recall whose two arms were computed in process.

The candidates the caller may see (``can_see_as``) and asked for (the filters) arrive with their
decay terms (``effective_importance``, archived and feedback weights), as ``recall_eligible`` and the
macro's filters keep them (eligibility.py computes them over an in-process copy, tested equal); the
settings come as they are stored. What is left is arithmetic over a few hundred rows: each arm's rank
among the eligible, the pool cuts, RRF weighted by match quality, the gates, the final score.
Planning and running the macro for it cost ~40 ms at 100k rows, about a quarter of it planning; a
DuckDB plan that complex has a floor Python does not. Each step names the macro step it mirrors, with
the same operations in the same order, so the two agree to the last bit; tests hold them equal (ids,
order, scores, every explain value). The macro stays the definition: the analysts' ``recall_hits``
and filtered recalls inside a transaction run it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..index.keyword_search import KeywordArm

KEPT = "kept"


@dataclass(frozen=True)
class Fused:
    """One ranked candidate with the values recall_fused returns besides the memory row."""

    memory_id: str
    bm25_rank: int | None
    bm25_score: float | None
    rarest_df_ratio: float | None
    vec_rank: int | None
    similarity: float | None
    keyword_weight: float
    vector_weight: float
    entropy: float
    rrf_score: float
    gate: str
    effective_importance: float
    tier_weight: float
    feedback_weight: float
    decay_factor: float
    score: float


def fuse(keyword: KeywordArm, vec_ids: Sequence[str], vec_sims: Sequence[float],
         eligible: Mapping[str, dict[str, Any]], settings: dict[str, float], shape: tuple[float, float, float] | None,
         k: int) -> list[Fused]:
    """The best ``k`` kept candidates by score, then id. ``eligible`` maps each candidate the caller may
    see to its recall_eligible row (read only for the candidates that make a pool: eligibility.py
    computes the decay terms on demand), ``settings`` the settings table by name, ``shape``
    text.query_shape's (stop, length, code)."""
    if not eligible:
        return []
    entropy = 1.0 if shape is None else query_entropy(0.5 if keyword.query_spec is None else keyword.query_spec, *shape)
    cfg = {**settings, "entropy": entropy,
           "vector_weight": vector_arm_weight(entropy, settings["vector_weight_low"], settings["vector_weight_high"])}
    rows = eligible

    # eligible: each arm ranked among the candidates the caller may see (score or similarity, then id;
    # the keyword arm comes in that order, the exact vector scan breaks ties by matrix row)
    keyword_hits = [(i, s, r) for i, s, r in zip(keyword.ids, keyword.scores, keyword.rarest) if i in rows]
    vector_hits = sorted(((i, float(s)) for i, s in zip(vec_ids, vec_sims) if i in rows), key=lambda h: (-h[1], h[0]))
    vector_arm_ran = bool(vector_hits)
    rarest = {i: r for i, _, r in keyword_hits}  # kept past the pool cut, as the macro's pooled step keeps it

    # pooled: each arm's best keyword_pool / vector_pool; a candidate outside both is dropped
    kw_pool, vec_pool = int(cfg["keyword_pool"]), int(cfg["vector_pool"])
    in_keyword = {i: (rank, s) for rank, (i, s, _) in enumerate(keyword_hits[:kw_pool], start=1)}
    in_vector = {i: (rank, s) for rank, (i, s) in enumerate(vector_hits[:vec_pool], start=1)}

    kept = []
    for memory_id in in_keyword.keys() | in_vector.keys():
        bm25_rank, bm25_score = in_keyword.get(memory_id, (None, None))
        vec_rank, similarity = in_vector.get(memory_id, (None, None))
        fused = _fused(cfg, rows[memory_id], memory_id, bm25_rank, bm25_score, rarest.get(memory_id), vec_rank,
                       similarity, keyword.query_idf, vector_arm_ran)
        if fused.gate == KEPT:
            kept.append(fused)
    kept.sort(key=lambda f: (-f.score, f.memory_id))  # canonical uuid texts sort as DuckDB's UUIDs
    return kept[:k]


def _fused(cfg: dict, row: dict, memory_id: str, bm25_rank, bm25_score, rarest_df_ratio, vec_rank, similarity,
           query_idf, vector_arm_ran: bool) -> Fused:
    # fused: RRF weighted by arm and by how good each arm's match is
    keyword_weight, vector_weight = 1.0, cfg["vector_weight"]
    keyword_quality = vector_quality = 0.0
    if bm25_score is not None:
        keyword_quality = min(bm25_score / query_idf, 1.0) ** cfg["keyword_score_power"]
    if similarity is not None:
        span = cfg["vector_strong_similarity"] - cfg["vector_min_similarity"]
        vector_quality = min(max(similarity - cfg["vector_min_similarity"], 0.0) / span, 1.0) ** cfg["vector_score_power"]
    rrf_score = (keyword_weight * _rrf(bm25_rank, cfg["rrf_k"]) * keyword_quality
                 + vector_weight * _rrf(vec_rank, cfg["rrf_k"]) * vector_quality)

    # gate: keyword-only matches on common terms only when the vector arm ran; weak vector-only matches
    gate = KEPT
    if vec_rank is None and rarest_df_ratio is not None and rarest_df_ratio > cfg["gate_df_ratio"] and vector_arm_ran:
        gate = "dropped: only common keywords"
    elif bm25_rank is None and similarity is not None and similarity < cfg["vector_min_similarity"]:
        gate = "dropped: weak meaning match"

    # score: fused × (floor + (1 - floor) × effective importance) × archived weight × feedback weight
    floor = cfg["importance_floor"]
    decay_factor = floor + (1 - floor) * row["effective_importance"]
    score = rrf_score * decay_factor * row["tier_weight"] * row["feedback_weight"]
    return Fused(memory_id, bm25_rank, bm25_score, rarest_df_ratio, vec_rank, similarity, keyword_weight,
                 vector_weight, cfg["entropy"], rrf_score, gate, row["effective_importance"], row["tier_weight"],
                 row["feedback_weight"], decay_factor, score)


def query_entropy(spec: float, stop: float, length: float, code: float) -> float:
    """sql/macros/20_ranking.sql query_entropy()."""
    return min(max((0.5 * (1 - spec) + 0.3 * stop + 0.2 * length) * (1 - 0.6 * code), 0.0), 1.0)


def vector_arm_weight(entropy: float, low: float, high: float) -> float:
    """sql/macros/20_ranking.sql vector_arm_weight()."""
    return low + (high - low) * min(max(entropy, 0.0), 1.0)


def _rrf(rank: int | None, k: float) -> float:
    """sql/macros/20_ranking.sql rrf(): 1 / (k + rank); no rank contributes 0."""
    return 0.0 if rank is None else 1.0 / (k + rank)
