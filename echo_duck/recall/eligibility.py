"""Which recall candidates a caller may see and asked for, with their decay terms, from an in-process copy.

The named query ``recall_eligible`` (sql/queries/recall.sql) and ``recall_fused``'s eligible step are the definition:
the status rule, ``can_see_as``, the filters and ``effective_importance``. At 100k rows ``recall_eligible`` cost ~21 ms
per recall, nearly all of it DuckDB reading 17 columns of every row to keep a few hundred; here it is ~3 ms, its state
query included. Visibility and filters are computed over integer codes with numpy; the decay terms, only for the
candidates fusion reads, in decay_terms.py with the ``math`` calls DuckDB makes (``pow``, ``log2``), in its order, so
both agree to the last bit. Tests hold them equal. The masks of what a caller may recall (per caller and filters, in
an index's row order) pick the exact vector top-N (``vector_candidates``) and the keyword arm's rows.

The copy follows the table lazily, as the keyword copy does. Every insert into memories takes a ``row_version`` from a
sequence, and every UPDATE of memories in sql/ sets a new one (migration 0005; a test holds each statement to it).
Before each use one query reads the row count and the highest row_version; rows above the highest this copy has seen
replace or join their copies. Deleted rows show up as a count that disagrees, and the copy is reloaded. It is never
read inside a transaction, whose rows could still roll back: recall there runs the SQL query. Raw SQL through
``EchoDuck.sql(write=True)`` drops the copy; writes through the bare connection (``mem.db.con``) are not seen.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa

from ..index.growing import GrowingColumns
from ..models import PERSISTED_TIERS, TYPES
from ..storage.db import Db, uuid_list
from .decay_terms import EligibleRows, decay_terms, micros
from .recall_log import reviews_json

_STATUS = {"active": 1, "superseded": 2, "quarantined": 3}  # only the first two are ever recalled
_SCOPE = {"public": 1, "private": 2, "session": 3, "team": 4, "tenant": 5}
_TYPE = {name: i + 1 for i, name in enumerate(TYPES)}
_TIER = {name: i + 1 for i, name in enumerate(PERSISTED_TIERS)}
_NULL, _UNKNOWN, _NO_SESSION = -1, -2, -3  # codes of a NULL text, a text no row has, a caller without a session
FILTERS = ("types", "tiers", "tags", "entities", "since", "until", "session")
_LABEL_MASKS = 64  # tag and entity values whose row masks are kept
_STORED_ROWS = 4096  # winners' rows kept (winners_rows): a few MB at most
_MASKS = 16  # (caller, filters) visibility masks kept in matrix order: one byte per vector each
# the columns _allowed and _counted read: a write that changes none of them (and no tags or entities) keeps the masks
_MASKED = ("status", "scope", "agent", "team", "tenant", "session", "global_tag", "shown", "type", "tier", "at_us")


class EligibilityCopy:
    def __init__(self, db: Db):
        self.db = db
        self._lock = threading.RLock()  # vector_candidates holds it while the scan asks counted() for its mask
        self._reset()

    def _reset(self) -> None:
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._codes: dict[str, int] = {}  # agent, team, tenant and session ids as integers
        self._texts: list[str] = []  # and back
        self._cols = GrowingColumns(status=np.int8, scope=np.int8, agent=np.int32, team=np.int32, tenant=np.int32,
                                    session=np.int32, global_tag=bool, shown=bool, exempt=bool, archival=bool,
                                    importance=np.float64, access_count=np.int64, last_touch_us=np.int64,
                                    net_unhelpful=np.int64, type=np.int8, tier=np.int8, at_us=np.int64,
                                    created_us=np.int64, states_time=bool, states_change=bool,
                                    provenance=np.int64, mostly_asks=bool, by_host=bool)
        self._tags: list[list[str]] = []  # per row, for the tags and entities filters
        self._entities: list[list[str]] = []
        self._has_label: dict[tuple[str, str], np.ndarray] = {}  # ("tags" | "entities", value) -> per row
        self._seen_version: int | None = None  # None: not loaded
        self._followed: int | None = None  # Db.writes when the copy last checked the table
        self._stored: dict[str, dict[str, Any]] = {}  # memory rows as recall_rows returns them (winners_rows)
        # "vector" (matrix rows) and "keyword" (BM25 doc rows) -> (that index's generation, copy row of each)
        self._order_maps: dict[str, tuple[int, np.ndarray]] = {}
        # (index, caller, filters) -> (generation, mask in that index's row order): kept while the copy stands
        # (cleared on a write or a reload), so a repeated filtered recall skips the full-table mask
        self._masks: dict[tuple, tuple[int, np.ndarray]] = {}

    def invalidate(self) -> None:
        with self._lock:
            self._reset()

    def rows(self, candidates: Sequence[str], *, who: dict[str, Any], include_superseded: bool, now: datetime,
             settings: dict[str, float], reviews: dict[str, tuple[int, datetime]],
             filters: dict[str, Any] | None = None) -> Mapping[str, dict[str, Any]]:
        """The candidates the caller may see (and asked for, given ``filters``), each mapped to its
        ``recall_eligible`` row: memory_id, effective_importance, tier_weight, feedback_weight. ``who``
        holds the recall's p_caller_* parameters; ``reviews`` the queued ones (recall_log.py), counted
        as if written. Inside a transaction (unfiltered only) the SQL query answers."""
        with self.db.reading(catch_up=False):
            if not self.db.in_transaction:
                with self._lock:
                    self._follow()
                    rows = np.fromiter((self._row.get(c, -1) for c in candidates), np.int64, len(candidates))
                    rows = rows[rows >= 0]  # ids the table no longer has (the vector matrix may lag a purge)
                    rows = rows[self._allowed(rows, who, include_superseded, filters)]
                    return EligibleRows({self._ids[r]: r for r in rows.tolist()},
                                        decay_terms(self._cols, self._texts, now, settings, reviews,
                                                    active=_STATUS["active"], null=_NULL))
            if filters:
                raise RuntimeError("inside a transaction a filtered recall runs recall_fused in SQL, not the copy")
            found = self.db.dicts("recall_eligible", p_ids=uuid_list(candidates),
                                  p_reviews=reviews_json(reviews), **who, p_include_superseded=include_superseded,
                                  p_now=now, p_decay_days=settings["importance_decay_days"],
                                  p_archived_weight=settings["archived_weight"],
                                  p_unhelpful_penalty=settings["unhelpful_penalty"])
            return {row["memory_id"]: row for row in found}

    def vector_candidates(self, search: Callable, query_vector: np.ndarray, n: int, *, who: dict[str, Any],
                          include_superseded: bool, filters: dict[str, Any] | None) -> tuple[list[str], np.ndarray]:
        """The exact top-n vectors among the rows the caller may see and asked for (exact_vector_candidates
        in sql/macros/40_recall.sql): ``search`` is VectorIndex.search, given the mask in matrix order."""
        with self.db.reading(catch_up=False), self._lock:
            if self.db.in_transaction:
                raise RuntimeError("inside a transaction a filtered recall runs its vector arm in SQL, not the copy")
            self._follow()
            key = ("vector", *_mask_key(who, include_superseded, filters))
            rule = functools.partial(self._allowed, who=who, include_superseded=include_superseded, filters=filters)
            return search(query_vector, n, keep=functools.partial(self._mask_in_order, key, rule=rule),
                          counted=self.counted("vector", who))

    def keyword_keep(self, *, who: dict[str, Any], include_superseded: bool,
                     filters: dict[str, Any] | None) -> Callable[[list[str], int], np.ndarray]:
        """For KeywordSearcher.search's ``keep``: which BM25 doc rows the caller may see and asked for, so a
        filtered keyword arm ranks the rows the filters keep without turning every match into a Python id."""
        key = ("keyword", *_mask_key(who, include_superseded, filters))

        def keep(doc_ids: list[str], generation: int) -> np.ndarray:
            with self.db.reading(catch_up=False), self._lock:
                if self.db.in_transaction:
                    raise RuntimeError("inside a transaction a filtered recall runs its keyword arm in SQL")
                self._follow()
                return self._mask_in_order(key, doc_ids, generation, rule=functools.partial(
                    self._allowed, who=who, include_superseded=include_superseded, filters=filters))

        return keep

    def keyword_groups(self, who: dict[str, Any]) -> Callable[[list[str], int], np.ndarray]:
        """For KeywordSearcher.search's ``groups``: each BM25 doc row's pool group for this caller (pool_group: 0 its
        own by author, 1 the host's rows, 2 every other author's), whose best matches a filtered arm keeps apart."""
        host = bool(who.get("p_caller_host"))

        def rule(rows: np.ndarray) -> np.ndarray:
            by_host = self._cols.by_host[rows]
            own = (self._cols.agent[rows] == self._codes.get(who["p_caller_agent"], _UNKNOWN)) & (by_host == host)
            return np.where(own, 0, np.where(by_host, 1, 2)).astype(np.int8)

        def groups(doc_ids: list[str], generation: int) -> np.ndarray:
            with self.db.reading(catch_up=False), self._lock:
                self._follow()
                return self._mask_in_order(("keyword", "groups", who["p_caller_agent"], host), doc_ids, generation,
                                           rule=rule)
        return groups

    def counted(self, index: str, who: dict[str, Any]) -> Callable[[list[str], int], np.ndarray]:
        """For an in-process arm's statistics: which rows of an index ("vector" matrix rows, "keyword" BM25 doc
        rows) the caller's recall counts, ``counted_memories`` (sql/macros/10_scope.sql): the rows it may see, of any
        status but another agent's quarantined. Inside a transaction SQL answers (the copy is not read there)."""
        key = (index, "counted", *_mask_key(who, False, None))

        def mask(ids: list[str], generation: int) -> np.ndarray:
            with self.db.reading(catch_up=False):
                if self.db.in_transaction:
                    counted = {i for (i,) in self.db.run("counted_memory_ids", **who).fetchall()}
                    return np.fromiter((i in counted for i in ids), bool, len(ids))
                with self._lock:
                    self._follow()
                    return self._mask_in_order(key, ids, generation, rule=functools.partial(self._counted, who=who))

        return mask

    def counted_ids(self, ids: Sequence[str], who: dict[str, Any]) -> set[str]:
        """Those of these memory ids the caller may see (counted_memories): which other sides of a hit's open
        contradictions recall lists (recall_fused's conflicts step). Inside a transaction SQL answers."""
        if not ids:
            return set()
        with self.db.reading(catch_up=False):
            if self.db.in_transaction:
                return {i for (i,) in self.db.run("counted_memory_ids", **who).fetchall()} & set(ids)
            with self._lock:
                self._follow()
                rows = np.fromiter((self._row.get(i, -1) for i in ids), np.int64, len(ids))
                known = rows >= 0
                shown = np.zeros(len(ids), bool)
                shown[known] = self._counted(rows[known], who)
                return {i for i, s in zip(ids, shown.tolist()) if s}

    def _mask_in_order(self, key: tuple, ids: list[str], generation: int, *,
                       rule: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """The mask (or codes) ``rule`` gives the copy's rows (visibility and filters, what statistics count, authors),
        in an index's row order (``key[0]``: "vector" or "keyword")."""
        known = self._masks.get(key)
        if known is not None and known[0] == generation and len(known[1]) == len(ids):
            return known[1]
        values = rule(np.arange(len(self._ids)))
        allowed = np.zeros(len(self._ids) + 1, values.dtype)  # the last one, index -1: rows the copy lacks
        allowed[:-1] = values
        rows = self._copy_rows_of(key[0], ids, generation)
        mask = allowed[rows]
        if (rows >= 0).all():  # every index row is in the copy: the mask holds until the next write
            mask.flags.writeable = False  # shared by the recalls that reuse it
            if len(self._masks) >= _MASKS and key not in self._masks:
                self._masks.pop(next(iter(self._masks)))  # the oldest: a bounded cache
            self._masks[key] = (generation, mask)
        return mask

    # -- keeping the copy in step --------------------------------------------------------------

    def winners_rows(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The memories rows of these ids, as ``recall_rows`` returns them (a fresh dict each): from the rows
        kept since they were last written, the rest from SQL. Call right after ``rows`` (under the store
        lock): outside a transaction, the copy has just followed the table, which dropped every kept row
        written since (a new row_version) or deleted (a reload). Inside one, SQL answers."""
        with self.db.reading(catch_up=False):
            if self.db.in_transaction:
                return {str(r["id"]): r for r in self.db.dicts("recall_rows", ids=uuid_list(ids))}
            with self._lock:
                self._follow()
                missing = [i for i in ids if i not in self._stored]
                if missing:
                    if len(self._stored) + len(missing) > _STORED_ROWS:
                        self._stored.clear()  # bounded; refilled by the next recalls
                    self._stored.update((str(r["id"]), r) for r in self.db.dicts("recall_rows", ids=uuid_list(missing)))
                return {i: dict(self._stored[i]) for i in ids if i in self._stored}

    def reinforced(self, rows: Sequence[tuple]) -> None:
        """Rows reinforce_recalled just committed (id, access_count, last_accessed, row_version: all it writes):
        a kept winner's row takes them, so it stays what recall_rows returns instead of being read again."""
        with self._lock:
            for memory_id, count, last, version in rows:
                kept = self._stored.get(memory_id)
                if kept is not None:
                    kept.update(access_count=count, last_accessed=last, row_version=version)

    def _follow(self) -> None:
        written = self.db.writes
        if written is not None and written == self._followed:
            return  # nothing was written through this store since the last check
        self._check_table()
        self._followed = written

    def _check_table(self) -> None:
        n_rows, newest = self.db.run("eligibility_state").fetchone()
        if self._seen_version is None:
            self._apply(self.db.arrow("eligibility_rows"))  # _reset() cleared the masks
        elif newest is not None and newest > self._seen_version and self._apply(
                self.db.arrow("eligibility_rows_after", after=self._seen_version)):
            self._masks.clear()
        if len(self._ids) != n_rows:  # rows were deleted (or written around the row versions): start again
            self._reset()
            self._apply(self.db.arrow("eligibility_rows"))
            self._stored.clear()

    def _apply(self, table: pa.Table) -> bool:
        """Copy these rows: rows already copied are overwritten in place, new ones appended. True when a row was
        appended or a value a mask reads (_MASKED, tags, entities) changed."""
        versions = table.column("row_version").drop_null()
        self._seen_version = max(self._seen_version if self._seen_version is not None else -1,
                                 int(versions.to_numpy().max()) if len(versions) else -1)
        if table.num_rows == 0:
            return False
        ids = [str(v) for v in table.column("id").to_pylist()]
        for memory_id, version in zip(ids, table.column("row_version").to_pylist()):  # written since: stale
            if memory_id in self._stored and self._stored[memory_id]["row_version"] != version:
                del self._stored[memory_id]
        status = _encode(table.column("status"), lambda v: _STATUS.get(v, 0), np.int8)
        status[table.column("held").to_numpy()] = _STATUS["quarantined"]  # never approved: held
        values = dict(
            status=status,
            scope=_encode(table.column("scope"), lambda v: _SCOPE.get(v, 0), np.int8),
            type=_encode(table.column("type"), lambda v: _TYPE.get(v, 0), np.int8),
            tier=_encode(table.column("tier"), lambda v: _TIER.get(v, 0), np.int8),
            **{name: _encode(table.column(column), self._text_code, np.int32)
               for name, column in (("agent", "agent_id"), ("team", "team_id"), ("tenant", "tenant_id"),
                                    ("session", "source_session"))},
            shown=table.column("another_agent_may_see").to_numpy(),
            **{name: table.column(name).to_numpy() for name in ("global_tag", "exempt", "archival", "importance",
                                                                "access_count", "last_touch_us", "net_unhelpful",
                                                                "at_us", "created_us", "states_time",
                                                                "states_change", "provenance",
                                                                "mostly_asks", "by_host")})
        tags, entities = table.column("tags").to_pylist(), table.column("entities").to_pylist()
        known = np.fromiter((self._row.get(i, -1) for i in ids), np.int64, len(ids))
        old = known >= 0
        masked = not old.all() or any(  # compared before the overwrite below
            not np.array_equal(getattr(self._cols, name)[known[old]], values[name][old]) for name in _MASKED) or any(
            (self._tags[r], self._entities[r]) != (tags[i], entities[i]) for i, r in enumerate(known.tolist()) if r >= 0)
        if old.any():
            for name, column in values.items():
                getattr(self._cols, name)[known[old]] = column[old]
            for i in np.flatnonzero(old).tolist():
                row = int(known[i])
                self._tags[row], self._entities[row] = tags[i], entities[i]
                for (kind, value), has in self._has_label.items():
                    if row < len(has):  # rows past a mask's end are looked at when it is next extended
                        has[row] = value in (tags[i] if kind == "tags" else entities[i])
        new = np.flatnonzero(~old)
        if len(new):
            self._cols.append(**{name: column[new] for name, column in values.items()})
            for i in new.tolist():
                self._row[ids[i]] = len(self._ids)
                self._ids.append(ids[i])
                self._tags.append(tags[i])
                self._entities.append(entities[i])
        return masked

    def _text_code(self, value: str) -> int:
        code = self._codes.setdefault(value, len(self._codes))
        if code == len(self._texts):
            self._texts.append(value)
        return code

    def _copy_rows_of(self, index: str, ids: list[str], generation: int) -> np.ndarray:
        """The copy row of each row of an index (vector matrix, BM25 docs), -1 where the copy has no such memory.
        Kept between calls: both sides only append until they reload (a new index generation, or _reset)."""
        known_generation, rows = self._order_maps.get(index, (-1, np.zeros(0, np.int64)))
        if known_generation != generation:
            rows = np.zeros(0, np.int64)
        if len(rows) < len(ids):
            more = np.fromiter((self._row.get(i, -1) for i in ids[len(rows):]), np.int64, len(ids) - len(rows))
            rows = np.concatenate([rows, more])
        for i in np.flatnonzero(rows < 0).tolist():  # the copy may have the row by now (rows are never renumbered)
            rows[i] = self._row.get(ids[i], -1)
        self._order_maps[index] = (generation, rows)
        return rows[: len(ids)]

    # -- recall_eligible, in process -------------------------------------------------------------

    def _counted(self, rows: np.ndarray, who: dict[str, Any]) -> np.ndarray:
        """counted_memories (sql/macros/10_scope.sql): can_see_as, and the rows held from the caller left out (barred_from:
        another agent's quarantined rows, and those it held that nobody approved, which the copy keeps as quarantined)."""
        mine = self._cols.agent[rows] == self._codes.get(who["p_caller_agent"], _UNKNOWN)
        return self._visible(rows, who) & (mine | (self._cols.status[rows] != _STATUS["quarantined"]))

    def _allowed(self, rows: np.ndarray, who: dict[str, Any], include_superseded: bool,
                 filters: dict[str, Any] | None) -> np.ndarray:
        """Which of these copy rows the caller may see (the status rule and can_see_as in
        sql/macros/10_scope.sql) and asked for (recall_fused's filters)."""
        c, code = self._cols, self._codes.get
        status = c.status[rows]
        ok = (status == _STATUS["active"]) | (include_superseded & (status == _STATUS["superseded"]))
        ok &= self._visible(rows, who)
        if not filters:
            return ok
        if filters.get("types") is not None:
            ok &= np.isin(c.type[rows], [_TYPE[t] for t in filters["types"]])
        if filters.get("tiers") is not None:
            ok &= np.isin(c.tier[rows], [_TIER[t] for t in filters["tiers"]])
        if filters.get("since") is not None:  # on coalesce(observed_at, created_at)
            ok &= c.at_us[rows] >= micros(filters["since"])
        if filters.get("until") is not None:
            ok &= c.at_us[rows] <= micros(filters["until"])
        if filters.get("session") is not None:  # a NULL source_session never equals it
            ok &= c.session[rows] == code(filters["session"], _UNKNOWN)
        if filters.get("author") is not None:  # not recall's: the contradiction check's own and others' halves
            ok &= c.agent[rows] == code(filters["author"], _UNKNOWN)
        if filters.get("other_than") is not None:
            ok &= c.agent[rows] != code(filters["other_than"], _UNKNOWN)
        if filters.get("tags") is not None:  # list_has_all(tags, wanted): true for an empty list
            for tag in filters["tags"]:
                ok &= self._rows_labelled("tags", tag)[rows]
        if filters.get("entities") is not None:  # list_has_any(entities, wanted): false for an empty list
            named = np.zeros(len(rows), bool)
            for entity in filters["entities"]:
                named |= self._rows_labelled("entities", entity)[rows]
            ok &= named
        return ok

    def _visible(self, rows: np.ndarray, who: dict[str, Any]) -> np.ndarray:
        """can_see_as (sql/macros/10_scope.sql) for these copy rows, whatever their status."""
        c, code = self._cols, self._codes.get
        scope, session = c.scope[rows], c.session[rows]
        mine = c.agent[rows] == code(who["p_caller_agent"], _UNKNOWN)
        caller_session = _NO_SESSION if who["p_caller_session"] is None else code(who["p_caller_session"], _UNKNOWN)
        # a NULL caller session compares as NULL in SQL: only a row without a session or tagged global passes
        session_ok = mine & ((session == _NULL) | (session == caller_session) | c.global_tag[rows])
        teams = [code(t, _UNKNOWN) for t in who["p_caller_teams"] or ()]
        tenants = [code(t, _UNKNOWN) for t in who["p_caller_tenants"] or ()]
        return (mine | c.shown[rows]) & np.select(  # sensitivity: another_agent_may_see in sql/macros/10_scope.sql
            [scope == _SCOPE["public"], scope == _SCOPE["private"], scope == _SCOPE["session"],
             scope == _SCOPE["team"], scope == _SCOPE["tenant"]],
            [True, mine, session_ok, np.isin(c.team[rows], teams), np.isin(c.tenant[rows], tenants)], False)

    def _rows_labelled(self, kind: str, value: str) -> np.ndarray:
        """Which copy rows carry this tag or entity: built once per value and extended as rows are
        appended (_apply updates rows overwritten in place), so a repeated filter costs no loop."""
        lists = self._tags if kind == "tags" else self._entities
        has = self._has_label.get((kind, value))
        if has is None or len(has) < len(lists):
            start = 0 if has is None else len(has)
            more = np.fromiter((value in lists[r] for r in range(start, len(lists))), bool, len(lists) - start)
            has = more if has is None else np.concatenate([has, more])
            if len(self._has_label) >= _LABEL_MASKS and (kind, value) not in self._has_label:
                self._has_label.pop(next(iter(self._has_label)))  # the oldest: a bounded cache
            self._has_label[(kind, value)] = has
        return has


def _encode(column: pa.ChunkedArray, code_of, dtype) -> np.ndarray:
    """A text column as integer codes (NULL is _NULL), looking up each distinct value once."""
    encoded = _pc().dictionary_encode(column).combine_chunks()
    lookup = np.array([code_of(v) for v in encoded.dictionary.to_pylist()] + [_NULL], dtype=dtype)
    return lookup[encoded.indices.fill_null(len(lookup) - 1).to_numpy(zero_copy_only=False)]


def _mask_key(who: dict[str, Any], include_superseded: bool, filters: dict[str, Any] | None) -> tuple:
    """A hashable key for one caller's (and filters') visibility: every value, lists as tuples."""
    def frozen(value: Any) -> Any:
        return tuple(frozen(v) for v in value) if isinstance(value, (list, tuple, set, frozenset)) else value

    return (tuple(sorted((k, frozen(v)) for k, v in who.items())), include_superseded,
            tuple(sorted((k, frozen(v)) for k, v in (filters or {}).items())))


def _pc():
    """pyarrow.compute, imported on the first recall (~0.15 s), not when a store is opened."""
    import pyarrow.compute as pc

    return pc
