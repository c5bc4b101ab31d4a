"""`echo-duck bench perf`: echo_duck side by side with LanceDB, sqlite-vec + FTS5 and a numpy floor.

Same machine, same run, same data (``synthetic.memories``, ~60% EN / 40% ZH), same vectors (the
default model embeds every text once; the vectors are cached as .npy in the out dir, keyed by model
id and size) and the same k = 10. Each (system, size) is measured in its own subprocess
(``python -m echo_duck.bench.peers <system> <size> <out>``), so its peak RSS is its own; the harness
that times every system is ``peers.measure``. echo_duck gets the precomputed vectors through
``perf_system.PrecomputedEmbedder``: the store still embeds on write, but its embedder looks the texts up (a text the
write scanner already embedded as it is stores the scanner's vector of it, embed/alone.py: counted apart).

Cost of a run on 2 cores: --sizes 10k,100k takes a few minutes once the vectors are cached (the first
run also embeds 112k texts, ~1.5 min at ~1,300 texts/s). 1M is allowed but slow: embedding 1M texts
~13 min (once; a 2 GB cache file), echo_duck ingest ~15 min at ~1,200 rows/s (write scanner, versioning
check and BM25 postings on every row), each peer ~3-5 min to ingest, sqlite-vec ~1.5 s per query
(exact KNN over 1M rows) and ~3 GB RSS per child: plan for about an hour.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import EchoDuckError, InvalidInput
from . import synthetic

K = 10
N_QUERIES = 40
BATCH = 2000  # rows per write call, for every system
EXTRA_ROWS = 2000  # at most this many rows appended with the real model in the loop: "ingest with embedding"
SYSTEMS = ("echo_duck", "lancedb", "sqlite", "numpy")
REQUIRES = {"lancedb": ("lancedb",), "sqlite": ("sqlite_vec", "pysqlite3")}
BENCH_INSTALL = 'pip install "echo-duck[bench]"'


def parse_sizes(spec: str) -> list[int]:
    """'10k,100k,1M' -> [10000, 100000, 1000000]."""
    sizes = []
    for part in (p.strip().lower() for p in str(spec).split(",") if p.strip()):
        scale = {"k": 1_000, "m": 1_000_000}.get(part[-1], 1)
        try:
            value = int(float(part[:-1] if scale > 1 else part) * scale)
        except ValueError:
            raise InvalidInput(f"--sizes: {part!r} is not a size; write e.g. 10k,100k,1M") from None
        if value < 100:
            raise InvalidInput(f"--sizes: {part!r} is too small; use at least 100 rows")
        sizes.append(value)
    if not sizes:
        raise InvalidInput("--sizes: give at least one size, e.g. 10k,100k")
    return sorted(set(sizes))


def extra_rows(size: int) -> int:
    """Rows appended with the model in the loop: a tenth of the store, 100 to EXTRA_ROWS."""
    return min(EXTRA_ROWS, max(100, size // 10))


LONG_ROWS = 200  # memories of ~500 characters appended with the real model: "ingest long texts with embedding"
LONG_CHARS = 500


def long_records(n: int = LONG_ROWS, chars: int = LONG_CHARS) -> list[dict]:
    """``n`` memories of about ``chars`` characters each: consecutive synthetic memories joined, so a long
    memory holds several facts (as a chat turn does), ~60% English, ~40% Chinese as the rest."""
    pool = synthetic.memories(n * 12, seed=11)
    out, parts, used = [], [], 0
    for record in pool:
        parts.append(record["content"])
        used += len(record["content"]) + 1
        if used >= chars:
            out.append({**record, "content": " ".join(parts)[:chars], "key": None})
            parts, used = [], 0
            if len(out) == n:
                break
    return out


def parse_systems(spec: str | Sequence[str]) -> list[str]:
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    unknown = [s for s in names if s not in SYSTEMS]
    if unknown or not names:
        raise InvalidInput(f"--systems: unknown {unknown or names}; choose from {', '.join(SYSTEMS)}")
    return [s for s in SYSTEMS if s in names]


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99 in ms (nearest rank; p50 is the median)."""
    ms = np.sort(np.asarray(samples, dtype=np.float64) * 1000)
    if len(ms) == 0:
        return {"p50_ms": None, "p95_ms": None, "p99_ms": None, "n": 0}
    pick = lambda p: float(ms[min(len(ms) - 1, int(round(p / 100 * (len(ms) - 1))))])  # noqa: E731
    return {"p50_ms": round(float(np.median(ms)), 3), "p95_ms": round(pick(95), 3), "p99_ms": round(pick(99), 3), "n": len(ms)}


# -- data: the same texts and vectors for every system -------------------------------------------

@dataclass
class Dataset:
    size: int
    model_id: str
    records: list[dict]  # remember_many records; "content" is what every system stores
    vectors: np.ndarray  # (size, dim) float32, row i = records[i]["content"]
    queries: list[synthetic.Query]
    query_vectors: np.ndarray
    extra: list[dict]  # extra_rows(size) rows appended with the real model in the loop (no precomputed vector)

    @property
    def texts(self) -> list[str]:
        return [r["content"] for r in self.records]


def _cache_paths(out: Path, model_id: str, name: str) -> tuple[Path, Path]:
    base = out / "embeddings" / f"{model_id}-{name}"
    return base.with_suffix(".npy"), base.with_suffix(".json")


