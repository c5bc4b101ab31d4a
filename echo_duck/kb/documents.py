"""The knowledge base (SPEC M5): external documents in their own tables, postings and vectors.

What an agent can look up (runbooks, manuals, FAQs) stays apart from what it experienced: only
``kb_*`` tables, searched by ``kb_search_hits`` (sql/macros/60_kb.sql) with the same BM25, vector and
fusion formulas as memory recall, which never reads them. Input, chunking, rendering: kb_chunking.py.
Documents are keyed by absolute path (a raw text by its source name): an unchanged text (sha256) is
skipped, a changed one has all its chunks replaced, re-adding a folder removes the documents of files
no longer in it. Both arms index a chunk with its heading trail ("Runbook › Rollback").

Scanner policy. Every chunk (trail + content) goes through echo_duck.write.scan.scan, but a KB text is
quoted reference material, not an instruction from the user: a security guide that quotes "ignore
previous instructions" must be storable. So a match never refuses the chunk: it is stored with
flagged = true and flag_reason = "<reason>: <detail>", stays searchable, and render() puts it inside
an explicit <untrusted-quoted-material> fence, secrets masked. Invisible and bidi characters are the
exception to "store as is": they have no honest use in a reference text and hide content from
reviewers, so they are removed from the stored chunk and trail and the chunk is flagged
"invisible_unicode: removed N …" (only then does the stored content differ from text[start:end]).
The source name and tags are the caller's own words: a match there refuses the add (RejectedWrite).
Secrets the scanner recognises are masked before a chunk is stored, indexed or embedded: the store
never holds them (the chunk is flagged, and its content then differs from text[start:end]).

Ownership (SPEC T1). A document belongs to the agent that added it and has a scope (private by
default; team, tenant or public need the same publish right as memories) and a sensitivity; search,
listing and recall(include_kb=True) return only documents the caller may see (can_see), and only the
owner or an admin removes one. What an admin handle adds through the API or the CLI is the host's
(kb_documents.by_host, as memories.by_host): an agent handle, even one carrying the host's agent id
("default"), may not replace, relabel or remove it. Each agent's copy of a file is its own document. In a folder, a
symlink whose target lies outside the folder is refused (a link to ~/.aws/credentials is not a
document of that folder). An agent handle reads no file inside the store's protected paths or own files,
nor one with a second hard link (sources.py); a path is stored with its secrets masked.

Vectors come from the store's embedder, stamped with model_id/dim; chunks with another model's vector
are left out of vector search, listed by kb_stale_vectors, and re-embedded by reembed().
"""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa

from ..errors import InvalidInput, MemoryNotFound, PermissionDenied, RejectedWrite
from ..index.indexing import NO_MODEL_MESSAGE
from ..index.matvec import matvec
from ..index.vectors import ReembedReport
from ..models import SENSITIVITIES
from ..storage.agent_files import agent_files
from ..storage.db import Db
from ..text import bridge
from ..text.when import asks_when, text_script
from ..text import segment as text
from ..write import validate
from ..write.guards import admin_hint, host_writes
from ..write.scan import scan
from ..write.writer import Caller, check_publish
from .chunking import Document, doc_stage, in_context, plan, stage_chunks, vector_stage
from .masking import mask_path
from .rendering import fence_safe, render
from .sources import inputs
from .records import KbChunk, KbDocument, KbExplanation, KbHit, KbReport, hit_from_row

__all__ = ["KbChunk", "KbDocument", "KbExplanation", "KbHit", "KbReport", "KnowledgeBase", "fence_safe", "render"]

_STAGES = ("echo_duck_kb_doc_stage", "echo_duck_kb_chunk_stage", "echo_duck_kb_vector_stage")
_EMBED_BATCH = 64


