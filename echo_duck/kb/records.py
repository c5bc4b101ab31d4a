"""The knowledge base's records: documents, chunks, search hits and their explanations, add/remove reports."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from ..models import Record


@dataclass(frozen=True)
class KbDocument(Record):
    id: str
    source: str
    path: str | None
    title: str
    tags: tuple[str, ...]
    size: int
    content_hash: str
    added_at: datetime
    updated_at: datetime
    status: str
    chunks: int = 0
    flagged_chunks: int = 0
    by_host: bool = False  # the host added it (kb_documents.by_host); only an admin handle may change it


@dataclass(frozen=True)
class KbChunk(Record):
    id: str
    document_id: str
    source: str
    path: str | None
    title: str
    tags: tuple[str, ...]
    seq: int
    heading_trail: tuple[str, ...]
    start_offset: int
    end_offset: int
    content: str
    flagged: bool
    flag_reason: str | None
    owner: str = ""  # the agent that added the document (kb_render names it when that is not the caller)
    scope: str = "private"
    written_at: datetime | None = None  # when its document's text was last written (kb_render's gate ranks by it)
    by_host: bool = False  # its document is the host's (kb_documents.by_host): first among other authors'

    @property
    def citation(self) -> str:
        """'path › Heading › Sub-heading [start:end]' (a raw text is cited as 'source:<name>')."""
        where = self.path or f"source:{self.source}"
        return " › ".join((where, *self.heading_trail)) + f" [{self.start_offset}:{self.end_offset}]"


@dataclass(frozen=True)
class KbExplanation:
    """Why a chunk ranked where it did: the same arms and fusion as memory recall (Explanation)."""

    bm25_rank: int | None
    bm25_score: float | None
    vector_rank: int | None
    similarity: float | None
    keyword_conf: float | None
    vector_conf: float | None
    coverage: float | None
    similarity_z: float | None
    script_credit: float | None  # the keyword credit its meaning earns (as a memory's, Explanation)
    relevance: float
    kb_weight: float
    vector_arm: str
    gate: str
    rerank: str | None = None  # set when a reranker reorders a merged recall(include_kb=True) list
    rerank_score: float | None = None
    bridge_coverage: float | None = None  # the share of the question's dictionary translations it holds (other script)
    time_boost: float = 1.0  # 1 + time_weight when the question asks when and the chunk states a time (as a memory's)


@dataclass(frozen=True)
class KbHit:
    """A knowledge-base chunk found by search; ``score`` is on the memory hits' scale (see 60_kb.sql)."""

    chunk: KbChunk
    score: float
    explanation: KbExplanation | None = None
    origin: str = "kb"

    @property
    def id(self) -> str:
        return self.chunk.id

    @property
    def content(self) -> str:
        return self.chunk.content

    def to_dict(self) -> dict[str, Any]:
        out = {"origin": self.origin, "score": self.score, "citation": self.chunk.citation,
               "chunk": self.chunk.to_dict()}
        if self.explanation is not None:
            out["explanation"] = dict(self.explanation.__dict__)
        return out


@dataclass(frozen=True)
class KbReport(Record):
    """What an add or remove changed. ``flagged`` lists 'citation: reason' for each newly flagged chunk."""

    source: str | None
    documents_added: int = 0
    documents_updated: int = 0
    documents_unchanged: int = 0
    documents_removed: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    flagged: tuple[str, ...] = ()
    vector_model: str | None = None
    stale_vectors: int = 0
    seconds: float = 0.0


def hit_from_row(row: dict, arm: str, explain: bool) -> KbHit:
    explanation = None
    if explain:
        names = {f.name for f in fields(KbExplanation)}
        explanation = KbExplanation(**{k: v for k, v in row.items() if k in names},
                                    vector_rank=row["vec_rank"], vector_arm=arm)
    return KbHit(KbChunk.from_row(row), float(row["score"]), explanation)