def _digest(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8") + b"\0")
    return h.hexdigest()[:16]


def _cached(out: Path, model_id: str, name: str, texts: Sequence[str]) -> np.ndarray | None:
    npy, meta = _cache_paths(out, model_id, name)
    if npy.exists() and meta.exists() and json.loads(meta.read_text()).get("texts_sha256") == _digest(texts):
        return np.load(npy)
    return None


def _store(out: Path, model_id: str, name: str, texts: Sequence[str], vectors: np.ndarray) -> None:
    npy, meta = _cache_paths(out, model_id, name)
    npy.parent.mkdir(parents=True, exist_ok=True)
    np.save(npy, vectors.astype(np.float32, copy=False))
    meta.write_text(json.dumps({"texts_sha256": _digest(texts), "rows": len(texts), "model_id": model_id}))


def prepare(out: Path, sizes: Sequence[int], model: Any, progress: Callable[[str], None] | None = None) -> dict:
    """Embed the memories of every size (and the queries) once; reruns find them in out/embeddings.

    The generator is prefix-stable (memories(n) == memories(N)[:n]), so smaller sizes slice the
    largest array. Returns {name: seconds spent embedding, 0 when cached}.
    """
    spent: dict[str, float] = {}
    largest = max(sizes)
    texts = [r["content"] for r in synthetic.memories(largest)]
    vectors = _cached(out, model.model_id, str(largest), texts)
    if vectors is None:
        if progress:
            progress(f"embedding {largest:,} memories with {model.model_id} (once; cached in {out / 'embeddings'})")
        started = time.perf_counter()
        vectors = np.concatenate([model.embed(texts[i:i + 4096]) for i in range(0, largest, 4096)])
        spent[str(largest)] = round(time.perf_counter() - started, 1)
        _store(out, model.model_id, str(largest), texts, vectors)
    for size in sizes:
        if size != largest and _cached(out, model.model_id, str(size), texts[:size]) is None:
            _store(out, model.model_id, str(size), texts[:size], vectors[:size])
    qtexts = [q.text for q in synthetic.queries(N_QUERIES)]
    if _cached(out, model.model_id, f"queries{N_QUERIES}", qtexts) is None:
        _store(out, model.model_id, f"queries{N_QUERIES}", qtexts, model.embed(qtexts))
    return spent


def load_dataset(out: Path, size: int, model_id: str) -> Dataset:
    """What a measuring subprocess reads: records regenerated from the seed, vectors from the cache."""
    both = synthetic.memories(size + extra_rows(size))
    records, extra = both[:size], both[size:]
    queries = synthetic.queries(N_QUERIES)
    vectors = _cached(out, model_id, str(size), [r["content"] for r in records])
    qvectors = _cached(out, model_id, f"queries{N_QUERIES}", [q.text for q in queries])
    if vectors is None or qvectors is None:
        raise EchoDuckError(f"no cached embeddings for size {size} in {out / 'embeddings'}; run `echo-duck bench perf` first")
    return Dataset(size, model_id, records, vectors, queries, qvectors, extra)


# -- the orchestrator ----------------------------------------------------------------------------

def missing_packages(system: str) -> list[str]:
    return [m for m in REQUIRES.get(system, ()) if importlib.util.find_spec(m) is None]


def run(sizes: Sequence[int], systems: Sequence[str] = SYSTEMS, *, repeats: int = 3, out: Path = Path("bench-perf"),
        progress: Callable[[str], None] | None = None) -> dict:
    """Measure every system at every size; write perf.json, perf.md and perf_latency.png into ``out``."""
    from ..embed.embedder import MODEL_INSTALL_HINT, default_embedder
    from . import report as report_mod

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    say = progress or (lambda _msg: None)
    model = default_embedder()
    if model is None:
        raise EchoDuckError(f"bench perf needs the default embedding model; install it with: {MODEL_INSTALL_HINT}")
    started = time.perf_counter()
    if max(sizes) >= 1_000_000:
        say("sizes of 1M and more take about an hour on 2 cores (see echo_duck/bench/perf.py)")
    embedding_s = prepare(out, sizes, model, say)
    results: dict[str, dict[str, Any]] = {}
    for size in sizes:
        row: dict[str, Any] = results.setdefault(str(size), {})
        jobs = list(systems) + (["lifecycle"] if "echo_duck" in systems else [])
        for system in jobs:
            missing = missing_packages(system)
            if missing:
                row[system] = {"skipped": f"not installed: {', '.join(missing)}; fix: {BENCH_INSTALL}"}
                say(f"{size:,} {system}: skipped ({', '.join(missing)} not installed)")
                continue
            say(f"{size:,} {system}: measuring")
            row[system] = _child(system, size, out, repeats, model.model_id, quiet=progress is None)
            if "error" in row[system]:
                say(f"{size:,} {system}: FAILED: {row[system]['error'].splitlines()[-1]}")
    setup = {"k": K, "queries": N_QUERIES, "batch": BATCH, "extra_rows": {str(n): extra_rows(n) for n in sizes}}
    result = {"meta": report_mod.meta(model.model_id, repeats, systems, embedding_s, setup), "sizes": list(sizes),
              "results": results}
    result["ratios"] = report_mod.ratios(result)
    result["meta"]["wall_s"] = round(time.perf_counter() - started, 1)
    report_mod.write(result, out)
    return result


def _child(system: str, size: int, out: Path, repeats: int, model_id: str, *, quiet: bool) -> dict:
    cmd = [sys.executable, "-m", "echo_duck.bench.peers", system, str(size), str(out), "--repeats", str(repeats),
           "--model-id", model_id]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE if quiet else None, text=True, env=env)
    workdir = out / "stores" / f"{system}_{size}"
    shutil.rmtree(workdir, ignore_errors=True)  # sizes are recorded; 100k stores take ~0.2-0.5 GB each
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or "").strip().splitlines()[-5:] if quiet else []
        return {"error": f"exit {proc.returncode}: " + (" | ".join(tail) or "see the output above")}
    return json.loads(lines[-1])
