"""Hybrid recall (SPEC R1-R13): a frozen query description, the two arms, fusion, and the recall log.

A recall computes both arms in process: BM25 over a copy of the postings (keyword_search.py) and the
exact vector top-N over a matrix (vectors.py). A copy of the columns that decide visibility, the
filters and decay (eligibility.py) keeps the candidates the caller may see and asked for, with their
decay terms, as the named query ``recall_eligible`` and ``recall_fused``'s eligible step do; with
filters it also picks the vector top-N among the rows they keep. fusion.py then ranks as
``recall_fused`` (sql/macros/40_recall.sql), the definition, would. Inside a transaction a filtered
recall runs both arms in SQL and calls ``recall_fused`` itself. ``recall_hits`` is the same ranking
with both arms computed in SQL, for analysts. Tests hold them all equal.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Callable, Collection, Mapping

import numpy as np

from ..index.indexing import Indexer
from ..index.keyword import query_text
from ..index.keyword_search import NO_MATCH
from ..models import memory_author
from ..storage.db import Db
from ..text import segment, when
from ..write.writer import Caller
from . import bridge_arm, fusion
from .vector_text import vector_question
from .eligibility import FILTERS, EligibilityCopy
from .hits import Hit, RecallQuery, checked_vector, hit_from_row
from .recall_log import RecallJournal
from .store_reads import StoreReads
from .rerank import Reranker, RerankSettings, fetched, reranked

# The exact scan (in process or in SQL) hands the macro this many times vector_pool of the rows the caller may
# recall: the macro's gates and the caller's own half still leave vector_pool to rank.
OVERFETCH = 4


@dataclass
class Recaller:
    db: Db
    indexer: Indexer
    clock: Callable[[], datetime]
    reranker: Reranker | None = None
    rerank_settings: RerankSettings = RerankSettings()
    journal: RecallJournal | None = None  # None on a read-only store: nothing is recorded
    eligibility: EligibilityCopy = field(init=False)
    reads: StoreReads = field(init=False)

    def __post_init__(self) -> None:
        self.eligibility = EligibilityCopy(self.db)
        self.reads = StoreReads(self.db)
        if self.journal is not None:  # reinforcing the winners changes three columns: kept rows take them
            self.journal.on_reinforced = self.eligibility.reinforced

    @staticmethod
    def warm() -> None:
        """Start loading jieba's dictionary in the background (the store calls this once it is open, so the
        load does not compete with the open itself), ready for the first Chinese query."""
        segment.preload()

    def vector_text(self, question: str, who: dict[str, Any], tokens: str | None = None) -> str:
        """The question as the vector arm embeds it, less the words more than half of the memories the caller may
        see hold (vector_text.py); ``who``: the caller's p_caller_* parameters; ``tokens``: its query_text, when
        already made."""
        common = self.indexer.keyword_search.common_words(query_text(question) if tokens is None else tokens, who,
                                                          self.eligibility.counted("keyword", who))
        return vector_question(question, common)

    def recall(self, caller: Caller, query: RecallQuery, *, explain: bool = False,
               query_vector: np.ndarray | None = None, kb: Any = None) -> list[Hit]:
        with self.journal.recalling() if self.journal is not None else contextlib.nullcontext():
            return self._recall(caller, query, explain, query_vector, kb)

    def _recall(self, caller: Caller, query: RecallQuery, explain: bool, query_vector: np.ndarray | None,
                kb: Any) -> list[Hit]:
        vectors = self.indexer.vectors if "vector" in query.arms else None
        q_tokens = query_text(query.text) if "keyword" in query.arms else None  # before the lock: jieba is slow
        reads_common = vectors is not None and query_vector is None  # the vector arm drops the store's common words
        v_tokens = (q_tokens if q_tokens is not None else query_text(query.text)) if reads_common else None
        with self.db.reading(catch_up=False):  # queued bookkeeping (recall_log.py) stays queued: see _fused_*
            teams, tenants, settings = self.caller_context(caller.agent_id)
            who = dict(p_caller_agent=caller.agent_id, p_caller_session=caller.session_id, p_caller_teams=teams,
                       p_caller_tenants=tenants, p_caller_host=caller.admin)
            # both arms' statistics count the rows the caller may see (counted_memories), and only those match
            counted = self.eligibility.counted("keyword", who)
            # Inside a transaction only SQL sees its uncommitted rows, so a recall there runs recall_fused over arms
            # computed in SQL; elsewhere the copy applies the eligibility rules and filters (eligibility.py).
            in_sql = self.db.in_transaction
            keyword = NO_MATCH
            if q_tokens is not None and not in_sql and not query.filtered:  # filtered: after the vector arm
                keyword = self.indexer.keyword_search.search(q_tokens, keyword_cut(settings), counted=counted)
            v_text = self.vector_text(query.text, who, v_tokens) if reads_common else None
        filters = dict(p_types=_list(query.types), p_tiers=_list(query.tiers), p_tags=_list(query.tags),
                       p_entities=_list(query.entities), p_since=query.since, p_until=query.until,
                       p_session=query.session, p_include_superseded=query.include_archived)
        wanted = {name: filters[f"p_{name}"] for name in FILTERS} if query.filtered else None
        vector = fusion.NO_VECTORS
        if "vector" not in query.arms:
            arm = "disabled by the caller"
        elif vectors is None:
            self.indexer.warn_keyword_only_once()
            arm = "unavailable: no embedding model installed (keyword-only)"
        else:
            qvec = vectors.embed_question(v_text) if query_vector is None else checked_vector(query_vector, vectors.embedder.dim)
            with self.db.reading(catch_up=False):
                pool = int(settings["vector_pool"]) * OVERFETCH
                if in_sql:
                    literal = _vector_literal(qvec)
                    ids, sims, scripts = self.db.run("exact_vector_candidates", p_qvec=literal, p_model=vectors.model_id,
                                                     p_n=pool, **who, **filters).fetchone()
                    stats = self.db.scalar("query_similarity_stats", p_qvec=literal, p_model=vectors.model_id, **who)
                    vector = fusion.VectorArm(ids, sims, scripts, stats, when.text_script(query.text), vectors.model_id)
                    arm = "exact (sql)"
                else:
                    # the top-N among the rows the caller may recall (and the filters keep), as exact_vector_candidates:
                    # the top-N it may see, eligible after, lost a live fact behind 200 of its own older versions
                    ids, sims, scripts, sums = self.eligibility.vector_candidates(
                        vectors.search_with_stats, qvec, pool, who=who, include_superseded=query.include_archived,
                        filters=wanted)
                    arm = "exact (in-process, filtered)" if query.filtered else "exact (in-process)"
                    vector = fusion.VectorArm(ids, sims, scripts, fusion.calibration_stats(*sums),
                                              when.text_script(query.text), vectors.model_id)
        b_tokens = bridge_arm.bridged_words(query.text, vector) if q_tokens is not None else None
        bridged = None
        if b_tokens is not None and not in_sql:
            bridged = bridge_arm.bridge_coverage(b_tokens, vector, self.indexer.keyword_search, counted)
        if q_tokens is not None and not in_sql and query.filtered:
            # Filtered: among the matches the caller may see and asked for, fusion ranks each pool group's best
            # keyword_pool (its pools), and reads the rarest-term ratio of any of them in the vector arm; the rest
            # cannot change the list (recall_fused reads them all inside a transaction, to the same list).
            with self.db.reading(catch_up=False):
                keep = self.eligibility.keyword_keep(who=who, include_superseded=query.include_archived, filters=wanted)
                keyword = self.indexer.keyword_search.search(q_tokens, int(settings["keyword_pool"]), keep=keep,
                                                             also=vector.ids, counted=counted,
                                                             groups=self.eligibility.keyword_groups(who))
        fetch = fetched(query.k, self.reranker, self.rerank_settings)
        time = self.time_terms(query.text)
        with self.db.reading(catch_up=False):
            if in_sql:  # half of the k asked for is kept for the caller's own, not of what the reranker reads
                rows = self._fused_in_sql(q_tokens, vector, who, filters, time, query.min_score, fetch, b_tokens,
                                          query.k)
            else:
                rows = self._fused_in_process(keyword, vector, who, query.include_archived, time, query.min_score,
                                              fetch, wanted, settings, bridged, query.k)
        hits = [hit_from_row(row, arm, explain, v_text if v_text != query.text else None, time.window) for row in rows]
        gated = {str(row["id"]) for row in rows if row["gate"] != fusion.KEPT}  # returned, but no review (SPEC R10)
        last = gated
        if kb is not None:  # KB chunks score on the same scale (sql/macros/60_kb.sql): one sort by score merges,
            # the gated of both lists after the kept of both
            chunks, last = kb.ranked(caller, query.text, fetch, tags=query.tags, explain=explain)
            last |= gated
            # at equal scores (to 9 places: the two arms' floats differ in their last bits) a memory before a document
            # (documents are untrusted text; the sort was by name: kb first)
            def order(h) -> tuple:
                return h.id in last, -round(h.score, 9), h.origin != "memory", h.id
            hits = sorted([*hits, *chunks], key=order)
            last |= _crowded(hits, caller.agent_id, query.k, last, caller.admin)  # documents under their owner too
            hits = sorted(hits, key=order)[:fetch]
        hits = reranked(query.text, hits, self.reranker, self.rerank_settings, last)[: query.k]
        memory_hits = [h for h in hits if h.origin == "memory"]  # only memories are reinforced and logged
        recall_id = self._log(caller, query, memory_hits, None if vectors is None else vectors.model_id, settings,
                              gated)
        return [replace(h, recall_id=recall_id) if h.origin == "memory" else h for h in hits]

    def caller_context(self, agent_id: str) -> tuple[list[str], list[str], dict[str, float]]:
        """The agent's teams and tenants (as caller_groups(agent) lists them) and the ranking tunables:
        two plain reads, kept while nothing is written (store_reads.py)."""
        return self.reads.caller_context(agent_id)

    def time_terms(self, question: str) -> fusion.TimeTerms:
        """What the question says about time, relative to the store's clock (text/when.py)."""
        recency = fusion.RECENCY_WEIGHT if when.wants_current(question) else None
        return fusion.TimeTerms(recency, when.time_window(question, self.clock()), when.asks_when(question))

    def _fused_in_process(self, keyword, vector, who, include_archived, time, min_score, fetch, wanted,
                          settings, bridged=None, asked=None) -> list[dict]:
        """The candidates the caller may see and asked for (``wanted``: the filters), with their decay terms
        (eligibility.py, as recall_eligible and recall_fused keep them), ranked by fusion.py (``asked``: the hits
        asked for, half of which is kept for the caller's own; None: ``fetch``)."""
        candidates = list(dict.fromkeys([*keyword.ids, *vector.ids]))
        if not candidates:
            return []
        reviews = self.journal.pending_reviews(candidates) if self.journal is not None else {}
        eligible = self.eligibility.rows(candidates, who=who, include_superseded=include_archived, now=self.clock(),
                                         settings=settings, reviews=reviews, filters=wanted)
        ranked = fusion.fuse(keyword, vector, eligible, settings, fetch, time, min_score, bridged,
                             self.indexer.vectors.inner_products if self.indexer.vectors is not None else None,
                             caller=who["p_caller_agent"], asked=asked, caller_host=bool(who["p_caller_host"]))
        if not ranked:
            return []
        winner_ids = [f.memory_id for f in ranked]
        stored = {i: {**row, "conflicts_with": None} for i, row in self.eligibility.winners_rows(winner_ids).items()}
        pairs = _conflicts_by_side(self.reads.conflicts(winner_ids, _id_literal(winner_ids)), stored)
        seen = self.eligibility.counted_ids([str(other) for _, other, _ in pairs], who)  # recall_fused's conflicts step
        for side, other, _ in ((s, o, p) for s, o, p in pairs if str(o) in seen):
            row = stored[side]
            row["conflicts_with"] = [*(row["conflicts_with"] or []), other]  # as recall_fused's list, NULL if none
        outranked = self._outranked([(s, str(o)) for s, o, p in pairs if p and str(o) in seen], stored,
                                    memory_author(who["p_caller_agent"], who["p_caller_host"]))
        if outranked:  # recall_fused's outranked step: after the kept, among the k winners
            ranked = sorted((replace(f, gate=fusion.OUTRANKED) if f.gate == fusion.KEPT and f.memory_id in outranked
                             else f for f in ranked), key=lambda f: (f.gate != fusion.KEPT, -f.score, f.memory_id))
        for memory_id, (n, last) in reviews.items():  # the rows as they will be once the queue is written
            if memory_id in stored:
                stored[memory_id].update(access_count=stored[memory_id]["access_count"] + n, last_accessed=last)
        return [{**stored[f.memory_id], **vars(f)} for f in ranked]

    def _outranked(self, pending: list[tuple[str, str]], stored: Mapping[str, dict], caller: str) -> set[str]:
        """The winners whose pending dispute is with a live fact the caller may see that stands against them, as
        recall_fused's outranked step says: of higher provenance by the winner's own author, else the caller's own
        (``pending``: (winner, other) pairs, the other already known visible; ``caller`` and authors as memory_author
        names them)."""
        if not pending:
            return set()
        return fusion.outranked(pending, stored, self.eligibility.winners_rows(list({o for _, o in pending})), caller)

    def _fused_in_sql(self, q_tokens, vector, who, filters, time, min_score, fetch, b_tokens=None,
                      asked=None) -> list[dict]:
        """Inside a transaction: the recall macro over the arms SQL computed for the rows the caller may recall.
        The macro reads stored access counts: reviews still queued are not counted here, since writing
        the queue inside the caller's transaction would lose it if that rolled back (recall_log.py)."""
        common = dict(**vector.as_sql(), **who, p_k=fetch, **time.as_sql(), p_min_score=min_score, **filters,
                      p_now=self.clock(), p_asked=asked)
        if q_tokens is not None:
            return self.db.dicts("recall_keywords_in_sql", p_query=q_tokens, p_bridge=b_tokens, **common)
        return self.db.dicts("recall", **NO_MATCH.as_sql(), **NO_MATCH.as_bridge_sql(), **common)

    def _log(self, caller: Caller, query: RecallQuery, hits: list[Hit], model_id: str | None,
             settings: dict[str, float], gated: set[str] = frozenset()) -> int | None:
        """Queue the hits' reinforcement (SPEC R10) and the recall log row (recall_log.py); the recall id.
        Nothing on a read-only store."""
        if self.journal is None:
            return None
        floor, top = settings.get("reinforce_min_relevance", 0.0), settings.get("reinforce_top", query.k)
        return self.journal.record(occurred_at=self.clock(), agent_id=caller.agent_id, session_id=caller.session_id,
                                   query=query.text, k=query.k, model_id=model_id,
                                   memory_ids=tuple(h.id for h in hits), scores=tuple(h.score for h in hits),
                                   reinforced=query.reinforce, include_archived=query.include_archived,
                                   reinforced_ids=reinforced_hits(hits, floor, int(top), gated, caller.agent_id))


