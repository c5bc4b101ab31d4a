"""Time the nightly lifecycle jobs (decay, archive export) over a store of synthetic rows."""

from __future__ import annotations

import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from ..store.facade import EchoDuck


def measure(size: int, *, workdir: Path | None = None, now: datetime = datetime(2026, 12, 1)) -> dict:
    workdir = Path(workdir or tempfile.mkdtemp(prefix="echo_duck_lifecycle_"))
    path = workdir / f"lifecycle_{size}.duckdb"
    for leftover in (path, Path(f"{path}.wal")):
        leftover.unlink(missing_ok=True)
    report: dict = {"size": size}
    clock = [now]
    with EchoDuck(path, agent_id="bench", now=lambda: clock[0], embedder="none", admin=True) as mem:
        started = time.perf_counter()
        with mem.db.transaction("benchmark fill"):
            mem.db.run("bench_fill_memories", n=size, now=now)
        report["fill_s"] = round(time.perf_counter() - started, 2)
        started = time.perf_counter()
        decayed = mem.decay()
        report["decay_s"] = round(time.perf_counter() - started, 2)
        report["archived_by_decay"] = decayed.archived
        clock[0] = now + timedelta(days=1)  # what decay archived is now a day old
        started = time.perf_counter()
        exported = mem.archive(older_than_days=1 / 24)
        report["archive_export_s"] = round(time.perf_counter() - started, 2)
        report["exported_to_parquet"] = exported.exported
        report["decay_plus_archive_s"] = round(report["decay_s"] + report["archive_export_s"], 2)
    return report
