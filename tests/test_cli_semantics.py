"""CLI of issue 20: compress, --as-of on history/search/snapshot, bench compression."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from click.testing import CliRunner

import echo_duck
from echo_duck.cli.main import cli


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def test_compress_and_as_of_from_the_command_line(db_path, clock):
    with echo_duck.open(db_path, embedder="hash", now=clock) as mem:
        old = mem.remember("The deploy target is eu-west-1", type="environment", key="deploy:region")
        clock.advance(days=1)
        mem.update("deploy:region", "The deploy target is us-east-2")
    then = (clock.now - timedelta(hours=12)).strftime("%Y-%m-%dT%H:%M:%S")
    result = invoke("snapshot", "--as-of", then, "--db", str(db_path))
    assert result.exit_code == 0, result.output
    assert "eu-west-1" in result.output and "us-east-2" not in result.output
    result = invoke("search", "deploy target", "--as-of", then, "--json", "--db", str(db_path))
    assert result.exit_code == 0, result.output
    assert [h["memory"]["id"] for h in json.loads(result.stdout)] == [old.id]
    result = invoke("history", "deploy:region", "--as-of", then, "--json", "--db", str(db_path))
    assert [v["id"] for v in json.loads(result.stdout)["versions"]] == [old.id]
    result = invoke("compress", "--dry-run", "--json", "--db", str(db_path))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["dry_run"] is True
    bad = invoke("snapshot", "--as-of", "last tuesday", "--db", str(db_path))
    assert bad.exit_code != 0 and "as-of" in bad.output


@pytest.mark.slow
def test_bench_compression_reports_precision_and_recall():
    result = invoke("bench", "compression", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["rows"] == 292 and report["overall"]["precision"] >= 0.95
    assert set(report["by_lang"]) == {"en", "zh", "cross-language"}
