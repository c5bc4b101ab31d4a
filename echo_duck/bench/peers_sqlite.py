"""sqlite-vec + SQLite FTS5, on disk, with reciprocal rank fusion in SQL (the sqlite-vec hybrid recipe).

This Python's ``sqlite3`` cannot load extensions, so the connection comes from ``pysqlite3-binary``
(``import pysqlite3.dbapi2``), then ``sqlite_vec.load``. Tables: docs(id, content), a vec0 virtual
table (exact brute-force KNN, cosine) and an FTS5 table over the pre-segmented text
(``porter unicode61``: Porter stemming as echo_duck). WAL journal, synchronous=NORMAL, one
transaction per batch. Each arm returns peer_text.POOL candidates; RRF with k = 60 in one statement.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from . import perf
from .peer_text import POOL, RRF_K, segmented, tokens

HYBRID = """
WITH vec_matches AS (
    SELECT rowid AS id, row_number() OVER (ORDER BY distance) AS rank
    FROM vec WHERE embedding MATCH :qvec AND k = :pool
),
fts_matches AS (
    SELECT rowid AS id, row_number() OVER (ORDER BY rank) AS rank
    FROM fts WHERE fts MATCH :query LIMIT :pool
),
fused AS (
    SELECT id, sum(1.0 / (:rrf_k + rank)) AS score
    FROM (SELECT id, rank FROM vec_matches UNION ALL SELECT id, rank FROM fts_matches)
    GROUP BY id
)
SELECT fused.id, docs.content, fused.score
FROM fused JOIN docs ON docs.id = fused.id
ORDER BY fused.score DESC, fused.id
LIMIT :k
"""
VECTOR_ONLY = """
SELECT v.rowid, docs.content, 1.0 / (:rrf_k + row_number() OVER (ORDER BY v.distance)) AS score
FROM vec v JOIN docs ON docs.id = v.rowid
WHERE v.embedding MATCH :qvec AND k = :k
ORDER BY v.distance
"""


class SqliteVecSystem:
    name = "sqlite"

    def __init__(self, workdir: Path, model: Any):
        import pysqlite3.dbapi2 as sqlite3
        import sqlite_vec

        self.model = model
        self.path = workdir / "sqlite.db"
        self.con = sqlite3.connect(str(self.path))
        self.con.enable_load_extension(True)
        sqlite_vec.load(self.con)
        self.con.enable_load_extension(False)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute("PRAGMA synchronous=NORMAL")
        self.con.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, content TEXT NOT NULL)")
        self.con.execute(f"CREATE VIRTUAL TABLE vec USING vec0(embedding float[{model.dim}] distance_metric=cosine)")
        self.con.execute("CREATE VIRTUAL TABLE fts USING fts5(text, tokenize='porter unicode61')")
        self.next_id = 0

    def ingest(self, records: Sequence[dict], vectors: np.ndarray | None) -> None:
        contents = [r["content"] for r in records]
        if vectors is None:
            vectors = self.model.embed(contents)
        vectors = np.asarray(vectors, dtype=np.float32)
        ids = range(self.next_id, self.next_id + len(contents))
        self.next_id += len(contents)
        with self.con:
            self.con.executemany("INSERT INTO docs (id, content) VALUES (?, ?)", zip(ids, contents))
            self.con.executemany("INSERT INTO vec (rowid, embedding) VALUES (?, ?)", zip(ids, (v.tobytes() for v in vectors)))
            self.con.executemany("INSERT INTO fts (rowid, text) VALUES (?, ?)", zip(ids, map(segmented, contents)))

    def build_index(self) -> None:
        """FTS5 and vec0 are maintained on insert; merge the FTS5 b-trees and checkpoint the WAL."""
        with self.con:
            self.con.execute("INSERT INTO fts (fts) VALUES ('optimize')")
        self.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def hybrid(self, query: str, vector: np.ndarray) -> list:
        params = {"qvec": np.asarray(vector, dtype=np.float32).tobytes(), "rrf_k": RRF_K, "k": perf.K}
        words = tokens(query)
        if not words:
            return self.con.execute(VECTOR_ONLY, params).fetchall()
        match = " OR ".join(f'"{w}"' for w in dict.fromkeys(words))  # tokens are letters/numbers only
        return self.con.execute(HYBRID, {**params, "query": match, "pool": POOL}).fetchall()

    def variants(self) -> dict[str, Callable[[str, np.ndarray], list]]:
        return {"hybrid": self.hybrid}

    def disk_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.path.parent.glob("sqlite.db*"))

    def close(self) -> None:
        self.con.close()
