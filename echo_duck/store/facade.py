"""The facade: one object per open store, with verbs that return frozen dataclasses or Polars frames.

It owns the connection and wires the single-job modules together (writes, sessions, working memory);
it holds no SQL and no ranking logic of its own.
"""

from __future__ import annotations

import contextlib
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import polars as pl

from ..errors import EchoDuckError, InvalidInput, MemoryNotFound
from ..index.indexing import NO_MODEL_MESSAGE, Indexer
from ..index.vectors import ReembedReport
from ..index.vectors import reembed as reembed_stale
from ..lifecycle import archive, privacy
from ..lifecycle.archive import archive_dir
from ..lifecycle.consolidate import Consolidator, JobQueue
from ..lifecycle.contradictions import ContradictionChecker
from ..lifecycle.privacy import PurgeReport
from ..models import PERSISTED_TIERS, SCOPES, STATUSES, TYPES, Event, History, Memory, Message, Session, SessionMatch
from ..recall.hybrid import Hit, Recaller, RecallQuery
from ..recall.recall_log import RecallJournal
from ..recall.rerank import RerankSettings
from ..recall.snapshot import Budgets
from ..recall.snapshot import render as render_snapshot
from ..storage.connection import connect, translate_errors
from ..storage.db import Db
from ..storage.schema import ensure_schema
from ..write import validate
from ..write.sessions import Sessions
from ..write.writer import WRITE_PATHS, Caller, Writer, prepare
from .kb_verbs import KnowledgeBaseVerbs
from .lifecycle_verbs import LifecycleVerbs
from .working import WorkingMemory

_READ_STATEMENTS = {"SELECT", "EXPLAIN", "PRAGMA"}


