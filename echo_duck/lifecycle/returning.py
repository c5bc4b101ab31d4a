"""Bring a memory back from the Parquet archive (SPEC L2: "restore brings them back"): a decayed memory that archive()
exported past retention is still active, in tier archival, and restore(), get() and history() must reach it.

``bring_back`` runs inside restore's transaction: the row is copied from ``memories_all`` into the live table (the
view prefers a live row, so it is never seen twice) and indexed for both arms, and its id is recorded in store_info
(``RETURNS``). After the commit ``finish`` rewrites the archive files holding it without it and clears the record.
A crash in between leaves the record, and the next writable open finishes (opening.py): a stale Parquet copy would
come back as active the day garbage collection deleted its forgotten live row.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import MemoryNotFound
from ..index.indexing import Indexer, NewRow
from ..models import Memory
from ..storage.db import Db
from ..write import validate
from ..write.guards import check_provenance, require_owner
from ..write.spec import Caller
from ..write.writer import Writer
from . import archive, erasure

# store_info: JSON {id: the row_version it came back with} of the rows brought back whose Parquet copies remain
RETURNS = "archive_returns_pending"


def archived_row(db: Db, caller: Caller, target: Any, *, any_agent: bool) -> dict[str, Any]:
    """The row ``target`` (an id, or a key: the caller's own first, then the newest) names in the Parquet archive among
    those the caller may see (``any_agent``: any, by id); MemoryNotFound when none."""
    who = {"caller_agent": caller.agent_id, "caller_session": caller.session_id, "any_agent": any_agent}
    if not isinstance(target, str) or validate.looks_like_uuid(target):
        row = db.dict("archived_memory", id=validate.memory_id(target), **who)
    else:
        row = db.dict("archived_memory_by_key", key=validate.key(target), **who)
    if row is None:
        raise MemoryNotFound(f"no memory {target!r} is visible to agent {caller.agent_id!r}")
    return row


def bring_back(db: Db, indexer: Indexer | None, row: dict[str, Any]) -> None:
    """Copy an archived row into the live table and index it (inside the caller's transaction; ``indexer`` None: a
    row that comes back only to be forgotten is not indexed). The marker records its new row_version: ``finish``
    drops only the Parquet copies older than it (one exported again since, after a failed finish, is not lost)."""
    db.run("insert_returned_memory", id=row["id"])
    at = row["observed_at"] or row["created_at"]
    if indexer is not None:
        indexer.index([NewRow(uuid.UUID(str(row["id"])), row["agent_id"], row["source_session"], at,
                              row["created_at"], row["content"])])
    returned = db.dict("memory_by_id", id=row["id"])["row_version"]
    db.run("set_store_info", name=RETURNS, value=json.dumps({**pending(db), str(row["id"]): returned}))


def forget(writer: Writer, caller: Caller, target: Any, reason: str, provenance: Any, now: datetime,
           root: Path | None) -> Memory:
    """Soft delete, in one transaction: the memory (live, or exported to Parquet: it comes back to the live table
    forgotten) and, when it is a fact's newest version, its earlier versions by the same author, live or exported
    (so garbage collection removes them all: get() and history() read an exported one after gc); then ``finish``."""
    db = writer.db
    with db.transaction("forget"):
        try:
            memory = writer.forget(caller, target, reason=reason, provenance=provenance)
        except MemoryNotFound:  # exported past retention (a decayed fact, an old version)
            row = archived_row(db, caller, target, any_agent=caller.admin)
            require_owner(caller, row, "forget")
            check_provenance(caller, row, validate.provenance(provenance), "forget")
            memory = _forgotten(db, caller, row, validate.reason(reason), now)
        if memory.superseded_by is None:  # the fact's newest version: its earlier ones leave recall with it, but
            level = validate.provenance(provenance)  # an agent's request leaves what it could not forget itself
            for older in db.dicts("earlier_versions_to_forget", id=memory.id):
                if caller.admin or older["provenance"] <= level:
                    _forgotten(db, caller, older, f"an earlier version of forgotten memory {memory.id}", now)
    finish(db, root)
    return memory


def _forgotten(db: Db, caller: Caller, row: dict[str, Any], reason: str, now: datetime) -> Memory:
    """A row forgotten, with its event; one exported to Parquet back in the live table first."""
    if row["status"] != "forgotten":
        if row["storage"] == "archive":  # rows from memories_all (archived_row, earlier_versions_to_forget)
            bring_back(db, None, row)
        before = db.scalar("memory_json", id=row["id"])
        db.run("set_memory_status", id=row["id"], status="forgotten", now=now)
        db.run("log_event", now=now, actor=caller.who, action="forget", memory_id=row["id"], reason=reason,
               before=before)
    return Memory.from_row(db.dict("memory_by_id", id=row["id"]) or row)


def pending(db: Db) -> dict[str, int | None]:
    """The marker: id -> the row_version it came back with (None: every copy goes)."""
    value = json.loads(db.scalar("store_info_value", name=RETURNS) or "{}")
    return dict.fromkeys(value) if isinstance(value, list) else value


def finish(db: Db, root: Path | None) -> int:
    """Drop the Parquet copies of rows brought back; how many archive files were rewritten. Under the store lock (an
    archive() compacting a partition it rewrites would put the stale copy back); the view is refreshed whatever
    happens (a rewrite that failed half-way has deleted a file the view named)."""
    with db.lock:
        with db.reading():
            marked = pending(db)
        if not marked:
            return 0
        try:
            rewritten = erasure.rewrite_archive(root, set(marked), below=marked)
        finally:
            archive.refresh_view(db, root)
        with db.transaction("finishing returns from the archive"):
            left = {i: v for i, v in pending(db).items() if i not in marked or marked[i] != v}
            db.run("set_store_info", name=RETURNS, value=json.dumps(left))
        return rewritten
