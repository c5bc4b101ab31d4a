"""`echo-duck bench contradictions` (echo_duck/bench/contradictions.py): the fixed split of the labelled
fixture, the scores per part, kind and language, and the CLI's markdown and JSON."""

from __future__ import annotations

import json

from click.testing import CliRunner

from echo_duck.bench import contradictions
from echo_duck.cli.main import cli
from echo_duck.lifecycle.verify import Verdict


def test_the_fixture_is_split_by_group_and_never_straddles():
    pairs = contradictions.load(contradictions.default_fixture())
    assert len(pairs) == 431
    parts = {}
    for p in pairs:
        parts.setdefault(p["group"], set()).add(p["part"])
    assert all(len(v) == 1 for v in parts.values())  # a group lives in one part only
    counts = {name: sum(p["part"] == name for p in pairs) for name in contradictions.SPLIT_PARTS}
    assert counts == {"tuning": 296, "heldout": 135}  # fixed by the hash of the group name


def test_the_fresh_set_is_its_own_part_and_shares_no_text_with_the_first_fixture():
    fresh = contradictions.load(contradictions.default_fixture("fresh.jsonl"), part="fresh")
    assert len(fresh) >= 200 and {p["part"] for p in fresh} == {"fresh"}
    assert {p["lang"] for p in fresh} >= {"en", "zh"}
    assert {"contradiction", "compatible"} == {p["label"] for p in fresh}
    old = {p[k] for p in contradictions.load(contradictions.default_fixture()) for k in ("a", "b")}
    assert not old & {p[k] for p in fresh for k in ("a", "b")}  # written from scratch, not reused
    assert {"time_bounded", "preference_change", "list", "partial_overlap", "units"} <= {p["kind"] for p in fresh}


def test_fresh_cannot_be_asked_of_another_file(tmp_path):
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps(dict(a="x 1", b="x 2", label="contradiction", kind="k", lang="en", group="g")),
                    encoding="utf-8")
    result = CliRunner().invoke(cli, ["bench", "contradictions", "--data", str(data), "--part", "fresh"])
    assert result.exit_code == 2 and "fresh" in result.output
    report = json.loads(CliRunner().invoke(cli, ["bench", "contradictions", "--data", str(data), "--json"]).stdout)
    assert set(report["parts"]) == {"tuning", "heldout"} and report["pairs"] == 1


def test_scores_count_true_and_false_alarms(tmp_path):
    data = tmp_path / "pairs.jsonl"
    rows = [dict(a="x 1", b="x 2", label="contradiction", kind="value_change", lang="en", group="g1"),
            dict(a="y 1", b="y 2", label="compatible", kind="paraphrase", lang="en", group="g1"),
            dict(a="z 1", b="z 2", label="contradiction", kind="negation", lang="zh", group="g1")]
    data.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")

    def says_x_and_y(a, b):  # flags the x and y pairs; the z pair only weakly
        return Verdict(a.content[0] in "xyz", 0.9 if a.content[0] in "xy" else 0.4, "test")

    part = contradictions.part_of("g1")
    report = contradictions.run(data, says_x_and_y, parts=[part])
    overall = report["parts"][part]["overall"]
    assert (overall["tp"], overall["fp"], overall["fn"]) == (1, 1, 1)
    assert (overall["precision"], overall["recall"]) == (0.5, 0.5)
    assert report["parts"][part]["by_kind"]["paraphrase"]["false_positive_rate"] == 1.0
    assert report["parts"][part]["by_lang"]["zh"]["recall"] == 0.0
    assert len(report["parts"][part]["errors"]) == 2


def test_cli_reports_every_part_in_markdown_and_json():
    result = CliRunner().invoke(cli, ["bench", "contradictions", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report["parts"]) == {"tuning", "heldout", "fresh"}
    for part in report["parts"].values():
        assert {"precision", "recall"} <= set(part["overall"])
        assert {"value_change", "negation", "units", "paraphrase"} <= set(part["by_kind"])
        assert {"en", "zh"} <= set(part["by_lang"])
    tuning = report["parts"]["tuning"]["overall"]
    assert tuning["precision"] >= 0.95 and tuning["recall"] >= 0.7  # the part the heuristic was tuned on
    text = CliRunner().invoke(cli, ["bench", "contradictions", "--part", "heldout"]).output
    assert "## heldout part: precision" in text and "tuning part" not in text and "fresh part" not in text
    assert "## fresh part: precision" in CliRunner().invoke(cli, ["bench", "contradictions", "--part", "fresh"]).output
    assert "| kind: units |" in text and "| lang: zh |" in text
