"""A connection plus the named queries of sql/queries, serialised by one lock.

DuckDB connections are not safe to use from several threads at once, so every call on a store goes
through ``Db``'s re-entrant lock: threads sharing one facade take turns instead of corrupting state.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from typing import Any, Callable, Iterator

import duckdb

from ..errors import EchoDuckError
from . import sqlfiles
from .connection import ROW_GROUP_SIZE, transaction, translate_errors
from .event_chain import Sealer


class Db:
    def __init__(self, con: duckdb.DuckDBPyConnection, *, read_only: bool, path: str | None = None,
                 reconnect: Callable[[], duckdb.DuckDBPyConnection] | None = None,
                 row_group_size: int = ROW_GROUP_SIZE):
        self.con = con
        self.read_only = read_only
        self.path = path  # the store file (None in memory): what erasure.py rewrites
        self.row_group_size = row_group_size
        self._reconnect = reconnect
        self.lock = threading.RLock()
        self._closed = False
        self._depth = 0  # nested transaction() calls join the outer transaction
        self._parsed: dict[str, list] = {}
        self._catch_up: Callable[[], None] | None = None
        self._catching_up = False
        self.sealer = None if read_only else Sealer(con)  # seals the events each transaction wrote (event_chain.py)
        # Write counters for the in-process caches (recall/store_reads.py, the copies in index/ and recall/):
        # every write through this Db, and every write but recall bookkeeping (reviews_only transactions).
        self._writes = 0
        self._writes_but_reviews = 0
        self._only_reviews = False  # the open transaction has so far only written recall bookkeeping
        self._read_only_names: dict[str, bool] = {}
        self._on_rollback: list[Callable[[], None]] = []
        self._settings: tuple[int, dict[str, float]] | None = None  # (writes_but_reviews, every setting)
        self.session_sql: list[str] = []  # run on a cursor before it reads (a read-only open's TEMP memories_all)

    def before_use(self, catch_up: Callable[[], None]) -> None:
        """Run ``catch_up`` (writing work queued behind an earlier call, recall_log.py) before each
        reading() or transaction() that does not opt out, and before close()."""
        self._catch_up = catch_up

    def run(self, name: str, /, **params: Any) -> duckdb.DuckDBPyConnection:
        """Execute a named query; the result of its last statement is returned."""
        self._check_open()
        q = sqlfiles.query(name)
        writes = not self._depth and not self._reads_only(name, q.sql)  # inside a transaction its end counts
        try:
            with translate_errors(f"query {name}"):
                if not q.params:
                    return self.con.execute(q.sql)
                values = q.bind(params)
                statements = self._statements(name, q.sql)
                if len(statements) == 1:
                    return self.con.execute(q.sql, values)
                # DuckDB binds parameters for a single statement only: run a multi-statement query piecewise.
                for statement in statements[:-1]:
                    self.con.execute(statement.query, {p: values[p] for p in statement.named_parameters})
                last = statements[-1]
                return self.con.execute(last.query, {p: values[p] for p in last.named_parameters})
        finally:
            if writes:
                self.wrote()

    def on_rollback(self, undo: Callable[[], None]) -> None:
        """Call ``undo`` if the current transaction rolls back (once per transaction is enough)."""
        if self._depth and undo not in self._on_rollback:
            self._on_rollback.append(undo)

    def _reads_only(self, name: str, sql: str) -> bool:
        known = self._read_only_names.get(name)
        if known is None:
            known = self._read_only_names[name] = all(
                s.type == duckdb.StatementType.SELECT for s in self._statements(name, sql))
        return known

    # -- what the in-process caches check ------------------------------------------------------

    def wrote(self, *, reviews_only: bool = False) -> None:
        """Count a write (transaction() and run() do; call it after writing around them, e.g. refresh())."""
        self._writes += 1
        if not reviews_only:
            self._writes_but_reviews += 1

    @property
    def writes(self) -> int | None:
        """How many writes went through this Db (every kind, recall bookkeeping included); None inside a
        transaction, whose uncommitted rows no cache may hold or answer for. Call under the lock."""
        return None if self._depth else self._writes

    @property
    def writes_but_reviews(self) -> int | None:
        """``writes`` without recall bookkeeping (access counts, recall_log, their events): what caches of
        memberships, settings, contradictions and the BM25 tables check."""
        return None if self._depth else self._writes_but_reviews

    def _statements(self, name: str, sql: str) -> list:
        cached = self._parsed.get(name)
        if cached is None:
            cached = self._parsed[name] = self.con.extract_statements(sql)
        return cached

    def scalar(self, name: str, /, **params: Any) -> Any:
        with self.lock:  # the statement and its fetch together: another thread's statement would replace the result
            row = self.run(name, **params).fetchone()
        return row[0] if row else None

    def dicts(self, name: str, /, **params: Any) -> list[dict[str, Any]]:
        with self.lock:
            cur = self.run(name, **params)
            columns = [d[0] for d in cur.description]
            rows = cur.fetchall()
        return [dict(zip(columns, row)) for row in rows]

    def settings(self) -> dict[str, float]:
        """The settings table by name (a fresh dict). Read once until the next write through this Db
        (recall bookkeeping aside), and always inside a transaction; writes through the bare connection
        count after ``wrote()``."""
        with self.lock:
            written = self.writes_but_reviews
            if written is None or self._settings is None or self._settings[0] != written:
                values = dict(self.run("all_settings").fetchall())
                self._settings = None if written is None else (written, values)
            else:
                values = self._settings[1]
            return dict(values)

    def setting(self, name: str) -> float | None:
        """A tunable, as SQL's setting(name) returns it (None if there is none): from ``settings()``."""
        return self.settings().get(name)

    def arrow(self, name: str, /, **params: Any):
        """The query's result as a pyarrow Table, fetched under the lock like ``scalar`` and ``dicts``."""
        with self.lock:
            return self.run(name, **params).to_arrow_table()

    def dict(self, name: str, /, **params: Any) -> dict[str, Any] | None:
        rows = self.dicts(name, **params)
        return rows[0] if rows else None

    @contextlib.contextmanager
    def transaction(self, what: str, *, reviews_only: bool = False) -> Iterator["Db"]:
        """One atomic unit of work under the store lock; any error rolls it back.

        A transaction() inside another joins it: the outer one commits or rolls back both.
        ``reviews_only``: it writes recall bookkeeping only (recall_log.py), which leaves
        ``writes_but_reviews`` as it is.
        """
        with self.lock:
            self._check_open()
            if self.read_only:
                raise EchoDuckError(f"{what}: this store was opened read_only; open it without read_only to write")
            if not self._depth:
                self._run_catch_up()
            if self._depth:
                self._depth += 1
                self._only_reviews = self._only_reviews and reviews_only
                try:
                    yield self
                finally:
                    self._depth -= 1
                return
            self._depth = 1
            self._only_reviews = reviews_only
            self._on_rollback = []
            try:
                with transaction(self.con, what):
                    self.sealer.begin()
                    yield self
                    head = self.sealer.seal()
                self.sealer.committed(head)
            except BaseException:
                self.sealer.rolled_back()
                for undo in self._on_rollback:  # in-process state the transaction changed (vectors.py)
                    undo()
                raise
            finally:
                self._depth = 0
                self._on_rollback = []
                self.wrote(reviews_only=self._only_reviews)  # committed or rolled back: caches check again

    @contextlib.contextmanager
    def reading(self, *, catch_up: bool = True) -> Iterator["Db"]:
        """The store lock for reads; ``catch_up=False`` reads without writing queued work first (recall)."""
        with self.lock:
            self._check_open()
            if catch_up:
                self._run_catch_up()
            yield self

    def catch_up(self) -> None:
        """Write queued work now (see before_use)."""
        self._run_catch_up()

    def detach(self) -> None:
        """Close the connection but keep this object (erasure.py swaps the file, then reattach())."""
        with self.lock:
            self._check_open()
            with translate_errors("closing the store for a rewrite"):
                self.con.close()

    def reattach(self) -> None:
        """Open the store file again after detach(), with the same options as the first time."""
        with self.lock:
            if self._reconnect is None:
                raise EchoDuckError("this store cannot be reopened (no file)")
            try:
                self.con = self._reconnect()
            except BaseException:
                self._closed = True  # nothing is held: the handle is unusable, the file is free
                raise
            self._parsed.clear()
            self.wrote()  # another file (erasure.py): every cache checks again
            if self.sealer is not None:
                self.sealer = Sealer(self.con)

    def _run_catch_up(self) -> None:
        # never inside a transaction: a rollback there would take the queued work with it
        if self._catch_up is not None and not self._catching_up and not self._depth:
            self._catching_up = True  # its own transaction() must not catch up again
            try:
                self._catch_up()
            finally:
                self._catching_up = False

    def close(self) -> None:
        with self.lock:
            if self._closed:
                return
            try:
                self._run_catch_up()
            finally:
                self._closed = True
                with translate_errors("closing the store"):
                    self.con.close()

    @property
    def in_transaction(self) -> bool:
        """Inside transaction() (call under the lock): rows read now may still roll back."""
        return self._depth > 0

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise EchoDuckError("this store is closed; open it again with echo_duck.open(...)")


def uuid_list(ids) -> str:
    """Ids as the text '[a, b]' that SQL casts with ::VARCHAR::UUID[]; binding a Python list costs
    ~0.2 ms per element in duckdb 1.5.5 (1 s for a 2,000-row batch). Only uuids go in, so no quoting."""
    return "[" + ",".join(str(uuid.UUID(str(i))) for i in ids) + "]"
