"""CLI commands for the lifecycle: decay, restore, archive, gc, audit, contradictions, consolidate."""

from __future__ import annotations

import click

from ..models import PROVENANCE
from . import output
from .common import common, emit, open_or_fail, progress_bar


@click.command()
@click.option("--now", type=click.DateTime(), help="Evaluate decay as of this time (default: now).")
@click.option("--dry-run", is_flag=True, help="List what would be archived; change nothing.")
@common
def decay(now, dry_run, db, agent, lock_timeout, as_json):
    """Archive memories whose effective importance fell below archive_threshold. Needs --admin (a store-wide job).

    Example:  echo-duck decay --dry-run --admin
    """
    with open_or_fail(db, agent, lock_timeout, embedder="none") as mem:
        report = mem.decay(now, dry_run=dry_run)
    if dry_run:
        rows = [dict(c, id=str(c["id"])[:8]) for c in report.to_dict()["candidates"]]
        human = output.table(rows, ("id", "type", "key", "effective_importance", "days_since_access")) if rows else "nothing to archive"
    else:
        human = f"archived {report.archived} memories (as of {report.now:%Y-%m-%d %H:%M})"
    emit(report, as_json, human)


@click.command()
@click.argument("target")
@click.option("--reason", default="restored on request", show_default=True)
@common
def restore(target, reason, db, agent, lock_timeout, as_json):
    """Bring an archived memory (by id or key) back.

    Example:  echo-duck restore staging_db
    """
    with open_or_fail(db, agent, lock_timeout, embedder="none") as mem:
        memory = mem.restore(target, reason)
    emit(memory, as_json, f"restored {memory.id} to tier {memory.tier}")


@click.command(name="archive")
@click.option("--older-than-days", type=float, help="Retention (default: the archive_retention_days setting, 90).")
@click.option("--no-compact", is_flag=True, help="Do not merge small Parquet files afterwards.")
@common
def archive_(older_than_days, no_compact, db, agent, lock_timeout, as_json):
    """Move archived and superseded memories past retention to Parquet next to the store. Needs --admin.

    Example:  echo-duck archive --older-than-days 30 --admin
    """
    with open_or_fail(db, agent, lock_timeout, embedder="none") as mem:
        with progress_bar("archiving", as_json) as progress:
            report = mem.archive(older_than_days, compact=not no_compact, progress=progress)
        where = mem.archive_dir
    emit(report, as_json, f"exported {report.exported} memories to {where} "
                          f"({len(report.files)} files, {report.compacted_partitions} partitions compacted)")


@click.command()
@click.option("--retention-days", type=float, help="Default: the gc_retention_days setting (30).")
@click.option("--apply", is_flag=True, help="Really delete; without it gc only reports (dry run).")
@common
def gc(retention_days, apply, db, agent, lock_timeout, as_json):
    """Report (or with --apply, purge) what the retention policy lets go. Needs --admin.

    Example:  echo-duck gc --apply --admin
    """
    with open_or_fail(db, agent, lock_timeout, embedder="none") as mem:
        report = mem.gc(retention_days, dry_run=not apply)
    verb = "would remove" if report.dry_run else "removed"
    emit(report, as_json, f"{verb}: {report.forgotten_memories} forgotten memories, {report.recall_log_rows} recall_log "
                          f"rows, {report.blocked_write_rows} blocked_writes rows, {report.finished_exports} export records")


@click.group(invoke_without_command=True)
@common
@click.pass_context
def audit(ctx, db, agent, lock_timeout, as_json):
    """The quality report: coverage, contradictions, staleness and leakage (must be 0), decay, attacks.
    `echo-duck audit verify` checks the event log's hash chain instead.

    Example:  echo-duck audit --json
    """
    if ctx.invoked_subcommand is not None:
        return
    with open_or_fail(db, agent, lock_timeout, read_only=True) as mem:
        report = mem.audit()
    human = "\n\n".join(f"== {name} ==\n{output.readable(frame)}" for name, frame in report.items())
    emit(report, as_json, human)


