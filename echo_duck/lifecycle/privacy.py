"""Deletion cascade (SPEC L5, seed 001 scenario 3): a privacy request removes the content everywhere.

``purge`` deletes every version of the fact, its vectors, its postings and the indexed text, its
source messages, its rows in the Parquet archive, and blanks the content of its events (the one
exception to the append-only log); one content-free 'purge' event per memory remains. Everything
derived from it through source_refs (episodes, facts, procedures) is purged too, or flagged for
review (status 'flagged': out of recall and snapshots) when ``cascade="flag"``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import InvalidInput, MemoryNotFound
from ..index.indexing import Indexer, NewRow
from ..storage.db import Db, uuid_list
from ..write import validate
from ..write.sessions import retitle_after_delete, retitle_before_delete
from ..write.writer import Caller, Writer
from . import archive

_STAGE = "echo_duck_purge_stage"
CASCADES = ("purge", "flag")


@dataclass(frozen=True)
class PurgeReport:
    purged: tuple[str, ...]
    flagged: tuple[str, ...]
    messages_deleted: int
    episodes: tuple[str, ...]
    archive_files_rewritten: int

    def to_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}


def purge(db: Db, writer: Writer, indexer: Indexer, caller: Caller, target, *, reason: str, cascade: str,
          now: datetime, archive_root: Path | None) -> PurgeReport:
    if cascade not in CASCADES:
        raise InvalidInput(f"cascade must be one of {', '.join(CASCADES)}, got {cascade!r}")
    with db.transaction("purge"):
        row = _resolve_anywhere(db, writer, caller, target)
        # Every version, also those already moved to the Parquet archive (memories_all).
        chain = [str(r["id"]) for r in db.dicts("version_chain_all", id=row["id"])]
        purge_ids, flag_ids, messages, episodes = _closure(db, chain, cascade)
        neighbours = {n for i in purge_ids for n in _next_in_session(db, i)} - set(purge_ids)
        stage = pa.table({"memory_id": sorted(purge_ids)})
        db.con.register(_STAGE, stage)
        try:
            db.run("purge_keyword_docs")
            db.run("blank_purged_events")
            db.run("scrub_purged_recall_queries")
            db.run("delete_purged_memories")
            db.run("log_purge_events", now=now, actor=caller.who, reason=reason)
        finally:
            db.con.unregister(_STAGE)
        for memory_id in flag_ids:
            db.run("flag_memory", id=memory_id, now=now)
        if messages:
            retitled = retitle_before_delete(db, sorted(messages))  # a title made from a purged message goes too
            db.run("delete_messages", ids=sorted(messages))
            retitle_after_delete(db, retitled)
        for episode_id in episodes:
            db.run("purge_episode" if cascade == "purge" else "flag_episode", id=episode_id)
        _reindex(db, indexer, sorted(neighbours))
        indexer.keyword.compact_in_transaction()
    indexer.keyword_search.invalidate()  # drop purged ids and terms from memory now, not at the next recall
    if indexer.vectors is not None:
        indexer.vectors.invalidate()
    rewritten = _purge_archive(archive_root, set(purge_ids))
    if rewritten:
        archive.refresh_view(db, archive_root)
    return PurgeReport(tuple(sorted(purge_ids)), tuple(sorted(flag_ids)), len(messages), tuple(sorted(episodes)), rewritten)


def _resolve_anywhere(db: Db, writer: Writer, caller: Caller, target) -> dict:
    """The memory to purge: a live one the caller can see, or one already in the Parquet archive."""
    try:
        return writer.resolve(caller, target, live_only=False)
    except MemoryNotFound:
        row = db.dict("visible_archived_memory", id=validate.memory_id(target), caller_agent=caller.agent_id,
                      caller_session=caller.session_id) if validate.looks_like_uuid(target) else None
        if row is None:
            raise
        return row


def _closure(db: Db, chain: list[str], cascade: str) -> tuple[set[str], set[str], set[str], set[str]]:
    """The chain; what it came from (messages, and the episodes summarising them); and what was
    derived from it or from those same messages, transitively. Facts that only cite an episode are
    derived from it only when the episode itself is being deleted (its summary memory is the
    target); a fact's deletion leaves the other facts of its session alone."""
    purge_ids, flag_ids = set(chain), set()
    messages, episodes, summarised = set(), set(), set()
    for r in db.dicts("memories_all_by_ids", ids=uuid_list(chain)):
        for ref in r["source_refs"]:
            kind, _, ref_id = ref.partition(":")
            if kind == "message":
                messages.add(ref_id)
        if r["tier"] == "episodic" and r["episode_id"] is not None:
            summarised.add(str(r["episode_id"]))  # deleting an episode's summary deletes the episode
    episodes |= summarised
    if messages:
        episodes |= {str(e) for (e,) in db.run("episodes_from_messages", messages=sorted(messages)).fetchall()}
    frontier = ([f"memory:{i}" for i in chain] + [f"message:{m}" for m in messages]
                + [f"summary:{e}" for e in episodes] + [f"episode:{e}" for e in summarised])
    seen = set(chain)
    while frontier:
        derived = db.dicts("derived_memories", refs=frontier, exclude=sorted(seen))
        frontier = []
        for d in derived:
            memory_id = str(d["id"])
            seen.add(memory_id)
            (purge_ids if cascade == "purge" else flag_ids).add(memory_id)
            frontier.append(f"memory:{memory_id}")
    return purge_ids, flag_ids, messages, episodes


def _next_in_session(db: Db, memory_id: str) -> list[str]:
    return [str(r[0]) for r in db.run("next_in_session", id=memory_id).fetchall()]


def _reindex(db: Db, indexer: Indexer, ids: list[str]) -> None:
    """Index again the memories whose conversational context was a purged one."""
    rows = []
    for memory_id in ids:
        r = db.dict("reindex_row", id=memory_id)
        if r is None:
            continue
        indexer.keyword.remove([memory_id])
        rows.append(NewRow(r["id"], r["agent_id"], r["source_session"], r["at"], r["created_at"], r["content"]))
    indexer.index(rows)


def _purge_archive(root: Path | None, ids: set[str]) -> int:
    """Rewrite each archive file that holds a purged row without it (written and counted first)."""
    if root is None or not ids or not root.exists():
        return 0
    rewritten = 0
    for path in sorted(root.glob("agent_id=*/year=*/*.parquet")):
        table = pq.read_table(path)
        keep = pa.array([i not in ids for i in table.column("id").cast(pa.string()).to_pylist()])
        if keep.true_count == table.num_rows:
            continue
        kept = table.filter(keep)
        if kept.num_rows:
            archive.write_parquet_atomically(kept, path.with_name(f"part-purged-{uuid.uuid4()}.parquet"))
        path.unlink()
        rewritten += 1
    return rewritten
