"""Deletion cascade (SPEC L5, seed 001 scenario 3): a privacy request removes the content everywhere.

``purge`` deletes every version of the fact, its vectors, its postings and the indexed text, its
source messages, and redacts its events (reason, before, after and salt go; the hash chain still
verifies, event_chain.py); one content-free 'purge' event per memory remains. Everything derived
from it through source_refs (episodes, facts, procedures) is purged too, or flagged for review (status 'flagged':
out of recall and snapshots) when ``cascade="flag"``; an episode's summary quotes the messages it summarises, so
with either cascade it is purged, and under "flag" the episode keeps its row without summary or entities (SPEC T3:
withdrawn, not recomputed: the session's other messages may repeat the words, and consolidating it again would bring
back facts forgotten or replaced since). The purged ids are recorded in ``pending_purges`` in
the same transaction; erasure.py then rewrites the Parquet archive and the store file so that no byte of the text
stays on disk (SPEC T5).

Only the memory's owner or an admin may purge it, and an agent's request of lower provenance than
the memory is refused (``ProvenanceConflict``), as for forget.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Iterable

import pyarrow as pa

from ..errors import InvalidInput, MemoryNotFound
from ..index.indexing import Indexer
from ..storage.db import Db, uuid_list
from ..write import validate
from ..write.sessions import retitle_after_delete, retitle_before_delete
from ..write.writer import Caller, Writer, check_provenance, require_owner

_STAGE = "echo_duck_purge_stage"
CASCADES = ("purge", "flag")


@dataclass(frozen=True)
class PurgeReport:
    purged: tuple[str, ...]
    flagged: tuple[str, ...]
    messages_deleted: int
    episodes: tuple[str, ...]
    archive_files_rewritten: int
    rewrite_pending: bool = False  # an agent's purge soon after another rewrite: the file is rewritten later

    def to_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}


def purge(db: Db, writer: Writer, indexer: Indexer, caller: Caller, target, *, reason: str, cascade: str,
          now: datetime, archive_root: Path | None, provenance: int = 1) -> PurgeReport:
    """The database part of a purge, in one transaction; the caller then runs erasure.finish_pending,
    which rewrites the archive files and the store file (the report counts archive files to rewrite)."""
    if cascade not in CASCADES:
        raise InvalidInput(f"cascade must be one of {', '.join(CASCADES)}, got {cascade!r}")
    with db.transaction("purge"):
        row = _resolve_anywhere(db, writer, caller, target)
        require_owner(caller, row, "purge")
        check_provenance(caller, row, provenance, "purge")
        # Every version, also those already moved to the Parquet archive (memories_all).
        chain = [str(r["id"]) for r in db.dicts("version_chain_all", id=row["id"])]
        if not caller.admin:  # an agent purges its own versions only (an older approve() could chain two owners), and
            # none of higher provenance than its request (a key's exported fact the user stated: reviewer AI, session 56)
            chain = sorted(_owned_by(db, chain, row["agent_id"], provenance))
        purge_ids, flag_ids, messages, episodes = _closure(db, chain, cascade, row["agent_id"],
                                                           None if caller.admin else caller.agent_id)
        stage = pa.table({"memory_id": sorted(purge_ids)})
        db.con.register(_STAGE, stage)
        try:
            db.run("purge_keyword_docs")
            db.run("blank_purged_events")
            db.run("scrub_purged_recall_queries")
            db.run("delete_purged_memories")
            db.run("log_purge_events", now=now, actor=caller.who, reason=reason)
            db.run("mark_purges_pending", now=now)
            archived = db.scalar("count_archived_purges")
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
        indexer.keyword.compact_in_transaction()
    indexer.keyword_search.invalidate()  # drop purged ids and terms from memory now, not at the next recall
    if indexer.vectors is not None:
        indexer.vectors.invalidate()
    return PurgeReport(tuple(sorted(purge_ids)), tuple(sorted(flag_ids)), len(messages), tuple(sorted(episodes)),
                       int(archived))


def _resolve_anywhere(db: Db, writer: Writer, caller: Caller, target) -> dict:
    """The memory to purge: a live one the caller can see (an admin: any, by id), or one already in
    the Parquet archive."""
    try:
        return writer.resolve(caller, target, live_only=False, any_agent=caller.admin)
    except MemoryNotFound:
        row = None
        if validate.looks_like_uuid(target):
            row = db.dict("archived_memory", id=validate.memory_id(target), caller_agent=caller.agent_id,
                          caller_session=caller.session_id, any_agent=caller.admin)
        if row is None:
            raise
        return row


def _closure(db: Db, chain: list[str], cascade: str, owner: str,
             agent: str | None) -> tuple[set[str], set[str], set[str], set[str]]:
    """The chain; what it came from (messages, and the episodes summarising them); and what was
    derived from it or from those same messages, transitively. Facts that only cite an episode are
    derived from it only when the episode itself is being deleted (its summary memory is the
    target); a fact's deletion leaves the other facts of its session alone. Only the ``owner``'s own
    messages and episodes count as sources (a memory may cite any id); an agent's purge (``agent``) reaches
    only its own derived memories, an admin's (None) every agent's."""
    purge_ids, flag_ids = set(chain), set()
    messages, episodes, summarised = set(), set(), set()
    cited: set[str] = set()  # the episodes a fact was consolidated in: their summary may quote its working note
    for r in db.dicts("memories_all_by_ids", ids=uuid_list(chain)):
        for ref in r["source_refs"]:
            kind, _, ref_id = ref.partition(":")
            if kind == "message":
                messages.add(ref_id)
            elif kind == "episode" and r["tier"] != "episodic":
                cited.add(ref_id)
        if r["tier"] == "episodic" and r["episode_id"] is not None:
            summarised.add(str(r["episode_id"]))  # deleting an episode's summary deletes the episode
    if messages:
        messages = {m for (m,) in db.run("owned_messages", messages=sorted(messages), owner=owner).fetchall()}
    if summarised:
        summarised = {e for (e,) in db.run("owned_episodes", episodes=sorted(summarised), owner=owner).fetchall()}
    episodes |= summarised
    if cited:
        episodes |= {e for (e,) in db.run("owned_episodes", episodes=sorted(cited), owner=owner).fetchall()}
    if messages:
        episodes |= {str(e) for (e,) in db.run("episodes_from_messages", messages=sorted(messages)).fetchall()}
    frontier = ([f"memory:{i}" for i in chain] + [f"message:{m}" for m in messages]
                + [f"summary:{e}" for e in episodes] + [f"episode:{e}" for e in summarised])
    seen = set(chain)
    while frontier:
        derived = db.dicts("derived_memories", refs=frontier, exclude=sorted(seen), agent=agent)
        frontier = []
        for d in derived:
            memory_id = str(d["id"])
            seen.add(memory_id)
            # an episode's summary memory quotes its messages (an extractive summary copies their sentences): it goes
            # with them whatever the cascade (flag_episode withdraws the episode row's copy)
            summary = d["tier"] == "episodic" and str(d["episode_id"]) in episodes  # the episode's own summary
            if cascade == "purge" or summary:  # with every version of it, live or archived: each holds the text
                versions = {str(v["id"]) for v in db.dicts("version_chain_all", id=memory_id)} - seen
                if agent is not None:
                    versions = _owned_by(db, versions, agent)
                seen |= versions
                purge_ids |= {memory_id, *versions}
                frontier += [f"memory:{v}" for v in versions]
            elif not d["archived"]:  # flagging marks live rows; an archived version is history already
                flag_ids.add(memory_id)
            frontier.append(f"memory:{memory_id}")
    return purge_ids, flag_ids, messages, episodes


def _owned_by(db: Db, ids: Iterable[str], agent: str, level: int | None = None) -> set[str]:
    """Of the memory ids ``ids`` (live or archived), those ``agent`` owns, not what the host wrote under its id (and of
    provenance ``level`` at most, when given)."""
    return {str(r["id"]) for r in db.dicts("memories_all_by_ids", ids=uuid_list(sorted(ids)))
            if r["agent_id"] == agent and not r.get("by_host") and (level is None or r["provenance"] <= level)}
