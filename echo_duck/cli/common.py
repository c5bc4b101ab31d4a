"""Shared pieces of the CLI: the common options, opening a store, mapping errors to exit codes, output."""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import click

from ..errors import EchoDuckError, InvalidInput
from . import output

if TYPE_CHECKING:
    from ..store.facade import EchoDuck


def default_db() -> str:
    if os.environ.get("ECHO_DUCK_DB"):
        return os.environ["ECHO_DUCK_DB"]
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return os.path.join(data_home, "echo_duck", "memory.duckdb")


def common(func):
    """--db, --agent, --admin, --lock-timeout and --json on every command."""

    @click.option("--db", "db", type=click.Path(dir_okay=False), default=default_db, show_default="$ECHO_DUCK_DB or ~/.local/share/echo_duck/memory.duckdb", help="Store file.")
    @click.option("--agent", default="default", show_default=True, help="Agent id to act as.")
    @click.option("--admin", "admin", is_flag=True,
                  help="Open an admin handle (memberships, rights, SQL, store-wide jobs, others' memories).")
    @click.option("--lock-timeout", type=float, default=5.0, show_default=True, help="Seconds to wait if another process holds the file.")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
    @functools.wraps(func)
    def wrapper(*args, admin: bool = False, **kwargs):
        # open_or_fail reads it: the commands' own signatures stay as they are
        click.get_current_context().meta["echo_duck_admin"] = admin
        return func(*args, **kwargs)

    return wrapper


@contextlib.contextmanager
def open_or_fail(db: str, agent: str, lock_timeout: float, **options: Any) -> Iterator[EchoDuck]:
    """Open late, close early; map echo_duck errors to exit codes with one clear line. A person at a
    terminal is the host: ``--admin`` opens an admin handle (acting as ``--agent``)."""
    with fail_cleanly():
        from ..store.facade import EchoDuck

        context = click.get_current_context(silent=True)
        admin = bool(context is not None and context.meta.get("echo_duck_admin"))
        with EchoDuck(db, agent_id=agent, lock_timeout=lock_timeout, actor="cli", write_path="cli", admin=admin,
                      **options) as mem:
            yield mem


@contextlib.contextmanager
def fail_cleanly() -> Iterator[None]:
    try:
        yield
    except InvalidInput as e:
        raise click.UsageError(str(e)) from e
    except EchoDuckError as e:
        raise click.ClickException(f"{type(e).__name__}: {e}") from e


def emit(value: Any, as_json: bool, human: str | None = None) -> None:
    if as_json:
        output.emit_json(value)
    else:
        click.echo(human if human is not None else str(value))


MEMORY_COLUMNS = ("id", "type", "tier", "key", "content", "provenance", "status")


def memory_rows(memories) -> list[dict[str, Any]]:
    return [dict(m.to_dict(), id=m.id[:8], provenance=m.provenance_name) for m in memories]


@contextlib.contextmanager
def progress_bar(label: str, quiet: bool) -> Iterator[Any]:
    """A ``progress(done, total)`` callback drawing a bar on stderr; None when quiet or not a terminal."""
    if quiet or not os.isatty(2):
        yield None
        return
    with click.progressbar(length=1, label=label, file=click.get_text_stream("stderr")) as bar:
        def progress(done: int, total: int) -> None:
            bar.length = max(total, 1)
            bar.update(done - bar.pos)
        yield progress
