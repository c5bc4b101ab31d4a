"""The keyword arm in process: BM25 over an in-memory copy of ``bm25_postings``.

``bm25_scores`` (sql/macros/30_bm25.sql) is the definition; this is the same formula in numpy for
the agent's unfiltered recall, where the SQL arm cost ~10-14 ms at 100k rows and ~37 ms at 1M
(scanning and grouping every posting of a common word) against ~1-3 ms here. Tests hold the two
equal. Filtered recalls keep the SQL arm: every match has to reach the filters there.

The copy follows the tables lazily, not the write path: before each search one query reads the doc
count, length sum and newest doc number. New docs and postings (doc numbers only grow, from a
sequence) are appended; docs marked dead are masked; anything else (a rebuild, a rolled-back
transaction, a raw SQL write) shows up as counts that disagree, and the copy is reloaded.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from .db import Db

# Postings appended since the last sort are searched by a linear scan; past this share of the
# sorted part they are merged in (a sort), so searches stay logarithmic.
_TAIL_SHARE = 0.1
_NO_DF = float("inf")


@dataclass(frozen=True)
class KeywordArm:
    """The best BM25 matches, as the recall macro takes them ('[…]' texts), plus the query's stats."""

    ids: str | None
    scores: str | None
    rarest: str | None
    query_idf: float | None
    query_spec: float | None
    matches: int


NO_MATCH = KeywordArm(None, None, None, None, None, 0)


class _Postings:
    """Term-sorted postings (term, doc row, tf, doc_len) plus an unsorted tail of recent appends."""

    def __init__(self) -> None:
        self.term = np.zeros(0, np.uint64)
        self.row = np.zeros(0, np.int32)
        self.tf = np.zeros(0, np.int32)
        self.doc_len = np.zeros(0, np.int32)
        self.sorted_upto = 0

    def append(self, term, row, tf, doc_len) -> None:
        self.term = np.concatenate([self.term, term])
        self.row = np.concatenate([self.row, row])
        self.tf = np.concatenate([self.tf, tf])
        self.doc_len = np.concatenate([self.doc_len, doc_len])
        if len(self.term) - self.sorted_upto > _TAIL_SHARE * max(self.sorted_upto, 1):
            order = np.argsort(self.term, kind="stable")
            self.term, self.row, self.tf, self.doc_len = (a[order] for a in (self.term, self.row, self.tf, self.doc_len))
            self.sorted_upto = len(self.term)

    def matching(self, term: np.uint64) -> np.ndarray:
        """Indexes of the postings of this term."""
        head = self.term[: self.sorted_upto]
        start, end = np.searchsorted(head, term, side="left"), np.searchsorted(head, term, side="right")
        tail = np.flatnonzero(self.term[self.sorted_upto:] == term) + self.sorted_upto
        return np.concatenate([np.arange(start, end), tail])


