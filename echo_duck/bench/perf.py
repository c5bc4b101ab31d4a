"""Speed of echo_duck itself: ingest, recall latency (query embedding excluded and included), file size.

The side-by-side comparison with other stores builds on these measurements (same data, same vectors).
"""

from __future__ import annotations

import os
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable


from ..store import EchoDuck
from . import synthetic


def percentiles(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    pick = lambda p: ms[min(len(ms) - 1, int(round(p / 100 * (len(ms) - 1))))]  # noqa: E731
    return {"p50_ms": round(statistics.median(ms), 2), "p95_ms": round(pick(95), 2), "p99_ms": round(pick(99), 2)}


def measure(size: int, *, workdir: Path | None = None, repeats: int = 3, batch: int = 2000,
            progress: Callable[[str], None] | None = None) -> dict:
    """Build a store of ``size`` synthetic memories and time what an agent does with it."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix="echo_duck_bench_"))
    path = workdir / f"perf_{size}.duckdb"
    for leftover in (path, Path(f"{path}.wal")):
        leftover.unlink(missing_ok=True)
    records = synthetic.memories(size)
    queries = synthetic.queries(40)
    report: dict = {"size": size}
    with EchoDuck(path, agent_id="bench") as mem:
        started = time.perf_counter()
        for i in range(0, size, batch):
            mem.remember_many(records[i:i + batch])
            if progress:
                progress(f"ingested {min(i + batch, size)}/{size}")
        report["ingest_rows_per_s"] = round(size / (time.perf_counter() - started))
        started = time.perf_counter()
        mem.indexer.keyword.compact()
        report["compact_s"] = round(time.perf_counter() - started, 2)
        vectors = mem.indexer.vectors
        qvecs = vectors.embed([q.text for q in queries]) if vectors is not None else [None] * len(queries)
        for q, v in zip(queries[:5], qvecs):  # warm-up: loads the in-process vector matrix
            mem.recall(q.text, 10, reinforce=False, query_vector=v)
        excluded, included, filtered = [], [], []
        for _ in range(repeats):
            for q, v in zip(queries, qvecs):
                t = time.perf_counter()
                mem.recall(q.text, 10, query_vector=v)
                excluded.append(time.perf_counter() - t)
                t = time.perf_counter()
                mem.recall(q.text, 10, reinforce=False)
                included.append(time.perf_counter() - t)
                t = time.perf_counter()
                mem.recall(q.text, 10, types=["environment", "user"], reinforce=False, query_vector=v)
                filtered.append(time.perf_counter() - t)
        report["recall_excluding_embedding"] = percentiles(excluded)
        report["recall_including_embedding"] = percentiles(included)
        report["recall_filtered_sql_exact"] = percentiles(filtered)
    report["file_mb"] = round(os.path.getsize(path) / 1e6, 1)
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return report
