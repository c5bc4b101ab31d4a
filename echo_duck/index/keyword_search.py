"""The keyword arm in process: BM25 over an in-memory copy of ``bm25_postings``.

``keyword_bm25`` (sql/macros/40_recall.sql; ``bm25_scores`` over the rows the caller may see) is the
definition; this is the same formula in numpy for
the agent's recall, where the SQL arm cost ~12-14 ms at 100k rows and ~37 ms at 1M (scanning and
grouping every posting of a common word) against ~4-5 ms here, its state query included. Each
posting's term is computed with the same operations as DuckDB's (its decimal ``tf * 2.2`` is
``tf * 22 / 10`` here), so scores agree to the last bit or two: SQL sums a document's terms in hash
order. Tests hold the two equal. Recalls use it: unfiltered, their best 10 × keyword_pool matches
go on; filtered, every match (the filters may drop any of the best). A filtered recall inside a
transaction keeps the SQL arm.

A recall's statistics (document count, average length, each term's df) are over the docs of the memories its
caller may see (``counted``, from eligibility.py: ``counted_memories``), and only those docs match: over every
doc, a score would move when another agent wrote a word the caller cannot see. Without ``counted`` (tests,
benches) every live doc counts, as ``bm25_scores``.

The copy follows the tables lazily, not the write path: before each search one query reads the doc
count, length sum, newest doc number and dead-doc count. New docs and postings (doc numbers only
grow, from a sequence) are appended; docs marked dead are masked; anything else (a rebuild, a
compaction, a rolled-back transaction) shows up as counts that disagree, and the copy is reloaded.
Raw SQL through ``EchoDuck.sql(write=True)`` drops the copy; writes through the bare connection
(``mem.db.con``) that keep every count are not seen.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ..storage.db import Db
from .growing import GrowingColumns

# Postings appended since the last sort are searched by a linear scan; past this share of the
# sorted part they are merged in (a sort), so searches stay logarithmic.
_TAIL_SHARE = 0.1
_NO_DF = float("inf")


@dataclass(frozen=True)
class KeywordArm:
    """The best BM25 matches in rank order (score, then id), plus the query's stats."""

    ids: tuple[str, ...]
    scores: tuple[float, ...]
    rarest: tuple[float, ...]  # rarest matched term's df / N, per match
    query_idf: float | None
    query_spec: float | None
    matches: int
    covered: tuple[float, ...] = ()  # per match: the RSJ weights of the query terms it holds (bm25_scores covered_idf)
    query_idf_all: float | None = None  # every content query term's RSJ weight, unseen ones at the largest

    def as_sql(self) -> dict[str, str | float | None]:
        """The arm as the recall macro's parameters: '[…]' texts (NULL when nothing matched)."""
        if not self.ids:
            return dict(p_kw_ids=None, p_kw_scores=None, p_kw_rarest=None, p_kw_covered=None, p_kw_idf_all=None)
        return dict(p_kw_ids="[" + ",".join(self.ids) + "]", p_kw_scores=_floats(self.scores),
                    p_kw_rarest=_floats(self.rarest), p_kw_covered=_floats(self.covered),
                    p_kw_idf_all=self.query_idf_all)

    def as_bridge_sql(self) -> dict[str, str | float | None]:
        """The arm over a question's bridged words (text/bridge.py) as recall_fused's p_br_* parameters."""
        sql = self.as_sql()
        return dict(p_br_ids=sql["p_kw_ids"], p_br_covered=sql["p_kw_covered"],
                    p_br_idf_all=sql["p_kw_idf_all"])


NO_MATCH = KeywordArm((), (), (), None, None, 0)


class _Postings:
    """Postings (term, doc row, tf, doc_len): a term-sorted head plus an unsorted tail of appends."""

    def __init__(self) -> None:
        self.columns = GrowingColumns(term=np.uint64, row=np.int32, tf=np.int32, doc_len=np.int32)
        self.sorted_upto = 0

    def append(self, term, row, tf, doc_len) -> None:
        self.columns.append(term=term, row=row, tf=tf, doc_len=doc_len)
        if self.columns.size - self.sorted_upto > _TAIL_SHARE * max(self.sorted_upto, 1):
            c = self.columns
            order = np.argsort(c.term, kind="stable")
            term, row, tf, doc_len = c.term[order], c.row[order], c.tf[order], c.doc_len[order]
            c.size = 0
            c.append(term=term, row=row, tf=tf, doc_len=doc_len)
            self.sorted_upto = c.size

    def matching(self, term: np.uint64) -> np.ndarray:
        """Indexes of the postings of this term."""
        all_terms = self.columns.term
        head = all_terms[: self.sorted_upto]
        start, end = np.searchsorted(head, term, side="left"), np.searchsorted(head, term, side="right")
        tail = np.flatnonzero(all_terms[self.sorted_upto:] == term) + self.sorted_upto
        return np.concatenate([np.arange(start, end), tail])


