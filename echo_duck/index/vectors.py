"""Vectors (SPEC R2, L6): one per memory, stamped with its model; exact search; re-embedding.

Exact search is the default because it is correct under every filter and never risks the file
(persisted HNSW indexes do not survive a crash in duckdb-vss 1.5.5). Measured here at 100k × 512:
SQL ``list_inner_product`` over the table 90-160 ms, numpy over an in-process matrix 6-10 ms, and
3-4 ms with an int8 first pass that proves which rows need their float32 score (quantised_scan.py).
So the process that owns the file keeps the current model's vectors in a float32 matrix, kept in
step by the write path, and hands on the exact top-N; with filters, the exact top-N among the rows
they keep (a mask from eligibility.py). Inside a transaction a filtered recall computes this arm in SQL.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa

from ..embed.alone import embed_alone
from ..embed.embedder import Embedder
from ..embed.question_axis import as_question
from ..storage.db import Db
from ..text.when import text_script
from .quantised_scan import QuantisedScan
from .matvec import matvec

_STAGE = "echo_duck_vector_stage"


class VectorIndex:
    """The current embedder's vectors: written in the caller's transaction, searched exactly."""

    def __init__(self, db: Db, embedder: Embedder, clock: Callable[[], datetime]):
        self.db = db
        self.embedder = embedder
        self.clock = clock
        self._lock = threading.Lock()
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._matrix: np.ndarray | None = None  # lazily loaded, rows beyond len(_ids) are spare
        self._scripts = np.zeros(0, np.int8)  # each row's script (text_script of its memory), as the matrix
        self._scan = QuantisedScan()  # the matrix's full blocks, packed as int8
        self.generation = 0  # bumped whenever the matrix rows may be renumbered (a reload)

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts``, in their order: each text embedded alone, so a memory's vector does not depend
        on the batch it was written in (and is the one a query of the same text gets); the write scanner's
        vector of a text is used when it kept one (embed/alone.py)."""
        return embed_alone(self.embedder, texts)

    def embed_question(self, text: str) -> np.ndarray:
        """The vector recall searches with for the question ``text``: embedded, then without the model's
        direction of asking (embed/question_axis.py), so a memory is not found for asking something too. A model
        trained with a query prompt (embed/onnx_folder.py) embeds it through its ``embed_queries``."""
        queries = getattr(self.embedder, "embed_queries", None)
        vector = queries([text])[0] if queries is not None else self.embed([text])[0]
        return as_question(vector, self.model_id)

    def add(self, memory_ids: Sequence[uuid.UUID | str], vectors: np.ndarray, texts: Sequence[str] | None = None) -> None:
        """Store (or replace) vectors; call inside the write's transaction. ``texts``: what was embedded
        (each memory's content), for its script; read back from the table when not given."""
        if len(memory_ids) == 0:
            return
        ids = [str(i) for i in memory_ids]
        if texts is None:
            found = dict(self.db.run("scripts_of_memories", ids="[" + ",".join(ids) + "]").fetchall())
            scripts = [int(found.get(i, 0)) for i in ids]
        else:
            scripts = [text_script(t) for t in texts]
        flat = pa.array(vectors.astype(np.float32, copy=False).ravel())
        stage = pa.table({
            "memory_id": ids,
            "vector": pa.ListArray.from_arrays(pa.array(np.arange(0, len(flat) + 1, vectors.shape[1], dtype=np.int32)), flat),
        })
        self.db.con.register(_STAGE, stage)
        try:
            self.db.run("upsert_vectors_from_stage", model_id=self.model_id, dim=int(vectors.shape[1]), now=self.clock())
        finally:
            self.db.con.unregister(_STAGE)
        with self._lock:
            if self._matrix is not None:
                for memory_id, vector, script in zip(ids, vectors, scripts):
                    self._put(memory_id, vector, script)
                self.db.on_rollback(self.invalidate)  # rows that never were would skew the similarity statistics

    def remove(self, memory_ids: Sequence[uuid.UUID | str]) -> None:
        for memory_id in memory_ids:
            self.db.run("delete_vector", id=memory_id)
        self.invalidate()

    def search(self, query_vector: np.ndarray, n: int, keep: Callable[[list[str], int], np.ndarray] | None = None,
               counted: Callable[[list[str], int], np.ndarray] | None = None) -> tuple[list[str], np.ndarray]:
        """Exact top-n (ids, cosine similarities) over every vector of the current model. ``keep(ids,
        generation)``, if given, returns which matrix rows may be returned (a filtered recall: the rows
        the caller may see and asked for, eligibility.py); else ``counted`` (the rows the caller may see, of any
        status) when given; ties break by matrix row. Takes the store lock before
        this index's, the order a write takes them in (add), so a first load never waits on a writer crosswise."""
        with self.db.reading(catch_up=False), self._lock:
            if self._matrix is None:
                self._load()
            count = len(self._ids)
            if count == 0:
                return [], np.zeros(0, dtype=np.float32)
            wanted = None if keep is None else keep(self._ids, self.generation)
            if wanted is None and counted is not None:
                wanted = counted(self._ids, self.generation)
            rows, sims = self._scan.top(self._matrix, count, query_vector, n, wanted)
            return [self._ids[i] for i in rows], sims

    def search_with_stats(self, query_vector: np.ndarray, n: int,
                          keep: Callable[[list[str], int], np.ndarray] | None = None,
                          counted: Callable[[list[str], int], np.ndarray] | None = None
                          ) -> tuple[list[str], np.ndarray, list[int], tuple[float, ...]]:
        """``search``, plus each hit's script and the query's similarity sums per script over the vectors of
        the model that ``counted(ids, generation)`` marks (every one when None), whatever ``keep`` says
        (quantised_scan.script_sums): a recall counts the rows its caller may see, and without ``keep`` returns
        only those. Locks as ``search`` does."""
        with self.db.reading(catch_up=False), self._lock:
            if self._matrix is None:
                self._load()
            count = len(self._ids)
            if count == 0:
                return [], np.zeros(0, dtype=np.float32), [], (0.0,) * 6
            wanted = None if keep is None else keep(self._ids, self.generation)
            counts = None if counted is None else counted(self._ids, self.generation)
            if counts is not None and counts.all():
                counts = None  # every row counts: the plain scan
            if wanted is None:
                wanted = counts  # another agent's hidden rows neither count nor crowd the caller's out of the top n
            rows, sims, sums = self._scan.top(self._matrix, count, query_vector, n, wanted, scripts=self._scripts,
                                              counted=counts)
            return [self._ids[i] for i in rows], sims, self._scripts[rows].tolist(), sums

    def inner_products(self, memory_id: str, others: Sequence[str]) -> list[float | None]:
        """The inner product of ``memory_id``'s vector with each of ``others``' (None where either has none): what
        recall_fused's update link reads (list_inner_product over memory_vectors). Locks as ``search`` does."""
        with self.db.reading(catch_up=False), self._lock:
            if self._matrix is None:
                self._load()
            row = self._row.get(memory_id)
            if row is None:
                return [None] * len(others)
            rows = [self._row.get(o) for o in others]
            found = [r for r in rows if r is not None]
            products = iter(matvec(self._matrix[found], self._matrix[row]).tolist() if found else ())
            return [None if r is None else next(products) for r in rows]

    def invalidate(self) -> None:
        """Drop the in-process matrix (after writes this index did not see, e.g. sql(write=True))."""
        with self._lock:
            self._ids, self._row, self._matrix = [], {}, None
            self._scripts = np.zeros(0, np.int8)
            self._scan = QuantisedScan()
            self.generation += 1

    def _load(self) -> None:
        table = self.db.arrow("vectors_of_model", model_id=self.model_id)
        ids = [str(v) for v in table.column("memory_id").to_pylist()]
        dim = self.embedder.dim
        if ids:
            values = table.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
            matrix = values.astype(np.float32, copy=False).reshape(len(ids), dim)
        else:
            matrix = np.zeros((0, dim), dtype=np.float32)
        capacity = max(1024, int(len(ids) * 1.25))
        self._matrix = np.zeros((capacity, dim), dtype=np.float32)
        self._matrix[: len(ids)] = matrix
        scripts = dict(self.db.run("vector_scripts_of_model", model_id=self.model_id).fetchall())
        self._scripts = np.zeros(capacity, np.int8)
        self._scripts[: len(ids)] = [scripts.get(i, 0) for i in ids]
        self._ids = ids
        self._row = {memory_id: i for i, memory_id in enumerate(ids)}
        self._scan = QuantisedScan()
        self.generation += 1

    def _put(self, memory_id: str, vector: np.ndarray, script: int) -> None:
        row = self._row.get(memory_id)
        if row is None:
            row = len(self._ids)
            if row >= self._matrix.shape[0]:
                grown = np.zeros((self._matrix.shape[0] * 2, self._matrix.shape[1]), dtype=np.float32)
                grown[:row] = self._matrix[:row]
                self._matrix = grown
                scripts = np.zeros(len(grown), np.int8)
                scripts[:row] = self._scripts[:row]
                self._scripts = scripts
            self._ids.append(memory_id)
            self._row[memory_id] = row
        else:
            self._scan.rewritten(row)
        self._matrix[row] = vector
        self._scripts[row] = script


@dataclass(frozen=True)
class ReembedReport:
    model_id: str
    embedded: int
    remaining: int
    batches: int


def reembed(index: VectorIndex, *, batch_size: int = 256, limit: int | None = None,
            progress: Callable[[int, int], None] | None = None) -> ReembedReport:
    """Embed every memory whose vector is missing or from another model, one committed batch at a
    time, so an interrupted run resumes where it stopped. ``progress(done, total)`` after each batch."""
    db = index.db
    with db.reading():
        total = db.scalar("count_stale_vectors", model_id=index.model_id)
    if limit is not None:
        total = min(total, limit)
    done = batches = 0
    while done < total:
        with db.reading():
            rows = db.run("stale_vector_batch", model_id=index.model_id, n=min(batch_size, total - done)).fetchall()
        if not rows:
            break
        vectors = index.embed([content for _, content in rows])
        with db.transaction("re-embedding a batch"):
            index.add([memory_id for memory_id, _ in rows], vectors, [content for _, content in rows])
        done += len(rows)
        batches += 1
        if progress is not None:
            progress(done, total)
    with db.reading():
        remaining = db.scalar("count_stale_vectors", model_id=index.model_id)
    return ReembedReport(index.model_id, done, remaining, batches)
