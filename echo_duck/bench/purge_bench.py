"""Time a privacy purge (SPEC T5) on stores of a given size: the database part (one transaction) and
the file rewrite that leaves no byte of the text (lifecycle/erasure.py), which dominates and grows with
the file.

Each store is written through the ordinary write path (remember_many in batches, so postings, vectors
of ``dim`` floats from the deterministic hash embedder, events and their hash chain are all there),
then ``purges`` memories are purged one by one, each rewriting the file.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from ..lifecycle import erasure
from ..store.facade import EchoDuck

BATCH = 2000


def measure(size: int, *, purges: int = 3, dim: int = 512, workdir: Path | None = None) -> dict:
    workdir = Path(workdir or tempfile.mkdtemp(prefix="echo_duck_purge_"))
    path = workdir / f"purge_{size}.duckdb"
    for leftover in (path, Path(f"{path}.wal")):
        leftover.unlink(missing_ok=True)
    report: dict = {"size": size, "dim": dim}
    with EchoDuck(path, agent_id="bench", embedder=f"hash-{dim}", admin=True) as mem:
        started = time.perf_counter()
        ids = []
        for start in range(0, size, BATCH):
            rows = [{"content": f"synthetic memory {i} about deploys, builds and the staging database",
                     "type": "environment", "source_session": f"s{i // 20}"} for i in range(start, min(size, start + BATCH))]
            ids += [m.id for m in mem.remember_many(rows)]
        report["fill_s"] = round(time.perf_counter() - started, 1)
        report["file_mb"] = round(path.stat().st_size / 2**20, 1)
        database, rewrite, total = [], [], []
        finish = erasure.finish_pending
        for n in range(purges):
            timings: dict = {}

            def timed_finish(*args, **kwargs):
                started_rewrite = time.perf_counter()
                result = finish(*args, **kwargs)
                timings["rewrite"] = time.perf_counter() - started_rewrite
                return result

            erasure.finish_pending = timed_finish
            try:
                started = time.perf_counter()
                mem.forget(ids[n * (size // purges)], "benchmark purge", purge=True)
                total.append(time.perf_counter() - started)
            finally:
                erasure.finish_pending = finish
            rewrite.append(timings["rewrite"])
            database.append(total[-1] - timings["rewrite"])
        report["purge_s"] = [round(t, 2) for t in total]
        report["purge_database_s"] = [round(t, 3) for t in database]
        report["purge_rewrite_s"] = [round(t, 2) for t in rewrite]
        report["file_mb_after"] = round(path.stat().st_size / 2**20, 1)
        report["chain_ok"] = mem.verify_events().ok
    return report