class KeywordSearcher:
    def __init__(self, db: Db):
        self.db = db
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self.generation = getattr(self, "generation", -1) + 1  # doc rows are numbered anew after a reset
        self._ids: list[str] = []  # memory id per doc row
        self._row_of: dict[str, int] = {}  # memory id -> its newest doc row
        # per doc row: doc number (ascending), the memory id as two integers (SQL's uuid order), length, live
        self._docs = GrowingColumns(number=np.int64, id_high=np.uint64, id_low=np.uint64, length=np.int64, live=bool)
        self._postings = _Postings()
        self._max_doc = -1
        self._dead_seen = 0
        self._n_live = 0
        self._live_len = 0
        self._score_buffer = np.zeros(0)
        self._rarest_buffer = np.zeros(0)
        self._covered_buffer = np.zeros(0)
        self._followed: int | None = None  # Db.writes_but_reviews when the copy last followed the tables
        self._stats: tuple[int, int] = (0, 0)  # (live docs, their length sum) then
        self._counted: tuple | None = None  # (caller's mask, follow state) -> (live & mask, docs, length sum): the last
        self._terms = QueryTerms(self.db)

    def invalidate(self) -> None:
        with self._lock:
            self._reset()

    def search(self, query_tokens: str, top: int | None, *, keep: Callable[[list[str], int], np.ndarray] | None = None,
               also: Iterable[str] = (), counted: Callable[[list[str], int], np.ndarray] | None = None,
               groups: Callable[[list[str], int], np.ndarray] | None = None) -> KeywordArm:
        """The ``top`` best matches (all when None) by score, then memory id, as ``keyword_bm25`` ranks them.

        ``counted(doc ids, generation)`` (eligibility.counted) says which doc rows the statistics count and may
        match (None: every live doc, as ``bm25_scores``). ``keep(doc ids, generation)`` (a filtered recall:
        eligibility.keyword_keep) says which of those may be returned: then the arm is the ``top`` best of
        them, followed by any other kept match whose id is in ``also`` (the vector arm's candidates, whose
        rarest-term ratio fusion reads), in rank order. ``groups(doc ids, generation)``: a code per doc row (its
        author); then ``top`` is the best of each group (fusion pools each author's best)."""
        with self.db.reading(catch_up=False), self._lock:  # the store lock first, as every caller takes it
            written = self._catch_up()
            if top is not None and top <= 0:
                return NO_MATCH
            terms = np.array(self._terms.of(query_tokens, written), dtype=np.uint64)
            return self._score(terms, *self._population(counted), top, keep, also, groups)

    def covered(self, query_tokens: str, ids: Iterable[str],
                counted: Callable[[list[str], int], np.ndarray] | None = None) -> KeywordArm:
        """The coverage terms of ``keyword_bm25`` (covered_idf, query_idf_all) for these memories only, those
        holding a query term, in the order given (no scores): what recall's bridge reads for the vector arm's
        candidates in the other script (text/bridge.py), without ranking every match of a common word.
        ``counted`` as for ``search``."""
        with self.db.reading(catch_up=False), self._lock:
            written = self._catch_up()
            terms = np.array(self._terms.of(query_tokens, written), dtype=np.uint64)
            live, n_docs, _ = self._population(counted)
            wanted = [(i, r) for i, r in ((i, self._row_of.get(i)) for i in ids) if r is not None and live[r]]
            rows = np.array([r for _, r in wanted], np.int64)
            postings, n = self._postings, float(n_docs)
            covered, dfs = np.zeros(len(rows)), []
            mark = np.zeros(len(self._ids), bool)  # doc rows holding the term: a mask, not a sort (np.isin)
            for term in np.unique(terms):  # the order _score adds them in
                hits = postings.matching(term)
                held = postings.columns.row[hits]
                held = held[live[held]]
                if len(held) == 0:
                    continue
                dfs.append(len(held))
                mark[held] = True
                covered[mark[rows]] += _information(n, len(held))
                mark[held] = False
            if not dfs:
                return NO_MATCH
            found = covered > 0
            unseen = len(terms) - len(dfs)
            return KeywordArm(ids=tuple(i for (i, _), f in zip(wanted, found) if f), scores=(), rarest=(), query_idf=None,
                              query_spec=None, matches=int(found.sum()), covered=tuple(covered[found].tolist()),
                              query_idf_all=sum(_information(n, df) for df in dfs) + unseen * _information(n, 0))

    def common_words(self, query_tokens: str, who: dict, counted: Callable[[list[str], int], np.ndarray]) -> list[str]:
        """The query's words that more than half of the docs the caller's statistics count hold, sorted:
        ``keyword_common_words``; ``who`` its caller parameters, ``counted`` (eligibility.counted) those docs."""
        with self.db.reading(catch_up=False), self._lock:
            written = self._catch_up()
            if written is None or not _SIMPLE.fullmatch(query_tokens):
                return [w for (w,) in self.db.run("keyword_common_words", q=query_tokens, **who).fetchall()]
            postings, (live, n, _) = self._postings, self._population(counted)
            common = []
            for word, term in self._terms.words(query_tokens, written):
                hits = postings.matching(np.uint64(term))
                if 2 * int(live[postings.columns.row[hits]].sum()) > n:
                    common.append(word)
            return sorted(common)

    def _catch_up(self) -> int | None:
        """Follow the tables when something was written; the write count (None inside a transaction: ask SQL there)."""
        written = self.db.writes_but_reviews
        if written is None or written != self._followed:
            state = self.db.dict("keyword_state")
            self._follow(state)
            self._followed, self._stats = written, (state["n_docs"], state["total_len"])
        return written

    # -- keeping the copy in step --------------------------------------------------------------

    def _follow(self, state: dict) -> None:
        if state["n_dead"] < self._dead_seen:  # a compaction, or a rolled-back removal: start again
            self._reset()
        if state["max_doc"] is not None and state["max_doc"] > self._max_doc:
            self._append(self._max_doc)
        if state["n_dead"] != self._dead_seen:
            self._mask_dead(state["n_dead"])
        if (self._n_live, self._live_len) != (state["n_docs"], state["total_len"]):
            self._reset()  # a change this copy cannot follow (a rebuild, a rollback, a raw write)
            self._append(-1)
            self._mask_dead(state["n_dead"])

    def _append(self, after: int) -> None:
        docs = self.db.arrow("keyword_docs_after", after=after)
        postings = self.db.arrow("keyword_postings_after", after=after)
        ids = [str(v) for v in docs.column("memory_id").to_pylist()]
        numbers = docs.column("doc").to_numpy().astype(np.int64)
        lengths = docs.column("len").to_numpy().astype(np.int64)
        high, low = _order_key(ids)
        self._row_of.update(zip(ids, range(len(self._ids), len(self._ids) + len(ids))))
        self._ids.extend(ids)
        self._docs.append(number=numbers, id_high=high, id_low=low, length=lengths, live=np.ones(len(ids), bool))
        self._n_live += len(ids)
        self._live_len += int(lengths.sum())
        known_docs = self._docs.number
        posting_docs = postings.column("doc").to_numpy().astype(np.int64)
        rows = np.searchsorted(known_docs, posting_docs)
        known = rows < len(known_docs)
        known[known] = known_docs[rows[known]] == posting_docs[known]  # a doc already deleted never matches
        self._postings.append(postings.column("term").to_numpy()[known], rows[known].astype(np.int32),
                              postings.column("tf").to_numpy()[known].astype(np.int32),
                              postings.column("doc_len").to_numpy()[known].astype(np.int32))
        newest = [int(numbers.max())] if len(numbers) else []
        newest += [int(posting_docs.max())] if len(posting_docs) else []
        self._max_doc = max([self._max_doc, *newest])

    def _mask_dead(self, n_dead: int) -> None:
        """Docs removed since the last compaction (bm25_dead); doc numbers are never reused."""
        dead = np.unique(np.array([d for (d,) in self.db.run("keyword_dead_docs").fetchall()], np.int64))
        numbers, live = self._docs.number, self._docs.live
        rows = np.searchsorted(numbers, dead)
        rows = rows[rows < len(numbers)]
        rows = rows[np.isin(numbers[rows], dead) & live[rows]]
        live[rows] = False
        self._n_live -= len(rows)
        self._live_len -= int(self._docs.length[rows].sum())
        self._dead_seen = n_dead

    # -- scoring (sql/macros/30_bm25.sql: k1 = 1.2, b = 0.75, log base 10) ----------------------

    def _population(self, counted: Callable[[list[str], int], np.ndarray] | None) -> tuple[np.ndarray, int, int]:
        """The doc rows the statistics count and may match (live, and marked by ``counted`` when given), their
        number and length sum. The caller's mask is the same array until a write (eligibility.py keeps it), so
        the last one's sums are kept while the copy stands."""
        if counted is None:
            return self._docs.live, *self._stats
        mask = counted(self._ids, self.generation)
        last = self._counted
        if last is not None and last[0] is mask and last[1] == (self._n_live, self._live_len, len(self._ids)):
            return last[2]
        rows = self._docs.live & mask
        found = rows, int(np.count_nonzero(rows)), int(self._docs.length[rows].sum())
        self._counted = (mask, (self._n_live, self._live_len, len(self._ids)), found)
        return found

    def _score(self, terms: np.ndarray, live: np.ndarray, n_docs: int, total_len: int, top: int | None,
               allow: Callable[[list[str], int], np.ndarray] | None = None, also: Iterable[str] = (),
               groups: Callable[[list[str], int], np.ndarray] | None = None) -> KeywordArm:
        postings, n = self._postings, float(n_docs)
        avgdl = total_len / n_docs if n_docs else 1.0
        score, rarest, covered = self._buffers()
        touched, dfs = [], []
        try:
            for term in np.unique(terms):  # a handful of terms; each posting list is scored in one go
                hits = postings.matching(term)
                rows = postings.columns.row[hits]
                keep = live[rows]
                hits, rows = hits[keep], rows[keep]
                if len(hits) == 0:
                    continue
                df = len(hits)
                tf = postings.columns.tf[hits].astype(np.float64)
                doc_len = postings.columns.doc_len[hits].astype(np.float64)
                idf = math.log10(((n - df) + 0.5) / (df + 0.5) + 1)
                # (tf * 22) / 10 is DuckDB's decimal tf * (1.2 + 1), rounded once to a double as there
                score[rows] += idf * (((tf * 22.0) / 10.0) / (tf + (1.2 * (0.25 + (0.75 * (doc_len / avgdl))))))
                rarest[rows] = np.minimum(rarest[rows], df)
                covered[rows] += _information(n, df)
                touched.append(rows)
                dfs.append(df)
            if not dfs:
                return NO_MATCH
            # touched rows, ascending: each scored > 0 (idf and tf terms are positive); != 0 first: numpy's
            # nonzero on a float buffer is ~10x slower than on the bool array
            docs = np.flatnonzero(score != 0)
            doc_scores, doc_rarest, doc_covered = score[docs], rarest[docs], covered[docs]  # copies, before the reset
        finally:
            for rows in touched:  # leave the buffers zeroed, whatever happened
                score[rows], rarest[rows], covered[rows] = 0.0, _NO_DF, 0.0
        surprise = [math.log(1 + (n - df + 0.5) / (df + 0.5)) for df in dfs]
        matches = len(docs)
        extra = np.zeros(len(docs), bool)
        if allow is not None:
            kept = allow(self._ids, self.generation)[docs]
            wanted = [r for r in map(self._row_of.get, also) if r is not None]
            extra = np.isin(docs, np.array(wanted, np.int64))[kept]
            docs, doc_scores, doc_rarest, doc_covered = docs[kept], doc_scores[kept], doc_rarest[kept], doc_covered[kept]
        several = groups is not None and top is not None and len(docs) > top
        codes = groups(self._ids, self.generation)[docs] if several else None  # no lock taken when all make the cut
        if codes is not None and codes.min() != codes.max():
            # every match up to the last that is among its group's best top (so each keeps its rank among all, as
            # recall_fused ranks them), and the extra
            order = np.lexsort((self._docs.id_low[docs], self._docs.id_high[docs], -doc_scores))
            group = codes[order]
            by_group = np.argsort(group, kind="stable")  # group by group, each in rank order
            sorted_groups = group[by_group]
            rank = np.empty(len(order), np.int64)
            rank[by_group] = np.arange(len(order)) - np.searchsorted(sorted_groups, sorted_groups, side="left")
            last = int(np.flatnonzero(rank < top)[-1])  # len(docs) > top: some rank is below it
            order = order[(np.arange(len(order)) <= last) | extra[order]]
            top = None
        else:
            if top is not None and len(docs) > top:
                # keep the top scores and every score tied with the last of them, so that the id
                # tie-break below decides which of the tied make the cut, as in SQL
                cut = (doc_scores >= np.partition(doc_scores, len(docs) - top)[len(docs) - top]) | extra
                docs, doc_scores = docs[cut], doc_scores[cut]
                doc_rarest, doc_covered = doc_rarest[cut], doc_covered[cut]
                extra = extra[cut]
            order = np.lexsort((self._docs.id_low[docs], self._docs.id_high[docs], -doc_scores))  # score, then id
        if top is not None:
            order = np.concatenate([order[:top], order[top:][extra[order[top:]]]])
        query_idf = sum(math.log10(((n - df) + 0.5) / (df + 0.5) + 1) for df in dfs)
        query_info = sum(_information(n, df) for df in dfs)
        unseen = len(terms) - len(dfs)  # content terms no live doc holds: counted at the largest weight
        return KeywordArm(
            ids=tuple(self._ids[row] for row in docs[order].tolist()),
            scores=tuple(doc_scores[order].tolist()),
            rarest=tuple((doc_rarest[order] / n).tolist()),
            query_idf=query_idf,
            query_spec=(sum(surprise) / len(surprise) + max(surprise)) / 2 / math.log(1 + (n + 0.5) / 0.5),
            matches=matches,
            covered=tuple(doc_covered[order].tolist()),
            query_idf_all=query_info + unseen * _information(n, 0),
        )

    def _buffers(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-doc-row score, rarest-df and covered-IDF accumulators, zeroed between searches."""
        if len(self._score_buffer) < len(self._ids):
            size = max(1024, 2 * len(self._ids))
            self._score_buffer, self._rarest_buffer = np.zeros(size), np.full(size, _NO_DF)
            self._covered_buffer = np.zeros(size)
        return self._score_buffer, self._rarest_buffer, self._covered_buffer


class QueryTerms:
    """A query's content terms as ``bm25_scores`` derives them (``keyword_query_terms``): each word of
    ``bm25_tokens(q)`` but stop words, as ``hash(stem(w, 'porter'))``, distinct. For a query whose
    characters are printable ASCII or CJK ideographs, ``lower(strip_accents(q))`` changes ASCII capitals
    only, so splitting it here gives SQL's words; each word's term comes from SQL once and is kept
    (bounded), with the stop words, until a write other than recall bookkeeping. Other queries, and
    every query inside a transaction, ask SQL."""

    MAX_WORDS = 100_000  # ~10 MB at most; cleared when full

    def __init__(self, db: Db):
        self.db = db
        self._written: int | None = None
        self._stop: frozenset[str] = frozenset()
        self._words: dict[str, int] = {}

    def of(self, query_tokens: str, written: int | None) -> list[int]:
        if written is None or not _SIMPLE.fullmatch(query_tokens):
            return list(self.db.scalar("keyword_query_terms", q=query_tokens) or [])
        return list(dict.fromkeys(term for word, term in self.words(query_tokens, written) if word not in self._stop))

    def words(self, query_tokens: str, written: int) -> list[tuple[str, int]]:
        """Each distinct word of a simple query (stop words too) with its term; ``written`` is not None."""
        if written != self._written:
            self._stop = frozenset(w for (w,) in self.db.run("keyword_stopwords").fetchall())
            self._words, self._written = {}, written
        words = list(dict.fromkeys(w for w in query_tokens.lower().split(" ") if w))
        if any(w not in self._words for w in words):
            if len(self._words) > self.MAX_WORDS:
                self._words = {}
            self._words.update(self.db.run("keyword_query_words", q=query_tokens).fetchall())
        return [(w, self._words[w]) for w in words]


_SIMPLE = re.compile("[\x20-\x7e\u4e00-\u9fff]*")


def _information(n: float, df: int) -> float:
    """bm25_scores' term weight for coverage: log10((N' - df + 0.5) / (df + 0.5)), N' = max(N, 2 df + 1)."""
    return math.log10(((max(n, 2 * df + 1) - df) + 0.5) / (df + 0.5))


def _order_key(ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each canonical uuid text as high and low 64-bit halves: sorting them sorts like DuckDB's UUID."""
    hexes = [i.replace("-", "") for i in ids]
    return (np.array([int(h[:16], 16) for h in hexes], dtype=np.uint64),
            np.array([int(h[16:], 16) for h in hexes], dtype=np.uint64))


def _floats(values: tuple[float, ...]) -> str:
    return "[" + ",".join(map(repr, values)) + "]"  # repr: the shortest text that reads back exactly
