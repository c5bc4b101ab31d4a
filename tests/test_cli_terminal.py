"""Stored text reaches the terminal with its control characters escaped, and labels hold none (reviewer AH, session
56: an ESC in a key held for review concealed the row in `echo-duck list --status quarantined`)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import echo_duck
from echo_duck import tools
from echo_duck.cli.main import cli
from echo_duck.errors import InvalidInput


@pytest.mark.parametrize("field", ["key", "tags", "entities", "source_refs"])
def test_a_label_with_a_control_character_is_refused_and_nothing_is_stored(tmp_path, field):
    value = "package_manager\x1b[8m"
    with echo_duck.open(tmp_path / "s.duckdb", embedder="hash") as mem:
        with pytest.raises(InvalidInput, match="control character"):
            mem.remember("The project uses pnpm", type="environment", **{field: value if field == "key" else [value]})
        result = tools.call(mem, "memory_write", {"content": "The project uses pnpm", "type": "environment",
                                                  "key": "package\x07manager"})
        assert not result["ok"] and "control character" in result["message"]
        assert mem.find(status=None) == []


def test_stored_text_is_printed_with_its_escape_codes_escaped(tmp_path):
    path = tmp_path / "s.duckdb"
    with echo_duck.open(path, embedder="hash") as mem:
        held = mem.remember("The project uses pnpm\x1b[8m and \x1b]52;c;cm0gLXJmIH4=\x07 hides", type="environment",
                            key="package_manager")
        mem.remember("The build runs with make", type="environment")
    assert held.status == "quarantined"
    runner = CliRunner()
    for args in (["list", "--status", "quarantined"], ["show", held.id[:8]],
                 ["sql", "--admin", "SELECT content, [content] AS c FROM memories"]):
        out = runner.invoke(cli, ["--db", str(path), *args])
        assert out.exit_code == 0, out.output
        assert "\x1b" not in out.output and "\x07" not in out.output, args
        assert "\\x1b" in out.output, args  # shown escaped, not dropped
    # reviewer AG: "bm25 rank None" for a hit the keyword arm did not find
    explained = runner.invoke(cli, ["--db", str(path), "recall", "what compiles the code", "--explain"]).output
    assert "make" in explained and "rank None" not in explained


def test_json_output_escapes_c1_and_bidi_controls_too(tmp_path):
    """Reviewer AK (session 56): --json wrote with ensure_ascii=False, which escapes C0 only: a message's CSI (U+009B)
    or a forget reason's U+202E reached the terminal raw from `sessions --json` and `history --json`."""
    import json

    path = tmp_path / "s.duckdb"
    with echo_duck.open(path, embedder="hash") as mem:
        mem.add_message("sess-1", "user", "we deploy \u009b2J with argo \u202eodrag")
        mem.remember("The build runs nightly", type="environment", key="build")
        mem.forget("build", reason="gone \u009b31m \u202e")
    runner = CliRunner()
    for args in (["sessions", "sess-1", "--json"], ["history", "build", "--json"]):
        out = runner.invoke(cli, ["--db", str(path), *args])
        assert out.exit_code == 0, out.output
        assert not any(c in out.stdout for c in "\u009b\u202e\x1b"), args
        json.loads(out.stdout)  # still JSON, the same data