class KnowledgeBase:
    """One store's knowledge base. ``indexer`` gives the store's embedder (``.vectors``, or None);
    ``protected_paths`` feed the scanner; an agent handle may not add a file inside ``agent_refused``."""

    def __init__(self, db: Db, indexer: Any, clock: Callable[[], datetime], protected_paths: Sequence[str] = (),
                 agent_refused: Sequence[str] = ()):
        self.db, self.indexer, self.clock = db, indexer, clock
        self.protected_paths = tuple(protected_paths)
        self.agent_files = agent_files(agent_refused)
        self._write_lock = threading.Lock()
        self._last_written: datetime | None = None
        self._matrix = _Matrix()
        if not db.read_only:
            self.ensure_ready()

    def add(self, caller: Caller, target: Any, *, source: str | None = None, tags: Any = (), scope: str = "private",
            team_id: str | None = None, tenant_id: str | None = None, sensitivity: str = "normal",
            progress: Callable[[int, int], None] | None = None) -> KbReport:
        """Ingest a file, a folder (recursively) or a raw text (with ``source``) as ``caller``'s documents
        in ``scope``; progress(done, total) while embedding."""
        started = time.perf_counter()
        tags = validate.labels(tags, "tags")
        owner = _owner(caller, scope, team_id, tenant_id, sensitivity)
        docs, folder, source = inputs(target, source, None if caller.admin else self.agent_files)
        for field, value in [("source", source)] + [("tags", t) for t in tags]:
            if finding := scan(value):
                raise RejectedWrite(finding.reason, finding.detail, field)
        with self.db.reading():
            check_publish(self.db, caller, owner["scope"], owner["team_id"], owner["tenant_id"])
        with self._write_lock:  # one ingest at a time: its plan must not go stale before it is applied
            with self.db.reading():
                known = self._known(docs, folder, source, caller.agent_id)
            host = host_writes(caller)  # the host names the whole text: every document it adds is its own
            todo = plan(docs, known, source, tags, sync=folder is not None, owner={**owner, "by_host": True} if host
                        else owner)  # an unmarked copy the host adds again is re-labelled as the host's
            touched = set(todo.replaced + todo.gone) | {doc_id for doc_id, _ in todo.relabel}
            _refuse_host_documents(caller, [r for r in known.values() if str(r["id"]) in touched], "replace")
            chunks, contexts, flagged = stage_chunks(todo.fresh, self.protected_paths)
            vectors = self._embed(contexts, progress)
            removed = self._apply(todo.replaced + todo.gone, todo.gone,
                                  doc_stage(todo.fresh + todo.relabel, source, tags), chunks, vectors,
                                  owner={"agent_id": caller.agent_id, **owner, "by_host": host})
        return KbReport(source, documents_added=len(todo.fresh) - len(todo.replaced),
                        documents_updated=len(todo.replaced) + len(todo.relabel), documents_unchanged=todo.unchanged,
                        documents_removed=len(todo.gone), chunks_added=chunks.num_rows, chunks_removed=removed,
                        flagged=tuple(flagged), seconds=round(time.perf_counter() - started, 3), **self._vector_state())

    def remove(self, caller: Caller, target: Any) -> KbReport:
        """Remove a source (every document added under that name), else a document by path, or every
        document below a folder: the caller's own documents (an admin: anyone's). Rows stay in
        kb_documents with status 'removed'; chunks go."""
        name = validate.text(os.fspath(target) if isinstance(target, os.PathLike) else target, "source_or_path",
                             max_chars=4096)
        mine = dict(agent_id=caller.agent_id, any_agent=caller.admin)
        with self._write_lock:
            with self.db.reading():
                rows = [] if isinstance(target, os.PathLike) else self.db.run("kb_active_documents_of_source",
                                                                              source=name, **mine).fetchall()
                if not rows:
                    path = mask_path(Path(name).expanduser().resolve().as_posix())  # stored masked
                    rows = self.db.run("kb_active_documents_at", path=path, prefix=path.rstrip("/") + "/",
                                       **mine).fetchall()
            if not rows:
                raise MemoryNotFound(f"no knowledge-base source or document path of agent {caller.agent_id!r} matches "
                                     f"{name!r}; see kb_documents()")
            _refuse_host_documents(caller, [{"id": r[0], "by_host": r[1]} for r in rows], "remove")
            ids = [str(r[0]) for r in rows]
            removed = self._apply(ids, ids)
        return KbReport(None, documents_removed=len(ids), chunks_removed=removed, **self._vector_state())

    def reembed(self, *, batch_size: int = 256, progress: Callable[[int, int], None] | None = None) -> ReembedReport:
        """Embed every chunk whose vector is missing or from another model, one committed batch at a time."""
        if (index := self.indexer.vectors) is None:
            raise InvalidInput(NO_MODEL_MESSAGE)
        batch_size = validate.positive_int(batch_size, "batch_size", maximum=100_000)
        with self.db.reading():
            total = self.db.scalar("kb_count_stale_vectors", model_id=index.model_id)
        done = batches = 0
        while done < total:
            with self.db.reading():
                rows = self.db.run("kb_stale_vector_batch", model_id=index.model_id,
                                   n=min(batch_size, total - done)).fetchall()
            if not rows:
                break
            batch = index.embed([in_context(trail, content) for _, trail, content in rows])
            with self.db.transaction("re-embedding knowledge-base chunks"):
                self._stage_and_run(2, vector_stage([str(r[0]) for r in rows], batch), "kb_upsert_vectors_from_stage",
                                    model_id=index.model_id, dim=int(batch.shape[1]), now=self.clock())
                self._matrix.invalidate()
            done, batches = done + len(rows), batches + 1
            if progress is not None:
                progress(done, total)
        with self.db.reading():
            remaining = self.db.scalar("kb_count_stale_vectors", model_id=index.model_id)
        return ReembedReport(index.model_id, done, remaining, batches)

    def ensure_ready(self) -> None:
        """Rebuild the postings when the memory index's signature (segmenter, stop words, hash()) moved on."""
        with self.db.reading():
            signature = self.db.scalar("store_info_value", name="keyword_index_signature")
            if signature is None or self.db.scalar("store_info_value", name="kb_keyword_index_signature") == signature:
                return
            rows = self.db.run("kb_all_chunk_texts").fetchall()
        with self.db.transaction("rebuilding the knowledge-base keyword index"):
            self.db.run("kb_clear_keyword_index")
            stage = {"id": [str(r[0]) for r in rows],
                     "tokens": [text.segment_for_index(in_context(r[1], r[2])) for r in rows]}
            self._stage_and_run(1, pa.table(stage), "kb_insert_bm25_docs_from_stage",
                                "kb_insert_bm25_postings_from_stage")
            self.db.run("set_store_info", name="kb_keyword_index_signature", value=signature)

    def invalidate(self) -> None:
        """Drop the in-process vectors after writes this object did not make (e.g. sql(write=True))."""
        with self.db.reading():
            self._matrix.invalidate()

    def build_fts_index(self) -> None:
        """(Re)build DuckDB's fts index over kb_bm25_docs.tokens, for analysts who call match_bm25."""
        with self.db.transaction("building the knowledge-base fts index"):
            self.db.run("kb_create_fts_index")

    def search(self, caller: Caller, query: str, k: int = 5, *, sources: Any = None, tags: Any = None,
               explain: bool = False) -> list[KbHit]:
        """Hybrid (BM25 + vectors) search over chunks; ``sources`` (any of) and ``tags`` (all of) filter."""
        return self.ranked(caller, query, k, sources=sources, tags=tags, explain=explain)[0]

    def ranked(self, caller: Caller, query: str, k: int = 5, *, sources: Any = None, tags: Any = None,
               explain: bool = False) -> tuple[list[KbHit], set[str]]:
        """``search``'s hits and the ids of those its gate ranked last (kb_search's gate): recall(include_kb=True)
        keeps them after the kept hits of both lists, and a reranker does not lift them."""
        query = validate.text(query, "query", max_chars=10_000)
        k = validate.positive_int(k, "k", maximum=1000)
        sources = None if sources is None else validate.labels(sources, "sources") or None
        tags = None if tags is None else validate.labels(tags, "tags") or None
        explain = validate.flag(explain, "explain")
        q_tokens = text.segment_for_index(query)
        params: dict[str, Any] = dict(p_query=q_tokens, p_vec_ids=None, p_vec_sims=None, p_vec_stats=None, p_qvec=None,
                                      p_model=None, p_bridge=None, p_query_script=text_script(query),
                                      p_asks_when=asks_when(query))
        vectors = self.indexer.vectors
        if vectors is None:
            self.indexer.warn_keyword_only_once()
            arm = "unavailable: no embedding model installed (keyword-only)"
        else:
            qvec = vectors.embed_question(query)
            params["p_model"] = vectors.model_id
            params["p_bridge"] = bridge.bridged_query(query) or None  # credits chunks in the other script only
            if sources or tags:  # filters: the macro scans only the eligible chunks itself
                params["p_qvec"], arm = _literal(qvec), "exact (sql)"
            else:
                with self.db.reading():
                    pool = int(self.db.setting("vector_pool"))
                    counted = {i for (i,) in self.db.run("kb_counted_chunk_ids", p_caller_agent=caller.agent_id,
                                                          p_caller_session=caller.session_id).fetchall()}
                    ids, sims, sums = self._matrix.search(self.db, vectors.model_id, vectors.embedder.dim, qvec, pool,
                                                          counted)
                    stats = self.db.scalar("kb_similarity_stats", n=sums[0], total=sums[1], squares=sums[2])
                params.update(p_vec_ids="[" + ",".join(ids) + "]", p_vec_sims=_literal(sims),
                              p_vec_stats="[" + ",".join(map(repr, stats)) + "]")
                arm = "exact (in-process)"
        with self.db.reading():
            rows = self.db.dicts("kb_search", **params, p_k=k, p_sources=sources, p_tags=tags,
                                 p_caller_agent=caller.agent_id, p_caller_session=caller.session_id,
                                 p_caller_host=caller.admin)
        gated = {str(row["id"]) for row in rows if row["gate"] != "kept"}
        return [hit_from_row(row, arm, explain) for row in rows], gated

    def documents(self, caller: Caller) -> list[KbDocument]:
        """Active documents the caller may see, with their chunk and flagged-chunk counts."""
        with self.db.reading():
            return [KbDocument.from_row(r) for r in self.db.dicts("kb_overview", caller_agent=caller.agent_id,
                                                                  caller_session=caller.session_id)]

    render = staticmethod(render)  # hits -> a <kb-context> block for a prompt (kb_chunking.render)

    def _known(self, docs: list[Document], folder: str | None, source: str, agent_id: str) -> dict[str | None, dict]:
        """The agent's stored documents (any status) for these inputs, keyed by path (None: the raw text)."""
        if folder is not None:
            rows = self.db.dicts("kb_documents_under", prefix=folder, agent_id=agent_id)
        elif docs[0].path is None:
            rows = self.db.dicts("kb_text_document", source=source, agent_id=agent_id)
        else:
            rows = self.db.dicts("kb_document_at", path=docs[0].path, agent_id=agent_id)
        return {r["path"]: r for r in rows}

    def _embed(self, texts: list[str], progress: Callable[[int, int], None] | None) -> np.ndarray | None:
        """Vectors for new chunks, computed before the write transaction (it holds the store lock)."""
        if (index := self.indexer.vectors) is None or not texts:
            return None
        parts = []
        for i in range(0, len(texts), _EMBED_BATCH):
            parts.append(index.embed(texts[i:i + _EMBED_BATCH]))
            if progress is not None:
                progress(min(i + _EMBED_BATCH, len(texts)), len(texts))
        return np.concatenate(parts)

    def _written_at(self) -> datetime:
        """A document write's time: the clock, but after every earlier document write (kb_render's gate ranks other
        authors' chunks by it; under a fixed or coarse clock two writes tied, and a random id decided which went)."""
        if self._last_written is None:
            self._last_written = self.db.scalar("kb_last_written")
        now = self.clock()
        if self._last_written is not None and now <= self._last_written:
            now = self._last_written + timedelta(microseconds=1)
        self._last_written = now
        return now

    def _apply(self, drop: list[str], gone: list[str], docs: pa.Table | None = None,
               chunks: pa.Table | None = None, vectors: np.ndarray | None = None, owner: dict | None = None) -> int:
        """One transaction: drop the chunks (postings, vectors) of ``drop``, upsert ``docs``, write the
        new chunks, mark ``gone`` removed. Returns the number of chunks dropped."""
        with self.db.transaction("changing the knowledge base"):
            removed = self.db.scalar("kb_count_chunks_of_documents", ids=_ids(drop)) if drop else 0
            if drop:
                self.db.run("kb_drop_chunks_of_documents", ids=_ids(drop))
            if docs is not None:
                self._stage_and_run(0, docs, "kb_upsert_documents_from_stage", now=self._written_at(), **owner)
            if chunks is not None:
                self._stage_and_run(1, chunks, "kb_insert_chunks_from_stage", "kb_insert_bm25_docs_from_stage",
                                    "kb_insert_bm25_postings_from_stage")
            if vectors is not None:
                self._stage_and_run(2, vector_stage(chunks.column("id").to_pylist(), vectors),
                                    "kb_upsert_vectors_from_stage", model_id=self.indexer.vectors.model_id,
                                    dim=int(vectors.shape[1]), now=self.clock())
            if gone:
                self.db.run("kb_mark_documents_removed", ids=_ids(gone), now=self.clock())
            self._compact_if_needed()
            self._matrix.invalidate()
        return int(removed)

    def _compact_if_needed(self) -> None:
        """Rewrite the postings once dead docs reach a quarter of the live ones (reads skip dead docs)."""
        dead, live = self.db.run("kb_keyword_counts").fetchone()
        if dead and dead * 4 >= live:
            self.db.run("kb_compact_postings")

    def _stage_and_run(self, which: int, stage: pa.Table, *queries: str, **params: Any) -> None:
        """Run queries reading a registered Arrow table (bulk staging: one statement for all rows)."""
        self.db.con.register(_STAGES[which], stage)
        try:
            for name in queries if stage.num_rows else ():
                self.db.run(name, **params)
        finally:
            self.db.con.unregister(_STAGES[which])

    def _vector_state(self) -> dict[str, Any]:
        if (index := self.indexer.vectors) is None:
            return {}
        with self.db.reading():
            stale = self.db.scalar("kb_count_stale_vectors", model_id=index.model_id)
        return {"vector_model": index.model_id, "stale_vectors": stale}


