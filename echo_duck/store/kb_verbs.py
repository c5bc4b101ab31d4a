"""The knowledge-base verbs of the facade (SPEC M5): a mixin of ``EchoDuck``, thin calls into kb.py.

Written against what the facade already has: ``db``, ``indexer`` (its ``vectors`` is the store's
embedder, or None), ``_clock``, ``read_only``, ``path``, ``archive_dir`` and ``writer.protected_paths``
(the scanner's paths: the ``protected_paths`` option, then the store's own folder).

Merging with memory recall (``recall(..., include_kb=True)``): ``self.kb.search(query, k)`` returns
``KbHit``s whose score is on the memory hits' scale: the same quality-weighted RRF (each corpus ranks
its own candidates), times importance_floor + (1 - importance_floor) × kb_importance, i.e. a chunk
scores like a fresh memory of importance 0.5 (setting ``kb_importance``) that never decays. So both
lists merge by score, the hits either gate ranked last after the kept of both:
``sorted(memory_hits + kb_hits, key=lambda h: (h.id in gated, -h.score, h.origin, h.id))[:k]``, each hit
marked by ``origin`` ("memory" or "kb"); a reranker does not lift the gated ones.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from ..errors import EchoDuckError
from ..index.vectors import ReembedReport
from ..io.store_files import refuse_store_file
from ..kb.documents import KbDocument, KbHit, KbReport, KnowledgeBase
from ..storage.agent_files import AgentFiles, agent_files
from ..write import validate


class KnowledgeBaseVerbs:
    @property
    def kb(self) -> KnowledgeBase:
        """This store's knowledge base, created on first use (its postings checked once then)."""
        with self.db.lock:  # two threads asking at once get one instance, shared by for_agent() handles
            if self._shared.kb is None:
                protected = tuple(getattr(getattr(self, "writer", None), "protected_paths", ()))
                self._shared.kb = KnowledgeBase(self.db, self.indexer, self._clock, protected,
                                                self._agent_refused(protected))
            return self._shared.kb

    def kb_add(self, path_or_text: Any, *, source: str | None = None, tags: Any = (), scope: str = "private",
               team_id: str | None = None, tenant_id: str | None = None, sensitivity: str = "normal",
               progress: Callable[[int, int], None] | None = None) -> KbReport:
        """Add a file, a folder (recursively: .md, .markdown, .txt) or a raw text (``source`` required)
        to the knowledge base, as this agent's documents in ``scope`` (team, tenant and public need the
        publish right memories need). Unchanged files are skipped, changed ones re-chunked, and files
        gone from a re-added folder removed. Scanner matches are stored flagged, never refused;
        secrets are masked before anything is stored."""
        self._kb_writable("kb_add")
        if isinstance(path_or_text, (str, os.PathLike)) and "\n" not in str(path_or_text):
            # not the store file on any handle: reading it through a second descriptor drops this process's lock
            refuse_store_file(self, path_or_text, "add", archive=False)
        self.indexer.check_model_for_writes()
        return self.kb.add(self.caller, path_or_text, source=source, tags=tags, scope=scope, team_id=team_id,
                           tenant_id=tenant_id, sensitivity=sensitivity, progress=validate.callback(progress))

    def kb_search(self, query: str, k: int = 5, *, sources: Any = None, tags: Any = None,
                  explain: bool = False) -> list[KbHit]:
        """Hybrid search over the documents this agent may see (never memories); each hit cites its path,
        heading trail and offsets. ``sources``: any of these source names; ``tags``: all of these."""
        return self.kb.search(self.caller, query, k, sources=sources, tags=tags, explain=explain)

    def kb_render(self, hits: Any, budget_chars: int | None = None) -> str:
        """KB hits as a fenced <kb-context> block for a prompt; flagged chunks fenced as untrusted, another agent's
        documents cited with their author."""
        if budget_chars is not None:
            budget_chars = validate.positive_int(budget_chars, "budget_chars", maximum=10_000_000)
        hits = list(validate._iterable(hits, "hits"))
        if any(not hasattr(h, "origin") for h in hits):
            raise validate.InvalidInput("hits must be what recall(include_kb=True) or kb_search() returned, "
                                        f"got a {type(next(h for h in hits if not hasattr(h, 'origin'))).__name__}")
        return self.kb.render([h for h in hits if getattr(h, "origin", None) == "kb"], budget_chars,
                              reader=self.caller.agent_id, reader_host=self.caller.admin)

    def kb_remove(self, source_or_path: Any) -> KbReport:
        """Remove every document of a source, else the document at a path, or all below a folder
        (this agent's own documents; an admin's: anyone's)."""
        self._kb_writable("kb_remove")
        return self.kb.remove(self.caller, source_or_path)

    def kb_documents(self) -> list[KbDocument]:
        """Active knowledge-base documents this agent may see, with their chunk and flagged-chunk counts."""
        return self.kb.documents(self.caller)

    def kb_reembed(self, *, batch_size: int = 256, progress: Callable[[int, int], None] | None = None) -> ReembedReport:
        """Re-embed chunks whose vector is missing or from another model, in committed batches (admin only).

        Opened with an explicit ``embedder=``, this switches the store to that model first."""
        self._require_admin("kb_reembed")
        self._kb_writable("kb_reembed")
        self.indexer.switch_model()
        return self.kb.reembed(batch_size=batch_size, progress=validate.callback(progress))

    def _agent_files(self) -> AgentFiles | None:
        """An agent handle's file rules for kb_add, import_file and the exports (None on an admin handle)."""
        if getattr(self, "is_admin", False):
            return None
        return agent_files(self._agent_refused(tuple(getattr(getattr(self, "writer", None), "protected_paths", ()))))

    def _agent_refused(self, protected: tuple[str, ...]) -> list[str]:
        """What an agent handle may not read or write: the ``protected_paths`` option and the store's own files
        (the file, its .wal, its archive folder). Not the whole folder the store is in, which the scanner also
        protects (opening.py appends it last): a project keeps its store next to the documents its agents add."""
        path = getattr(self, "path", ":memory:")
        if path == ":memory:":
            return list(protected)
        store = Path(path).expanduser().resolve()
        options = list(protected[:-1]) if protected and protected[-1] == str(store.parent) else list(protected)
        archive = getattr(self, "archive_dir", None)
        return options + [str(store), f"{store}.wal"] + ([str(archive)] if archive is not None else [])

    def _kb_writable(self, verb: str) -> None:
        if self.read_only:  # before any file is read or embedded
            raise EchoDuckError(f"{verb}: this store was opened read_only; open it without read_only to write")
