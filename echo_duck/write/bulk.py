"""Set-based writing of a batch of new memories: one INSERT … SELECT for the rows that need no
versioning decision, instead of a handful of statements per row (measured: ~20 ms per row that way).

A row is "simple" when no live memory shares its key (or, keyless, its exact content) in the same
scope and no other row of the batch does; the write path handles the rest one by one.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Sequence

import pyarrow as pa

from ..index.indexing import NewRow
from ..storage.db import Db

STAGE = "echo_duck_write_stage"


def stage_table(agent_id: str, specs: Sequence, ids: Sequence[uuid.UUID], base: datetime) -> pa.Table:
    return pa.table({
        "pos": pa.array(range(len(specs)), pa.int32()),
        "id": [str(i) for i in ids],
        "agent_id": [agent_id] * len(specs),
        "type": [s.type for s in specs],
        "tier": [s.tier for s in specs],
        "key": pa.array([s.key for s in specs], pa.string()),
        "content": [s.content for s in specs],
        "tags": pa.array([list(s.tags) for s in specs], pa.list_(pa.string())),
        "entities": pa.array([list(s.entities) for s in specs], pa.list_(pa.string())),
        "scope": [s.scope for s in specs],
        "team_id": pa.array([s.team_id for s in specs], pa.string()),
        "tenant_id": pa.array([s.tenant_id for s in specs], pa.string()),
        "source_session": pa.array([s.source_session for s in specs], pa.string()),
        "source_refs": pa.array([list(s.source_refs) for s in specs], pa.list_(pa.string())),
        "created_at": pa.array([base + timedelta(microseconds=i) for i in range(len(specs))], pa.timestamp("us")),
        "observed_at": pa.array([s.observed_at for s in specs], pa.timestamp("us")),
        "importance": pa.array([s.importance for s in specs], pa.float64()),
        "confidence": pa.array([s.confidence for s in specs], pa.float64()),
        "episode_id": pa.array([None if s.episode_id is None else str(s.episode_id) for s in specs], pa.string()),
        "provenance": pa.array([s.provenance for s in specs], pa.int8()),
        "pinned": pa.array([s.pinned for s in specs], pa.bool_()),
        "sensitivity": [s.sensitivity for s in specs],
    })


def conflicting_positions(db: Db, stage: pa.Table) -> set[int]:
    """Batch positions that must go through the one-by-one path (an existing or in-batch match)."""
    db.con.register(STAGE, stage)
    try:
        return {row[0] for row in db.run("bulk_conflicting_positions").fetchall()}
    finally:
        db.con.unregister(STAGE)


def insert_simple(db: Db, stage: pa.Table, actor: str, by_host: bool) -> list[NewRow]:
    """Insert the staged rows with one create event each (``by_host``: the host writes them, guards.host_writes);
    returns them for indexing."""
    if stage.num_rows == 0:
        return []
    db.con.register(STAGE, stage)
    try:
        db.run("bulk_insert_memories", by_host=by_host)
        db.run("bulk_log_create_events", actor=actor)
    finally:
        db.con.unregister(STAGE)
    rows = stage.select(["id", "agent_id", "source_session", "created_at", "observed_at", "content"]).to_pylist()
    return [NewRow(uuid.UUID(r["id"]), r["agent_id"], r["source_session"], r["observed_at"] or r["created_at"],
                   r["created_at"], r["content"]) for r in rows]
