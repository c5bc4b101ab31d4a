"""echo_duck as a system `echo-duck bench perf` measures (inside its subprocess, see peers.py): the store fed
the precomputed vectors, its recall variants, the cache figure and the per-stage breakdown of one recall."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .perf import Dataset, K

# -- echo_duck as a measured system (runs inside its subprocess) --------------------------------------

class PrecomputedEmbedder:
    """The default model's vectors for texts given to ``add``; anything else goes to the real model.

    Same model_id and dim as the real model, so the store treats the vectors as its own; counting
    hits and misses shows that the store got exactly the precomputed vectors.
    """

    def __init__(self, model: Any):
        self.model = model
        self.model_id, self.dim = model.model_id, model.dim
        self._known: dict[str, np.ndarray] = {}
        self.hits = self.misses = 0

    def add(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        self._known.update(zip(texts, vectors))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        missing = []
        for i, text in enumerate(texts):
            vector = self._known.get(text)
            if vector is None:
                missing.append(i)
            else:
                out[i] = vector
        if missing:
            out[missing] = self.model.embed([texts[i] for i in missing])
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        return out


class EchoDuckSystem:
    """echo_duck recall as an agent uses it: hybrid, reinforce=True; plus a type-filtered variant."""

    name = "echo_duck"
    FILTER_TYPES = ["user", "environment"]

    def __init__(self, workdir: Path, model: Any):
        from ..store.facade import EchoDuck

        self.path = workdir / "echo_duck.duckdb"
        self.embedder = PrecomputedEmbedder(model)
        self.mem = EchoDuck(self.path, agent_id="bench", embedder=self.embedder, admin=True)

    def ingest(self, records: Sequence[dict], vectors: np.ndarray | None) -> None:
        if vectors is not None:
            self.embedder.add([r["content"] for r in records], vectors)
        self.mem.remember_many(records)  # embeds on write: precomputed vectors, else the real model

    def build_index(self) -> None:
        """Compact the BM25 postings, load the in-process vector matrix and pack its int8 first pass
        (the first recall would)."""
        self.mem.indexer.keyword.compact()
        vectors = self.mem.indexer.vectors
        vectors.invalidate()
        vectors.search(np.zeros(vectors.embedder.dim, dtype=np.float32), 1)

    def variants(self) -> dict[str, Callable[[str, np.ndarray], list]]:
        mem = self.mem
        return {
            "hybrid": lambda q, v: mem.recall(q, K, query_vector=v),
            "filtered": lambda q, v: mem.recall(q, K, types=self.FILTER_TYPES, query_vector=v),
        }

    def disk_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}.wal")) if p.exists())

    def extras(self, ds: Dataset, model: Any, repeats: int) -> dict:
        return {"stages": breakdown(self.mem, ds, model, repeats),
                "embedder_lookups": {"precomputed": self.embedder.hits, "real_model": self.embedder.misses,
                                     "scanner": ds.size - self.embedder.hits - self.embedder.misses},
                "recall_caches": cache_figure(self.mem)}

    def close(self) -> None:
        self.mem.close()


def cache_figure(mem: Any) -> dict:
    """What recall keeps besides its copies (issue 22), after the timed recalls: entries and a size estimate."""
    import sys

    stored = mem.recaller.eligibility._stored
    words = mem.indexer.keyword_search._terms._words
    row_bytes = sum(sys.getsizeof(v) for row in list(stored.values())[:100] for v in row.values()) / max(min(len(stored), 100), 1)
    return {"winners_rows": len(stored), "query_words": len(words), **mem.recaller.reads.memory_figure(),
            "approx_mb": round((len(stored) * (row_bytes + 1000) + len(words) * 150) / 1e6, 2)}


# -- where echo_duck's recall time goes ----------------------------------------------------------------

STAGES = (
    ("segment query", "query_text"),
    ("embed query (default model)", "embed"),
    ("caller groups + settings (kept; SQL after a write)", ("run:caller_memberships", "run:all_settings")),
    ("keyword arm (BM25 in-process, with its state query)", "keyword_search"),
    ("vector top-N (in-process: int8 first pass, float32 scores)", "search"),
    ("eligible candidates + decay terms (in-process copy, with its state query)", "eligible"),
    ("fusion (Python)", "fuse"),
    ("winners' rows + conflicts (kept; SQL for rows not kept)", ("dicts:recall_rows", "run:recall_conflicts",
                                                                 "run:open_conflicts")),
    ("queue reinforce + log (recall ids, 64 per query; a batch write every 64)", "log"),
)


def _spent(spent: dict[str, float], keys: str | tuple[str, ...]) -> float:
    return sum(spent.get(key, 0.0) for key in ((keys,) if isinstance(keys, str) else keys))


def breakdown(mem: Any, ds: Dataset, model: Any, repeats: int) -> dict:
    """Per-stage time of ``recall(q, k)`` with the query embedded inside (as without query_vector).

    Wraps the calls recall.py makes (instance attributes shadow the methods; module functions are
    swapped for the duration) and times each; "other Python" is what is left of the whole call.
    Also times ``bm25_scores`` alone: the SQL keyword arm that the agent's recall replaced.
    """
    from ..recall import hybrid as recall_mod

    vectors, db, recaller = mem.indexer.vectors, mem.db, mem.recaller
    spent: dict[str, float] = {}

    def timed(key: str, fn: Callable) -> Callable:
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[key] = spent.get(key, 0.0) + time.perf_counter() - started
        return wrapper

    def run(name, /, **params):
        return timed(f"run:{name}", Db_run)(name, **params)

    def dicts(name, /, **params):  # the named query's run is timed inside; the rest is fetching rows
        run_before, started = spent.get(f"run:{name}", 0.0), time.perf_counter()
        result = Db_dicts(name, **params)
        whole = time.perf_counter() - started
        spent[f"fetch:{name}"] = spent.get(f"fetch:{name}", 0.0) + whole - (spent.get(f"run:{name}", 0.0) - run_before)
        spent[f"dicts:{name}"] = spent.get(f"dicts:{name}", 0.0) + whole
        return result

    Db_run, Db_dicts = db.run, db.dicts
    original_query_text = recall_mod.query_text
    db.run, db.dicts = run, dicts
    vectors.embed = timed("embed", model.embed)  # the real model: the query texts are not precomputed
    vectors.search_with_stats = timed("search", vectors.search_with_stats)
    searcher = mem.indexer.keyword_search
    searcher.search = timed("keyword_search", searcher.search)
    recaller._log = timed("log", recaller._log)
    eligibility = recaller.eligibility
    eligibility.rows = timed("eligible", eligibility.rows)
    recall_mod.query_text = timed("query_text", recall_mod.query_text)
    original_fuse = recall_mod.fusion.fuse
    recall_mod.fusion.fuse = timed("fuse", original_fuse)
    per_stage: dict[str, list[float]] = {label: [] for label, _ in STAGES}
    per_stage["other Python (validation, hits, dataclasses)"] = []
    totals, bm25_alone = [], []
    try:
        for _ in range(repeats):
            for q in ds.queries:
                spent.clear()
                started = time.perf_counter()
                mem.recall(q.text, K)
                total = time.perf_counter() - started
                totals.append(total)
                for label, keys in STAGES:
                    per_stage[label].append(_spent(spent, keys))
                # reinforce/log queries run inside "log"; every other named query is a stage above
                accounted = sum(_spent(spent, keys) for _, keys in STAGES)
                per_stage["other Python (validation, hits, dataclasses)"].append(max(total - accounted, 0.0))
                started = time.perf_counter()
                Db_run("bench_bm25_alone", q=original_query_text(q.text)).fetchall()
                bm25_alone.append(time.perf_counter() - started)
    finally:
        for attr in ("run", "dicts"):
            vars(db).pop(attr, None)
        for obj, attr in ((vectors, "embed"), (vectors, "search_with_stats"), (searcher, "search"), (recaller, "_log"),
                          (eligibility, "rows")):
            vars(obj).pop(attr, None)
        recall_mod.query_text = original_query_text
        recall_mod.fusion.fuse = original_fuse
    total_p50 = float(np.median(totals)) * 1000
    rows = [{"stage": label, "p50_ms": round(float(np.median(v)) * 1000, 3), "mean_ms": round(float(np.mean(v)) * 1000, 3),
             "share": round(float(np.mean(v)) / float(np.mean(totals)), 3)} for label, v in per_stage.items()]
    return {"stages": rows, "whole_recall_p50_ms": round(total_p50, 3),
            "whole_recall_mean_ms": round(float(np.mean(totals)) * 1000, 3),
            "bm25_scores_alone_p50_ms": round(float(np.median(bm25_alone)) * 1000, 3)}
