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
_kept_lock = threading.Lock()


def embed_each(embedder: Any, texts: Sequence[str], keep: Collection[str] = ()) -> list[np.ndarray]:
    """Each text through ``embedder`` on its own (float32 rows, in order). Many texts run on THREADS threads
    (onnxruntime releases the GIL); a text's vector does not depend on the thread. Texts in ``keep`` are
    kept for ``take`` under the embedder's model_id."""
    texts = list(texts)
    embed = embedder.embed
    if len(texts) < PARALLEL_FROM:
        vectors = [np.asarray(embed([t])[0], dtype=np.float32) for t in texts]
    else:
        vectors = list(_executor().map(lambda t: np.asarray(embed([t])[0], dtype=np.float32), texts, chunksize=16))
    if keep:
        model = str(embedder.model_id)
        with _kept_lock:
            for t, v in zip(texts, vectors):
                if t in keep:
                    _kept[(model, t)] = v
                    _kept.move_to_end((model, t))
            while len(_kept) > KEEP_MAX:
                _kept.popitem(last=False)
    return vectors


def take(model_id: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """The kept vectors of these texts under ``model_id`` (removed from the keep), by text."""
    found: dict[str, np.ndarray] = {}
    with _kept_lock:
        for t in texts:
            v = _kept.pop((model_id, t), None)
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
