"""`echo-duck kb …`: the knowledge base from the command line (a thin layer over the kb_* verbs)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..models import SCOPES, SENSITIVITIES
from . import output
from .common import common, emit, open_or_fail, progress_bar


@click.group()
def kb() -> None:
    """Reference documents (runbooks, manuals, FAQs), stored and searched apart from memories.

    Example:  echo-duck kb add docs/ --source handbook
    """


@kb.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--source", help="Collection name (default: the file or folder name; required with '-').")
@click.option("--tag", "tags", multiple=True, help="Tag (repeatable); search can filter on it.")
@click.option("--scope", type=click.Choice(SCOPES), default="private", show_default=True,
              help="Who may find the documents; team, tenant and public need a publish right.")
@click.option("--team", "team_id", help="Team id for --scope team.")
@click.option("--tenant", "tenant_id", help="Tenant id for --scope tenant.")
@click.option("--sensitivity", type=click.Choice(SENSITIVITIES), default="normal", show_default=True)
@common
def add(paths, source, tags, scope, team_id, tenant_id, sensitivity, db, agent, lock_timeout, as_json):
    """Add files or folders (.md, .markdown, .txt, recursively) as the agent's documents; '-' reads raw
    text from stdin.

    Unchanged files are skipped, changed ones re-chunked, files gone from a re-added folder removed.

    Example:  echo-duck kb add docs/runbooks --source runbooks --tag ops
    """
    with open_or_fail(db, agent, lock_timeout) as mem:
        reports = []
        for path in paths:
            target = sys.stdin.read() if path == "-" else Path(path)  # a path argument is always a path
            with progress_bar(f"embedding {path}", as_json) as progress:
                reports.append(mem.kb_add(target, source=source, tags=tags, scope=scope, team_id=team_id,
                                          tenant_id=tenant_id, sensitivity=sensitivity, progress=progress))
    lines = [f"{r.source}: {r.documents_added} added, {r.documents_updated} updated, {r.documents_unchanged} unchanged, "
             f"{r.documents_removed} removed; {r.chunks_added} chunks in, {r.chunks_removed} out, {len(r.flagged)} flagged"
             + "".join(f"\n  flagged: {note}" for note in r.flagged) for r in reports]
    emit(reports, as_json, "\n".join(lines))


@kb.command()
@click.argument("query")
@click.option("-k", "k", type=int, default=5, show_default=True, help="How many chunks to return.")
@click.option("--source", "sources", multiple=True, help="Only these sources (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only documents with all these tags.")
@click.option("--explain", is_flag=True, help="Show why each chunk ranked where it did.")
@click.option("--render", "as_prompt", is_flag=True, help="Print the fenced block an agent would put in its prompt.")
@common
def search(query, k, sources, tags, explain, as_prompt, db, agent, lock_timeout, as_json):
    """Search the knowledge base only (never memories), citing path, headings and offsets.

    Example:  echo-duck kb search "how do I roll back a deploy?" --explain
    """
    with open_or_fail(db, agent, lock_timeout, read_only=True) as mem:
        hits = mem.kb_search(query, k, sources=sources or None, tags=tags or None, explain=explain or as_json)
        block = mem.kb_render(hits) if as_prompt else None
    if block is not None:
        emit({"render": block}, as_json, block.rstrip("\n") or "(no matching chunks)")
        return
    rows = [dict(score=h.score, citation=h.chunk.citation, flagged="yes" if h.chunk.flagged else "", content=h.content,
                 **({"bm25": h.explanation.bm25_rank, "vector": h.explanation.vector_rank,
                     "similarity": h.explanation.similarity} if explain else {}))
            for h in hits]
    columns = ("score", "citation", "flagged", "content") + (("bm25", "vector", "similarity") if explain else ())
    human = output.table(rows, columns, widths={"citation": 60, "content": 60}) if rows else "(no matching chunks)"
    if explain and hits:
        human += f"\n\nvector arm: {hits[0].explanation.vector_arm}"
    emit(hits, as_json, human)


@kb.command(name="list")
@common
def list_(db, agent, lock_timeout, as_json):
    """List the documents in the knowledge base with their chunk counts.

    Example:  echo-duck kb list --json
    """
    with open_or_fail(db, agent, lock_timeout, read_only=True) as mem:
        docs = mem.kb_documents()
    rows = [dict(d.to_dict(), path=d.path or f"(text) {d.source}") for d in docs]
    columns = ("source", "path", "title", "chunks", "flagged_chunks", "by_host", "updated_at")
    emit(docs, as_json, output.table(rows, columns, widths={"path": 60}) if rows else "the knowledge base is empty")


@kb.command()
@click.argument("source_or_path")
@common
def remove(source_or_path, db, agent, lock_timeout, as_json):
    """Remove every document of a source, else the document at a path (or all below a folder).

    Example:  echo-duck kb remove runbooks
    """
    with open_or_fail(db, agent, lock_timeout, embedder="none") as mem:
        report = mem.kb_remove(source_or_path)
    emit(report, as_json, f"removed {report.documents_removed} documents ({report.chunks_removed} chunks)")


@kb.command()
@click.option("--batch-size", type=int, default=256, show_default=True)
@common
def reembed(batch_size, db, agent, lock_timeout, as_json):
    """Re-embed chunks whose vector is missing or from another model than the store's. Needs --admin.

    Example:  echo-duck kb reembed --admin
    """
    with open_or_fail(db, agent, lock_timeout) as mem:
        report = mem.kb_reembed(batch_size=batch_size)
    emit(report.__dict__, as_json, f"re-embedded {report.embedded} chunks with {report.model_id} "
                                   f"in {report.batches} batches; {report.remaining} still stale")
