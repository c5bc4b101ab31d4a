"""The facade: one object per open store, with verbs that return frozen dataclasses or Polars frames.

It owns the connection and wires the single-job modules together (writes, sessions, working memory);
it holds no SQL and no ranking logic of its own.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import polars as pl

from ..errors import EchoDuckError, InvalidInput, MemoryNotFound, PermissionDenied, StorageError
from ..index.indexing import NO_MODEL_MESSAGE, Indexer
from ..index.vectors import ReembedReport
from ..index.vectors import reembed as reembed_stale
from ..lifecycle import erasure, privacy, self_knowledge
from ..lifecycle.archive import archive_dir
from ..lifecycle.consolidate import Consolidator, JobQueue
from ..lifecycle.compress import Compressor
from ..lifecycle.contradictions import ContradictionChecker
from ..lifecycle.privacy import PurgeReport
from ..models import PERSISTED_TIERS, SCOPES, STATUSES, TYPES, Event, History, Memory, Message, Session, SessionMatch
from ..recall.asof import TimeTravel
from ..recall.hybrid import Hit, Recaller, RecallQuery
from ..recall.recall_log import RecallJournal
from ..recall.rerank import RerankSettings
from ..recall.snapshot import Budgets
from ..recall.shared_snapshot import render_shared, split_by_author
from ..recall.snapshot import render as render_snapshot
from ..storage.connection import connect, translate_errors
from ..storage.db import Db, uuid_list
from ..storage.schema import ensure_schema
from ..write import review, validate
from ..write.sessions import Sessions
from ..write.writer import WRITE_PATHS, Caller, WriteBatch, Writer, prepare
from .admin_verbs import AdminVerbs
from .kb_verbs import KnowledgeBaseVerbs
from .lifecycle_verbs import LifecycleVerbs
from .opening import open_writable
from .working import WorkingMemory

class EchoDuck(LifecycleVerbs, KnowledgeBaseVerbs, AdminVerbs):
    """An open echo_duck store. Use ``echo_duck.open(...)`` and a ``with`` block.

    Lifecycle verbs (decay, restore, archive, gc, audit, contradictions, consolidation) come from
    ``LifecycleVerbs`` in lifecycle_verbs.py, the knowledge-base verbs (kb_add, kb_search, …) from
    ``KnowledgeBaseVerbs`` in kb_verbs.py, the admin verbs (grant, revoke, rights, settings, sql,
    event-chain verification) from ``AdminVerbs`` in admin_verbs.py; this class holds the memory,
    recall and session verbs.

    A handle opened with ``agent_id=`` is an agent handle: it acts as that agent with least privilege.
    ``admin=True`` opens the host's admin handle (memberships, rights, settings, SQL, others' purges,
    store-wide jobs); ``for_agent()`` hands out agent handles on the same open store.
    """

    def __init__(self, path: str | Path = ":memory:", *, agent_id: str = "default", session_id: str | None = None,
                 team_id: str | None = None, tenant_id: str | None = None, admin: bool = False,
                 allow_files: bool = False, now: datetime | Callable[[], datetime] | None = None,
                 read_only: bool = False, lock_timeout: float = 0.0, actor: str | None = None,
                 write_path: str = "api", protected_paths: Iterable[str] = (), embedder: Any = "default",
                 reranker: Any = None, rerank_top_k: int = 10, rerank_timeout_s: float = 5.0,
                 rerank_min_score: float | None = None, verifier: Any = None, extractor: Any = None,
                 summarizer: Any = None):
        """Open (creating or migrating) the store at ``path``; use it in a ``with`` block.

        - ``agent_id``, ``session_id``, ``team_id``, ``tenant_id``: who is acting; they decide which
          memories are visible and which scopes a write may use.
        - ``admin``: the host's handle (memberships, rights, SQL, store-wide jobs, any agent's memories);
          without it this is an agent handle. ``allow_files`` (admin only) lets ``sql()`` read files.
        - ``now``: a fixed datetime or a callable (tests, replays); default the UTC clock.
        - ``read_only``: nothing is written, not even recall bookkeeping; ``lock_timeout``: seconds to
          wait while another process holds the file.
        - ``embedder``: ``"default"`` (the store's own model, else USE-multilingual), ``"use"``,
          ``"minilm"``, ``"hash"`` (tests), ``"none"`` or an object with ``model_id``, ``dim`` and
          ``embed(texts)``.
        - ``reranker`` (an object with ``score(query, texts)``) and ``rerank_*``; ``verifier``
          (contradictions), ``extractor`` and ``summarizer`` (consolidation): pluggable callables,
          for example around an LLM.
        - ``protected_paths``: folders (besides the store's own) whose mention in a command that reads
          or sends files is refused by the scanner. ``actor`` and ``write_path`` label the event log.
        """
        self.path = str(path)
        self.read_only = validate.flag(read_only, "read_only")
        admin, allow_files = validate.flag(admin, "admin"), validate.flag(allow_files, "allow_files")
        if allow_files and not admin:
            raise PermissionDenied("allow_files=True lets sql() read any file the process can: it needs an admin "
                                   "handle (echo_duck.open(path, admin=True, allow_files=True))")
        self.allow_files = allow_files
        caller = Caller(
            agent_id=validate.text(agent_id, "agent_id", max_chars=200),
            session_id=validate.optional_text(session_id, "session_id", max_chars=200),
            team_id=validate.optional_text(team_id, "team_id", max_chars=200),
            tenant_id=validate.optional_text(tenant_id, "tenant_id", max_chars=200),
            actor=validate.optional_text(actor, "actor", max_chars=200) or "",
            path=validate.choice(write_path, "write_path", WRITE_PATHS),
            admin=admin,
        )
        self._clock = _clock(now)
        if self.read_only and self.path != ":memory:" and not Path(self.path).expanduser().exists():
            raise MemoryNotFound(f"no echo_duck store at {self.path}; create it with: echo-duck init --db {self.path}")
        self.archive_dir = archive_dir(self.path)
        opener = functools.partial(connect, self.path, read_only=self.read_only, allow_files=allow_files,
                                   archive=self.archive_dir)
        con = opener(lock_timeout=float(lock_timeout))
        file = None if self.path == ":memory:" else str(Path(self.path).expanduser().resolve())
        self.db = Db(con, read_only=self.read_only, path=file,
                     reconnect=functools.partial(opener, lock_timeout=max(float(lock_timeout), 5.0)))
        self._owns_db = True
        try:
            self.schema_version = ensure_schema(con, read_only=self.read_only)
            # The scanner refuses writes that would read or send the store's own directory (and any extra paths).
            protected = [str(p) for p in validate.labels(list(map(str, protected_paths)), "protected_paths")]
            if self.path != ":memory:":
                protected.append(str(Path(self.path).expanduser().resolve().parent))
            self.indexer = Indexer(self.db, self._clock, embedder)
            self.writer = Writer(self.db, self._clock, self.indexer, protected)
            self.recaller = Recaller(self.db, self.indexer, self._clock, reranker,
                                     RerankSettings(rerank_top_k, rerank_timeout_s, rerank_min_score),
                                     None if self.read_only else RecallJournal(self.db))
            self.travel = TimeTravel(self.db, self.recaller)  # as_of= reads (recall/asof.py)
            self.checker = ContradictionChecker(self.db, self.indexer, self._clock, verifier, writer=self.writer)
            self.compressor = Compressor(self.db, self.indexer, self.writer, self._clock)
            self._shared = _Shared(extractor, summarizer)
            self._bind(caller)
            self.damaged_archive_files = () if self.read_only else open_writable(self.db, self.indexer,
                                                                                 self.archive_dir, self.now())
        except BaseException as e:
            with contextlib.suppress(EchoDuckError):  # a damaged file may fail its close as well
                self.db.close()  # a failed open never leaves the file locked in this process
            if isinstance(e, StorageError) and self.path not in str(e):
                raise StorageError(f"opening {self.path}: {e}") from e  # say which file is damaged
            raise

    def _bind(self, caller: Caller) -> None:
        """What belongs to one handle (one agent) rather than to the store: its identity, sessions,
        working memory and consolidation queue."""
        self._base_caller = caller
        self._local = threading.local()  # acting_as() overrides the caller for one thread
        self.session_log = Sessions(self.db, self._clock, caller.agent_id)
        self.working = WorkingMemory()
        self.consolidator = Consolidator(self.db, self.writer, self.session_log, self.checker, caller,
                                         self._clock, self._shared.extractor, self._shared.summarizer)
        self.jobs_queue = JobQueue(self.db, self.consolidator, caller.agent_id, self._clock)
        self.worker = None

    def for_agent(self, agent_id: str, *, session_id: str | None = None, team_id: str | None = None,
                  tenant_id: str | None = None, actor: str | None = None, write_path: str = "api") -> "EchoDuck":
        """An agent handle on this same open store (admin only): what a host that serves several agents
        from one process hands each agent. It shares this handle's connection (DuckDB lets one handle
        per file per process), has no admin rights, and closing it leaves the store open."""
        self._require_admin("for_agent")
        view = object.__new__(type(self))
        view.__dict__.update({k: v for k, v in self.__dict__.items() if k in _SHARED_STATE})
        view._owns_db = False
        view._bind(Caller(agent_id=validate.text(agent_id, "agent_id", max_chars=200),
                          session_id=validate.optional_text(session_id, "session_id", max_chars=200),
                          team_id=validate.optional_text(team_id, "team_id", max_chars=200),
                          tenant_id=validate.optional_text(tenant_id, "tenant_id", max_chars=200),
                          actor=validate.optional_text(actor, "actor", max_chars=200) or "",
                          path=validate.choice(write_path, "write_path", WRITE_PATHS)))
        return view

    @property
    def is_admin(self) -> bool:
        return self._base_caller.admin

    # -- lifecycle of the handle ---------------------------------------------------------------

    def close(self) -> None:
        self.stop_worker()
        if not self._owns_db:  # an agent handle from for_agent(): the admin handle closes the store
            return
        if self.recaller.journal is not None and not self.db.closed:
            self.recaller.journal.close()
        self.db.close()

    def refresh(self) -> None:
        """Read the store again after writes through the bare connection (``mem.db.con``): recall keeps
        copies of what it reads (BM25 postings, vectors, visibility columns, winners' rows, groups,
        settings, contradictions) that follow every write made through echo_duck, but not those."""
        with self.db.reading(catch_up=False):
            self._caches_changed()

    def __enter__(self) -> "EchoDuck":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<EchoDuck {self.path} agent={self.caller.agent_id!r}{' admin' if self.is_admin else ''}"
                f"{' read-only' if self.read_only else ''}>")

    def now(self) -> datetime:
        return self._clock()

    @property
    def caller(self) -> Caller:
        """Who this facade acts as (in this thread): identity for scopes, actor and path for the audit."""
        return getattr(self._local, "caller", None) or self._base_caller

    @contextlib.contextmanager
    def acting_as(self, actor: str, path: str) -> Iterator["EchoDuck"]:
        """Record writes in this block (this thread only) as ``actor`` on write path ``path``
        (api, cli, import, consolidation, tool): what blocked_writes and memory_events show."""
        previous = getattr(self._local, "caller", None)
        self._local.caller = self.caller.acting_as(validate.text(actor, "actor", max_chars=200),
                                                   validate.choice(path, "path", WRITE_PATHS))
        try:
            yield self
        finally:
            self._local.caller = previous

    # -- memories ------------------------------------------------------------------------------

    def remember(self, content: str, *, type: str, key: str | None = None, tags: Iterable[str] = (),
                 scope: str = "private", provenance: str | int = "model_inferred", importance: float = 0.5,
                 confidence: float = 0.8, pinned: bool = False, source_session: str | None = None,
                 source_refs: Iterable[str] = (), observed_at: datetime | None = None, **more: Any) -> Memory:
        """Store a fact. Same key in the same scope makes a new version (SPEC W3), guarded by provenance.

        ``more`` takes entities, team_id, tenant_id, sensitivity, episode_id, tier ('semantic'/'episodic').
        """
        spec = prepare(self.caller, content, type=type, key=key, tags=tags, scope=scope, provenance=provenance,
                       importance=importance, confidence=confidence, pinned=pinned, source_session=source_session,
                       source_refs=source_refs, observed_at=observed_at, **_only(more, "remember"))
        memory = self.writer.remember(self.caller, spec)
        if memory.status != "quarantined":
            if memory.id in self.writer.last_inserted:  # a new row: if it restates a live one, that one is reinforced
                memory = self.compressor.fold_restatement(self.caller, self._reload(memory))
            self.checker.check(self.caller, [memory.id])
        return self._reload(memory)

    def remember_many(self, records: Iterable[dict[str, Any]], *, check_contradictions: bool = False,
                      atomic: bool = False) -> WriteBatch:
        """Bulk write in one transaction: each record holds remember()'s arguments.

        Writes the scanner blocks are left out and listed in ``.blocked`` (position, Finding); writes it is
        unsure about are stored quarantined and listed in ``.quarantined``. ``atomic=True`` keeps the batch all
        or nothing (the first block raises RejectedWrite). Contradiction checks are off for bulk loads unless
        asked for (they cost a query per row)."""
        specs = []
        if isinstance(records, str):
            raise InvalidInput("records must be a list of dicts, got str")
        for i, record in enumerate(validate._iterable(records, "records")):
            if not isinstance(record, dict) or "content" not in record:
                raise InvalidInput(f"record {i} must be a dict with at least 'content' and 'type'")
            record = dict(record)
            try:
                specs.append(prepare(self.caller, record.pop("content"), **record))
            except TypeError as e:
                raise InvalidInput(f"record {i}: {e}") from None
            except InvalidInput as e:
                raise InvalidInput(f"record {i}: {e}") from None
        stored = self.writer.remember_many(self.caller, specs, atomic=validate.flag(atomic, "atomic"))
        if validate.flag(check_contradictions, "check_contradictions"):
            self.checker.check(self.caller, [m.id for m in stored if m.status != "quarantined"])
            stored = WriteBatch([self._reload(m) for m in stored], stored.blocked, stored.quarantined)
        else:  # a new version from another source still records the conflict it settled (one query)
            self.checker.check_versions(self.caller, [m.id for m in stored if m.supersedes])
        return stored

    def approve(self, target: Any, reason: str | None = None) -> Memory:
        """Accept a quarantined memory (it goes live; an event records who and why). A person decides, so
        this needs an admin handle (CLI: ``--admin``): an agent must not release what the scanner held."""
        self._require_admin("approve")
        return review.approve(self.writer, self.caller, target,
                              reason=validate.optional_text(reason, "reason", max_chars=1000))

    def reject(self, target: Any, reason: str | None = None) -> Memory:
        """Refuse a quarantined memory (it is forgotten; an event records who and why)."""
        return review.reject(self.writer, self.caller, target,
                             reason=validate.optional_text(reason, "reason", max_chars=1000))

    def get(self, memory_id: Any, *, as_of: Any = None) -> Memory:
        """The memory with this id, or a unique id prefix of at least 4 characters (``"8464cd72"``); as it
        was at ``as_of``, when given (recall/asof.py)."""
        if as_of is not None:
            found = self.travel.get(self.caller, validate.memory_id(memory_id), _as_of(as_of))
            if found is None:
                raise MemoryNotFound(f"no memory with id {memory_id} existed at {as_of} visible to agent "
                                     f"{self.caller.agent_id!r}")
            return found
        with self.db.reading():
            if validate.id_prefix(memory_id):
                return Memory.from_row(self.writer.by_id_prefix(self.caller, memory_id))
            row = self.db.dict("visible_memory_by_id", id=validate.memory_id(memory_id), **self._who())
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

    def update(self, target: Any, content: str | None = None, *, provenance: str | int = "model_inferred",
               reason: str | None = None, **changes: Any) -> Memory:
        """New version of a live memory named by id or key; the old one is kept and superseded."""
        if content is not None:
            changes["content"] = content
        memory = self.writer.update(self.caller, target, provenance=provenance, reason=reason, **changes)
        self.checker.check(self.caller, [memory.id])
        return self._reload(memory)

    def forget(self, target: Any, reason: str = "forgotten on request", *, purge: bool = False,
               cascade: str = "flag", provenance: str | int = "model_inferred") -> Memory | PurgeReport:
        """Soft delete (status 'forgotten' + event; the row stays for history), or with ``purge=True`` a
        privacy deletion: every version, vector, posting, source message, archive copy and event
        content goes, and what was derived from it is purged too (``cascade="purge"``) or flagged
        for review (``cascade="flag"``); then the store file is rewritten so no byte of it stays
        (erasure.py). ``reason`` is kept: do not put the content in it.

        Only the memory's owner or an admin handle may forget it. ``provenance`` is who asks, as for
        writes: an agent's own conclusion (model_inferred) cannot forget what the user stated
        (ProvenanceConflict); pass ``provenance="user_stated"`` when the user asked."""
        if not validate.flag(purge, "purge"):
            return self.writer.forget(self.caller, target, reason=reason, provenance=provenance)
        report = privacy.purge(self.db, self.writer, self.indexer, self.caller, target,
                               reason=validate.text(reason, "reason", max_chars=1000), cascade=cascade,
                               now=self.now(), archive_root=self.archive_dir,
                               provenance=validate.provenance(provenance))
        erasure.finish_pending(self.db, self.archive_dir)
        self._caches_changed()
        return report

    def share(self, target: Any) -> Memory:
        """The owner's explicit consent to show a ``personal`` memory to the agents its scope reaches
        (SPEC T2): a new version tagged ``share:personal``. A ``sensitive`` memory never leaves its
        owner; lower its sensitivity with update() first if it really should."""
        with self.db.reading():
            row = self.writer.resolve_owned(self.caller, target, live_only=True, verb="share")
        if row["sensitivity"] == "sensitive":
            raise InvalidInput(f"memory {row['id']} is sensitive: it never leaves its owner; "
                               "update(..., sensitivity='personal') first if it should be shared")
        if SHARE_TAG in row["tags"]:
            return Memory.from_row(row)
        return self.update(row["id"], tags=[*row["tags"], SHARE_TAG], provenance=row["provenance"],
                           reason="shared by its owner")

    def history(self, target: Any, *, as_of: Any = None) -> History:
        """Every version of the fact ``target`` belongs to, and every event on them (as the chain stood at
        ``as_of``, when given); versions already exported to the Parquet archive are included. An agent sees
        the versions it may see: an older version that was sensitive (or unshared personal) stays hidden."""
        with self.db.reading():
            row = self.writer.resolve(self.caller, target, live_only=False, any_agent=self.caller.admin)
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

    # -- recall ---------------------------------------------------------------------------------

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

    def mark(self, hit: Any, helpful: bool, *, recall_id: int | None = None) -> Memory:
        """Outcome feedback (SPEC R13): unhelpful marks lower a memory's rank, helpful ones its confidence;
        a SELF memory earns confidence only across sessions and days (lifecycle/self_knowledge.py)."""
        helpful = validate.flag(helpful, "helpful")
        recall_id = recall_id if recall_id is not None else getattr(hit, "recall_id", None)
        return self_knowledge.mark(self.db, self.writer, self.caller, hit.id if isinstance(hit, Hit) else hit,
                                   helpful, recall_id, self.now())

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
                rows = self.db.dicts("snapshot_candidates", min_confidence=min_confidence, limit=limit, **self._who())
                conflicts = self.db.dicts("snapshot_conflicts", limit=50, **self._who())
        own, others = split_by_author([(r["block"], Memory.from_row(r)) for r in rows], self.caller.agent_id)
        return (render_snapshot(own, budgets, limit, conflicts)
                + render_shared(others, shared_budget, 2 if fast else 5))

    def reembed(self, *, batch_size: int = 256, limit: int | None = None, progress=None) -> ReembedReport:
        """Embed every memory whose vector is missing or from another model, in resumable batches
        (store-wide maintenance: admin handles only). Opened with an explicit ``embedder=``, this switches
        the store to that model first."""
        self._require_admin("reembed")
        index = self.indexer.vectors
        if index is None:
            raise EchoDuckError(NO_MODEL_MESSAGE)
        self.indexer.switch_model()
        return reembed_stale(index, batch_size=validate.positive_int(batch_size, "batch_size", maximum=100_000),
                             limit=None if limit is None else validate.positive_int(limit, "limit", maximum=10**9),
                             progress=progress)

    # -- sessions ------------------------------------------------------------------------------

    def start_session(self) -> str:
        return self.session_log.start()

    def add_message(self, session_id: str, role: str, content: str, *, title: str | None = None) -> Message:
        return self.session_log.add_message(session_id, role, content, title=title)

    def sessions(self, limit: int = 50) -> list[Session]:
        return self.session_log.list(limit)

    def session(self, id_or_suffix: str) -> Session:
        return self.session_log.get(id_or_suffix)

    def messages(self, id_or_suffix: str) -> list[Message]:
        return self.session_log.messages(id_or_suffix)

    def search_sessions(self, text: str, limit: int = 20) -> list[SessionMatch]:
        return self.session_log.search(text, limit)

    def end_session(self, id_or_suffix: str, *, consolidate: bool = True) -> Session:
        """Close a session; its consolidation is queued (run by the worker or run_jobs()). The working
        memory is handed to that consolidation (in this process: it is never persisted) and emptied."""
        session = self.session_log.end(id_or_suffix)
        if validate.flag(consolidate, "consolidate") and not self.read_only:
            self.consolidator.hand_over(session.id, [(i.role, i.content) for i in self.working.drain()])
            self.jobs_queue.request(session.id)
        return session

    # -- helpers -------------------------------------------------------------------------------

    def _reload(self, memory: Memory) -> Memory:
        with self.db.reading():
            row = self.db.dict("memory_by_id", id=memory.id)
        return Memory.from_row(row) if row else memory

    def _who(self) -> dict[str, Any]:
        return dict(caller_agent=self.caller.agent_id, caller_session=self.caller.session_id)

    def _select(self, query: str, params: Any = None) -> pl.DataFrame:
        """A read for echo_duck's own modules (import, export), which scope it themselves with
        visible_memories(agent, session). Not a public path: callers use sql() (admin)."""
        with self.db.reading():
            with translate_errors("reading the store"):
                result = self.db.con.execute(query, params) if params is not None else self.db.con.execute(query)
                return result.pl() if result.description else pl.DataFrame()

    def _require_admin(self, verb: str) -> None:
        if not self.is_admin:
            raise PermissionDenied(f"{verb} is an admin operation and this is an agent handle (agent "
                                   f"{self.caller.agent_id!r}); open the store with echo_duck.open(path, admin=True) "
                                   "(CLI: --admin)")

    def _caches_changed(self) -> None:
        """Drop the in-process copies after writes that went around them (raw SQL, a purge, a file swap)."""
        self.db.wrote()
        self.indexer.keyword_search.invalidate()
        self.recaller.eligibility.invalidate()
        self.recaller.reads.invalidate()
        if self.indexer.vectors is not None:
            self.indexer.vectors.invalidate()
        if self._shared.kb is not None:
            self._shared.kb.invalidate()


SHARE_TAG = "share:personal"  # another_agent_may_see in sql/macros/10_scope.sql reads it


class _Shared:
    """State every handle of one open store shares (the admin handle and its for_agent() handles)."""

    def __init__(self, extractor: Any, summarizer: Any):
        self.extractor, self.summarizer = extractor, summarizer
        self.kb: Any = None


# What for_agent() handles share with the handle that opened the store (everything but identity).
_SHARED_STATE = ("path", "read_only", "allow_files", "_clock", "archive_dir", "db", "schema_version", "indexer",
                 "writer", "recaller", "travel", "checker", "compressor", "_shared", "damaged_archive_files")


def open(path: str | Path = ":memory:", **options: Any) -> EchoDuck:  # noqa: A001 - the library's entry point
    """Open (creating or migrating) an echo_duck store. Use as a context manager."""
    return EchoDuck(path, **options)


def _clock(now: datetime | Callable[[], datetime] | None) -> Callable[[], datetime]:
    if now is None:
        return lambda: datetime.now(timezone.utc).replace(tzinfo=None)
    if callable(now):
        return lambda: validate.timestamp(now(), "now")
    fixed = validate.timestamp(now, "now")
    return lambda: fixed


def _as_of(value: Any) -> datetime:
    return validate.timestamp(value, "as_of")


def _budget(value: Any, name: str) -> int:
    return validate.positive_int(value, name, maximum=10_000_000)


def _only(more: dict[str, Any], call: str) -> dict[str, Any]:
    allowed = {"entities", "team_id", "tenant_id", "sensitivity", "episode_id", "tier"}
    unknown = set(more) - allowed
    if unknown:
        raise InvalidInput(f"{call}() got unknown arguments: {', '.join(sorted(unknown))}")
    return more
