"""The event log as a hash chain (SPEC T6): each ``memory_events`` row is sealed when the transaction
that wrote it commits, so an edit, a deletion or an insertion made outside echo_duck shows.

Sealing (``Sealer.seal``, called by ``Db.transaction`` just before COMMIT) gives each new event a
random salt and two hashes:

    content_digest = sha256(json([salt, reason, before, after]))
    hash           = sha256(json([prev_hash, event_id, occurred_at, actor, action, memory_id, content_digest]))

``prev_hash`` is the hash of the sealed event before it. A purge redacts an event by clearing reason,
before, after and salt (``blank_purged_events``): the digest stays, so the chain still verifies, and
without the salt the removed text cannot be confirmed by hashing guesses. ``verify`` walks the chain
and reports the first broken link. The chain's head (last event id and hash) is kept in store_info,
so cutting events off the end shows too. Events that exist before the first seal (a store older than
migration 0006) are adopted into the chain by the first transaction after it.

Only events written inside an echo_duck transaction are sealed: a row inserted from outside (a plain
DuckDB connection) stays unsealed and ``verify`` names it.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pyarrow as pa

from . import sqlfiles

_STAGE = "echo_duck_event_seal_stage"
HEAD_KEY = "event_chain_head"


@dataclass(frozen=True)
class ChainReport:
    """What ``verify`` found: ``ok`` when every event is sealed and every link holds."""

    events: int
    sealed: int
    redacted: int
    head_event_id: int | None
    head_hash: str | None
    first_broken_event_id: int | None = None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.first_broken_event_id is None and self.problem is None

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "ok": self.ok}


def content_digest(salt: str, reason: str | None, before: str | None, after: str | None) -> str:
    return _sha(json.dumps([salt, reason, before, after], ensure_ascii=False))


def link_hash(prev_hash: str | None, event_id: int, occurred_at: datetime, actor: str, action: str,
              memory_id: Any, digest: str) -> str:
    return _sha(json.dumps([prev_hash, int(event_id), occurred_at.isoformat(sep=" "), actor, action,
                            None if memory_id is None else str(memory_id), digest], ensure_ascii=False))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Sealer:
    """Seals the events a transaction wrote. One per writable ``Db``; state is (last sealed id, hash)."""

    def __init__(self, con):
        self.con = con
        self._head: tuple[int, str | None] | None = None  # (last sealed event id, its hash); None: not read
        self._floor: int | None = None  # highest event id when the current transaction began
        self._columns: bool | None = None  # does memory_events have the chain's columns (migration 0006)?

    def begin(self) -> None:
        """Note where this transaction's events start (events above it are its own)."""
        if not self._has_table():
            self._floor = None
            return
        head_id, _ = self._read_head()
        if head_id == 0:  # the chain has not started: this transaction adopts every event (a store older than 0006)
            self._floor = 0
            return
        newest = _run(self.con, "chain_newest_after", after=head_id).fetchone()[0]
        self._floor = head_id if newest is None else int(newest)

    def seal(self) -> tuple[int, str | None] | None:
        """Seal this transaction's events (inside it, before COMMIT); the new head, to keep after commit."""
        if self._floor is None:
            return None
        head_id, head_hash = self._read_head()
        rows = _run(self.con, "chain_unsealed_after", floor=self._floor).fetchall()
        if not rows:
            return None
        stage = {"event_id": [], "salt": [], "content_digest": [], "prev_hash": [], "hash": []}
        prev = head_hash
        for event_id, occurred_at, actor, action, memory_id, reason, before, after in rows:
            salt = secrets.token_hex(16)
            digest = content_digest(salt, reason, before, after)
            current = link_hash(prev, event_id, occurred_at, actor, action, memory_id, digest)
            for name, value in (("event_id", event_id), ("salt", salt), ("content_digest", digest),
                                ("prev_hash", prev), ("hash", current)):
                stage[name].append(value)
            prev = current
        self.con.register(_STAGE, pa.table(stage))
        try:
            _run(self.con, "chain_apply_seals")
        finally:
            self.con.unregister(_STAGE)
        new_head = (int(rows[-1][0]), prev)
        _run(self.con, "set_store_info", name=HEAD_KEY, value=json.dumps({"event_id": new_head[0], "hash": new_head[1]}))
        return new_head

    def committed(self, head: tuple[int, str | None] | None) -> None:
        if head is not None:
            self._head = head
        self._floor = None

    def rolled_back(self) -> None:
        self._head = None  # read again: nothing of this transaction stayed
        self._floor = None

    def _read_head(self) -> tuple[int, str | None]:
        if self._head is None:
            row = _run(self.con, "chain_head").fetchone()
            self._head = (0, None) if row is None else (int(row[0]), row[1])
        return self._head

    def _has_table(self) -> bool:
        if self._columns is None:
            self._columns = bool(_run(self.con, "chain_has_columns").fetchone()[0])
        return self._columns


def verify(con) -> ChainReport:
    """Walk every event in order; the first event whose link, hash or digest does not hold is reported."""
    rows = _run(con, "chain_all_events").fetchall()
    head_row = _run(con, "store_info_value", name=HEAD_KEY).fetchone()
    head = json.loads(head_row[0]) if head_row else None
    purged_after: dict[str, int] = {}
    for r in rows:
        if r[3] == "purge" and r[4] is not None:
            purged_after[str(r[4])] = max(purged_after.get(str(r[4]), 0), int(r[0]))
    prev, sealed, redacted = None, 0, 0

    def report(event_id: int | None, problem: str | None) -> ChainReport:
        return ChainReport(len(rows), sealed, redacted, head and head["event_id"], head and head["hash"], event_id, problem)

    for (event_id, occurred_at, actor, action, memory_id, reason, before, after,
         salt, digest, prev_hash, current) in rows:
        if current is None:
            return report(event_id, f"event {event_id} is not sealed: it was written outside echo_duck "
                                    "(or its hash was removed)")
        if prev_hash != prev:
            return report(event_id, f"event {event_id} does not follow the event before it (prev_hash mismatch): "
                                    "an event was deleted, inserted or reordered")
        if salt is None:
            if reason is not None or before is not None or after is not None:
                return report(event_id, f"event {event_id} lost its salt but kept content: not a purge redaction")
            if memory_id is None or purged_after.get(str(memory_id), 0) <= event_id:
                return report(event_id, f"event {event_id} is redacted but no later purge event names memory {memory_id}")
            redacted += 1
        elif content_digest(salt, reason, before, after) != digest:
            return report(event_id, f"event {event_id}: reason, before or after were changed after it was written")
        if link_hash(prev_hash, event_id, occurred_at, actor, action, memory_id, digest) != current:
            return report(event_id, f"event {event_id}: its time, actor, action, memory or digest were changed")
        prev, sealed = current, sealed + 1
    if rows and head is not None and (head["event_id"] != rows[-1][0] or head["hash"] != prev):
        return report(None, f"the chain ends at event {rows[-1][0]} but its recorded head is event {head['event_id']}: "
                            "events were removed from the end")
    if not rows and head is not None:
        return report(None, f"the log is empty but its recorded head is event {head['event_id']}: events were removed")
    return report(None, None)


def _run(con, name: str, /, **params):
    q = sqlfiles.query(name)
    return con.execute(q.sql, q.bind(params)) if q.params else con.execute(q.sql)