class _Matrix:
    """The current model's chunk vectors as one float32 matrix, for an exact numpy top-n (~ms).
    Ingests are rare batches and searches are many: every KB write drops it, the next search reloads.
    Used only under the store lock (inside db.reading() or a transaction), so it needs none of its own."""

    def __init__(self):
        self._model: str | None = None
        self._ids: list[str] = []
        self._m = np.zeros((0, 1), dtype=np.float32)

    def invalidate(self) -> None:
        self._model = None

    def search(self, db: Db, model_id: str, dim: int, query: np.ndarray, n: int, counted: set[str]
               ) -> tuple[list[str], np.ndarray, tuple[float, float, float]]:
        """The top n (ids, similarities) among the chunks in ``counted`` (the caller's, kb_counted_chunks), and the
        count, sum and sum of squares of their similarities."""
        if self._model != model_id:
            table = db.arrow("kb_vectors_of_model", model_id=model_id)
            self._ids = [str(v) for v in table.column("chunk_id").to_pylist()]
            flat = table.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
            self._m, self._model = flat.astype(np.float32, copy=False).reshape(len(self._ids), dim), model_id
        if not self._ids:
            return [], np.zeros(0, dtype=np.float32), (0.0, 0.0, 0.0)
        rows = np.flatnonzero(np.fromiter((i in counted for i in self._ids), bool, len(self._ids)))
        sims = matvec(self._m, query.astype(np.float32))[rows]
        top = np.argpartition(-sims, n - 1)[:n] if n < len(sims) else np.arange(len(sims))
        top = top[np.lexsort((top, -sims[top]))]
        values = sims.astype(np.float64)
        return [self._ids[rows[i]] for i in top], sims[top], (float(len(values)), float(values.sum()),
                                                              float(values @ values))


