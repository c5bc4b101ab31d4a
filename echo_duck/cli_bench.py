"""`echo-duck bench …`: retrieval quality (LoCoMo) and speed."""

from __future__ import annotations

from pathlib import Path

import click

from .cli_common import emit, fail_cleanly


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
    from .bench import locomo

    with fail_cleanly():
        report = locomo.run(Path(data), variants or tuple(locomo.VARIANTS), limit_conversations=conversations,
                            progress=None if as_json else lambda conv: click.echo(f"done {conv}", err=True))
    emit(report, as_json, locomo.markdown(report) + f"\n\ntimings: {report['timings']}")
