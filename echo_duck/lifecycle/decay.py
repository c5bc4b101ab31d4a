"""Forgetting (SPEC L1, L2): the decay job, restore. Thin calls into sql/ — the formula lives in
sql/macros/20_ranking.sql (effective_importance) and sql/views/10_memory_views.sql (memory_decay_at).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, MemoryNotFound
from ..models import Memory
from ..storage.db import Db
from ..write.guards import require_owner
from ..write.writer import Caller, Writer
from . import returning


@dataclass(frozen=True)
class DecayReport:
    now: datetime
    archived: int
    dry_run: bool
    candidates: tuple[dict, ...] = ()  # filled on a dry run: id, key, type, effective_importance

    def to_dict(self) -> dict:
        return {"now": self.now.isoformat(), "archived": self.archived, "dry_run": self.dry_run,
                "candidates": [{**c, "id": str(c["id"])} for c in self.candidates]}


def decay(db: Db, caller: Caller, now: datetime, *, dry_run: bool = False, at: datetime | None = None) -> DecayReport:
    """Move every memory whose effective importance at ``now`` fell below archive_threshold to the archival tier,
    with one event each, in one transaction. Idempotent: archived rows are not touched again. The change happens
    ``at`` (the store's clock; default ``now``): evaluated for another instant, it is still dated when it was made
    (an archive dated 2035 read as the live tier before then, one dated in the past rewrote what as_of reads)."""
    if dry_run:
        with db.reading():
            rows = db.dicts("decay_candidates", now=now)
        return DecayReport(now, 0, True, tuple(rows))
    with db.transaction("decay"):
        db.run("stage_decay_batch", now=now)
        try:
            count = db.scalar("count_decay_batch")
            db.run("apply_decay_batch", now=at or now)
            db.run("log_decay_batch", now=at or now, actor=caller.who)
        finally:
            db.run("drop_decay_batch")
    return DecayReport(now, count, False)


def restore(db: Db, writer: Writer, caller: Caller, target: Any, now: datetime, reason: str,
            archive_root: Path | None = None) -> Memory:
    """Bring an archived (decayed) memory back to its tier, from the Parquet archive too (returning.py); its
    forgetting curve restarts."""
    with db.transaction("restore"):
        try:
            row = writer.resolve_owned(caller, target, live_only=False, verb="restore")
        except MemoryNotFound:  # exported past retention: still active in tier archival
            row = returning.archived_row(db, caller, target, any_agent=caller.admin)
            require_owner(caller, row, "restore")
            if row["status"] == "active" and row["tier"] == "archival":
                if row["key"] is not None and db.dict("live_key_of_owner", agent=row["agent_id"], key=row["key"]):
                    raise InvalidInput(f"memory {row['id']} was written again since it was archived (key "
                                       f"{row['key']!r} is live): update that one instead")
                returning.bring_back(db, writer.indexer, row)
        if row["status"] != "active" or row["tier"] != "archival":
            raise InvalidInput(f"memory {row['id']} is {row['status']} in tier {row['tier']}; "
                               "only archived active memories can be restored (superseded versions stay history)")
        before = db.scalar("memory_json", id=row["id"])
        tier = db.scalar("tier_before_archive", id=row["id"])
        db.run("restore_memory", id=row["id"], tier=tier if tier != "archival" else "semantic", now=now)
        db.run("log_event", now=now, actor=caller.who, action="restore", memory_id=row["id"], reason=reason, before=before)
        restored = Memory.from_row(db.dict("memory_by_id", id=row["id"]))
    returning.finish(db, archive_root)
    return restored


@dataclass(frozen=True)
class GcReport:
    cutoff: datetime
    dry_run: bool
    forgotten_memories: int
    recall_log_rows: int
    blocked_write_rows: int
    finished_exports: int

    def to_dict(self) -> dict:
        return {**self.__dict__, "cutoff": self.cutoff.isoformat()}


def gc(db: Db, caller: Caller, keyword: Any, now: datetime, retention_days: float, *, dry_run: bool) -> GcReport:
    """Remove what the retention policy lets go: forgotten memories (their events stay as history),
    recall_log and blocked_writes rows, finished archive bookkeeping; then compact the postings.
    The parameters of the gc's SQL all take the last update's time against ``now - retention``."""
    cutoff = now - timedelta(days=retention_days)
    if dry_run:
        with db.reading():
            counts = db.dict("gc_counts", cutoff=cutoff)
        return GcReport(cutoff, True, **counts)
    with db.transaction("gc"):
        counts = db.dict("gc_counts", cutoff=cutoff)
        db.run("gc_stage_forgotten", cutoff=cutoff)
        db.run("gc_apply")
        db.run("gc_logs", cutoff=cutoff)
        db.run("log_gc_event", now=now, actor=caller.who, reason=f"gc before {cutoff.isoformat()}: {counts}")
        keyword.compact_in_transaction()
    return GcReport(cutoff, False, **counts)