class KeywordSearcher:
    def __init__(self, db: Db):
        self.db = db
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._ids: list[str] = []  # memory id per doc row
        self._order_key = np.zeros((0, 2), np.uint64)  # the memory id as two integers: SQL's uuid order
        self._docs = np.zeros(0, np.int64)  # doc number per doc row, ascending
        self._lens = np.zeros(0, np.int64)
        self._live = np.zeros(0, bool)
        self._postings = _Postings()
        self._max_doc = -1
        self._dead_seen = -1
        self._n_live = 0
        self._live_len = 0
        self._score_buffer: np.ndarray | None = None
        self._rarest_buffer: np.ndarray | None = None

    def invalidate(self) -> None:
        with self._lock:
            self._reset()

    def search(self, query_tokens: str, top: int | None) -> KeywordArm:
        """The ``top`` best matches (all when None) by score, then memory id, as ``bm25_scores`` ranks them."""
        with self._lock:
            state = self.db.dict("keyword_search_state", q=query_tokens)
            self._follow(state)
            terms = np.array(state["terms"] or [], dtype=np.uint64)
            return self._score(terms, state["n_docs"], state["total_len"], top)

    # -- keeping the copy in step --------------------------------------------------------------

    def _follow(self, state: dict) -> None:
        if state["max_doc"] is not None and state["max_doc"] > self._max_doc:
            self._append(self._max_doc)
        if state["n_dead"] != self._dead_seen:
            self._mask_dead(state["n_dead"])
        if (self._n_live, self._live_len) != (state["n_docs"], state["total_len"]):
            self._reset()  # a change this copy cannot follow (a rebuild, a raw write): load it again
            self._append(-1)
            self._mask_dead(state["n_dead"])

    def _append(self, after: int) -> None:
        docs = self.db.run("keyword_docs_after", after=after).to_arrow_table()
        postings = self.db.run("keyword_postings_after", after=after).to_arrow_table()
        ids = [str(v) for v in docs.column("memory_id").to_pylist()]
        numbers = docs.column("doc").to_numpy().astype(np.int64)
        lens = docs.column("len").to_numpy().astype(np.int64)
        self._ids.extend(ids)
        self._order_key = np.concatenate([self._order_key, _order_key(ids)])
        self._docs = np.concatenate([self._docs, numbers])
        self._lens = np.concatenate([self._lens, lens])
        self._live = np.concatenate([self._live, np.ones(len(numbers), bool)])
        self._n_live += len(numbers)
        self._live_len += int(lens.sum())
        posting_docs = postings.column("doc").to_numpy().astype(np.int64)
        rows = np.searchsorted(self._docs, posting_docs)
        known = rows < len(self._docs)
        known[known] = self._docs[rows[known]] == posting_docs[known]  # a doc already deleted never matches
        self._postings.append(postings.column("term").to_numpy()[known], rows[known].astype(np.int32),
                              postings.column("tf").to_numpy()[known].astype(np.int32),
                              postings.column("doc_len").to_numpy()[known].astype(np.int32))
        newest = [int(numbers.max())] if len(numbers) else []
        newest += [int(posting_docs.max())] if len(posting_docs) else []
        self._max_doc = max([self._max_doc, *newest])

    def _mask_dead(self, n_dead: int) -> None:
        """Docs removed since the last compaction (bm25_dead); doc numbers are never reused."""
        dead = np.array([d for (d,) in self.db.run("keyword_dead_docs").fetchall()], np.int64)
        rows = np.searchsorted(self._docs, dead)
        rows = rows[(rows < len(self._docs))]
        rows = rows[np.isin(self._docs[rows], dead) & self._live[rows]]
        self._live[rows] = False
        self._n_live -= len(rows)
        self._live_len -= int(self._lens[rows].sum())
        self._dead_seen = n_dead

    # -- scoring (sql/macros/30_bm25.sql: k1 = 1.2, b = 0.75, log base 10) ----------------------

    def _score(self, terms: np.ndarray, n_docs: int, total_len: int, top: int | None) -> KeywordArm:
        postings, n = self._postings, float(n_docs)
        avgdl = total_len / n_docs if n_docs else 1.0
        score, rarest = self._buffers()
        dfs = []
        for term in np.unique(terms):  # a handful of terms; each posting list is scored in one go
            hits = postings.matching(term)
            rows = postings.row[hits]
            live = self._live[rows]
            hits, rows = hits[live], rows[live]
            if len(hits) == 0:
                continue
            df = len(hits)
            tf = postings.tf[hits].astype(np.float64)
            doc_len = postings.doc_len[hits].astype(np.float64)
            idf = math.log10(((n - df) + 0.5) / (df + 0.5) + 1)
            score[rows] += idf * ((tf * 2.2) / (tf + (1.2 * (0.25 + (0.75 * (doc_len / avgdl))))))
            rarest[rows] = np.minimum(rarest[rows], df)
            dfs.append(df)
        if not dfs:
            return NO_MATCH
        docs = np.flatnonzero(score)  # every touched row scored > 0 (idf and tf terms are positive)
        doc_scores, doc_rarest = score[docs], rarest[docs]  # copies: the buffers are reset for the next search
        score[docs], rarest[docs] = 0.0, _NO_DF
        df = np.array(dfs, dtype=np.float64)
        surprise = np.log(1 + (n - df + 0.5) / (df + 0.5))
        matches = len(docs)
        if top is not None and matches > top:  # keep the top plus every tie with the last of them
            keep = doc_scores >= np.partition(doc_scores, len(docs) - top)[len(docs) - top]
            docs, doc_scores, doc_rarest = docs[keep], doc_scores[keep], doc_rarest[keep]
        key = self._order_key[docs]
        order = np.lexsort((key[:, 1], key[:, 0], -doc_scores))[:top]  # score, then memory id
        return KeywordArm(
            ids="[" + ",".join([self._ids[row] for row in docs[order].tolist()]) + "]",
            scores=_floats(doc_scores[order]),
            rarest=_floats(doc_rarest[order] / n),
            query_idf=float(np.log10(((n - df) + 0.5) / (df + 0.5) + 1).sum()),
            query_spec=float((surprise.mean() + surprise.max()) / 2 / math.log(1 + (n + 0.5) / 0.5)),
            matches=matches,
        )

    def _buffers(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-doc-row score and rarest-df accumulators, kept zeroed between searches."""
        if self._score_buffer is None or len(self._score_buffer) < len(self._ids):
            size = max(1024, int(len(self._ids) * 1.25))
            self._score_buffer = np.zeros(size)
            self._rarest_buffer = np.full(size, _NO_DF)
        return self._score_buffer, self._rarest_buffer


def _order_key(ids: list[str]) -> np.ndarray:
    """Each canonical uuid text as (high, low) 64-bit halves: sorting them sorts like DuckDB's UUID."""
    hexes = [i.replace("-", "") for i in ids]
    return np.array([(int(h[:16], 16), int(h[16:], 16)) for h in hexes], dtype=np.uint64).reshape(len(ids), 2)


def _floats(values: np.ndarray) -> str:
    return "[" + ",".join(map(repr, values.tolist())) + "]"  # repr: the shortest text that reads back exactly
