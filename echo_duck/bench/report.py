"""The results of `echo-duck bench perf`: run metadata, echo_duck / peer ratios, a markdown report,
perf.json and a log-log plot of p50 latency against size (perf_latency.png, matplotlib Agg)."""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

PACKAGES = ("duckdb", "lancedb", "pylance", "sqlite-vec", "pysqlite3-binary", "numpy", "onnxruntime", "matplotlib")
LABELS = {"echo_duck": "echo_duck", "lancedb": "LanceDB", "sqlite": "sqlite-vec + FTS5", "numpy": "numpy floor"}
NOTES = (
    "Shared, noisy 2-core host: every latency is a median (p50) or percentile over all repetitions of the "
    "40 queries after a warm-up; absolute times move between runs, the ratios from one run are the comparison.",
    "LanceDB, SQLite and the numpy floor got pre-segmented text (echo_duck.text.segment.segment: jieba for Chinese, "
    "lower-cased words otherwise; echo_duck's bilingual stop words removed), so their keyword arm handles "
    "Chinese. Segmenting is inside their timed ingest and recall, as it is inside echo_duck's.",
    "Same model everywhere: the default model embedded every text once; echo_duck received these vectors through an "
    "embedder that looks the texts up, except where its write scanner had already embedded the text as it is "
    "(each text alone; stored instead of a second embedding; see embedder_lookups). All vector arms are exact "
    "(no ANN index).",
    "Each arm hands 50 candidates to reciprocal rank fusion (k = 60), k = 10 results. LanceDB 'hybrid_limit10' is "
    "the idiomatic .limit(10), where LanceDB asks each arm for 10 only.",
    "echo_duck 'hybrid' recalls as an agent does: reinforce=True, so each recall also updates access counts and "
    "logs the recall (queued, and written in one transaction per 64 recalls here, since the loop never idles); "
    "scope, decay terms, fusion and gating run in process (an in-process copy of the columns they read, "
    "following the table by row_version). 'filtered' adds "
    "types=[user, environment]: the copy applies the filter too, and each arm ranks only the rows the filter "
    "keeps (the exact vector top-N, the best BM25 matches). The peers only read.",
    "excl. = query vector given; incl. = the query embedded with the default model (1 thread) inside the timed "
    "region. Ingest: bulk load in batches of 2,000 with the cached vectors; 'with emb.' = a tenth more rows "
    "(100 to 2,000) appended with the model in the loop. Index build: echo_duck compacts the BM25 postings, loads the vector "
    "matrix and packs its full blocks as int8; LanceDB builds the FTS index and optimizes (compaction + cleanup); SQLite merges FTS5 and "
    "checkpoints (both of its indexes follow inserts); numpy stacks the matrix and builds postings.",
    "Peak RSS is per system (one subprocess each) and includes the ONNX model and the cached vectors of the size "
    "(the 'base' column: RSS before the store was filled).",
)


