"""`echo-duck bench …`: retrieval quality (LoCoMo) and speed."""

from __future__ import annotations

from pathlib import Path

import click

from .common import emit, fail_cleanly


@click.group()
def bench():
    """Benchmarks: retrieval quality (locomo) and speed.

    Example:  echo-duck bench locomo --data ../shared/bench/locomo
    """


@bench.command(name="locomo")
@click.option("--data", type=click.Path(exists=True, file_okay=False), required=True,
              help="Folder with memories.jsonl and queries.jsonl (e.g. ../shared/bench/locomo).")
@click.option("--variant", "variants", multiple=True, help="bm25, vector, hybrid, hybrid+decay (default: all).")
@click.option("--conversations", type=int, help="Only the first N conversations.")
@click.option("--json", "as_json", is_flag=True)
def bench_locomo(data, variants, conversations, as_json):
    """Retrieval quality on LoCoMo: R@1/5/10 and MRR per category, per variant.

    Example:  echo-duck bench locomo --data ../shared/bench/locomo --variant hybrid
    """
    from ..bench import locomo

    with fail_cleanly():
        report = locomo.run(Path(data), variants or tuple(locomo.VARIANTS), limit_conversations=conversations,
                            progress=None if as_json else lambda conv: click.echo(f"done {conv}", err=True))
    emit(report, as_json, locomo.markdown(report) + f"\n\ntimings: {report['timings']}")


@bench.command(name="perf")
@click.option("--sizes", default="10k,100k", show_default=True,
              help="Store sizes, e.g. 10k,100k or 10k,100k,1M (1M takes about an hour on 2 cores).")
@click.option("--systems", default="echo_duck,lancedb,sqlite,numpy", show_default=True,
              help="Any of echo_duck, lancedb, sqlite, numpy (peers need: pip install \"echo-duck[bench]\").")
@click.option("--repeats", type=click.IntRange(1, 100), default=3, show_default=True,
              help="Passes over the 40 queries after the warm-up.")
@click.option("--out", type=click.Path(file_okay=False), default="bench-perf", show_default=True,
              help="Folder for perf.json, perf.md, perf_latency.png and the embedding cache.")
@click.option("--json", "as_json", is_flag=True)
def bench_perf(sizes, systems, repeats, out, as_json):
    """Speed side by side: echo_duck, LanceDB, sqlite-vec + FTS5 and a numpy floor, same vectors, k=10.

    Recall latency p50/p95/p99 (query embedding excluded and included), ingest rows/s, index build,
    disk size, peak RSS (one subprocess per system), decay+archive time, and where echo_duck's
    recall time goes. Writes perf.json, perf.md and perf_latency.png into --out.

    Example:  echo-duck bench perf --sizes 10k,100k
    """
    from ..bench import perf, report

    with fail_cleanly():
        parsed_sizes, parsed_systems = perf.parse_sizes(sizes), perf.parse_systems(systems)
        result = perf.run(parsed_sizes, parsed_systems, repeats=repeats, out=Path(out),
                          progress=None if as_json else lambda msg: click.echo(msg, err=True))
    emit(result, as_json, report.markdown(result) + f"\n\nwritten: {Path(out) / 'perf.json'}, {Path(out) / 'perf.md'}")


@bench.command(name="purge")
@click.option("--sizes", default="10k,100k", show_default=True, help="Store sizes, e.g. 10k,100k.")
@click.option("--purges", type=click.IntRange(1, 100), default=3, show_default=True, help="Purges per store.")
@click.option("--dim", type=click.IntRange(1, 4096), default=512, show_default=True,
              help="Vector size (512: the default model's), from the deterministic hash embedder.")
@click.option("--json", "as_json", is_flag=True)
def bench_purge(sizes, purges, dim, as_json):
    """Seconds per privacy purge (forget --purge): the database part and the rewrite of the store file
    that leaves no byte of the purged text on disk.

    Example:  echo-duck bench purge --sizes 10k,100k
    """
    from ..bench import perf, purge_bench

    with fail_cleanly():
        reports = [purge_bench.measure(size, purges=purges, dim=dim) for size in perf.parse_sizes(sizes)]
    lines = [f"{r['size']:>8,} memories, {r['file_mb']} MB: purge {r['purge_s']} s "
             f"(database {r['purge_database_s']}, file rewrite {r['purge_rewrite_s']}); fill {r['fill_s']} s"
             for r in reports]
    emit(reports, as_json, "\n".join(lines))
