"""Keep the search arms in step with the memories table: BM25 postings and vectors per new row.

``index`` runs inside the write's transaction, so a memory, its postings and its vector commit
together or not at all. Both arms index a memory together with the memory just before it in the
same source session (its conversational context): measured on LoCoMo (first 3 conversations),
that lifted USE vector-only R@10 from 0.30 to 0.54, as context had done for BM25.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
import warnings
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .db import Db
from .embed import MODEL_INSTALL_HINT, Embedder, default_embedder, embedder_by_name
from .keyword import KeywordIndex, index_text
from .keyword_search import KeywordSearcher
from .vectors import VectorIndex

# Batches at least this large are embedded in a background thread while the write path scans and
# inserts them; below it the hand-off saves nothing.
EMBED_AHEAD_MIN_ROWS = 16
NO_MODEL_MESSAGE = (f"echo_duck: no embedding model is installed, so recall uses keywords only; "
                    f"install the default model with: {MODEL_INSTALL_HINT}")


@dataclass(frozen=True)
class NewRow:
    """A memory row just inserted in the current transaction, as the indexes need it."""

    memory_id: uuid.UUID
    agent_id: str
    source_session: str | None
    at: datetime  # observed_at, else created_at: the conversation's order
    created_at: datetime  # breaks ties in write order
    content: str


class Indexer:
    def __init__(self, db: Db, clock: Callable[[], datetime], embedder: Any = "default"):
        self.db = db
        self.clock = clock
        self.keyword = KeywordIndex(db)
        self.keyword_search = KeywordSearcher(db)
        self._choice = embedder
        self._vectors: VectorIndex | None = None
        self._resolved = False
        self._warned = False

    @property
    def vectors(self) -> VectorIndex | None:
        """The vector index of the configured embedder, or None when no model is available."""
        if not self._resolved:
            embedder = _resolve(self._choice)
            self._resolved = True
            if embedder is not None:
                self._vectors = VectorIndex(self.db, embedder, self.clock)
                self._record_model(embedder)
        return self._vectors

    def warn_keyword_only_once(self) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(NO_MODEL_MESSAGE, RuntimeWarning, stacklevel=4)

    @contextlib.contextmanager
    def embedding_ahead(self, rows: Sequence[NewRow]) -> Iterator["EmbeddedAhead | None"]:
        """Start embedding, in a background thread, the texts these rows will most likely be indexed
        with, while the caller scans and inserts them; hand what it yields to ``index``.

        onnxruntime releases the GIL while it runs, so on two cores the model and the write path
        overlap. The rows are provisional (not inserted yet): a text that comes out different at
        ``index`` time (redacted by the scanner, a context that changed) is embedded there instead.
        """
        if len(rows) < EMBED_AHEAD_MIN_ROWS or self.vectors is None:
            yield None
            return
        with self.db.reading():
            texts = self._texts_in_context(rows)
        ahead = EmbeddedAhead(self.vectors, texts)
        try:
            yield ahead
        finally:
            ahead.vectors()  # a refused batch still waits: a user's embedder need not be thread-safe

    def index(self, rows: Sequence[NewRow], ahead: "EmbeddedAhead | None" = None) -> None:
        """Postings and vectors for rows inserted by the current transaction (called inside it)."""
        if not rows:
            return
        texts = self._texts_in_context(rows)
        self.keyword.add([(row.memory_id, index_text(t)) for row, t in zip(rows, texts)])
        if self.vectors is not None:
            self.vectors.add([row.memory_id for row in rows], self._embed(texts, ahead))

    def _embed(self, texts: list[str], ahead: "EmbeddedAhead | None") -> np.ndarray:
        known = {} if ahead is None else ahead.vectors()
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            known = {**known, **dict(zip(missing, self.vectors.embed(missing)))}
        return np.stack([known[t] for t in texts]) if texts else self.vectors.embed([])

    def _texts_in_context(self, rows: Sequence[NewRow]) -> list[str]:
        """Each row's content preceded by the previous memory of its session (from this batch or the store)."""
        last_in_session: dict[tuple[str, str], str] = {}
        texts = []
        for row in rows:
            previous = None
            if row.source_session is not None:
                session = (row.agent_id, row.source_session)
                previous = last_in_session.get(session)
                if previous is None:
                    previous = self.db.scalar("previous_in_session", agent_id=row.agent_id, source_session=row.source_session,
                                              id=row.memory_id, at=row.at, created_at=row.created_at)
                last_in_session[session] = row.content
            texts.append(row.content if previous is None else f"{previous}\n{row.content}")
        return texts

    def _record_model(self, embedder: Embedder) -> None:
        """Make this embedder the store's current model; other models' vectors become stale."""
        if self.db.read_only:
            return
        with self.db.reading():
            current = self.db.scalar("store_info_value", name="embedding_model")
        if current != embedder.model_id:
            with self.db.transaction("recording the embedding model"):
                self.db.run("set_store_info", name="embedding_model", value=embedder.model_id)


class EmbeddedAhead:
    """Vectors for texts, computed in a daemon thread; ``vectors()`` waits for them."""

    def __init__(self, vectors: VectorIndex, texts: list[str]):
        self._texts = texts
        self._result: np.ndarray | None = None
        self._thread = threading.Thread(target=self._run, args=(vectors,), name="echo_duck-embed-ahead", daemon=True)
        self._thread.start()

    def _run(self, vectors: VectorIndex) -> None:
        try:
            self._result = vectors.embed(self._texts)
        except Exception:  # noqa: BLE001 - index() embeds the texts itself and raises there
            self._result = None

    def vectors(self) -> dict[str, np.ndarray]:
        self._thread.join()
        return {} if self._result is None else dict(zip(self._texts, self._result))

    @property
    def texts(self) -> list[str]:
        return list(self._texts)


def _resolve(choice: Any) -> Embedder | None:
    if choice is None or choice == "none":
        return None
    if choice == "default":
        return default_embedder()
    if isinstance(choice, str):
        return embedder_by_name(choice)
    return choice  # an Embedder instance
