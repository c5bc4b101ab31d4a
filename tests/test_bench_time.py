"""`echo-duck bench time`: the time sets are scored as documented (found / tight / no window)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from echo_duck.bench.time_windows import judge
from echo_duck.cli.main import cli


def item(question, direction="past", start=None, end=None, asked_at="2026-03-20T10:00:00"):
    return dict(id="t-1", question=question, asked_at=asked_at, direction=direction, start=start, end=end, kind="x")


def test_judge_found_tight_and_none():
    assert judge(item("what did I eat yesterday?", start="2026-03-19", end="2026-03-19"))[:2] == (True, True)
    # a holiday's window reaches a week either side: found, not tight
    assert judge(item("去年国庆去了哪里", start="2025-10-01", end="2025-10-07"))[:2] == (True, False)
    assert judge(item("what did I do last year?", start="2025-06-01", end="2025-06-01"))[:2] == (True, False)
    assert judge(item("what did I buy?", start="2026-03-01", end="2026-03-05"))[:2] == (False, False)
    assert judge(item("我同事张国庆喜欢喝什么", direction="none"))[:2] == (True, True)
    assert judge(item("what did I eat yesterday?", direction="none"))[:2] == (False, False)


def test_bench_time_runs_on_the_shipped_sets(tmp_path):
    result = CliRunner().invoke(cli, ["bench", "time", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert {"dev_en", "dev_zh", "holdout_en", "holdout_zh"} <= set(report["groups"])
    assert sum(report["groups"][s]["n"] for s in ("dev_en", "dev_zh", "holdout_en", "holdout_zh")) == 460
    (tmp_path / "one.jsonl").write_text(json.dumps(item("what did I eat yesterday?", start="2026-03-19",
                                                        end="2026-03-19")) + "\n", encoding="utf-8")
    one = json.loads(CliRunner().invoke(cli, ["bench", "time", "--data", str(tmp_path), "--json"]).output)
    assert one["groups"]["one"] == {"n": 1, "found": 1, "tight": 1} and one["misses"] == []
    empty = tmp_path / "empty"
    empty.mkdir()
    failed = CliRunner().invoke(cli, ["bench", "time", "--data", str(empty)])
    assert failed.exit_code != 0 and "no *.jsonl time sets" in failed.output
