"""`echo-duck doctor` and `echo-duck docs sql`: checking an install and a store, and the SQL reference.

Registered in cli.py through ``DOCTOR_COMMANDS``.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from .common import Target, default_db, emit, fail_cleanly


@click.command()
@click.option("--db", "db", type=click.Path(dir_okay=False),
              help="Store file to check (default: $ECHO_DUCK_DB or ~/.local/share/echo_duck/memory.duckdb, if it exists).")
@click.option("--lock-timeout", type=float, default=5.0, show_default=True,
              help="Seconds to wait if another process holds the file.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
def doctor(db, lock_timeout, as_json):
    """Check the install (duckdb, vss/fts wheels, embedding models) and a store (schema version, stale
    vectors, pending jobs, unfinished exports, keyword index, audit); print how to fix each problem.

    Opens the store read-only: never changes it. Exit code 0 when everything is in order, 1 when a
    problem was found.

    Example:  echo-duck doctor --db agent.duckdb
    """
    from ..store.doctor import diagnose

    top = click.get_current_context().find_root().obj or Target()  # --db/--json given before the command
    db, as_json = db or top.db, as_json or top.as_json
    named = db is not None or bool(os.environ.get("ECHO_DUCK_DB"))  # a store the user asked about must exist
    path = db or default_db()
    if not named and not Path(path).exists():
        path = None  # no store yet at the default place: check the install only
    with fail_cleanly():
        report = diagnose(path, required=named, lock_timeout=lock_timeout)
    emit(report, as_json, report.render())
    if not report.ok:
        raise SystemExit(1)


@click.group()
def docs():
    """Documentation generated from the code itself: sql, cli and api reference pages.

    Example:  echo-duck docs sql --out sql/REFERENCE.md
    """


@docs.command(name="sql")
@click.option("--out", type=click.Path(dir_okay=False), help="Write the page to this file instead of printing it.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output (object counts, and the page unless --out).")
def docs_sql(out, as_json):
    """The SQL reference: every table, view and macro of a fresh store with its COMMENT ON text, the
    extensions each needs, and the example queries of sql/queries/examples.sql, as markdown.

    Example:  echo-duck docs sql --out sql/REFERENCE.md
    """
    from ..store import docs as reference_docs

    with fail_cleanly():
        catalog = reference_docs.fresh_catalog()
        page = reference_docs.reference(catalog)
    if out:
        Path(out).write_text(page, encoding="utf-8")
    summary = {"out": str(Path(out).resolve()) if out else None, "schema_version": catalog.schema_version,
               "tables": len(catalog.tables), "views": len(catalog.views), "macros": len(catalog.macros),
               "examples": len(reference_docs.examples()), "undocumented": catalog.undocumented()}
    if as_json:
        emit(summary if out else dict(summary, markdown=page), True)
    elif out:
        click.echo(f"wrote {summary['out']}: {summary['tables']} tables, {summary['views']} views, "
                   f"{summary['macros']} macros, {summary['examples']} example queries")
    else:
        click.echo(page, nl=False)


@docs.command(name="cli")
@click.option("--out", type=click.Path(dir_okay=False), help="Write the page to this file instead of printing it.")
def docs_cli(out):
    """The command reference: every echo-duck command's usage, help and options, as markdown.

    Example:  echo-duck docs cli --out echo_duck/cli/REFERENCE.md
    """
    from . import reference

    page = reference.reference(click.get_current_context().find_root().command)
    if out:
        Path(out).write_text(page, encoding="utf-8")
        click.echo(f"wrote {Path(out).resolve()}")
    else:
        click.echo(page, nl=False)


@docs.command(name="api")
@click.option("--out", type=click.Path(dir_okay=False), help="Write the page to this file instead of printing it.")
def docs_api(out):
    """The Python API reference: echo_duck.open and every public method of the store, as markdown.

    Example:  echo-duck docs api --out echo_duck/store/REFERENCE.md
    """
    from ..store import api_docs

    page = api_docs.reference()
    if out:
        Path(out).write_text(page, encoding="utf-8")
        click.echo(f"wrote {Path(out).resolve()}")
    else:
        click.echo(page, nl=False)


DOCTOR_COMMANDS = (doctor, docs)