def _refuse_host_documents(caller: Caller, rows: list[dict], verb: str) -> None:
    """Only an admin handle may change what the host added (kb_documents.by_host): an agent handle may carry the host's
    own agent id ("default", echo_duck.open(path)). Nothing is changed when one of the documents is the host's."""
    if caller.admin or not (host := [r for r in rows if r["by_host"]]):
        return
    raise PermissionDenied(f"knowledge-base document {host[0]['id']} was added by the host (by_host); only an admin "
                           f"handle may {verb} it ({admin_hint(caller)})")


def _owner(caller: Caller, scope: str, team_id: Any, tenant_id: Any, sensitivity: str) -> dict[str, Any]:
    """A document's scope fields, validated as a memory's are (team/tenant default to the caller's)."""
    scope, team, tenant = validate.owner(scope, team_id, tenant_id, default_team=caller.team_id,
                                         default_tenant=caller.tenant_id)
    return {"scope": scope, "team_id": team, "tenant_id": tenant,
            "sensitivity": validate.choice(sensitivity, "sensitivity", SENSITIVITIES)}


def _ids(values: Sequence[str]) -> str:
    return "[" + ",".join(values) + "]"


def _literal(values: np.ndarray) -> str:
    """Vectors are bound as text and cast in SQL: binding a Python list costs 20-60 ms in duckdb 1.5.5."""
    return "[" + ",".join(f"{float(x):.9g}" for x in values) + "]"
