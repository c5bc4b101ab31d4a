"""Shared pieces of the CLI: the common options, opening a store, mapping errors to exit codes, output."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import re
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


DB_HELP = "Store file (or $ECHO_DUCK_DB; default ~/.local/share/echo_duck/memory.duckdb)."


@dataclasses.dataclass
class Target:
    """The options every store command takes, given before or after the subcommand
    (``echo-duck --db x.duckdb list`` and ``echo-duck list --db x.duckdb`` are the same)."""

    db: str | None = None
    agent: str | None = None
    lock_timeout: float | None = None
    as_json: bool = False
    admin: bool = False


def target_options(func):
    """--db, --agent, --admin, --lock-timeout and --json, with no defaults of their own (see ``resolved``)."""
    func = click.option("--json", "as_json", is_flag=True, default=None, help="Machine-readable JSON output.")(func)
    func = click.option("--admin", "admin", is_flag=True, default=None,
                        help="Open an admin handle (memberships, rights, SQL, store-wide jobs, others' memories).")(func)
    func = click.option("--lock-timeout", type=float, default=None,
                        help="Seconds to wait if another process holds the file (default 5).")(func)
    func = click.option("--agent", default=None, help="Agent id to act as (default: default).")(func)
    return click.option("--db", "db", type=click.Path(dir_okay=False), default=None, help=DB_HELP)(func)


def resolved(db: str | None = None, agent: str | None = None, lock_timeout: float | None = None,
             as_json: bool | None = None, admin: bool | None = None) -> Target:
    """The subcommand's own value, else the one given before the subcommand, else the default."""
    ctx = click.get_current_context(silent=True)
    top = (ctx.find_root().obj if ctx is not None else None) or Target()
    for flag, values in (("--agent", (agent, top.agent)), ("--db", (db, top.db))):
        if "" in values:  # an unset $AGENT acted as agent 'default'
            raise click.BadParameter("must not be empty", param_hint=flag)
    return Target(db=db or top.db or default_db(), agent=agent or top.agent or "default",
                  lock_timeout=lock_timeout if lock_timeout is not None else
                  (top.lock_timeout if top.lock_timeout is not None else 5.0),
                  as_json=bool(as_json or top.as_json), admin=bool(admin or top.admin))


def common(func):
    """--db, --agent, --admin, --lock-timeout and --json on a command, also accepted before the subcommand.
    ``--admin`` is read by ``open_or_fail``: the commands' own signatures do not take it."""

    @target_options
    @functools.wraps(func)
    def wrapper(*args, db=None, agent=None, lock_timeout=None, as_json=None, admin=None, **kwargs):
        t = resolved(db, agent, lock_timeout, as_json, admin)
        click.get_current_context().meta["echo_duck_admin"] = t.admin
        return func(*args, db=t.db, agent=t.agent, lock_timeout=t.lock_timeout, as_json=t.as_json, **kwargs)

    return wrapper


@contextlib.contextmanager
def open_or_fail(db: str, agent: str, lock_timeout: float, **options: Any) -> Iterator[EchoDuck]:
    """Open late, close early; say on stderr which store is used; map echo_duck errors to exit codes. A person
    at a terminal is the host: ``--admin`` opens an admin handle (acting as ``--agent``). ``$ECHO_DUCK_MODEL`` names
    the embedding model when the command does not (a name, or the folder of a model of your own)."""
    with fail_cleanly():
        from ..store.facade import EchoDuck

        context = click.get_current_context(silent=True)
        admin = bool(context is not None and context.meta.get("echo_duck_admin"))
        click.echo(f"echo-duck: store {os.path.abspath(db)} (agent {agent}{', admin' if admin else ''})", err=True)
        if os.environ.get("ECHO_DUCK_MODEL") and options.get("embedder", "default") == "default":
            options["embedder"] = os.environ["ECHO_DUCK_MODEL"]  # a model folder of the user's own, say
        with EchoDuck(db, agent_id=agent, lock_timeout=lock_timeout, actor="cli", write_path="cli", admin=admin,
                      **options) as mem:
            yield mem


class CommandError(click.ClickException):
    """One line on stderr (or a JSON object on stdout under --json) and a non-zero exit, never a usage banner."""

    def __init__(self, error: BaseException, exit_code: int):
        super().__init__(output.safe(_cli_words(f"{type(error).__name__}: {error}")))
        self.kind = type(error).__name__
        self.exit_code = exit_code
        self.as_json = resolved().as_json  # the context is gone by the time click shows the error

    def show(self, file=None) -> None:
        if self.as_json:
            click.echo(json.dumps({"error": {"type": self.kind, "message": self.message,
                                             "exit_code": self.exit_code}}, ensure_ascii=False))
        else:
            super().show(file)


@contextlib.contextmanager
def fail_cleanly() -> Iterator[None]:
    """InvalidInput exits 2, every other echo_duck error 1; the message names CLI flags, not Python arguments."""
    try:
        yield
    except InvalidInput as e:
        raise CommandError(e, 2) from e
    except EchoDuckError as e:
        raise CommandError(e, 1) from e


def _cli_words(message: str) -> str:
    """Name the current command's flags where the library's message names its Python arguments
    (``pass write=True`` -> ``pass --write``; ``type must be ...`` -> ``--type must be ...``)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return message
    for param in ctx.command.params:
        if not isinstance(param, click.Option) or not param.name or param.name == "admin":
            continue  # admin errors name both spellings already
        flag = max(param.opts, key=len)
        message = re.sub(rf"\b{param.name}=True\b", flag, message)
        message = re.sub(rf"\b{param.name}=(?=\S)", f"{flag} ", message)
        message = re.sub(rf"^(\w+: ){param.name} (must|is|contains)\b", rf"\g<1>{flag} \2", message)
    return message


def emit(value: Any, as_json: bool, human: str | None = None) -> None:
    if as_json:
        output.emit_json(value)
    else:
        click.echo(output.safe(human if human is not None else str(value)))  # stored text: no escape codes


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