@audit.command(name="verify")
@common
def audit_verify(db, agent, lock_timeout, as_json):
    """Check the event log's hash chain; report the first broken link (exit code 1 if there is one).
    Needs --admin.

    Example:  echo-duck audit verify --admin
    """
    with open_or_fail(db, agent, lock_timeout, read_only=True, embedder="none") as mem:
        report = mem.verify_events()
    human = (f"event chain intact: {report.events} events, {report.redacted} redacted by purges; "
             f"head {report.head_event_id} {report.head_hash}" if report.ok else
             f"event chain BROKEN at event {report.first_broken_event_id}: {report.problem}")
    emit(report.to_dict(), as_json, human)
    if not report.ok:
        raise SystemExit(1)


@click.command()
@click.option("--all", "all_", is_flag=True, help="Every session with unconsolidated messages.")
@click.option("--pending", is_flag=True, help="Run the queued jobs instead (what the background worker does).")
@click.option("--session", help="Session id or unique suffix.")
@common
def consolidate(all_, pending, session, db, agent, lock_timeout, as_json):
    """Turn session messages into an episode and facts ("sleep time").

    Example:  echo-duck consolidate --all
    """
    with open_or_fail(db, agent, lock_timeout) as mem:
        if pending:
            reports = mem.run_jobs(limit=1000)
        else:
            with progress_bar("consolidating", as_json or not all_) as progress:
                reports = mem.consolidate(session, all=all_, progress=progress)
    rows = [r.to_dict() if hasattr(r, "to_dict") else r for r in reports]
    emit(rows, as_json, output.table(rows, ("session_id", "facts_stored", "facts_pending", "facts_rejected",
                                            "contradictions", "skipped")) if rows else "nothing to consolidate")


@click.command()
@click.option("--all", "all_", is_flag=True, help="Also resolved ones.")
@common
def contradictions(all_, db, agent, lock_timeout, as_json):
    """List contradictions between memories (pending ones by default).

    Example:  echo-duck contradictions --json
    """
    with open_or_fail(db, agent, lock_timeout, read_only=True) as mem:
        found = mem.contradictions(None if all_ else "pending")
    rows = [dict(c.to_dict(), id=c.id[:8], memory_a=c.memory_a[:8], memory_b=c.memory_b[:8]) for c in found]
    emit(found, as_json, output.table(rows, ("id", "memory_a", "memory_b", "confidence", "status", "description"))
         if rows else "no contradictions")


@click.command()
@click.argument("contradiction_id")
@click.argument("winner")
@click.option("--provenance", type=click.Choice(list(PROVENANCE)), default="user_stated", show_default=True,
              help="On whose word: a memory of higher provenance than this is not superseded.")
@common
def resolve(contradiction_id, winner, provenance, db, agent, lock_timeout, as_json):
    """Decide a contradiction: WINNER is the memory id that stays true, or 'none' to dismiss it.

    Example:  echo-duck resolve 5c1e… 9a0b…
    """
    with open_or_fail(db, agent, lock_timeout, embedder="none") as mem:
        result = mem.resolve(contradiction_id, None if winner.lower() == "none" else winner, provenance=provenance)
    emit(result, as_json, f"contradiction {result.id} resolved ({result.resolution})")


@click.command()
@click.option("--dry-run", is_flag=True, help="Show the groups that would fold; change nothing.")
@common
def compress(dry_run, db, agent, lock_timeout, as_json):
    """Fold near-duplicate memories into one that keeps every source (SPEC L7).

    Example:  echo-duck compress --dry-run
    """
    with open_or_fail(db, agent, lock_timeout) as mem:
        report = mem.compress(dry_run=dry_run)
    emit(report, as_json, f"{report.groups} groups, {report.folded} memories folded" + (" (dry run)" if dry_run else ""))


LIFECYCLE_COMMANDS = (decay, restore, archive_, gc, audit, consolidate, contradictions, resolve, compress)
