"""A recall's bookkeeping, written behind it (SPEC R10): reinforcing the hits and the recall log.

Written in the recall's own transaction (a 10-row ``UPDATE memories``, a ``recall_log`` row and the
commit), they cost 11-16 ms of every recall, whatever the store's size. They are queued instead, and
written for every queued recall in one transaction:
- by a background thread once no recall has run for ``IDLE_S`` (an agent's next turn is seconds away),
  or as the interpreter exits;
- before any other use of the store (``Db.reading`` / ``Db.transaction`` call ``catch_up``), so every
  read and write but the next recall sees them, and when the store closes;
- at once when ``MAX_QUEUED`` recalls are waiting.
Each write also logs one ``reinforce`` event (memory_events, memory_id NULL) listing the recall ids and
each memory's reviews, so the event history accounts for every change of access counts.
A recall adds the queued reviews of its candidates to their stored counts (``pending_reviews``), so
ranks, scores and returned rows are exactly those of writing every recall at once (a filtered recall
inside a transaction, which SQL ranks, reads the stored counts only). The recall id comes from
``recall_log_seq`` up front, so a hit carries its final ``recall_id``; ids are taken ``ID_BLOCK`` at a
time and handed out in order (one process holds the file, so they follow the order of its recalls;
ids taken and never used are gaps). A crash (or ``os._exit``) loses at most the queued bookkeeping,
never a memory.
"""

from __future__ import annotations

import collections
import contextlib
import json
import threading
import time
import warnings
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Callable

from ..errors import InvalidInput
from ..storage.db import Db

IDLE_S = 0.2
MAX_QUEUED = 64
ID_BLOCK = 64  # recall ids taken from the sequence per query
_POLL_S = 0.5  # how soon the thread notices the interpreter is exiting


@dataclass(frozen=True)
class LoggedRecall:
    id: int
    occurred_at: datetime
    agent_id: str
    session_id: str | None
    query: str
    k: int
    model_id: str | None
    memory_ids: tuple[str, ...]
    scores: tuple[float, ...]
    reinforced: bool
    include_archived: bool
    reinforced_ids: tuple[str, ...] = ()  # the hits this recall reviews (hybrid.reinforced_hits): kept ones only


