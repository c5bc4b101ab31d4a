"""`echo-duck bench changes`: states_change scored on the shipped change sets, and on a set of one's own."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from echo_duck.cli.main import cli
from echo_duck.storage.sqlfiles import macro_statement


def test_macro_statement_is_the_whole_create():
    statement = macro_statement("states_change")
    assert statement.startswith("CREATE OR REPLACE MACRO states_change(t)") and statement.endswith(");")
    with pytest.raises(KeyError):
        macro_statement("no_such_macro")


def test_bench_changes(tmp_path):
    report = json.loads(CliRunner().invoke(cli, ["bench", "changes", "--json"]).output)
    assert set(report["sets"]) == {"dev_en", "dev_zh", "holdout_en", "holdout_zh"}
    assert all(s["n"] == 120 and s["changes"] == 55 for s in report["sets"].values())
    notes = [dict(id="1", text="We moved to Lyon in May.", change=True, kind="move"),
             dict(id="2", text="I drive a Golf.", change=False, kind="fact"),
             dict(id="3", text="Changed the oil this morning.", change=False, kind="other sense")]
    (tmp_path / "mine.jsonl").write_text("".join(json.dumps(n) + "\n" for n in notes), encoding="utf-8")
    mine = json.loads(CliRunner().invoke(cli, ["bench", "changes", "--data", str(tmp_path), "--json"]).output)
    # the word list reads "changed" in any sense: a false alarm, listed among the misses
    assert mine["sets"]["mine"] == dict(n=3, changes=1, found=1, false_alarms=1, recall=1.0, precision=0.5)
    assert [m["id"] for m in mine["misses"]] == ["3"]
    empty = tmp_path / "empty"
    empty.mkdir()
    failed = CliRunner().invoke(cli, ["bench", "changes", "--data", str(empty)])
    assert failed.exit_code != 0 and "no *.jsonl change sets" in failed.output
