"""The lifecycle verbs of the facade: forgetting, archiving, auditing, contradictions, consolidation.

A mixin of ``EchoDuck`` (store.py) so that each file stays small; every verb is a thin call into
lifecycle.py, archive.py, contradictions.py or consolidate.py.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from ..errors import InvalidInput
from ..lifecycle import archive, erasure, returning
from ..lifecycle import decay as lifecycle
from ..lifecycle.archive import ArchiveReport
from ..lifecycle.consolidate import ConsolidationReport, Worker
from ..lifecycle.contradictions import Contradiction
from ..lifecycle.decay import DecayReport, GcReport
from ..models import Memory
from ..write import validate
from ..write.targets import only_match

if TYPE_CHECKING:  # polars loads on the first frame returned (sql(), audit()), not at import
    import polars as pl

AUDIT_VIEWS = ("memory_health", "memory_counts", "provenance_coverage", "open_contradictions", "stale_recalls",
               "leaked_recalls", "memory_utility", "decay_histogram", "blocked_writes_by_reason")
STORE_COUNTS = {"memory_health", "memory_counts", "provenance_coverage", "decay_histogram", "blocked_writes_by_reason"}


class LifecycleVerbs:
    def decay(self, now: Any = None, *, dry_run: bool = False) -> DecayReport:
        """Archive every memory whose effective importance fell below archive_threshold (SPEC L1, L2), evaluated at
        ``now`` (default: the store's clock); the change is dated by the store's clock whatever ``now`` says
        (``dry_run=True`` to preview another instant). Store-wide maintenance: admin handles only."""
        self._require_admin("decay")
        when = validate.timestamp(now, "now") or self.now()
        return lifecycle.decay(self.db, self.caller, when, dry_run=validate.flag(dry_run, "dry_run"), at=self.now())

    def restore(self, target: Any, reason: str = "restored on request") -> Memory:
        """Bring an archived memory back to its tier (its owner, or an admin), also one archive() already exported
        to Parquet: it returns to the live table and to recall."""
        return lifecycle.restore(self.db, self.writer, self.caller, target, self.now(),
                                 validate.reason(reason), self.archive_dir)

    def archive(self, older_than_days: float | None = None, *, compact: bool = True,
                progress: Callable[[int, int], None] | None = None) -> ArchiveReport:
        """Move archived and superseded rows older than the retention period to Parquet (SPEC L2).

        ``progress(done, total)`` is called after each stage (export + verify + delete, compaction).
        Store-wide maintenance: admin handles only.
        """
        self._require_admin("archive")
        progress = validate.callback(progress)
        if self.archive_dir is None:
            raise InvalidInput("an in-memory store has no folder for a Parquet archive; open a file")
        if older_than_days is None:
            with self.db.reading():
                older_than_days = self.db.setting("archive_retention_days")
        # NaN, inf and ~2,000+ years would break the cutoff date arithmetic (ValueError/OverflowError)
        if (isinstance(older_than_days, bool) or not isinstance(older_than_days, (int, float))
                or not 0 <= older_than_days <= 700_000):
            raise InvalidInput(f"older_than_days must be a number of days from 0 to 700,000, got {older_than_days!r}")
        stages = 2 if compact else 1
        # The store lock for the whole run: another thread's forget, update, restore or purge between reading the
        # candidates and deleting them was undone (or a purged row moved in with the staged files), and a rewrite of
        # a partition being compacted put a stale copy back.
        with self.db.lock:
            returning.finish(self.db, self.archive_dir)  # before a row brought back is exported again
            report = archive.export(self.db, self.caller, self.archive_dir, self.now(), float(older_than_days))
            if self.indexer.vectors is not None:
                self.indexer.vectors.invalidate()
        if progress:  # outside the lock: a callback waiting on another thread of this store would never return
            progress(1, stages)
        if compact:
            with self.db.lock:
                report = replace(report, compacted_partitions=archive.compact(self.db, self.archive_dir))
            if progress:
                progress(2, stages)
        return report

    def gc(self, retention_days: float | None = None, *, dry_run: bool = True) -> GcReport:
        """Purge what the retention policy lets go (dry run unless ``dry_run=False``); admin only."""
        self._require_admin("gc")
        if retention_days is None:
            with self.db.reading():
                retention_days = self.db.setting("gc_retention_days")
        retention_days = validate.amount(retention_days, "retention_days", maximum=36_525, unit="days")
        returning.finish(self.db, self.archive_dir)  # a row back from Parquet whose copy stayed: gc would revive it
        if not dry_run:
            erasure.finish_deferred(self.db, self.archive_dir)  # what agents' purges left for later (after_purge)
        return lifecycle.gc(self.db, self.caller, self.indexer.keyword, self.now(), retention_days,
                            dry_run=validate.flag(dry_run, "dry_run"))

    def audit(self) -> dict[str, pl.DataFrame]:
        """The quality report (SPEC Q): memory_health plus each detail view, as Polars frames. Rows that show
        memory content or recall queries are limited to what this agent may see; so are the counts on an agent
        handle (an admin handle's counts are the whole store's)."""
        who = self._who()
        counts = {**who, "caller_agent": None} if self.caller.admin else who
        with self.db.reading():
            return {name: self.db.run(f"audit_{name}", **(counts if name in STORE_COUNTS else who)).pl()
                    for name in AUDIT_VIEWS}

    # -- contradictions --------------------------------------------------------------------------

    def contradictions(self, status: str | None = "pending") -> list[Contradiction]:
        """Recorded contradictions (pending ones by default) between memories this agent can see; on an admin
        handle, every one (the host decides disputes between agents whose scope its own agent id is not in)."""
        status = None if status is None else validate.choice(status, "status", ("pending", "resolved"))
        with self.db.reading():
            rows = self.db.dicts("visible_contradictions", status=status, any_agent=self.caller.admin, **self._who())
        return [Contradiction.from_row(r) for r in rows]

    def resolve(self, contradiction_id: Any, winner: Any, *, provenance: str | int = "model_inferred") -> Contradiction:
        """Decide a contradiction: ``winner`` is the memory id that stays true (None: not a contradiction).
        ``provenance``: on whose word (as forget's): the losing side, or on review the fact's live version, may not
        be of higher provenance (ProvenanceConflict); pass provenance='user_stated' when the user decided. An agent
        dismisses (None) only a dispute between its own memories (PermissionDenied otherwise: the host decides).
        Both ids may be the short ids ``echo-duck contradictions`` prints: the contradiction's among those this
        handle lists, the winner's among its two sides."""
        if validate.id_prefix(contradiction_id) is not None:
            found = [c for c in self.contradictions(status=None) if str(c.id).startswith(contradiction_id.lower())]
            contradiction = only_match(found, contradiction_id, "contradictions",
                                       f"no contradiction with id prefix {contradiction_id!r} is visible here")
            contradiction_id = contradiction.id
            if validate.id_prefix(winner) is not None:
                sides = [s for s in (contradiction.memory_a, contradiction.memory_b) if s.startswith(winner.lower())]
                winner = sides[0] if len(sides) == 1 else winner  # else the id check names what is wrong
        return self.checker.resolve(self.caller, contradiction_id, winner, validate.provenance(provenance))

    # -- compression ------------------------------------------------------------------------------

    def compress(self, *, dry_run: bool = False):
        """Fold near-duplicate memories into one that keeps every source (SPEC L7, lifecycle/compress.py)."""
        return self.compressor.compress(self.caller, dry_run=validate.flag(dry_run, "dry_run"))

    # -- consolidation ----------------------------------------------------------------------------

    def consolidate(self, session: str | None = None, *, all: bool = False,
                    progress: Callable[[int, int], None] | None = None) -> list[ConsolidationReport]:
        """Consolidate one session now (or every unconsolidated one with ``all=True``), synchronously.

        ``progress(done, total)`` is called after each session.
        """
        progress = validate.callback(progress)
        if validate.flag(all, "all") == (session is not None):
            raise InvalidInput("give a session id or all=True")
        if session is not None:
            return [self.consolidator.consolidate(session)]
        with self.db.reading():
            ids = [r[0] for r in self.db.run("unconsolidated_sessions", agent_id=self.caller.agent_id).fetchall()]
        reports = []
        for i in ids:
            reports.append(self.consolidator.consolidate(i))
            if progress:
                progress(len(reports), len(ids))
        return reports

    def request_consolidation(self, session: str) -> None:
        """Queue a session's consolidation (a repeat request while one is pending is the same job)."""
        self.jobs_queue.request(self.session_log.resolve(session))

    def run_jobs(self, limit: int = 10) -> list:
        """Run due consolidation jobs now (what the background worker does)."""
        return self.jobs_queue.run_due(validate.positive_int(limit, "limit"))

    def jobs(self) -> list[dict]:
        return self.jobs_queue.jobs()

    def start_worker(self, poll_seconds: float = 5.0) -> Worker:
        """Consolidate idle and ended sessions in a background thread until close()/stop_worker()."""
        if self.read_only:
            raise InvalidInput("a read-only store cannot consolidate")
        poll = validate.amount(poll_seconds, "poll_seconds", maximum=86_400, unit="seconds")
        if poll < 0.01:  # 0, a negative or NaN wait spun a core against the store
            raise InvalidInput(f"poll_seconds must be at least 0.01, got {poll_seconds!r}")
        if self.worker is None:
            self.worker = Worker(self.jobs_queue, poll).start()
        return self.worker

    def stop_worker(self) -> None:
        if self.worker is not None:
            self.worker.stop()
            self.worker = None