def meta(model_id: str, repeats: int, systems: Sequence[str], embedding_s: dict, setup: dict) -> dict:
    """The run's description; ``setup`` holds the harness constants (k, queries, batch, extra_rows)."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    try:
        import pysqlite3.dbapi2 as sqlite3
        versions["sqlite (pysqlite3)"] = sqlite3.sqlite_version
    except ImportError:
        pass
    return {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "cpus": os.cpu_count(),
            "python": sys.version.split()[0], "platform": platform.platform(), "versions": versions,
            "model_id": model_id, **setup, "pool_per_arm": 50, "rrf_k": 60,
            "repeats": repeats,
            "systems": list(systems),
            "embedding_s": embedding_s, "notes": list(NOTES)}


def _p(entry: dict, variant: str, mode: str, stat: str = "p50_ms") -> float | None:
    return ((entry.get("variants") or {}).get(variant) or {}).get(mode, {}).get(stat)


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def ratios(result: dict) -> dict:
    """echo_duck / peer at each size. Latency, disk and RSS: below 1 = echo_duck better; ingest: above 1."""
    out: dict[str, dict] = {}
    for size, row in result["results"].items():
        ours = row.get("echo_duck") or {}
        if "variants" not in ours:
            continue
        for peer, entry in row.items():
            if peer in ("echo_duck", "lifecycle") or "variants" not in entry:
                continue
            out.setdefault(size, {})[peer] = {
                "p50_excl": _ratio(_p(ours, "hybrid", "excluded"), _p(entry, "hybrid", "excluded")),
                "p95_excl": _ratio(_p(ours, "hybrid", "excluded", "p95_ms"), _p(entry, "hybrid", "excluded", "p95_ms")),
                "p50_incl": _ratio(_p(ours, "hybrid", "included"), _p(entry, "hybrid", "included")),
                "ingest": _ratio(ours.get("ingest_rows_per_s"), entry.get("ingest_rows_per_s")),
                "ingest_with_embedding": _ratio(ours.get("ingest_with_embedding_rows_per_s"),
                                                entry.get("ingest_with_embedding_rows_per_s")),
                "disk": _ratio(ours.get("disk_mb"), entry.get("disk_mb")),
                "peak_rss": _ratio(ours.get("peak_rss_mb"), entry.get("peak_rss_mb")),
            }
    return out


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _size(n: int | str) -> str:
    n = int(n)
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k" if n % 1000 == 0 else str(n)


def markdown(result: dict) -> str:
    m = result["meta"]
    lines = [f"## echo-duck bench perf ({m['date']}, {m['cpus']} cores, {m['model_id']}, k={m['k']}, "
             f"{m['queries']} queries × {m['repeats']} repeats)", "",
             "| size | system | p50 ms | p95 ms | p99 ms | p50 incl. emb. ms | ingest rows/s | ingest with emb. rows/s "
             "| index build s | disk MB | peak RSS MB (base) | hits |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for size, row in result["results"].items():
        for system, entry in row.items():
            if system == "lifecycle":
                continue
            if "variants" not in entry:
                lines.append(f"| {_size(size)} | {LABELS.get(system, system)} | {entry.get('skipped') or entry.get('error')} "
                             "| | | | | | | | | |")
                continue
            for variant, v in entry["variants"].items():
                first = variant == next(iter(entry["variants"]))
                ex, inc = v["excluded"], v["included"]
                name = LABELS.get(system, system) + ("" if variant == "hybrid" else f" ({variant})")
                per_system = ([_fmt(entry["ingest_rows_per_s"]), _fmt(entry["ingest_with_embedding_rows_per_s"]),
                               _fmt(entry["index_build_s"], 2), _fmt(entry["disk_mb"]),
                               f"{_fmt(entry['peak_rss_mb'])} ({_fmt(entry['baseline_rss_mb'])})"]
                              if first else ["″"] * 5)
                lines.append("| " + " | ".join([_size(size), name, _fmt(ex["p50_ms"], 2), _fmt(ex["p95_ms"], 2),
                                                 _fmt(ex["p99_ms"], 2), _fmt(inc["p50_ms"], 2), *per_system,
                                                 _fmt(v["mean_hits"])]) + " |")
    if result.get("ratios"):
        lines += ["", "echo_duck / peer, same run (latency, disk, RSS: < 1 means echo_duck is better; ingest: > 1):", "",
                  "| size | peer | p50 | p95 | p50 incl. emb. | ingest | ingest with emb. | disk | peak RSS |",
                  "|---|---|--:|--:|--:|--:|--:|--:|--:|"]
        for size, peers in result["ratios"].items():
            for peer, r in peers.items():
                lines.append("| " + " | ".join([_size(size), LABELS.get(peer, peer)] + [
                    _fmt(r[key], 2) for key in ("p50_excl", "p95_excl", "p50_incl", "ingest", "ingest_with_embedding",
                                                "disk", "peak_rss")]) + " |")
    lines += _curve(result) + _long(result) + _stages(result) + _lifecycle(result)
    lines += ["", "Notes:"] + [f"- {note}" for note in m["notes"]]
    if m.get("plot"):
        lines.append(f"- Plot: {m['plot']}")
    return "\n".join(lines)


def _long(result: dict) -> list[str]:
    """Ingest of ~500-character memories with the model in the loop, per size and system."""
    rows = [(size, system, entry["ingest_long_with_embedding_rows_per_s"]) for size, row in result["results"].items()
            for system, entry in row.items() if isinstance(entry, dict) and "ingest_long_with_embedding_rows_per_s" in entry]
    if not rows:
        return []
    return (["", "Ingest of ~500-character memories, embedded in the loop (rows/s):", "",
             "| size | system | rows/s |", "|---|---|--:|"]
            + [f"| {_size(size)} | {LABELS.get(system, system)} | {_fmt(value)} |" for size, system, value in rows])


def _curve(result: dict) -> list[str]:
    points = [(int(s), _p(row.get("echo_duck", {}), "hybrid", "excluded"), _p(row.get("echo_duck", {}), "filtered", "excluded"))
              for s, row in result["results"].items()]
    points = [p for p in points if p[1] is not None]
    if len(points) < 2:
        return []
    steps = [f"{_size(b[0])}: {b[1]:.2f} ms (×{b[1] / a[1]:.2f} for ×{b[0] / a[0]:.0f} rows; filtered {b[2]:.2f} ms)"
             for a, b in zip(points, points[1:])]
    return ["", f"echo_duck cost curve (p50, query vector given): {_size(points[0][0])}: {points[0][1]:.2f} ms "
            f"(filtered {points[0][2]:.2f} ms) → " + " → ".join(steps)]


def _stages(result: dict) -> list[str]:
    found = {s: row["echo_duck"]["stages"] for s, row in result["results"].items() if "stages" in row.get("echo_duck", {})}
    if not found:
        return []
    sizes = list(found)
    lines = ["", "Where echo_duck's recall time goes (recall(q, 10) with the query embedded inside; p50 ms per stage, "
             "share of mean):", "",
             "| stage | " + " | ".join(_size(s) for s in sizes) + " |", "|---|" + "--:|" * len(sizes)]
    for i, stage in enumerate(found[sizes[0]]["stages"]):
        cells = [f"{found[s]['stages'][i]['p50_ms']:.2f} ({found[s]['stages'][i]['share']:.0%})" for s in sizes]
        lines.append(f"| {stage['stage']} | " + " | ".join(cells) + " |")
    lines.append("| **whole recall** | " + " | ".join(f"**{found[s]['whole_recall_p50_ms']:.2f}**" for s in sizes) + " |")
    lines.append("| (for comparison: the keyword arm in SQL, bm25_scores alone) | " + " | ".join(
        f"{found[s]['bm25_scores_alone_p50_ms']:.2f}" for s in sizes) + " |")
    caches = {s: result["results"][s]["echo_duck"].get("recall_caches") for s in sizes}
    if all(caches.values()):
        lines.append("| (kept between recalls: winners' rows / query words / open contradictions, ~MB) | " + " | ".join(
            f"{c['winners_rows']:,} / {c['query_words']:,} / {c['conflicts']:,}, {c['approx_mb']}" for c in caches.values())
            + " |")
    return lines


def _lifecycle(result: dict) -> list[str]:
    rows = [(s, row["lifecycle"]) for s, row in result["results"].items() if "decay_s" in row.get("lifecycle", {})]
    if not rows:
        return []
    lines = ["", "echo_duck nightly jobs (lifecycle_bench: synthetic rows, decay then archive export):", "",
             "| size | decay s | archive export s | decay + archive s | archived |", "|---|--:|--:|--:|--:|"]
    lines += [f"| {_size(s)} | {r['decay_s']:.2f} | {r['archive_export_s']:.2f} | {r['decay_plus_archive_s']:.2f} | "
              f"{r['exported_to_parquet']:,} |" for s, r in rows]
    return lines


def plot(result: dict, path: Path) -> str:
    """p50 latency (query vector given) against size, log-log, one line per system variant."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "skipped: matplotlib is not installed (pip install matplotlib)"
    series: dict[str, list[tuple[int, float]]] = {}
    for size, row in result["results"].items():
        for system, entry in row.items():
            for variant, v in (entry.get("variants") or {}).items():
                label = LABELS.get(system, system) + ("" if variant == "hybrid" else f" ({variant})")
                if v["excluded"]["p50_ms"] is not None:
                    series.setdefault(label, []).append((int(size), v["excluded"]["p50_ms"]))
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for label, points in series.items():
        xs, ys = zip(*sorted(points))
        ax.plot(xs, ys, marker="o", linestyle="-" if "(" not in label else "--", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memories")
    ax.set_ylabel("recall p50, ms (query vector given)")
    ax.set_title(f"Hybrid recall latency, k={result['meta']['k']} ({result['meta']['cpus']} cores)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return str(path)


def write(result: dict, out: Path) -> None:
    """perf_latency.png (or a note why not), perf.json and perf.md in ``out``."""
    result["meta"]["plot"] = plot(result, out / "perf_latency.png")
    (out / "perf.json").write_text(json.dumps(result, ensure_ascii=False, indent=2))
    (out / "perf.md").write_text(markdown(result) + "\n")