class RecallJournal:
    def __init__(self, db: Db):
        self.db = db
        self._queue: list[LoggedRecall] = []
        self._reviews: dict[str, tuple[int, datetime]] = {}  # queued, per memory: (reviews, last one's time)
        self._wake = threading.Condition()
        self._last = 0.0
        self._active = 0  # recalls running now: the store is not idle while one runs
        self._thread: threading.Thread | None = None
        self._closed = False
        self._free_ids: collections.deque[int] = collections.deque()  # taken from the sequence, not yet used
        # told (under the store lock, once committed) the (id, access_count, last_accessed, row_version) rows
        # that reinforcing wrote: what the eligibility copy's kept winners' rows take (eligibility.py)
        self.on_reinforced: Callable[[list[tuple]], None] | None = None
        db.before_use(self.catch_up)

    @contextlib.contextmanager
    def recalling(self):
        """Around a whole recall: the thread writes only once no recall has run for IDLE_S (a slow
        recall at 1M rows would otherwise find the store 'idle' in its middle and wait for the write)."""
        with self._wake:
            self._active += 1
        try:
            yield
        finally:
            with self._wake:
                self._active -= 1
                self._last = time.monotonic()
                self._wake.notify()

    def record(self, **entry) -> int:
        """Queue one recall's bookkeeping (LoggedRecall's fields but ``id``); return its recall id."""
        recall_id = self._next_free(take=True)
        with self._wake:
            logged = LoggedRecall(id=recall_id, **entry)
            self._queue.append(logged)
            _tally(self._reviews, [logged])
            self._last = time.monotonic()
            full = len(self._queue) >= MAX_QUEUED
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._write_when_idle, name="echo_duck-recall-log")
                self._thread.start()
            self._wake.notify()
        if full and not self.db.in_transaction:  # inside one, a rollback would take the queue with it
            self.catch_up()
        return recall_id

    def issued(self, recall_id: int) -> bool:
        """Whether a recall has taken ``recall_id``: ids are handed out in order, so one below the next this process
        would hand out was taken (by this process or an earlier one) or skipped for good. A mark naming one not taken
        yet would attach to whichever recall, another agent's perhaps, takes it next."""
        return recall_id < self._next_free(take=False)

    def _next_free(self, *, take: bool) -> int:
        """The next recall id this process hands out (``ID_BLOCK`` more taken from the sequence when none is left)."""
        with self.db.reading(catch_up=False):
            if not self._free_ids:
                self._free_ids.extend(i for (i,) in self.db.run("next_recall_ids", n=ID_BLOCK).fetchall())
            return self._free_ids.popleft() if take else self._free_ids[0]

    def catch_up(self) -> None:
        """Write everything queued, in one transaction. On a failure of the store (a lock, the disk) it stays
        queued and the error is raised. A batch the SQL refuses for its data (InvalidInput) would fail the same
        way before every later use of the store, by every agent: it is written one recall at a time instead, and
        a recall whose bookkeeping is still refused is dropped with a warning (its memories are untouched)."""
        if not self._queue:  # the common case, checked without locks: a stale answer is caught next time
            return
        with self.db.lock:  # the store lock first, as every caller takes it
            with self._wake:
                entries, reviews, self._queue, self._reviews = self._queue, self._reviews, [], {}
            if not entries:
                return
            outermost, written = not self.db.in_transaction, []  # inside another, a rollback may still undo it
            try:
                written = self._write(entries, reviews)
            except InvalidInput as e:
                if not outermost:  # the outer transaction failed with it: its caller sees the error
                    self._requeue(entries)
                    raise
                written = self._write_one_by_one(entries, e)
            except BaseException:
                self._requeue(entries)
                raise
            if outermost and written and self.on_reinforced is not None:
                self.on_reinforced(written)

    def _write(self, entries: list[LoggedRecall], reviews: dict[str, tuple[int, datetime]]) -> list[tuple]:
        written: list[tuple] = []
        with self.db.transaction("recording recalls", reviews_only=True):  # counts and logs only
            # a nextval alone is not durable in DuckDB (the process may end before any write):
            # one inside this write transaction persists the counter past every queued id
            self.db.run("next_recall_id")
            if reviews:  # the events first: they read the counts as they were before
                self.db.run("log_reinforce_events", entries=json.dumps([_row(e) for e in entries]))
                written = self.db.run("reinforce_recalled", reviews=reviews_json(reviews)).fetchall()
                # the history is complete (SPEC T6): one compact event per batch, not one per hit
                self.db.run("log_store_event", now=entries[-1].occurred_at, actor="echo_duck:recall-log",
                            action="reinforce", reason=f"{len(entries)} recalls", before=None,
                            after=json.dumps({"recall_ids": [e.id for e in entries if e.reinforced],
                                              "reviews": json.loads(reviews_json(reviews))}))
            self.db.run("log_recalls", entries=json.dumps([_row(e) for e in entries]))
        return written

    def _write_one_by_one(self, entries: list[LoggedRecall], error: Exception) -> list[tuple]:
        """After the batch was refused for its data: each recall alone; a failure of the store requeues the rest."""
        written: list[tuple] = []
        for k, entry in enumerate(entries):
            try:
                written += self._write([entry], _tally({}, [entry]))
            except InvalidInput as e:
                warnings.warn(f"echo_duck: recall {entry.id}'s bookkeeping (reinforcement and recall_log row) was "
                              f"dropped: the store refused it ({e}); the batch failed with: {error}",
                              RuntimeWarning, stacklevel=4)
            except BaseException:
                if written and self.on_reinforced is not None:
                    self.on_reinforced(written)  # what did commit
                self._requeue(entries[k:])
                raise
        return written

    def _requeue(self, entries: list[LoggedRecall]) -> None:
        with self._wake:
            self._queue[:0] = entries
            self._reviews = _tally({}, self._queue)

    def pending_reviews(self, memory_ids) -> dict[str, tuple[int, datetime]]:
        """Of these memories, those with queued reviews: (how many, the last one's time). A recall adds
        them to the stored counts, so it ranks as if every earlier recall had been written."""
        with self._wake:
            if not self._reviews:
                return {}
            return {i: self._reviews[i] for i in memory_ids if i in self._reviews}

    def close(self) -> None:
        """Write what is queued and stop the background thread (before the store closes)."""
        with self._wake:
            self._closed = True
            self._wake.notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=10)  # bounded: a caller holding the store lock would block its write
        self.catch_up()

    def _write_when_idle(self) -> None:
        """Runs while something is queued. Not a daemon: at interpreter exit, Python waits for it and it
        writes the queue (it notices the main thread has ended), so a store never closed loses nothing."""
        while True:
            with self._wake:
                if self._closed or not self._queue:
                    self._thread = None
                    return
                idle_for = time.monotonic() - self._last
                if threading.main_thread().is_alive() and (self._active or idle_for < IDLE_S):
                    # a recall's end notifies; _POLL_S bounds how late the thread sees the interpreter exit
                    self._wake.wait(_POLL_S if self._active else min(IDLE_S - idle_for, _POLL_S))
                    continue
            try:
                self.catch_up()
            except Exception:  # still queued: the next use of the store writes it and raises there
                with self._wake:
                    self._thread = None  # the next recall starts another attempt
                return


def reviews_json(reviews: dict[str, tuple[int, datetime]]) -> str:
    """Queued reviews as recall_eligible's $p_reviews and reinforce_recalled's $reviews."""
    return json.dumps([{"id": i, "n": n, "at": at.isoformat(sep=" ")} for i, (n, at) in reviews.items()])


def _tally(reviews: dict[str, tuple[int, datetime]], entries: list[LoggedRecall]) -> dict[str, tuple[int, datetime]]:
    """Add these entries' reviews, in queue order: counts add up, the last time stays."""
    for e in entries:
        if e.reinforced:
            for i in e.reinforced_ids:
                reviews[i] = (reviews.get(i, (0, e.occurred_at))[0] + 1, e.occurred_at)
    return reviews


def _row(e: LoggedRecall) -> dict:
    # a shallow copy: asdict deep-copies every value (~0.2 ms an entry, most of it the datetime), twice per
    # queued recall at each batch write
    return {**{f.name: getattr(e, f.name) for f in fields(e)}, "occurred_at": e.occurred_at.isoformat(sep=" "),
            "memory_ids": list(e.memory_ids), "scores": list(e.scores),
            "reinforced_ids": list(e.reinforced_ids) if e.reinforced else []}
