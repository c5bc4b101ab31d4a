"""The small reads every recall makes, kept in process while nothing is written: the caller's groups and
the open contradictions (the ranking settings come from ``Db.settings()``, kept the same way).

Each was a DuckDB query per recall (~0.3-2.5 ms each at 10k rows, more on a busy host). They are read
again after any write through this store but recall bookkeeping (``Db.writes_but_reviews``: reinforcing
hits and logging recalls touch none of these tables), and inside a transaction they are always read
from SQL (its uncommitted rows may still roll back). Writes through the bare connection (``mem.db.con``)
are not seen until ``EchoDuck.refresh()``. Bounded: ``MAX_AGENTS`` callers' groups; contradictions only
while at most ``MAX_CONFLICTS`` are open (else the per-recall query, as before).
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

from ..storage.db import Db

MAX_AGENTS = 1024
MAX_CONFLICTS = 10_000
_TOO_MANY: list[tuple] = []  # more open contradictions than MAX_CONFLICTS: the per-recall query


class StoreReads:
    def __init__(self, db: Db):
        self.db = db
        self._lock = threading.Lock()
        self._written: int | None = None
        self._groups: dict[str, tuple[list[str], list[str]]] = {}
        self._conflicts: list[tuple] | None = None  # every open contradiction; None: not read (or too many)

    def _current(self) -> int | None:
        """The write count these reads are valid for, clearing them when it moved; None inside a transaction."""
        written = self.db.writes_but_reviews
        if written is not None and written != self._written:
            self._groups, self._conflicts, self._written = {}, None, written
        return written

    def caller_context(self, agent_id: str) -> tuple[list[str], list[str], dict[str, float]]:
        """The agent's teams and tenants (as caller_groups(agent) lists them) and the ranking tunables,
        as ``caller_memberships`` and ``Db.settings`` return them (fresh lists and dict)."""
        with self.db.reading(catch_up=False), self._lock:
            written = self._current()
            groups = self._groups.get(agent_id) if written is not None else None
            if groups is None:
                memberships = self.db.run("caller_memberships", caller_agent=agent_id).fetchall()
                groups = ([group for kind, group in memberships if kind == "team"],
                          [group for kind, group in memberships if kind == "tenant"])
                if written is not None:
                    if len(self._groups) >= MAX_AGENTS:
                        self._groups.clear()
                    self._groups[agent_id] = groups
            return list(groups[0]), list(groups[1]), self.db.settings()

    def conflicts(self, ids: Sequence[str], id_literal: str) -> list[tuple]:
        """The open contradictions touching these memories (``recall_conflicts``: memory_a, memory_b,
        detected_at, pending), in no particular order (the caller sorts them)."""
        with self.db.reading(catch_up=False), self._lock:
            written = self._current()
            if written is not None and self._conflicts is None:
                rows = self.db.run("open_conflicts", limit=MAX_CONFLICTS + 1).fetchall()
                self._conflicts = rows if len(rows) <= MAX_CONFLICTS else _TOO_MANY  # until the next write
            if written is None or self._conflicts is _TOO_MANY:
                return self.db.run("recall_conflicts", ids=id_literal).fetchall()
            wanted = set(ids)
            return [row for row in self._conflicts if str(row[0]) in wanted or str(row[1]) in wanted]

    def invalidate(self) -> None:
        with self._lock:
            self._groups, self._conflicts, self._written = {}, None, None

    def memory_figure(self) -> dict[str, Any]:
        """What is kept, for the bench's memory figure."""
        return {"agents": len(self._groups), "conflicts": len(self._conflicts or ())}  # _TOO_MANY is empty
