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

    def matching(self, terms: np.ndarray) -> np.ndarray:
        """Indexes of the postings of these terms."""
        head = self.term[: self.sorted_upto]
        starts = np.searchsorted(head, terms, side="left")
        ends = np.searchsorted(head, terms, side="right")
        parts = [np.arange(s, e) for s, e in zip(starts, ends) if e > s]
        tail = np.nonzero(np.isin(self.term[self.sorted_upto:], terms))[0] + self.sorted_upto
        return np.concatenate([*parts, tail]) if parts else tail


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
        hits = self._postings.matching(np.unique(terms)) if len(terms) else np.zeros(0, np.int64)
        hits = hits[self._live[self._postings.row[hits]]]
        if len(hits) == 0:
            return NO_MATCH
        term, row = self._postings.term[hits], self._postings.row[hits]
        tf = self._postings.tf[hits].astype(np.float64)
        doc_len = self._postings.doc_len[hits].astype(np.float64)
        unique_terms, term_of_hit, df_per_term = np.unique(term, return_inverse=True, return_counts=True)
        n = float(n_docs)
        avgdl = total_len / n_docs
        idf_per_term = np.log10(((n - df_per_term) + 0.5) / (df_per_term + 0.5) + 1)
        contribution = idf_per_term[term_of_hit] * ((tf * 2.2) / (tf + (1.2 * (0.25 + (0.75 * (doc_len / avgdl))))))
        docs, doc_of_hit = np.unique(row, return_inverse=True)
        score = np.bincount(doc_of_hit, weights=contribution)
        rarest = np.full(len(docs), np.iinfo(np.int64).max)
        np.minimum.at(rarest, doc_of_hit, df_per_term[term_of_hit])
        surprise = np.log(1 + (n - df_per_term + 0.5) / (df_per_term + 0.5))
        query_spec = (surprise.mean() + surprise.max()) / 2 / math.log(1 + (n + 0.5) / 0.5)
        key = self._order_key[docs]
        order = np.lexsort((key[:, 1], key[:, 0], -score))  # score, then memory id
        if top is not None:
            order = order[:top]
        return KeywordArm(
            ids="[" + ",".join(self._ids[docs[i]] for i in order) + "]",
            scores=_floats(score[order]),
            rarest=_floats(rarest[order] / n),
            query_idf=float(idf_per_term.sum()),
            query_spec=float(query_spec),
            matches=len(docs),
        )


def _order_key(ids: list[str]) -> np.ndarray:
    """Each canonical uuid text as (high, low) 64-bit halves: sorting them sorts like DuckDB's UUID."""
    hexes = [i.replace("-", "") for i in ids]
    return np.array([(int(h[:16], 16), int(h[16:], 16)) for h in hexes], dtype=np.uint64).reshape(len(ids), 2)


def _floats(values: np.ndarray) -> str:
    return "[" + ",".join(repr(float(x)) for x in values) + "]"
