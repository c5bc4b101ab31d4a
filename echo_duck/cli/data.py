"""CLI commands that move memories in and out: import, export."""

from __future__ import annotations

import contextlib

import click

from ..io.formats import FORMATS
from .common import common, emit, open_or_fail


@click.command(name="import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "format_", type=click.Choice(FORMATS), help="Default: detected from the file name.")
@click.option("--provenance", default=None,
              help="Provenance of imported rows (legacy, model_inferred, consolidated, user_stated; "
                   "keep: each record's own, needs --trusted --admin). Default: keep with --trusted, else legacy.")
@click.option("--dry-run", is_flag=True, help="Parse and scan only; store nothing.")
@click.option("--trusted", is_flag=True, help="Keep scope, team, tenant, pinned and provenance from the file (needs "
              "--admin): restores an --admin export. Otherwise every record is written private, unpinned, legacy "
              "and at most of default importance. The scanner reads every record either way: a write it held and a "
              "person approved is held again.")
@common
def import_(paths, format_, provenance, dry_run, trusted, db, agent, lock_timeout, as_json):
    """Import echo-agent files (user_memory.json, env_memory.json, MEMORY.md), Ethan files (facts.json,
    procedures.json, user_profile.md), JSONL or Parquet. Every record goes through the scanner.

    Example:  echo-duck import ~/.ethan/memory/facts.json MEMORY.md
    """
    from ..io.importers import import_file

    provenance = provenance or ("keep" if trusted else "legacy")  # a restore keeps who said it (user_stated stays)
    reports = []
    with open_or_fail(db, agent, lock_timeout) as mem:
        bar = contextlib.nullcontext(paths) if as_json else click.progressbar(paths, label="importing")
        with bar as files:  # quiet in --json mode
            for path in files:
                reports.append(import_file(mem, path, format=format_, provenance=provenance, dry_run=dry_run,
                                           trusted=trusted))
    lines = [f"{r.path}: {r.format}, read {r.read}, stored {r.stored}, skipped {len(r.skipped)}"
             + (f" ({', '.join(f'{k} {v}' for k, v in r.by_reason.items())})" if r.skipped else "") for r in reports]
    emit([r.to_dict() for r in reports], as_json, "\n".join(lines))


@click.command()
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--format", "format_", type=click.Choice(["jsonl", "parquet"]), help="Default: from the file extension.")
@click.option("--history", is_flag=True, help="Include superseded and forgotten versions.")
@common
def export(path, format_, history, db, agent, lock_timeout, as_json):
    """Export the memories this agent can see to JSONL or Parquet; with --admin, every agent's (a backup that
    `import --trusted --admin` restores; with --history, archived versions too). Without --admin, PATH must be a
    new file (an agent handle never writes over one) outside the store's protected paths.

    Example:  echo-duck export memories.parquet
    """
    from ..io.exporters import export_jsonl, export_parquet

    fmt = format_ or ("parquet" if path.lower().endswith(".parquet") else "jsonl")
    with open_or_fail(db, agent, lock_timeout, read_only=True) as mem:
        report = (export_parquet if fmt == "parquet" else export_jsonl)(mem, path, include_history=history)
    emit(report.to_dict(), as_json, f"exported {report.rows} memories to {report.path}")


DATA_COMMANDS = (import_, export)
