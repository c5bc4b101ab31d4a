"""What a recall is asked and what it returns: ``RecallQuery`` (recall()'s arguments, validated),
``Hit`` (a memory and its score) and ``Explanation`` (why it ranked there: every term of the ranking),
built from a row of ``recall_fused`` / ``recall_hits`` by ``hit_from_row``.

May import: ``write.validate``, ``models``, ``errors``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from ..models import PERSISTED_TIERS, TYPES, Memory
from ..write import validate

MAX_K = 1000
ARMS = ("keyword", "vector")


@dataclass(frozen=True)
class RecallQuery:
    text: str
    k: int = 10
    types: tuple[str, ...] | None = None
    tiers: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None
    entities: tuple[str, ...] | None = None
    since: datetime | None = None
    until: datetime | None = None
    session: str | None = None
    include_archived: bool = False
    reinforce: bool = True
    arms: tuple[str, ...] = ARMS
    min_score: float | None = None

    @classmethod
    def build(cls, text_: Any, k: Any = 10, *, types=None, tiers=None, tags=None, entities=None, since=None,
              until=None, session=None, include_archived=False, reinforce=True, arms=ARMS,
              min_score=None) -> "RecallQuery":
        """Validate every argument of recall()."""
        def as_tuple(values):
            return None if values is None else tuple(values)

        since, until = validate.timestamp(since, "since"), validate.timestamp(until, "until")
        if since is not None and until is not None and since > until:
            raise validate.InvalidInput(f"since ({since.isoformat()}) is after until ({until.isoformat()}): no memory "
                                        "was written in between")
        return cls(
            text=validate.text(text_, "query", max_chars=10_000),
            k=validate.positive_int(k, "k", maximum=MAX_K),
            types=as_tuple(validate.choices(types, "types", TYPES)),
            tiers=as_tuple(validate.choices(tiers, "tiers", PERSISTED_TIERS)),
            tags=as_tuple(validate.labels(tags, "tags")) if tags is not None else None,
            entities=as_tuple(validate.labels(entities, "entities")) if entities is not None else None,
            since=since,
            until=until,
            session=validate.optional_text(session, "session", max_chars=200),
            include_archived=validate.flag(include_archived, "include_archived"),
            reinforce=validate.flag(reinforce, "reinforce"),
            arms=tuple(validate.choices(arms, "arms", ARMS) or ()) or _no_arms(),
            min_score=None if min_score is None else _min_score(min_score),
        )

    @property
    def filtered(self) -> bool:
        return any(v is not None for v in (self.types, self.tiers, self.tags, self.entities, self.since, self.until, self.session))


@dataclass(frozen=True)
class Explanation:
    """Why a hit ranked where it did (SPEC R9)."""

    bm25_rank: int | None
    bm25_score: float | None
    vector_rank: int | None
    similarity: float | None
    keyword_conf: float | None  # how much of the query the keyword arm's best match covers
    vector_conf: float | None  # how far the vector arm's best stands above its 10th (in standard deviations / 2)
    coverage: float | None  # the share of the query's IDF mass this memory matches
    similarity_z: float | None  # standard deviations above the mean similarity of memories in its script
    script_credit: float | None  # the keyword credit its meaning earns (both keyword terms in another script)
    session_credit: float | None  # follow_weight × the relevance of the candidate before it in its source session
    relevance: float  # calibrated_score (the sum of the arms' terms), or session_credit / update_credit when more
    recency_boost: float  # > 1 when the question asks for the current state and this is among the newest
    time_boost: float  # > 1 when it was observed in the time the question names, or states a time asked for
    vector_arm: str  # 'exact (in-process)', 'exact (in-process, filtered)', 'exact (sql)', or 'unavailable: …'
    gate: str  # 'kept', or why it was ranked after the kept ('ranked last: …')
    effective_importance: float  # importance × 0.5^(days since last access / half-life): the forgetting curve
    decay_factor: float  # the score's multiplier from it: importance_floor + (1 - floor) × effective_importance
    tier_weight: float
    feedback_weight: float
    provenance: str
    source_refs: tuple[str, ...]
    rerank: str | None = None  # None when no reranker is configured
    rerank_score: float | None = None
    vector_question: str | None = None  # the question less the store's common words, when it left any out (vector_text.py)
    bridge_coverage: float | None = None  # the share of the question's dictionary translations it holds (other script)
    update_credit: float | None = None  # the relevance of an older candidate it changes (current-state questions)
    asking_weight: float = 1.0  # asking_weight (0.7) when the memory mostly asks (a question is not its own answer)
    time_window: tuple[str, str] | None = None  # [start, end) the question names (text/when.py), ISO: time_boost's


@dataclass(frozen=True)
class Hit:
    memory: Memory
    score: float
    conflicts_with: tuple[str, ...] = ()
    explanation: Explanation | None = None
    recall_id: int | None = None
    origin: str = "memory"

    @property
    def id(self) -> str:
        return self.memory.id

    @property
    def content(self) -> str:
        return self.memory.content

    @property
    def key(self) -> str | None:
        return self.memory.key

    def to_dict(self) -> dict[str, Any]:
        out = {"origin": self.origin, "score": self.score, "conflicts_with": list(self.conflicts_with),
               "recall_id": self.recall_id, "memory": self.memory.to_dict()}
        if self.explanation is not None:
            out["explanation"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.explanation.__dict__.items()}
        return out


def hit_from_row(row: dict, arm: str, explain: bool, vector_text: str | None = None,
         window: tuple[datetime, datetime] | None = None) -> Hit:
    memory = Memory.from_row(row)
    explanation = None
    if explain:
        explanation = Explanation(
            bm25_rank=row["bm25_rank"], bm25_score=row["bm25_score"], vector_rank=row["vec_rank"],
            similarity=row["similarity"], keyword_conf=row["keyword_conf"], vector_conf=row["vector_conf"],
            coverage=row["coverage"], similarity_z=row["similarity_z"], script_credit=row["script_credit"],
            session_credit=row["session_credit"], update_credit=row["update_credit"], relevance=row["relevance"],
            bridge_coverage=row["bridge_coverage"],
            recency_boost=row["recency_boost"], time_boost=row["time_boost"], asking_weight=row["asking_weight"],
            vector_arm=arm, gate=row["gate"],
            effective_importance=row["effective_importance"], decay_factor=row["decay_factor"],
            tier_weight=row["tier_weight"], feedback_weight=row["feedback_weight"],
            provenance=memory.provenance_name, source_refs=memory.source_refs, vector_question=vector_text,
            time_window=None if window is None else (window[0].isoformat(), window[1].isoformat()))
    conflicts = tuple(str(c) for c in (row.get("conflicts_with") or ()))
    return Hit(memory, float(row["score"]), conflicts, explanation)


def checked_vector(vector: Any, dim: int) -> np.ndarray:
    message = f"query_vector must be {dim} finite floats from the store's embedding model"
    try:
        vector = np.asarray(vector, dtype=np.float32)
    except (TypeError, ValueError):  # bytes, text, ragged lists: not numbers at all
        raise validate.InvalidInput(message) from None
    if vector.shape != (dim,) or not np.all(np.isfinite(vector)):
        raise validate.InvalidInput(message)
    return vector


def _no_arms():
    raise validate.InvalidInput("arms must name at least one of: keyword, vector")


def _min_score(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not validate.finite(value):
        raise validate.InvalidInput(f"min_score must be a finite number (a relevance, about 0 to 2), got {value!r}")
    return float(value)
