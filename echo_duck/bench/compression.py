"""`echo-duck bench compression`: how well compression (SPEC L7) folds restatements and only them.

The fixture (data_fixtures/contradictions/duplicates.jsonl) holds 65 clusters of 3-5 restatements of one
fact (EN, ZH, a few across the two) and 72 near misses (``nm-cNN-k``: one word away from cluster cNN —
another port, another person, a negation). Every row is written to a fresh store with the default
model, ``compress(dry_run=True)`` groups them, and each pair of rows is scored: merged together or not,
against "same cluster". Precision = merged pairs that are restatements; recall = restatement pairs merged.
The thresholds were chosen on this fixture (there is no held-out part): read it as a description.
"""

from __future__ import annotations

import itertools
import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any


def default_fixture() -> Path:
    from .contradictions import default_fixture as pairs

    return pairs().with_name("duplicates.jsonl")


def run(path: Path | None = None, *, embedder: Any = "default") -> dict[str, Any]:
    from ..store.facade import EchoDuck

    path = path or default_fixture()
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as folder, EchoDuck(Path(folder) / "bench.duckdb", embedder=embedder) as mem:
        written = mem.remember_many([dict(content=r["text"], type="environment") for r in rows])
        cluster = {m.id: r["cluster"] for m, r in zip(written, rows)}
        lang = {m.id: r["lang"] for m, r in zip(written, rows)}
        started = time.perf_counter()
        report = mem.compress(dry_run=True)
        seconds = time.perf_counter() - started
    group = {i: n for n, members in enumerate(report.clusters) for i in members}
    counts: Counter = Counter()
    for a, b in itertools.combinations(cluster, 2):
        same = cluster[a] == cluster[b]
        merged = a in group and group.get(a) == group.get(b)
        kind = "cross-language" if lang[a] != lang[b] else lang[a]
        counts[("tp" if same and merged else "fp" if merged else "fn" if same else "tn", kind)] += 1
        counts[("tp" if same and merged else "fp" if merged else "fn" if same else "tn", "all")] += 1
    def score(kind: str) -> dict[str, Any]:
        tp, fp, fn = (counts[(x, kind)] for x in ("tp", "fp", "fn"))
        return {"pairs_merged": tp + fp, "restatement_pairs": tp + fn, "tp": tp, "fp": fp, "fn": fn,
                "precision": None if tp + fp == 0 else round(tp / (tp + fp), 3),
                "recall": None if tp + fn == 0 else round(tp / (tp + fn), 3)}
    return {"fixture": str(path), "rows": len(rows), "groups": report.groups, "folded": report.folded,
            "seconds": round(seconds, 2), "overall": score("all"),
            "by_lang": {k: score(k) for k in ("en", "zh", "cross-language")}}


def markdown(report: dict[str, Any]) -> str:
    o = report["overall"]
    lines = [f"# Compression on {report['rows']} rows ({report['fixture']})", "",
             f"{report['groups']} groups, {report['folded']} memories folded, {report['seconds']} s. "
             f"Pairwise precision {o['precision']}, recall {o['recall']}.", "",
             "| pairs | merged | restatement pairs | precision | recall |", "|---|---|---|---|---|"]
    for kind, s in [("all", o), *report["by_lang"].items()]:
        lines.append(f"| {kind} | {s['pairs_merged']} | {s['restatement_pairs']} | {s['precision']} | {s['recall']} |")
    return "\n".join(lines)
