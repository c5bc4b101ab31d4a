"""Embeddings: the Embedder protocol, the packaged ONNX models, and a hash embedder for tests.

Every vector echo_duck stores is stamped with its embedder's ``model_id``; rows whose model_id is
not the current one are re-embedded. Models are loaded lazily (nothing heavy is imported with this
module) and once per process through ``embedder_by_name``, because creating a session costs ~0.4 s.

    emb = default_embedder()                # USE-multilingual, or None when it is not installed
    vectors = emb.embed(["User prefers answers in Chinese", "用户喜欢用中文回答"])   # (2, 512)
"""

from __future__ import annotations

import random
import re
import threading
import time
import unicodedata
import zlib
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from echo_duck.embed.models import (
    MINILM_FILE,
    USE_FILE,
    USE_INSTALL,
    UseMultilingualEmbedder,
    check_texts,
    l2_normalize,
    locate,
    positive_int,
)
from echo_duck.embed.onnx_folder import MiniLMEmbedder, OnnxEmbedder
from echo_duck.errors import InvalidInput

__all__ = [
    "Embedder",
    "HashEmbedder",
    "MiniLMEmbedder",
    "OnnxEmbedder",
    "UseMultilingualEmbedder",
    "MODEL_INSTALL_HINT",
    "default_embedder",
    "embedder_by_name",
    "measure_throughput",
    "model_status",
]

#: The command that installs the default (multilingual) model.
MODEL_INSTALL_HINT = USE_INSTALL


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors. ``model_id`` names the vector space: two embedders with
    the same model_id must give comparable vectors."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dim), rows L2-normalised; (0, dim) for no texts."""
        ...


# Hiragana, katakana, CJK ideographs (and extension A, compatibility), Hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_RUN = re.compile(rf"[{_CJK}]+")


