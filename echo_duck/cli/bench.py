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


@bench.command(name="recall")
@click.option("--locomo", type=click.Path(exists=True, file_okay=False),
              help="LoCoMo folder (memories.jsonl, queries.jsonl), e.g. ../shared/bench/locomo.")
@click.option("--longmemeval", type=click.Path(exists=True, file_okay=False),
              help="LongMemEval folder (memories.jsonl.gz, queries.jsonl.gz), e.g. ../shared/bench/longmemeval_dev.")
@click.option("--sets", default="all", show_default=True,
              help="Comma-separated: locomo, longmemeval, bilingual, zh_daily; 'all' = the own two sets plus "
                   "those given a folder.")
@click.option("--columns", default=",".join(("plain_bm25", "plain_vector", "keyword", "vector", "hybrid")),
              show_default=True, help="Which rankers to score.")
@click.option("--limit", type=int, help="Only the first N conversations of each set.")
@click.option("--model", default="default", show_default=True, help="Embedding model (use, minilm, hash).")
@click.option("--cache", type=click.Path(file_okay=False), help="Folder for an embedding cache (re-runs read it).")
@click.option("--out", type=click.Path(file_okay=False), help="Write recall.json and recall.md into this folder.")
@click.option("--json", "as_json", is_flag=True)
def bench_recall(locomo, longmemeval, sets, columns, limit, model, cache, out, as_json):
    """Retrieval quality per set and category: plain BM25, a plain exact vector scan, echo_duck's keyword
    arm, vector arm and hybrid; R@1, R@10, MRR (H@1 on zh_daily); fit and held-out parts shown apart.

    Example:  echo-duck bench recall --locomo ../shared/bench/locomo --longmemeval ../shared/bench/longmemeval_dev
    """
    import json as _json

    from ..bench import recall_quality as rq
    from ..errors import InvalidInput

    with fail_cleanly():
        folders = {"locomo": locomo and Path(locomo), "longmemeval": longmemeval and Path(longmemeval),
                   "bilingual": rq.OWN_SETS / "bilingual", "zh_daily": rq.OWN_SETS / "zh_daily"}
        wanted = [s.strip() for s in sets.split(",") if s.strip()]
        if wanted == ["all"]:
            wanted = [s for s in rq.SETS if folders[s]]
        unknown = [s for s in wanted if s not in rq.SETS]
        if unknown:
            raise InvalidInput(f"unknown set(s) {', '.join(unknown)}; choose from {', '.join(rq.SETS)}")
        missing = [s for s in wanted if not folders[s]]
        if missing:
            raise InvalidInput(f"set(s) {', '.join(missing)} need a folder: --{missing[0]} PATH")
        chosen = tuple(c.strip() for c in columns.split(",") if c.strip())
        if not chosen or any(c not in rq.COLUMNS for c in chosen):
            raise InvalidInput(f"--columns takes any of {', '.join(rq.COLUMNS)}")
        embedder = rq.bench_embedder(model, cache and Path(cache))
        report = rq.run({s: folders[s] for s in wanted}, embedder, columns=chosen, limit=limit,
                        progress=None if as_json else lambda msg: click.echo(msg, err=True))
        text = rq.markdown(report)
        if out:
            Path(out).mkdir(parents=True, exist_ok=True)
            (Path(out) / "recall.json").write_text(_json.dumps(report, indent=1), encoding="utf-8")
            (Path(out) / "recall.md").write_text(text + "\n", encoding="utf-8")
    emit({k: v for k, v in report.items()} if as_json else None, as_json, text)
