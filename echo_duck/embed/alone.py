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

A bulk write starts the model early (``embed_soon``): the scanner hands the pool the texts it will read
before its rules run, and the stored texts it will keep after them, so the model (which releases the GIL)
runs while the rules and the database work in Python. ``embed_each`` given those futures waits for them, and
``take`` waits for a kept text still in the pool, instead of embedding the text a second time.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections import OrderedDict
from typing import Any, Collection, Mapping, Sequence

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
_pending: dict[tuple[str, str], concurrent.futures.Future] = {}  # kept texts still in the pool (embed_soon)


def embed_each(embedder: Any, texts: Sequence[str], keep: Collection[str] = (),
               soon: Mapping[str, concurrent.futures.Future] | None = None) -> list[np.ndarray]:
    """Each text through ``embedder`` on its own (float32 rows, in order), cached texts first. Many texts run on
    THREADS threads (onnxruntime releases the GIL; two threads run two sessions, models.LazySession); a text's
    vector does not depend on the thread. Texts in ``keep`` are kept for ``take`` under the embedder's model_id.
    ``soon``: futures from ``embed_soon`` of this embedder, by text; those texts are waited for, not embedded
    again."""
    texts = list(texts)
    model = str(embedder.model_id)
    cached = getattr(embedder, "deterministic", False) is True
    with _kept_lock:
        vectors: list[np.ndarray | None] = [_cache.get((model, t)) if cached else None for t in texts]
        for t, v in zip(texts, vectors):
            if v is not None:
                _cache.move_to_end((model, t))
    if soon:
        vectors = [soon[t].result() if v is None and t in soon else v for t, v in zip(texts, vectors)]
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
                _remember(model, t, v, cached, False)
            _trim()
        vectors = [v if v is not None else made[t] for t, v in zip(texts, vectors)]
    if keep:
        with _kept_lock:
            for t, v in zip(texts, vectors):
                if t in keep and not (cached and len(t) <= CACHE_MAX_CHARS):  # those stay in the cache
                    _kept[(model, t)] = v
                    _kept.move_to_end((model, t))
            _trim()
    return vectors


def embed_soon(embedder: Any, texts: Sequence[str], keep: Collection[str] = ()) -> dict[str, concurrent.futures.Future]:
    """Start embedding ``texts`` (each alone, in order) on the pool and return at once: a future per text, by text,
    for ``embed_each(..., soon=...)``. Texts in ``keep`` are kept for ``take`` when they are done (in the keep,
    whatever their length), and ``take`` waits for one still in the pool. Only for a deterministic embedder (the shipped models):
    for another, nothing starts and the result is empty."""
    if getattr(embedder, "deterministic", False) is not True:
        return {}
    model = str(embedder.model_id)
    pool = _executor()
    out: dict[str, concurrent.futures.Future] = {}
    with _kept_lock:
        for t in dict.fromkeys(texts):
            if (model, t) in _pending:
                out[t] = _pending[(model, t)]
                continue
            if (v := _cache.get((model, t))) is not None:
                out[t] = done = concurrent.futures.Future()
                done.set_result(v)
                continue
            out[t] = future = pool.submit(_embed_one, embedder, model, t, t in keep)
            if t in keep:
                _pending[(model, t)] = future
    return out


def _embed_one(embedder: Any, model: str, text: str, keep: bool) -> np.ndarray:
    try:
        v = np.asarray(embedder.embed([text])[0], dtype=np.float32)
    except BaseException:
        with _kept_lock:
            _pending.pop((model, text), None)
        raise
    with _kept_lock:
        _remember(model, text, v, True, False)
        if keep:  # kept until taken, even when the cache (which the rest of the batch fills) has let it go
            _kept[(model, text)] = v
            _kept.move_to_end((model, text))
        _pending.pop((model, text), None)
        _trim()
    return v


def _remember(model: str, text: str, v: np.ndarray, cached: bool, keep: bool) -> None:
    """Under _kept_lock: a fresh vector into the cache (short texts of a deterministic model) or the keep."""
    if cached and len(text) <= CACHE_MAX_CHARS:
        v.flags.writeable = False  # shared by every caller that embeds the same text
        _cache[(model, text)] = v
        _cache.move_to_end((model, text))
    elif keep:
        _kept[(model, text)] = v
        _kept.move_to_end((model, text))


def _trim() -> None:
    while len(_cache) > CACHE_ENTRIES:
        _cache.popitem(last=False)
    while len(_kept) > KEEP_MAX:
        _kept.popitem(last=False)


def take(model_id: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """The kept (or cached) vectors of these texts under ``model_id``, by text; kept ones leave the keep. A kept text
    still in the pool (``embed_soon``) is waited for."""
    found: dict[str, np.ndarray] = {}
    with _kept_lock:
        waiting = {t: f for t in texts if (f := _pending.get((model_id, t))) is not None}
    for f in waiting.values():
        concurrent.futures.wait([f])
    with _kept_lock:
        for t in texts:
            v = _kept.pop((model_id, t), None)
            if v is None:
                v = _cache.get((model_id, t))
            if v is None and t in waiting and not waiting[t].exception():
                v = waiting[t].result()
            if v is not None:
                found[t] = v
    return found


def forget() -> None:
    """Drop the cached vectors (not the kept ones an index has yet to take): a benchmark times the model, not the cache."""
    with _kept_lock:
        _cache.clear()


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