def reinforced_hits(hits: list[Hit], floor: float, top: int, gated: Collection[str] = (),
                    owner: str | None = None) -> tuple[str, ...]:
    """The hits a recall counts as reviews (SPEC R10) — the ones the caller plausibly used: at most ``top``
    (reinforce_top, 3) of the best, each scoring at least ``floor`` (reinforce_min_relevance, 0.5) of the
    best hit's score (hits ranked last by a gate, ``gated``, are never reviewed); the rest of a k=10 list are near
    misses, and reviewing them would keep unrelated weak matches from ever decaying. The best score is the highest,
    not the first: a reranker may put a lower-scored hit first, and must not lower the floor by it. Only the
    ``owner``'s own memories are reviewed: another agent's recalls must not raise a memory's rank or keep it from
    decaying, as its marks may not (mark() is the owner's); the ``top`` are counted among the owner's, so another
    agent's memories ranked above its own cannot keep them from being reviewed (they still set the floor)."""
    hits = [h for h in hits if h.id not in gated]
    best = max((h.score for h in hits), default=0.0)
    if best <= 0:
        return ()
    own = [h for h in hits if owner is None or h.memory.agent_id == owner]
    return tuple(h.id for h in own[:top] if h.score >= floor * best)


def _crowded(hits: list, caller: str, asked: int, last: set[str], caller_host: bool = False) -> set[str]:
    """recall_fused's shared step over memories and documents merged (a chunk counts under its document's owner): of
    the kept (not in ``last``), in order, the other authors' (the host's rows and documents, then each one's best) past what half of the ``asked``
    hits kept for the caller's own leaves them. A member's team documents must not take the places its memories may
    not. A document is the caller's own as kb_search_hits counts it: its agent id and, on an admin handle
    (``caller_host``), the host's mark, else not (an agent handle may carry the host's agent id)."""
    def author(h) -> str:  # as memory_author names them: the host's rows and documents are the host's
        if h.origin == "memory":
            return memory_author(h.memory.agent_id, h.memory.by_host)
        return memory_author(h.chunk.owner, h.chunk.by_host)
    kept = [h for h in hits if h.id not in last]
    host = [bool(h.memory.by_host if h.origin == "memory" else h.chunk.by_host) for h in kept]  # the host's first
    return {kept[j].id for j in fusion.past_share([author(h) for h in kept], memory_author(caller, caller_host), asked,
                                                  host)}


def _conflicts_by_side(open_: list[tuple], winners: Mapping[str, Any]) -> list[tuple[str, Any, bool]]:
    """(winner, other memory, pending) for each open contradiction (memory_a, memory_b, detected_at, pending)
    touching a winner, in recall_fused's order: by winner, then detected_at, then the other's id (uuid order)."""
    sides = [(str(side), at, other, pending) for a, b, at, pending in open_ for side, other in ((a, b), (b, a))
             if str(side) in winners]
    return [(side, other, pending) for side, _, other, pending in sorted(sides)]


def keyword_cut(settings: dict[str, float]) -> int:
    """How many BM25 matches an unfiltered recall passes on: keyword_candidates keeps rank <= 10 × keyword_pool."""
    return math.floor(10 * settings["keyword_pool"])


def _id_literal(ids) -> str:
    return "[" + ",".join(ids) + "]"  # uuid texts from the store itself: nothing to quote


def _vector_literal(values) -> str:
    """Lists are bound as text and cast in SQL: binding a Python list costs ~20-60 ms in duckdb 1.5.5."""
    return "[" + ",".join(f"{float(x):.9g}" for x in values) + "]"


def _list(values: tuple[str, ...] | None) -> list[str] | None:
    return None if values is None else list(values)
