"""Which recall candidates a caller may see, with their decay terms, from an in-process copy.

The named query ``recall_eligible`` (sql/queries/recall.sql) is the definition: the status rule,
``can_see_as`` and ``effective_importance`` over the candidates. At 100k rows it cost ~21 ms per
recall, nearly all of it DuckDB reading 17 columns of every row to keep a few hundred (the id
filter joins after the scan, and no index or plan shape avoided it); here it is ~3 ms, its state
query included. Visibility is computed over integer codes with numpy; the decay terms in a Python
loop with the ``math`` calls DuckDB makes (``pow``, ``log2``), in its order, so both agree to the
last bit. Tests hold them equal.

The copy follows the table lazily, as the keyword copy does. Every insert into memories takes a
``row_version`` from a sequence by default, and every UPDATE of memories in sql/ sets a new one
(migration 0005; a test holds each statement to it). Before each recall one query reads the row
count and the highest row_version; rows above the highest this copy has seen are fetched and
replace or join their copies. Deleted rows show up as a count that disagrees, and the copy is
reloaded. It is never read inside a transaction, whose rows could still roll back: recall there runs
the SQL query. Raw SQL through ``EchoDuck.sql(write=True)`` drops the copy; writes through the bare
connection (``mem.db.con``) are not seen.
"""

from __future__ import annotations

import math
import threading
from datetime import datetime, timedelta
from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .db import Db
from .growing import GrowingColumns
from .recall_log import reviews_json

_STATUS = {"active": 1, "superseded": 2}  # any other status is never recalled
_SCOPE = {"public": 1, "private": 2, "session": 3, "team": 4, "tenant": 5}
_NULL, _UNKNOWN, _NO_SESSION = -1, -2, -3  # codes of a NULL text, a text no row has, a caller without a session
_EPOCH, _ONE_MICROSECOND = datetime(1970, 1, 1), timedelta(microseconds=1)


