"""The reading verbs of the facade: get, find, history, recall, mark and snapshot.

A mixin of ``EchoDuck`` (facade.py): every read is the calling agent's (``self.caller``), through the
same visibility rule (``can_see``: scope and sensitivity); ``as_of=`` answers as the store stood then
(recall/asof.py). The ranking itself is in recall/ and sql/macros/40_recall.sql.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

from ..errors import InvalidInput, MemoryNotFound
from ..lifecycle import returning, self_knowledge
from ..models import PERSISTED_TIERS, SCOPES, STATUSES, TYPES, Event, History, Memory
from ..recall.hits import Hit, RecallQuery
from ..recall.shared_snapshot import own_tail, render_shared, split_by_author
from ..recall.snapshot import Budgets
from ..recall.snapshot import render as render_snapshot
from ..storage.db import uuid_list
from ..write import targets, validate


class ReadVerbs:
    """get, find, history, recall, mark, snapshot (mixed into EchoDuck)."""

    def get(self, memory_id: Any, *, as_of: Any = None) -> Memory:
        """The memory with this id, or a unique id prefix of at least 4 characters (``"8464cd72"``), also one
        exported to the Parquet archive; as it was at ``as_of``, when given (recall/asof.py)."""
        if as_of is not None:
            found = self.travel.get(self.caller, validate.memory_id(memory_id), _as_of(as_of))
            if found is None:
                raise MemoryNotFound(f"no memory with id {memory_id} existed at {as_of} visible to agent "
                                     f"{self.caller.agent_id!r}")
            return found
        with self.db.reading():
            if validate.id_prefix(memory_id):
                return Memory.from_row(targets.by_id_prefix(self.writer.db, self.caller, memory_id, archived=True))
            row = self.db.dict("visible_memory_by_id", id=validate.memory_id(memory_id), **self._who())
            if row is None:  # exported to the Parquet archive past retention (its versions, a decayed fact)
                row = self.db.dict("archived_memory", id=validate.memory_id(memory_id), any_agent=False,
                                   **self._who())
        if row is None:
            raise MemoryNotFound(f"no memory with id {memory_id} is visible to agent {self.caller.agent_id!r}")
        return Memory.from_row(row)

    def find(self, *, key: str | None = None, type: str | Iterable[str] | None = None,
             tier: str | Iterable[str] | None = None, tags: Iterable[str] | None = None,
             scope: str | Iterable[str] | None = None, status: str | Iterable[str] | None = "active",
             text: str | None = None, limit: int = 100, as_of: Any = None) -> list[Memory]:
        """Visible memories matching every given filter (exact key, types, tiers, all tags, substring),
        as they were at ``as_of`` when given (their status then: status="active" means active then)."""
        params = dict(
            key=validate.key(key),
            types=validate.choices(type, "type", TYPES),
            tiers=validate.choices(tier, "tier", PERSISTED_TIERS),
            statuses=validate.choices(status, "status", STATUSES),
            tags=None if tags is None else validate.labels(tags, "tags") or None,
            scopes=validate.choices(scope, "scope", SCOPES),
            text=validate.optional_text(text, "text", max_chars=1000),
            limit=validate.positive_int(limit, "limit"),
        )
        if as_of is not None:
            return self.travel.find(self.caller, params, _as_of(as_of))
        with self.db.reading():
            return [Memory.from_row(r) for r in self.db.dicts("find_memories", **params, **self._who())]

    def history(self, target: Any, *, as_of: Any = None) -> History:
        """Every version of the fact ``target`` belongs to, and every event on them (as the chain stood at
        ``as_of``, when given: rebuilt from the events once ``gc()`` removed the versions); versions exported to the
        Parquet archive are included. An agent sees the versions it may see: an older version that was sensitive
        (or unshared personal) stays hidden. An agent's events are numbered 1, 2, … in order: the store-wide event
        ids, which count every agent's writes, are the host's (``admin=True``)."""
        history = self._history(target, as_of)
        if self.caller.admin:
            return history
        return History(history.versions, tuple(dataclasses.replace(e, event_id=n)
                                               for n, e in enumerate(history.events, start=1)))

    def _history(self, target: Any, as_of: Any) -> History:
        with self.db.reading():
            try:
                row = self.writer.resolve(self.caller, target, live_only=False, any_agent=self.caller.admin)
            except MemoryNotFound:  # the whole chain exported to the Parquet archive
                try:
                    row = returning.archived_row(self.db, self.caller, target, any_agent=self.caller.admin)
                except MemoryNotFound:  # or removed by gc: the past is rebuilt from the events, as get() does
                    if as_of is None or not (validate.looks_like_uuid(target) or hasattr(target, "id")):
                        raise
                    chain = self.travel.chain(self.caller, validate.memory_id(target), _as_of(as_of))
                    if chain is None:
                        raise
                    return self.travel.history(chain, _as_of(as_of))
            chain = self.db.dicts("version_chain", id=row["id"])
            if not self.caller.admin:
                seen = {str(r["id"]) for r in self.db.dicts("visible_of_ids", ids=uuid_list([r["id"] for r in chain]),
                                                            **self._who())}
                chain = [r for r in chain if str(r["id"]) in seen]
            if as_of is not None:
                return self.travel.history([str(r["id"]) for r in chain], _as_of(as_of))
            versions = [Memory.from_row(r) for r in chain]
            ids = [v.id for v in versions]
            events = [Event.from_row(r) for r in self.db.dicts("events_for_memories", ids=ids)]
        return History(tuple(versions), tuple(events))

    def recall(self, query: str, k: int = 10, *, types: Any = None, tiers: Any = None, tags: Any = None,
               entities: Any = None, since: Any = None, until: Any = None, session: str | None = None,
               include_archived: bool = False, reinforce: bool = True, explain: bool = False,
               arms: Iterable[str] = ("keyword", "vector"), query_vector: Any = None,
               include_kb: bool = False, as_of: Any = None, min_score: float | None = None) -> list[Hit]:
        """Hybrid BM25 + vector recall, fused, gated and decayed in SQL (sql/macros/40_recall.sql).

        Archived (decayed) memories come back weighted down; ``include_archived=True`` also returns
        superseded versions. Hits are reinforced (access_count, last_accessed) unless ``reinforce=False``.
        ``arms`` limits the search to "keyword" (BM25) or "vector" for comparisons; ``query_vector``
        skips embedding the query when the caller already has its vector (same model).
        ``include_kb=True`` also searches the knowledge base; its hits (origin "kb") are merged on the
        same score scale. By default recall never touches the KB. ``min_score`` leaves out memories
        whose relevance (``explanation.relevance``, about 0 to 2) is below it: "nothing relevant" comes
        back empty; by default recall returns its best guesses, however weak. ``as_of`` ranks the memories
        as they were at that instant (recall/asof.py); it reinforces and logs nothing.
        """
        spec = RecallQuery.build(query, k, types=types, tiers=tiers, tags=tags, entities=entities, since=since,
                                 until=until, session=session, include_archived=include_archived, reinforce=reinforce,
                                 arms=arms, min_score=min_score)
        if as_of is not None:
            return self.travel.recall(self.caller, spec, _as_of(as_of), explain=validate.flag(explain, "explain"),
                                      query_vector=query_vector)
        kb = self.kb if validate.flag(include_kb, "include_kb") else None
        return self.recaller.recall(self.caller, spec, explain=validate.flag(explain, "explain"),
                                    query_vector=query_vector, kb=kb)

    def mark(self, hit: Any, helpful: bool, *, recall_id: int | None = None,
             provenance: str | int = "model_inferred") -> Memory:
        """Outcome feedback (SPEC R13): unhelpful marks lower a memory's rank, helpful ones its confidence;
        a SELF memory earns confidence only across sessions and days, a PROCEDURE once per session (per day
        without one), and the same recall's hit marked again with the same outcome counts nothing (a mark of a
        memory or an id, naming no recall, counts each time; lifecycle/self_knowledge.py). Like
        forget(), an unhelpful mark may not demote a memory of higher provenance than the request's
        (``provenance``: 'user_stated' when the user said it did not help): ProvenanceConflict."""
        helpful = validate.flag(helpful, "helpful")
        level = validate.provenance(provenance)
        recall_id = recall_id if recall_id is not None else getattr(hit, "recall_id", None)
        if recall_id is not None:  # an id recall() returned (Hit.recall_id): -1, 1.5 or "x" were stored or failed in SQL
            recall_id = validate.positive_int(recall_id, "recall_id", maximum=2**63 - 1)
            journal = self.recaller.journal
            if journal is not None and not journal.issued(recall_id):
                raise InvalidInput(f"recall_id {recall_id} is not one of this agent's recalls: no recall has it yet")
        return self_knowledge.mark(self.db, self.writer, self.caller, hit.id if isinstance(hit, Hit) else hit,
                                   helpful, recall_id, self.now(), level)

    def snapshot(self, budget_user: int = 1375, budget_env: int = 2200, budget_rules: int = 2000, *,
                 budget_profile: int = 2000, budget_self: int = 600, budget_conflicts: int = 800,
                 budget_shared: int = 800, fast: bool = False, min_confidence: float = 0.3, as_of: Any = None) -> str:
        """Markdown for a system prompt, in blocks with their own character budgets: the user profile
        (whole, by section), facts about the user, every active behaviour rule, environment facts,
        the agent's earned self-notes and the conflicts, marked as such (recall/snapshot.py documents
        the format). At most 15 fact lines (user + environment; 5 when ``fast``). Memories other agents
        wrote (team, tenant, public) come after, in a separate lower-trust block (recall/shared_snapshot.py)
        of at most 5 (2 when ``fast``) within ``budget_shared``."""
        budgets = Budgets(user=_budget(budget_user, "budget_user"), rules=_budget(budget_rules, "budget_rules"),
                          environment=_budget(budget_env, "budget_env"), profile=_budget(budget_profile, "budget_profile"),
                          self=_budget(budget_self, "budget_self"), conflicts=_budget(budget_conflicts, "budget_conflicts"))
        fast = validate.flag(fast, "fast")
        limit = 5 if fast else 15
        shared_budget = _budget(budget_shared, "budget_shared")
        min_confidence = validate.unit_interval(min_confidence, "min_confidence")
        if as_of is not None:  # the prompt this agent would have got then
            rows, conflicts = self.travel.snapshot_rows(self.caller, limit, min_confidence, _as_of(as_of))
        else:
            with self.db.reading():
                rows = self.db.dicts("snapshot_candidates", min_confidence=min_confidence, limit=limit,
                                     caller_host=self.caller.admin, **self._who())
                conflicts = self.db.dicts("snapshot_conflicts", limit=50, caller_host=self.caller.admin, **self._who())
        own, others = split_by_author([(r["block"], Memory.from_row(r)) for r in rows], self.caller.agent_id)
        mine = render_snapshot(own, budgets, limit, conflicts)  # the shared block is gated read after its last lines
        return mine + render_shared(others, shared_budget, 2 if fast else 5, own_tail(mine))


def _as_of(value: Any):
    return validate.timestamp(value, "as_of")


def _budget(value: Any, name: str) -> int:
    return validate.positive_int(value, name, maximum=10_000_000)
