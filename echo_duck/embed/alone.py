"""Every text embedded on its own, and the write scanner's vectors handed on to the index that stores them.

The default model (a dynamically quantised graph) scales activations over its whole batch, so a batched
vector depends on the other texts in the batch (cosine ~0.998 to the same text alone): a stored vector,
a scanner verdict or a fitted threshold would depend on which texts a bulk write happened to group. So
every text is embedded alone: the scanner's views, every stored memory's vector and every query. A
text then has one vector per model, whatever batch it came in.

The write scanner embeds a note before it is stored; when the text it embedded is the stored text
itself, it ``keep``s that vector (``embed_each(..., keep=...)``) and the index ``take``s it instead of
embedding the text again. Kept vectors are bounded (KEEP_MAX, ~2 KB each for 512 dims): a text kept but
never stored (refused, or scanned for another reason) is dropped oldest-first; a text taken from
nowhere is simply embedded again, to the same vector.

Texts come back (the snapshot gate re-scans the memory lines it renders on every snapshot, imports repeat,
the scanner reads a note's sentences and then the note), so the vectors of texts up to CACHE_MAX_CHARS
are also cached, by model and text, in a bounded LRU (CACHE_ENTRIES), for the shipped ONNX models (their
``deterministic`` attribute; a caller's own embedder is never cached): a text alone always gives the same
vector, so a hit is what the model would return.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections import OrderedDict
from typing import Any, Collection, Sequence

import numpy as np

THREADS = 2
PARALLEL_FROM = 32  # texts; below this a write is one or a few notes and the hand-off costs more than it saves
KEEP_MAX = 8192  # vectors kept for the index (~16 MB at 512 dims, while a bulk write is between scan and store)

_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_kept: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
CACHE_ENTRIES = 8192  # vectors of texts up to CACHE_MAX_CHARS, by (model, text): ~16 MB at 512 dims
CACHE_MAX_CHARS = 4000  # longer texts are kept only until the index takes them
_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_kept_lock = threading.Lock()


def embed_each(embedder: Any, texts: Sequence[str], keep: Collection[str] = ()) -> list[np.ndarray]:
    """Each text through ``embedder`` on its own (float32 rows, in order), cached texts first. Many texts run on
    THREADS threads (onnxruntime releases the GIL); a text's vector does not depend on the thread. Texts in
    ``keep`` are kept for ``take`` under the embedder's model_id."""
    texts = list(texts)
    model = str(embedder.model_id)
    cached = getattr(embedder, "deterministic", False) is True
    with _kept_lock:
        vectors: list[np.ndarray | None] = [_cache.get((model, t)) if cached else None for t in texts]
        for t, v in zip(texts, vectors):
            if v is not None:
                _cache.move_to_end((model, t))
    todo = list(dict.fromkeys(t for t, v in zip(texts, vectors) if v is None))
    if todo:
        embed = embedder.embed
        if len(todo) < PARALLEL_FROM:
            fresh = [np.asarray(embed([t])[0], dtype=np.float32) for t in todo]
        else:
            fresh = list(_executor().map(lambda t: np.asarray(embed([t])[0], dtype=np.float32), todo, chunksize=16))
        made = dict(zip(todo, fresh))
        with _kept_lock:
            for t, v in made.items():
                if cached and len(t) <= CACHE_MAX_CHARS:
                    v.flags.writeable = False  # shared by every caller that embeds the same text
                    _cache[(model, t)] = v
            while len(_cache) > CACHE_ENTRIES:
                _cache.popitem(last=False)
        vectors = [v if v is not None else made[t] for t, v in zip(texts, vectors)]
    if keep:
        with _kept_lock:
            for t, v in zip(texts, vectors):
                if t in keep and not (cached and len(t) <= CACHE_MAX_CHARS):  # those stay in the cache
                    _kept[(model, t)] = v
                    _kept.move_to_end((model, t))
            while len(_kept) > KEEP_MAX:
                _kept.popitem(last=False)
    return vectors


def take(model_id: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """The kept (or cached) vectors of these texts under ``model_id``, by text; kept ones leave the keep."""
    found: dict[str, np.ndarray] = {}
    with _kept_lock:
        for t in texts:
            v = _kept.pop((model_id, t), None)
            if v is None:
                v = _cache.get((model_id, t))
            if v is not None:
                found[t] = v
    return found


def embed_alone(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    """(len(texts), dim) float32: each text alone, the kept vectors of the embedder's model used first."""
    texts = list(texts)
    out = np.zeros((len(texts), int(embedder.dim)), dtype=np.float32)
    if not texts:
        return out
    known = take(str(embedder.model_id), texts)
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    known.update(zip(missing, embed_each(embedder, missing)))
    for i, t in enumerate(texts):
        out[i] = known[t]
    return out


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(THREADS, thread_name_prefix="echo_duck-embed")
        return _pool