class EligibilityCopy:
    def __init__(self, db: Db):
        self.db = db
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._codes: dict[str, int] = {}  # agent, team, tenant and session ids as integers
        self._cols = GrowingColumns(status=np.int8, scope=np.int8, agent=np.int32, team=np.int32, tenant=np.int32,
                                    session=np.int32, global_tag=bool, exempt=bool, archival=bool,
                                    importance=np.float64, access_count=np.int64, last_touch_us=np.int64,
                                    net_unhelpful=np.int64)
        self._seen_version: int | None = None  # None: not loaded

    def invalidate(self) -> None:
        with self._lock:
            self._reset()

    def rows(self, candidates: Sequence[str], *, who: dict[str, Any], include_superseded: bool, now: datetime,
             settings: dict[str, float], reviews: dict[str, tuple[int, datetime]]) -> list[dict[str, Any]]:
        """``recall_eligible``'s rows for these candidate ids: memory_id, effective_importance, tier_weight,
        feedback_weight. ``who`` holds the recall's p_caller_* parameters; ``reviews`` the queued ones
        (recall_log.py), counted as if written."""
        with self.db.reading(catch_up=False):
            if not self.db.in_transaction:
                with self._lock:
                    self._follow()
                    return self._decay_terms(self._visible(candidates, who, include_superseded), now, settings, reviews)
            return self.db.dicts("recall_eligible", p_ids="[" + ",".join(candidates) + "]",
                                 p_reviews=reviews_json(reviews), **who, p_include_superseded=include_superseded,
                                 p_now=now, p_decay_days=settings["importance_decay_days"],
                                 p_archived_weight=settings["archived_weight"],
                                 p_unhelpful_penalty=settings["unhelpful_penalty"])

    # -- keeping the copy in step --------------------------------------------------------------

    def _follow(self) -> None:
        n_rows, newest = self.db.run("eligibility_state").fetchone()
        if self._seen_version is None:
            self._apply(self.db.run("eligibility_rows").to_arrow_table())
        elif newest is not None and newest > self._seen_version:
            self._apply(self.db.run("eligibility_rows_after", after=self._seen_version).to_arrow_table())
        if len(self._ids) != n_rows:  # rows were deleted (or written around the row versions): start again
            self._reset()
            self._apply(self.db.run("eligibility_rows").to_arrow_table())

    def _apply(self, table: pa.Table) -> None:
        """Copy these rows: rows already copied are overwritten in place, new ones appended."""
        versions = table.column("row_version").drop_null()
        self._seen_version = max(self._seen_version if self._seen_version is not None else -1,
                                 pc.max(versions).as_py() if len(versions) else -1)
        if table.num_rows == 0:
            return
        ids = [str(v) for v in table.column("id").to_pylist()]
        values = dict(
            status=_encode(table.column("status"), lambda v: _STATUS.get(v, 0), np.int8),
            scope=_encode(table.column("scope"), lambda v: _SCOPE.get(v, 0), np.int8),
            **{name: _encode(table.column(column), self._text_code, np.int32)
               for name, column in (("agent", "agent_id"), ("team", "team_id"), ("tenant", "tenant_id"),
                                    ("session", "source_session"))},
            **{name: table.column(name).to_numpy() for name in ("global_tag", "exempt", "archival", "importance",
                                                                "access_count", "last_touch_us", "net_unhelpful")})
        known = np.fromiter((self._row.get(i, -1) for i in ids), np.int64, len(ids))
        old = known >= 0
        if old.any():
            for name, column in values.items():
                getattr(self._cols, name)[known[old]] = column[old]
        new = np.flatnonzero(~old)
        if len(new):
            self._cols.append(**{name: column[new] for name, column in values.items()})
            for i in new.tolist():
                self._row[ids[i]] = len(self._ids)
                self._ids.append(ids[i])

    def _text_code(self, value: str) -> int:
        return self._codes.setdefault(value, len(self._codes))

    # -- recall_eligible, in process -------------------------------------------------------------

    def _visible(self, candidates: Sequence[str], who: dict[str, Any], include_superseded: bool) -> np.ndarray:
        """Copy rows of the candidates the caller may see: status rule and can_see_as (sql/macros/10_scope.sql)."""
        rows = np.fromiter((self._row.get(c, -1) for c in candidates), np.int64, len(candidates))
        rows = rows[rows >= 0]  # ids the table no longer has (the vector matrix may lag a purge)
        c, code = self._cols, self._codes.get
        status, scope = c.status[rows], c.scope[rows]
        status_ok = (status == _STATUS["active"]) | (include_superseded & (status == _STATUS["superseded"]))
        mine = c.agent[rows] == code(who["p_caller_agent"], _UNKNOWN)
        session = c.session[rows]
        caller_session = _NO_SESSION if who["p_caller_session"] is None else code(who["p_caller_session"], _UNKNOWN)
        # a NULL caller session compares as NULL in SQL: only a row without a session or tagged global passes
        session_ok = mine & ((session == _NULL) | (session == caller_session) | c.global_tag[rows])
        teams = [code(t, _UNKNOWN) for t in who["p_caller_teams"] or ()]
        tenants = [code(t, _UNKNOWN) for t in who["p_caller_tenants"] or ()]
        visible = np.select(
            [scope == _SCOPE["public"], scope == _SCOPE["private"], scope == _SCOPE["session"],
             scope == _SCOPE["team"], scope == _SCOPE["tenant"]],
            [True, mine, session_ok, np.isin(c.team[rows], teams), np.isin(c.tenant[rows], tenants)], False)
        return rows[status_ok & visible]

    def _decay_terms(self, rows: np.ndarray, now: datetime, settings: dict[str, float],
                     reviews: dict[str, tuple[int, datetime]]) -> list[dict[str, Any]]:
        """effective_importance (sql/macros/20_ranking.sql), tier and feedback weights, as recall_eligible
        computes them: the same libm calls on the same doubles, in the same order."""
        c = self._cols
        now_s = _epoch_seconds(_micros(now))
        base_days = max(float(settings["importance_decay_days"]), 1.0)
        archived_weight = float(settings["archived_weight"])
        kept_share = 1 - float(settings["unhelpful_penalty"])
        out = []
        for row, importance, exempt, count, touch_us, archival, net in zip(
                rows.tolist(), c.importance[rows].tolist(), c.exempt[rows].tolist(), c.access_count[rows].tolist(),
                c.last_touch_us[rows].tolist(), c.archival[rows].tolist(), c.net_unhelpful[rows].tolist()):
            memory_id = self._ids[row]
            queued, at = reviews.get(memory_id, (0, None))
            if exempt:
                effective = importance
            else:
                touched = _epoch_seconds(_micros(at) if at is not None else touch_us)
                days = max(now_s - touched, 0) / 86400.0
                effective = importance * math.pow(0.5, days / (base_days * (1 + math.log2(1 + count + queued))))
            out.append({"memory_id": memory_id, "effective_importance": effective,
                        "tier_weight": archived_weight if archival else 1.0,
                        "feedback_weight": math.pow(kept_share, max(net, 0))})
        return out


def _encode(column: pa.ChunkedArray, code_of, dtype) -> np.ndarray:
    """A text column as integer codes (NULL is _NULL), looking up each distinct value once."""
    encoded = pc.dictionary_encode(column).combine_chunks()
    lookup = np.array([code_of(v) for v in encoded.dictionary.to_pylist()] + [_NULL], dtype=dtype)
    return lookup[encoded.indices.fill_null(len(lookup) - 1).to_numpy(zero_copy_only=False)]


def _micros(at: datetime) -> int:
    return (at - _EPOCH) // _ONE_MICROSECOND


def _epoch_seconds(micros: int) -> int:
    """Whole seconds since 1970, rounded down (also before 1970): date_diff('second', a, b) counts the
    second boundaries crossed, the difference of two of these."""
    return micros // 1_000_000
