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
from ..write.spec import Caller
from ..write.writer import Writer
from . import archive, erasure

RETURNS = "archive_returns_pending"  # store_info: JSON list of ids brought back whose Parquet copies remain


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
    row that comes back only to be forgotten is not indexed)."""
    db.run("insert_returned_memory", id=row["id"])
    at = row["observed_at"] or row["created_at"]
    if indexer is not None:
        indexer.index([NewRow(uuid.UUID(str(row["id"])), row["agent_id"], row["source_session"], at,
                              row["created_at"], row["content"])])
    db.run("set_store_info", name=RETURNS, value=json.dumps(sorted({*pending(db), str(row["id"])})))


def forget(writer: Writer, caller: Caller, target: Any, reason: str, provenance: Any, now: datetime,
           root: Path | None) -> Memory:
    """writer.forget (a soft delete), then, when it forgot a fact's newest version, its earlier versions already in
    the Parquet archive (forget_archived)."""
    memory = writer.forget(caller, target, reason=reason, provenance=provenance)
    if memory.superseded_by is None:
        forget_archived(writer.db, caller, memory.id, now, root)
    return memory


def forget_archived(db: Db, caller: Caller, memory_id: str, now: datetime, root: Path | None) -> int:
    """After forget() of a fact's live version (the writer forgets its live earlier versions): the earlier versions
    already exported to Parquet come back to the live table forgotten, each with an event, and their Parquet copies
    go, so garbage collection removes them with the rest (get() and history() read them after gc). How many."""
    with db.transaction("forgetting archived versions"):
        rows = [r for r in db.dicts("earlier_versions_to_forget", id=memory_id) if r["storage"] == "archive"]
        for row in rows:
            bring_back(db, None, row)
            before = db.scalar("memory_json", id=row["id"])
            db.run("set_memory_status", id=row["id"], status="forgotten", now=now)
            db.run("log_event", now=now, actor=caller.who, action="forget", memory_id=row["id"],
                   reason=f"an earlier version of forgotten memory {memory_id}", before=before)
    finish(db, root)
    return len(rows)


def pending(db: Db) -> list[str]:
    value = db.scalar("store_info_value", name=RETURNS)
    return json.loads(value) if value else []


def finish(db: Db, root: Path | None) -> int:
    """Drop the Parquet copies of rows brought back; how many archive files were rewritten."""
    with db.reading():
        ids = pending(db)
    if not ids:
        return 0
    rewritten = erasure.rewrite_archive(root, set(ids))
    if rewritten:
        archive.refresh_view(db, root)
    with db.transaction("finishing returns from the archive"):
        db.run("set_store_info", name=RETURNS, value=json.dumps(sorted(set(pending(db)) - set(ids))))
    return rewritten
