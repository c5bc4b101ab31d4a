"""Keep the search arms in step with the memories table: BM25 postings and vectors per new row.

``index`` runs inside the write's transaction, so a memory, its postings and its vector commit
together or not at all. Both arms index a memory's own text only (SPEC T3). Until issue 18 each
memory was indexed with the previous memory of its session prepended ("neighbour context"); that
leaked one memory's words into another's index entry across scopes, survived forgetting, and on
LongMemEval (dev) cost recall: vector R@10 0.681 with it against 0.866 without, hybrid 0.746
against 0.850. Stores indexed that way are re-indexed by migration 0006 (vectors) and on their next
writable open (BM25).
"""

from __future__ import annotations

import contextlib
import queue
import threading
import uuid
import warnings
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..embed.embedder import MODEL_INSTALL_HINT, Embedder, default_embedder, embedder_by_name
from ..errors import EchoDuckError, InvalidInput
from ..storage.db import Db
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
        self._store_model: str | None = None

    @property
    def vectors(self) -> VectorIndex | None:
        """The vector index of this handle's embedder, or None when no model is available.

        ``"default"`` means the store's own model (recorded with its first vector), else the package
        default. An explicit embedder of another model may read, but not write (a store never holds
        a mix): ``switch_model`` (what ``reembed`` does) makes it the store's model.
        """
        if not self._resolved:
            with self.db.reading():
                self._store_model = self.db.scalar("store_info_value", name="embedding_model")
            embedder = _resolve(self._choice, self._store_model)
            self._resolved = True
            if embedder is not None:
                self._vectors = VectorIndex(self.db, embedder, self.clock)
                if self._store_model is None:
                    self._record_model(embedder)
        return self._vectors

    def check_model_for_writes(self) -> None:
        """Raise InvalidInput when this handle's embedder is not the store's model."""
        index = self.vectors
        if index is not None and self._store_model not in (None, index.embedder.model_id):
            raise InvalidInput(
                f"this store's memories are embedded with {self._store_model}, and this handle uses "
                f"{index.embedder.model_id}; open it without embedder= to write with the store's model, or "
                f"switch the store to {index.embedder.model_id} with reembed() (echo-duck reembed --model ...)")

    def switch_model(self) -> None:
        """Make this handle's embedder the store's model; the other model's vectors become stale."""
        index = self.vectors
        if index is not None and self._store_model != index.embedder.model_id:
            self._record_model(index.embedder)

    def warn_keyword_only_once(self) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(NO_MODEL_MESSAGE, RuntimeWarning, stacklevel=4)

    @contextlib.contextmanager
    def embedding_ahead(self, rows: Sequence[NewRow]) -> Iterator["EmbeddedAhead | None"]:
        """Embed, in a background thread, the texts these rows will most likely be indexed with, while
        the caller scans and inserts them; hand what it yields to ``index``.

        The caller reports each row the scanner has passed (``EmbeddedAhead.passed``); only those
        texts go to the embedder, so it never sees content the scanner refuses. onnxruntime releases
        the GIL while it runs, so on two cores the model and the write path overlap. The rows are
        provisional (not inserted yet): a text that is not among them at ``index`` time is embedded there.
        """
        self.check_model_for_writes()
        if len(rows) < EMBED_AHEAD_MIN_ROWS or self.vectors is None:
            yield None
            return
        texts = [row.content for row in rows]
        ahead = EmbeddedAhead(self.vectors, texts)
        try:
            yield ahead
        finally:
            ahead.vectors()  # a refused batch still waits: the embedder is then free for the next write

    def index(self, rows: Sequence[NewRow], ahead: "EmbeddedAhead | None" = None) -> None:
        """Postings and vectors for rows inserted by the current transaction (called inside it)."""
        if not rows:
            return
        self.check_model_for_writes()
        texts = [row.content for row in rows]
        keys = dict(self.db.run("keys_of_memories", ids="[" + ",".join(str(row.memory_id) for row in rows) + "]").fetchall())
        self.keyword.add([(row.memory_id, index_text(t, keys.get(str(row.memory_id)))) for row, t in zip(rows, texts)])
        if self.vectors is not None:
            self.vectors.add([row.memory_id for row in rows], self._embed(texts, ahead), [row.content for row in rows])

    def _embed(self, texts: list[str], ahead: "EmbeddedAhead | None") -> np.ndarray:
        known = {} if ahead is None else ahead.vectors()
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            known = {**known, **dict(zip(missing, self.vectors.embed(missing)))}
        return np.stack([known[t] for t in texts])

    def _record_model(self, embedder: Embedder) -> None:
        """Make this embedder the store's current model; other models' vectors become stale."""
        if self.db.read_only:
            return
        with self.db.transaction("recording the embedding model"):
            self.db.run("set_store_info", name="embedding_model", value=embedder.model_id)
        self._store_model = embedder.model_id


class EmbeddedAhead:
    """Vectors for texts, computed in a daemon thread in chunks as the scanner passes their rows."""

    CHUNK = 32  # rows handed to the thread at a time; VectorIndex.embed batches each chunk's texts by length

    def __init__(self, vectors: VectorIndex, texts: list[str]):
        self._texts = texts
        self._passed = 0
        self._queue: queue.Queue[list[str] | None] = queue.Queue()
        self._found: dict[str, np.ndarray] = {}
        self._thread = threading.Thread(target=self._run, args=(vectors,), name="echo_duck-embed-ahead", daemon=True)
        self._thread.start()

    def passed(self, position: int) -> None:
        """The scanner passed row ``position`` (rows are reported in order); queue full chunks."""
        self._passed = position + 1
        if self._passed % self.CHUNK == 0 or self._passed == len(self._texts):
            start = (self._passed - 1) // self.CHUNK * self.CHUNK
            self._queue.put(self._texts[start:self._passed])

    def _run(self, vectors: VectorIndex) -> None:
        failed = False
        while (chunk := self._queue.get()) is not None:
            if failed:
                continue
            try:
                self._found.update(zip(chunk, vectors.embed(chunk)))
            except Exception:  # noqa: BLE001 - index() embeds the texts itself and raises there
                failed = True

    def vectors(self) -> dict[str, np.ndarray]:
        """Wait for the queued chunks; the vectors found so far, by text."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        return self._found


def _resolve(choice: Any, store_model: str | None) -> Embedder | None:
    if choice is None or choice == "none":
        return None
    if choice == "default":
        if store_model is None:
            return default_embedder()
        try:
            return embedder_by_name(store_model)
        except EchoDuckError:  # the store's model is not installed here: keywords only, as without a model
            return None
    if isinstance(choice, str):
        return embedder_by_name(choice)
    if not (callable(getattr(choice, "embed", None)) and isinstance(getattr(choice, "model_id", None), str)
            and isinstance(getattr(choice, "dim", None), int)):
        raise InvalidInput(f"embedder must be a name ('default', 'none', 'hash', a model's name) or an object with "
                           f"embed(texts), model_id and dim, got {type(choice).__name__}")
    return choice  # an Embedder instance