class EchoDuck(LifecycleVerbs, KnowledgeBaseVerbs):
    """An open echo_duck store. Use ``echo_duck.open(...)`` and a ``with`` block.

    Lifecycle verbs (decay, restore, archive, gc, audit, contradictions, consolidation) come from
    ``LifecycleVerbs`` in store_lifecycle.py, the knowledge-base verbs (kb_add, kb_search, …) from
    ``KnowledgeBaseVerbs`` in store_kb.py; this class holds the memory, recall and session verbs.
    """

    def __init__(self, path: str | Path = ":memory:", *, agent_id: str = "default", session_id: str | None = None,
                 team_id: str | None = None, tenant_id: str | None = None,
                 now: datetime | Callable[[], datetime] | None = None, read_only: bool = False,
                 lock_timeout: float = 0.0, actor: str | None = None, write_path: str = "api",
                 protected_paths: Iterable[str] = (), embedder: Any = "default", reranker: Any = None,
                 rerank_top_k: int = 10, rerank_timeout_s: float = 5.0, rerank_min_score: float | None = None,
                 verifier: Any = None, extractor: Any = None, summarizer: Any = None):
        """Open (creating or migrating) the store at ``path``; use it in a ``with`` block.

        - ``agent_id``, ``session_id``, ``team_id``, ``tenant_id``: who is acting; they decide which
          memories are visible and which scopes a write may use.
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
        self._base_caller = Caller(
            agent_id=validate.text(agent_id, "agent_id", max_chars=200),
            session_id=validate.optional_text(session_id, "session_id", max_chars=200),
            team_id=validate.optional_text(team_id, "team_id", max_chars=200),
            tenant_id=validate.optional_text(tenant_id, "tenant_id", max_chars=200),
            actor=validate.optional_text(actor, "actor", max_chars=200) or "",
            path=validate.choice(write_path, "write_path", WRITE_PATHS),
        )
        self._local = threading.local()  # acting_as() overrides the caller for one thread
        self._clock = _clock(now)
        if self.read_only and self.path != ":memory:" and not Path(self.path).expanduser().exists():
            raise MemoryNotFound(f"no echo_duck store at {self.path}; create it with: echo-duck init --db {self.path}")
        con = connect(self.path, read_only=self.read_only, lock_timeout=float(lock_timeout))
        self.db = Db(con, read_only=self.read_only)
        try:
            self.schema_version = ensure_schema(con, read_only=self.read_only)
        except BaseException:
            self.db.close()
            raise
        # The scanner refuses writes that would read or send the store's own directory (and any extra paths).
        protected = [str(p) for p in validate.labels(list(map(str, protected_paths)), "protected_paths")]
        if self.path != ":memory:":
            protected.append(str(Path(self.path).expanduser().resolve().parent))
        self.indexer = Indexer(self.db, self._clock, embedder)
        self.writer = Writer(self.db, self._clock, self.indexer, protected)
        self.recaller = Recaller(self.db, self.indexer, self._clock, reranker,
                                 RerankSettings(rerank_top_k, rerank_timeout_s, rerank_min_score),
                                 None if self.read_only else RecallJournal(self.db))
        self.session_log = Sessions(self.db, self._clock, self.caller.agent_id)
        self.working = WorkingMemory()
        self.checker = ContradictionChecker(self.db, self.indexer, self._clock, verifier)
        self.consolidator = Consolidator(self.db, self.writer, self.session_log, self.checker, self.caller,
                                         self._clock, extractor, summarizer)
        self.jobs_queue = JobQueue(self.db, self.consolidator, self.caller.agent_id, self._clock)
        self.worker = None
        self.archive_dir = archive_dir(self.path)
        if not self.read_only:
            archive.recover(self.db, self.archive_dir, self.now())
            archive.refresh_view(self.db, self.archive_dir)
            self.indexer.keyword.ensure_ready()
            _ = self.indexer.vectors  # records the store's current model, so stale_vectors is right at once

    # -- lifecycle of the handle ---------------------------------------------------------------

    def close(self) -> None:
        self.stop_worker()
        if self.recaller.journal is not None and not self.db.closed:
            self.recaller.journal.close()
        self.db.close()

    def __enter__(self) -> "EchoDuck":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<EchoDuck {self.path} agent={self.caller.agent_id!r}{' read-only' if self.read_only else ''}>"

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
        self.checker.check(self.caller, [memory.id])
        return self._reload(memory)

    def remember_many(self, records: Iterable[dict[str, Any]], *, check_contradictions: bool = False) -> list[Memory]:
        """Bulk write in one transaction: each record holds remember()'s arguments; all or nothing.

        Contradiction checks are off for bulk loads unless asked for (they cost a query per row)."""
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
        stored = self.writer.remember_many(self.caller, specs)
        if validate.flag(check_contradictions, "check_contradictions"):
            self.checker.check(self.caller, [m.id for m in stored])
            stored = [self._reload(m) for m in stored]
        return stored

    def get(self, memory_id: Any) -> Memory:
        """One visible memory by id, or by a unique id prefix of at least 4 characters (``"8464cd72"``)."""
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
             text: str | None = None, limit: int = 100) -> list[Memory]:
        """Visible memories matching every given filter (exact key, types, tiers, all tags, substring)."""
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
               cascade: str = "flag") -> Memory | PurgeReport:
        """Soft delete (status 'forgotten' + event; the row stays for history), or with ``purge=True`` a
        privacy deletion: every version, vector, posting, source message, archive copy and event
        content goes, and what was derived from it is purged too (``cascade="purge"``) or flagged
        for review (``cascade="flag"``). ``reason`` is kept: do not put the content in it."""
        if not validate.flag(purge, "purge"):
            return self.writer.forget(self.caller, target, reason=reason)
        return privacy.purge(self.db, self.writer, self.indexer, self.caller, target,
                             reason=validate.text(reason, "reason", max_chars=1000), cascade=cascade,
                             now=self.now(), archive_root=self.archive_dir)

    def history(self, target: Any) -> History:
        """Every version of the fact ``target`` belongs to, and every event on them."""
        with self.db.reading():
            row = self.writer.resolve(self.caller, target, live_only=False)
            versions = [Memory.from_row(r) for r in self.db.dicts("version_chain", id=row["id"])]
            ids = [v.id for v in versions]
            events = [Event.from_row(r) for r in self.db.dicts("events_for_memories", ids=ids)]
        return History(tuple(versions), tuple(events))

    # -- recall ---------------------------------------------------------------------------------

    def recall(self, query: str, k: int = 10, *, types: Any = None, tiers: Any = None, tags: Any = None,
               entities: Any = None, since: Any = None, until: Any = None, session: str | None = None,
               include_archived: bool = False, reinforce: bool = True, explain: bool = False,
               arms: Iterable[str] = ("keyword", "vector"), query_vector: Any = None,
               include_kb: bool = False, min_score: float | None = None) -> list[Hit]:
        """Hybrid BM25 + vector recall, fused, gated and decayed in SQL (sql/macros/40_recall.sql).

        Archived (decayed) memories come back weighted down; ``include_archived=True`` also returns
        superseded versions. Hits are reinforced (access_count, last_accessed) unless ``reinforce=False``.
        ``arms`` limits the search to "keyword" (BM25) or "vector" for comparisons; ``query_vector``
        skips embedding the query when the caller already has its vector (same model).
        ``include_kb=True`` also searches the knowledge base; its hits (origin "kb") are merged on the
        same score scale. By default recall never touches the KB. ``min_score`` leaves out memories
        whose relevance (``explanation.relevance``, about 0 to 2) is below it: "nothing relevant" comes
        back empty; by default recall returns its best guesses, however weak.
        """
        spec = RecallQuery.build(query, k, types=types, tiers=tiers, tags=tags, entities=entities, since=since,
                                 until=until, session=session, include_archived=include_archived, reinforce=reinforce,
                                 arms=arms, min_score=min_score)
        kb = self.kb if validate.flag(include_kb, "include_kb") else None
        return self.recaller.recall(self.caller, spec, explain=validate.flag(explain, "explain"),
                                    query_vector=query_vector, kb=kb)

    def mark(self, hit: Any, helpful: bool, *, recall_id: int | None = None) -> Memory:
        """Outcome feedback (SPEC R13): unhelpful marks lower a memory's rank, helpful ones its confidence."""
        helpful = validate.flag(helpful, "helpful")
        recall_id = recall_id if recall_id is not None else getattr(hit, "recall_id", None)
        with self.db.transaction("mark"):
            row = self.writer.resolve(self.caller, hit.id if isinstance(hit, Hit) else hit, live_only=False)
            self.db.run("insert_feedback", now=self.now(), agent_id=self.caller.agent_id, id=row["id"],
                        recall_id=recall_id, helpful=helpful)
            self.db.run("apply_feedback", id=row["id"], helpful=helpful)
            return Memory.from_row(self.db.dict("memory_by_id", id=row["id"]))

    def snapshot(self, budget_user: int = 1375, budget_env: int = 2200, budget_rules: int = 1000, *,
                 fast: bool = False, min_confidence: float = 0.3) -> str:
        """Markdown for a system prompt: pinned and USER memories first, then rules and the rest,
        each section within its character budget; at most 15 memories (5 when ``fast``)."""
        budgets = Budgets(validate.positive_int(budget_user, "budget_user", maximum=10_000_000),
                          validate.positive_int(budget_rules, "budget_rules", maximum=10_000_000),
                          validate.positive_int(budget_env, "budget_env", maximum=10_000_000))
        limit = 5 if validate.flag(fast, "fast") else 15
        with self.db.reading():
            rows = self.db.dicts("snapshot_candidates", min_confidence=validate.unit_interval(min_confidence, "min_confidence"),
                                 limit=200, **self._who())
        return render_snapshot([(r["section"], Memory.from_row(r)) for r in rows], budgets, limit)

    def reembed(self, *, batch_size: int = 256, limit: int | None = None, progress=None) -> ReembedReport:
        """Embed every memory whose vector is missing or from another model, in resumable batches.

        Opened with an explicit ``embedder=``, this switches the store to that model first."""
        index = self.indexer.vectors
        if index is None:
            raise EchoDuckError(NO_MODEL_MESSAGE)
        self.indexer.switch_model()
        return reembed_stale(index, batch_size=validate.positive_int(batch_size, "batch_size", maximum=100_000),
                             limit=None if limit is None else validate.positive_int(limit, "limit", maximum=10**9),
                             progress=progress)

    # -- team / tenant membership --------------------------------------------------------------

    def grant(self, *, team: str | None = None, tenant: str | None = None, agent_id: str | None = None) -> None:
        """Make an agent (default: this one) a member of a team or tenant."""
        for kind, group, agent in self._memberships(team, tenant, agent_id):
            with self.db.transaction("grant"):
                self.db.run("grant_membership", agent_id=agent, kind=kind, group_id=group, now=self.now())

    def revoke(self, *, team: str | None = None, tenant: str | None = None, agent_id: str | None = None) -> None:
        """Remove a membership; that group's memories disappear from the agent's reads at once."""
        for kind, group, agent in self._memberships(team, tenant, agent_id):
            with self.db.transaction("revoke"):
                self.db.run("revoke_membership", agent_id=agent, kind=kind, group_id=group, now=self.now())

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
        """Close a session; its consolidation is queued (run by the worker or run_jobs())."""
        session = self.session_log.end(id_or_suffix)
        if validate.flag(consolidate, "consolidate") and not self.read_only:
            self.jobs_queue.request(session.id)
        return session

    # -- analysts ------------------------------------------------------------------------------

    def sql(self, query: str, params: Any = None, *, write: bool = False) -> pl.DataFrame:
        """Run one SQL statement and return a Polars frame. Read-only unless ``write=True``."""
        query = validate.text(query, "query")
        with self.db.reading():
            with translate_errors("sql"):
                statements = self.db.con.extract_statements(query)
                if len(statements) != 1:
                    raise InvalidInput(f"sql() runs exactly one statement, got {len(statements)}")
                kind = statements[0].type.name
                if kind not in _READ_STATEMENTS and not write:
                    raise InvalidInput(f"sql() is read-only by default and this is a {kind} statement; pass write=True")
                if write and self.read_only:
                    raise InvalidInput("this store was opened read_only; sql(write=True) is not possible")
                result = self.db.con.execute(query, params) if params is not None else self.db.con.execute(query)
                frame = result.pl() if result.description else pl.DataFrame()
        if write:
            self.indexer.keyword_search.invalidate()  # the statement may have changed what the caches copy
            self.recaller.eligibility.invalidate()
        if write and self.indexer.vectors is not None:
            self.indexer.vectors.invalidate()
        if write and getattr(self, "_kb", None) is not None:
            self._kb.invalidate()
        return frame

    # -- helpers -------------------------------------------------------------------------------

    def _reload(self, memory: Memory) -> Memory:
        with self.db.reading():
            row = self.db.dict("memory_by_id", id=memory.id)
        return Memory.from_row(row) if row else memory

    def _who(self) -> dict[str, Any]:
        return dict(caller_agent=self.caller.agent_id, caller_session=self.caller.session_id)

    def _memberships(self, team, tenant, agent_id):
        agent = validate.text(agent_id, "agent_id", max_chars=200) if agent_id is not None else self.caller.agent_id
        pairs = [(k, validate.text(g, k, max_chars=200), agent) for k, g in (("team", team), ("tenant", tenant)) if g is not None]
        if not pairs:
            raise InvalidInput("give team= or tenant=")
        return pairs


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


def _only(more: dict[str, Any], call: str) -> dict[str, Any]:
    allowed = {"entities", "team_id", "tenant_id", "sensitivity", "episode_id", "tier"}
    unknown = set(more) - allowed
    if unknown:
        raise InvalidInput(f"{call}() got unknown arguments: {', '.join(sorted(unknown))}")
    return more