class HashEmbedder:
    """A fast, deterministic stand-in for a real model, for unit tests (no model file, no ONNX).

    Feature hashing of lower-cased words, character trigrams of words, and CJK character
    unigrams + bigrams (so Chinese texts sharing words come out similar) into ``dim`` signed
    buckets with CRC-32, which, unlike ``hash()``, is the same in every process. Texts sharing
    words get high cosines; it knows nothing about meaning or translation.
    """

    def __init__(self, dim: int = 64):
        self.dim = positive_int("dim", dim)
        self.model_id = f"hash-{self.dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text; an empty or blank text gives a zero row."""
        texts = check_texts(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in self._features(text):
                h = zlib.crc32(feature.encode("utf-8"))
                out[row, h % self.dim] += weight if h & 0x80000000 else -weight
        return l2_normalize(out)

    @staticmethod
    def _features(text: str) -> list[tuple[str, float]]:
        text = unicodedata.normalize("NFKC", text).lower()
        features: list[tuple[str, float]] = []
        for token in _TOKEN.findall(text):
            if _CJK_RUN.fullmatch(token):
                features += [("c:" + ch, 0.5) for ch in token]
                features += [("b:" + token[i : i + 2], 1.0) for i in range(len(token) - 1)]
            else:
                features.append(("w:" + token, 1.0))
                padded = f"<{token}>"
                features += [("t:" + padded[i : i + 3], 0.3) for i in range(len(padded) - 2)]
        if not features and text.strip():  # punctuation or symbols only: still tell texts apart
            features.append(("r:" + text.strip(), 1.0))
        return features

    def __repr__(self) -> str:
        return f"HashEmbedder(dim={self.dim})"


# name -> canonical name; every model_id this module produces is accepted too, so a stored
# model_id can be turned back into its embedder.
_ALIASES = {
    "use": "use",
    "use-multilingual": "use",
    UseMultilingualEmbedder.model_id: "use",
    "minilm": "minilm",
    "all-minilm-l6-v2": "minilm",
    MiniLMEmbedder.model_id: "minilm",
    "hash": "hash",
    "none": "none",
}
_HASH_ID = re.compile(r"hash-(\d+)")
_cache: dict[tuple, Embedder] = {}
_cache_lock = threading.Lock()


def embedder_by_name(name: str, threads: int = 1, batch_size: int = 32) -> Embedder | None:
    """The embedder called ``name``, created once per (name, threads, batch_size) per process.

    Names: "use-multilingual" (or "use"), "minilm", "hash" (64-d) or "hash-<dim>", "none" (returns
    None), any model_id listed by ``model_status()``, or the path of a model of your own: a folder with an
    ONNX export and its tokenizer.json (``OnnxEmbedder``). Unknown names raise InvalidInput; a model
    that is not installed raises EchoDuckError with the pip command that installs it.
    """
    if not isinstance(name, str):
        raise InvalidInput(f"embedder name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    dim = 64
    if match := _HASH_ID.fullmatch(key):
        key, dim = "hash", int(match.group(1))
    canonical = _ALIASES.get(key)
    if canonical is None and _is_path(name):
        path = str(Path(name).expanduser().resolve())
        with _cache_lock:
            if ("onnx", path, threads, batch_size) not in _cache:
                _cache[("onnx", path, threads, batch_size)] = OnnxEmbedder(path, threads=threads, batch_size=batch_size)
            return _cache[("onnx", path, threads, batch_size)]
    if canonical is None:
        known = "use-multilingual (use), minilm, hash, hash-<dim>, none, or a model folder's path"
        raise InvalidInput(f"unknown embedder {name!r}; choose one of: {known}")
    if canonical == "none":
        return None
    cache_key = ("hash", dim, 0) if canonical == "hash" else (canonical, threads, batch_size)
    with _cache_lock:  # one session per key, even when two threads ask at once
        if cache_key not in _cache:
            _cache[cache_key] = _create(canonical, dim, threads, batch_size)
        return _cache[cache_key]


def _is_path(name: str) -> bool:
    """Whether ``name`` names a model on disk rather than a packaged one (a separator, ~, or an .onnx file)."""
    return "/" in name or "\\" in name or name.startswith("~") or name.endswith(".onnx") or Path(name).is_dir()


def _create(canonical: str, dim: int, threads: int, batch_size: int) -> Embedder:
    if canonical == "use":
        return UseMultilingualEmbedder(threads=threads, batch_size=batch_size)
    if canonical == "minilm":
        return MiniLMEmbedder(threads=threads, batch_size=batch_size)
    return HashEmbedder(dim=dim)


def default_embedder(threads: int = 1) -> Embedder | None:
    """USE-multilingual (cached) when it is installed, else None; never raises for "not installed".

    A model file that is present but fails to load still raises EchoDuckError: that is a broken
    install, not a missing one.
    """
    path, _ = locate(USE_FILE)
    if path is None:
        return None
    return embedder_by_name("use-multilingual", threads=threads)


def model_status() -> dict[str, dict]:
    """Which embedders can run here, without loading any model.

    One entry per name accepted by ``embedder_by_name``: model_id, dim, available, default, path,
    problem (why it is unavailable) and fix (the exact pip command, or None when available);
    ``install`` always holds the command.
    """
    status: dict[str, dict] = {}
    for name, cls, model in (
        ("use-multilingual", UseMultilingualEmbedder, USE_FILE),
        ("minilm", MiniLMEmbedder, MINILM_FILE),
    ):
        path, problem = locate(model)
        status[name] = {
            "model_id": cls.model_id,
            "dim": cls.dim,
            "available": path is not None,
            "default": name == "use-multilingual",
            "path": str(path) if path else None,
            "problem": problem,
            "install": model.install,
            "fix": None if path else model.install,
        }
    status["hash"] = {
        "model_id": "hash-64",
        "dim": 64,
        "available": True,
        "default": False,
        "path": None,
        "problem": None,
        "install": None,
        "fix": None,
    }
    return status


_SUBJECTS = ["The user", "Our agent", "The project", "My manager", "This service", "The CI job", "用户", "项目"]
_VERBS = ["prefers", "needs", "stores", "deploys", "answers with", "was moved to", "reviews", "喜欢"]
_OBJECTS = [
    "answers in Chinese", "a nightly backup of the DuckDB file", "short replies without emojis",
    "the staging cluster in Frankfurt", "Python 3.11 and pytest", "用中文回答问题", "每周五的例会",
    "the API key rotation procedure", "vector search over long-term memories", "dark mode in the editor",
]
_TAILS = ["", "", " since last March", " because the old one kept failing", " 以后也一样", " (confirmed twice)"]


def _sample_sentences(n: int) -> list[str]:
    """``n`` varied, memory-like sentences (English and Chinese), the same on every run."""
    rng = random.Random(20240601)
    return [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}{rng.choice(_TAILS)} #{i}"
        for i in range(n)
    ]


def measure_throughput(embedder: Embedder, n: int = 2000, batch_size: int = 32) -> dict:
    """Sentences per second, one at a time and in calls of ``batch_size`` texts, for ``echo-duck bench``.

    The embedder may split a call further by its own ``batch_size``. Returns model_id, dim,
    threads, n, batch_size, single_per_s, batched_per_s, single_s and batched_s.
    """
    positive_int("n", n)
    positive_int("batch_size", batch_size)
    texts = _sample_sentences(n)
    embedder.embed(texts[:batch_size])  # warm up: first runs allocate
    start = time.perf_counter()
    for text in texts:
        embedder.embed([text])
    single = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(0, n, batch_size):
        embedder.embed(texts[i : i + batch_size])
    batched = time.perf_counter() - start
    return {
        "model_id": embedder.model_id,
        "dim": embedder.dim,
        "threads": getattr(embedder, "threads", None),
        "n": n,
        "batch_size": batch_size,
        "single_per_s": round(n / single, 1),
        "batched_per_s": round(n / batched, 1),
        "single_s": round(single, 3),
        "batched_s": round(batched, 3),
    }
