"""The measuring harness, run once per (system, size) in its own process, and the numpy floor.

    python -m echo_duck.bench.peers <echo_duck|lancedb|sqlite|numpy|lifecycle> <size> <out> [--repeats 3]

prints one JSON line. Every system goes through ``measure`` with the same data and vectors:
ingest in batches of ``perf.BATCH`` with precomputed vectors (segmentation of the text is part of
ingest for every system), build its indexes, warm up, then time each query ``repeats`` times with
the query vector given (embedding excluded) and embedded inside the timed region (included), then
append ``perf.extra_rows(size)`` new rows with the real model in the loop (ingest with embedding).

The peers get text pre-segmented by ``echo_duck.text.segment.segment`` (jieba for Chinese, lower-cased words
otherwise) with echo_duck's bilingual stop words removed, so their keyword arm handles Chinese; each
arm hands ``POOL`` candidates to reciprocal rank fusion (k = 60), as echo_duck's defaults do.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from ..text.segment import segment
from . import perf, perf_system
from .peer_text import POOL, rrf, tokens

WARMUP = 5


class System(Protocol):
    name: str

    def ingest(self, records: Sequence[dict], vectors: np.ndarray | None) -> None: ...
    def build_index(self) -> None: ...
    def variants(self) -> dict[str, Callable[[str, np.ndarray], list]]: ...
    def disk_bytes(self) -> int | None: ...
    def close(self) -> None: ...


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure(system: System, ds: perf.Dataset, model: Any, repeats: int, baseline_mb: float,
            progress: Callable[[str], None]) -> dict:
    out: dict[str, Any] = {"system": system.name, "size": ds.size}
    started = time.perf_counter()
    for i in range(0, ds.size, perf.BATCH):
        system.ingest(ds.records[i:i + perf.BATCH], ds.vectors[i:i + perf.BATCH])
        if (i // perf.BATCH) % 10 == 9:
            progress(f"ingested {i + perf.BATCH:,}/{ds.size:,}")
    ingest_s = time.perf_counter() - started
    out["ingest_s"] = round(ingest_s, 2)
    out["ingest_rows_per_s"] = round(ds.size / ingest_s)
    started = time.perf_counter()
    system.build_index()
    out["index_build_s"] = round(time.perf_counter() - started, 3)
    out["disk_mb"] = None if system.disk_bytes() is None else round(system.disk_bytes() / 1e6, 1)
    progress("timing queries")
    variants = system.variants()
    for fn in variants.values():  # warm-up: caches, lazily loaded matrices, query plans
        for q, v in zip(ds.queries[:WARMUP], ds.query_vectors):
            fn(q.text, v)
            fn(q.text, model.embed([q.text])[0])
    samples = {name: {"excluded": [], "included": [], "hits": [], "by_kind": defaultdict(list)} for name in variants}
    gc.collect()
    for _ in range(repeats):
        for q, v in zip(ds.queries, ds.query_vectors):
            for name, fn in variants.items():
                s = samples[name]
                t = time.perf_counter()
                hits = fn(q.text, v)
                s["excluded"].append(time.perf_counter() - t)
                s["by_kind"][q.kind].append(s["excluded"][-1])
                s["hits"].append(len(hits))
                t = time.perf_counter()
                fn(q.text, model.embed([q.text])[0])
                s["included"].append(time.perf_counter() - t)
    out["variants"] = {
        name: {"excluded": perf.percentiles(s["excluded"]), "included": perf.percentiles(s["included"]),
               "mean_hits": round(float(np.mean(s["hits"])), 2),
               "p50_ms_by_kind": {kind: perf.percentiles(v)["p50_ms"] for kind, v in s["by_kind"].items()}}
        for name, s in samples.items()}
    if hasattr(system, "extras"):
        progress("per-stage breakdown")
        out.update(system.extras(ds, model, repeats))
    started = time.perf_counter()
    system.ingest(ds.extra, None)  # the system (or the harness' model) embeds these rows
    out["ingest_with_embedding_rows_per_s"] = round(len(ds.extra) / (time.perf_counter() - started))
    long = perf.long_records()
    started = time.perf_counter()
    system.ingest(long, None)  # ~500-character memories: the embedder's cost grows with the characters
    out["ingest_long_with_embedding_rows_per_s"] = round(len(long) / (time.perf_counter() - started))
    out["baseline_rss_mb"] = round(baseline_mb)
    out["peak_rss_mb"] = round(peak_rss_mb())
    system.close()
    return out


# -- the floor: numpy exact dot product + an in-memory BM25, no persistence ---------------------------

class NumpyFloor:
    """What hybrid search costs with nothing in the way: a float32 matrix and BM25 postings in dicts."""

    name = "numpy"
    K1, B = 1.2, 0.75

    def __init__(self, workdir: Path, model: Any):
        self.model = model
        self.contents: list[str] = []
        self.docs: list[list[str]] = []
        self.parts: list[np.ndarray] = []
        self.matrix = np.zeros((0, model.dim), dtype=np.float32)
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def ingest(self, records: Sequence[dict], vectors: np.ndarray | None) -> None:
        texts = [r["content"] for r in records]
        self.parts.append(self.model.embed(texts) if vectors is None else np.asarray(vectors, dtype=np.float32))
        self.contents.extend(texts)
        self.docs.extend(tokens(t) for t in texts)

    def build_index(self) -> None:
        self.matrix = np.concatenate([self.matrix, *self.parts]) if self.parts else self.matrix
        self.parts = []
        tf: dict[str, dict[int, int]] = defaultdict(dict)
        for doc, toks in enumerate(self.docs):
            for t in toks:
                tf[t][doc] = tf[t].get(doc, 0) + 1
        self.postings = {t: (np.fromiter(d.keys(), np.int64, len(d)), np.fromiter(d.values(), np.float32, len(d)))
                         for t, d in tf.items()}
        self.doc_len = np.array([len(d) for d in self.docs], dtype=np.float32)
        self.avgdl = float(self.doc_len.mean()) if len(self.docs) else 0.0

    def bm25(self, query: str, n: int) -> np.ndarray:
        found = [self.postings[t] for t in set(tokens(query)) if t in self.postings]
        if not found:
            return np.zeros(0, dtype=np.int64)
        scores, total = np.zeros(len(self.docs), dtype=np.float32), len(self.docs)
        for docs, tfs in found:
            idf = math.log(1 + (total - len(docs) + 0.5) / (len(docs) + 0.5))
            norm = tfs + self.K1 * (1 - self.B + self.B * self.doc_len[docs] / self.avgdl)
            scores[docs] += idf * tfs * (self.K1 + 1) / norm
        matched = np.unique(np.concatenate([docs for docs, _ in found]))
        top = matched[np.argsort(-scores[matched], kind="stable")[:n]]
        return top

    def knn(self, vector: np.ndarray, n: int) -> np.ndarray:
        sims = self.matrix @ vector
        top = np.argpartition(-sims, n - 1)[:n] if n < len(sims) else np.arange(len(sims))
        return top[np.argsort(-sims[top], kind="stable")]

    def variants(self) -> dict[str, Callable[[str, np.ndarray], list]]:
        def hybrid(query: str, vector: np.ndarray) -> list:
            fused = rrf(self.knn(vector, POOL).tolist(), self.bm25(query, POOL).tolist())[:perf.K]
            return [(i, self.contents[i], score) for i, score in fused]
        return {"hybrid": hybrid}

    def disk_bytes(self) -> None:
        return None

    def close(self) -> None:
        self.matrix = np.zeros((0, 0), dtype=np.float32)


def _system(name: str, workdir: Path, model: Any) -> System:
    if name == "echo_duck":
        return perf_system.EchoDuckSystem(workdir, model)
    if name == "lancedb":
        from .peers_lancedb import LanceDbSystem
        return LanceDbSystem(workdir, model)
    if name == "sqlite":
        from .peers_sqlite import SqliteVecSystem
        return SqliteVecSystem(workdir, model)
    if name == "numpy":
        return NumpyFloor(workdir, model)
    raise SystemExit(f"unknown system {name!r}; choose from {', '.join(perf.SYSTEMS)}, lifecycle")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m echo_duck.bench.peers", description=__doc__.splitlines()[0])
    parser.add_argument("system")
    parser.add_argument("size", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model-id", help="Refuse to run if the default model is not this one.")
    args = parser.parse_args(argv)
    workdir = args.out / "stores" / f"{args.system}_{args.size}"
    if workdir.exists():
        import shutil
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    progress = lambda msg: print(f"  {args.size:,} {args.system}: {msg}", file=sys.stderr, flush=True)  # noqa: E731
    if args.system == "lifecycle":
        from .lifecycle_bench import measure as lifecycle
        result = lifecycle(args.size, workdir=workdir)
        result["peak_rss_mb"] = round(peak_rss_mb())
    else:
        from ..embed.embedder import default_embedder
        model = default_embedder()
        if model is None or (args.model_id and model.model_id != args.model_id):
            raise SystemExit(f"the default embedding model is {getattr(model, 'model_id', None)}, expected {args.model_id}")
        ds = perf.load_dataset(args.out, args.size, model.model_id)
        segment("预热 warm up")  # load jieba's dictionary outside the timed regions, as in a running agent
        model.embed(["warm up"])
        system = _system(args.system, workdir, model)
        result = measure(system, ds, model, args.repeats, rss_mb(), progress)
    print(json.dumps(result, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
