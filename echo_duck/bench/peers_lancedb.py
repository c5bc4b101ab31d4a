"""LanceDB hybrid search (``lancedb`` from PyPI, embedded, on disk): FTS index + exact vector search + RRF.

Table: id, content (as stored), text (pre-segmented, see peer_text.tokens), vector (float32[dim]).
Keyword arm: ``create_index("text", config=FTS(...))`` (create_fts_index is deprecated in 0.40),
whitespace tokenizer over the pre-segmented text, lower-cased, English stemming as echo_duck's
Porter stemmer, no stop-word list (the text has none left). Vector arm: no vector index, so a flat,
exact scan (L2 on unit vectors ranks as cosine does); at 100k rows an IVF/HNSW index would make the
arm approximate and take a training step, so exact is the like-for-like choice with the others.

Variants: "hybrid" asks each arm for peer_text.POOL candidates and keeps the top k after
``RRFReranker(K=60)``, like the others; "hybrid_limit10" is the idiomatic ``.limit(10)``, where
LanceDB asks each arm for only 10.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa

from . import perf
from .peer_text import POOL, RRF_K, segmented

os.environ.setdefault("LANCEDB_LOG", "error")  # else a WARN line per new dataset and per hybrid query (see report notes)


class LanceDbSystem:
    name = "lancedb"

    def __init__(self, workdir: Path, model: Any):
        import lancedb
        from lancedb.rerankers import RRFReranker

        self.model = model
        self.dir = workdir / "lancedb"
        self.db = lancedb.connect(str(self.dir))
        self.table = None
        self.next_id = 0
        self.reranker = RRFReranker(K=RRF_K)

    def ingest(self, records: Sequence[dict], vectors: np.ndarray | None) -> None:
        contents = [r["content"] for r in records]
        if vectors is None:
            vectors = self.model.embed(contents)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        ids = np.arange(self.next_id, self.next_id + len(contents), dtype=np.int64)
        self.next_id += len(contents)
        batch = pa.table({
            "id": ids,
            "content": contents,
            "text": [segmented(c) for c in contents],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), vectors.shape[1]),
        })
        if self.table is None:
            self.table = self.db.create_table("memories", batch)
        else:
            self.table.add(batch)

    def build_index(self) -> None:
        """FTS index, then compaction of the per-batch fragments and removal of the old versions."""
        from lancedb.index import FTS

        self.table.create_index("text", config=FTS(base_tokenizer="whitespace", lower_case=True, stem=True,
                                                   language="English", remove_stop_words=False, ascii_folding=True))
        self.table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)

    def _hybrid(self, query: str, vector: np.ndarray, limit: int) -> list:
        text = segmented(query)
        if not text:  # nothing for the keyword arm: vector search alone
            return self.table.search(vector).limit(limit).select(["id", "content"]).to_arrow().to_pylist()[:perf.K]
        q = (self.table.search(query_type="hybrid").vector(vector).text(text)
             .select(["id", "content"]).limit(limit).rerank(self.reranker))
        return q.to_arrow().slice(0, perf.K).to_pylist()

    def variants(self) -> dict[str, Callable[[str, np.ndarray], list]]:
        return {"hybrid": lambda q, v: self._hybrid(q, v, POOL),
                "hybrid_limit10": lambda q, v: self._hybrid(q, v, perf.K)}

    def disk_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.dir.rglob("*") if p.is_file())

    def close(self) -> None:
        self.table = None
