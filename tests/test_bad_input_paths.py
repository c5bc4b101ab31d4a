"""Bad input a second review found (session 53): each gets a typed error naming what was wrong, and nothing stored
changes. (Import files, a KB folder, update's reason, file paths, callbacks, a tool call's argument names.)"""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import echo_duck
from echo_duck.errors import InvalidInput
from echo_duck.io.exporters import export_jsonl, export_parquet
from echo_duck.io.importers import import_file
from echo_duck.store import tools


@pytest.fixture
def alice(tmp_path):
    with echo_duck.open(tmp_path / "s.duckdb", agent_id="alice", embedder="hash") as mem:
        yield mem


@pytest.mark.parametrize("heading, stored", [("2026-03-08 9:30 — sess-1", 1), ("2026-03-08 25:00", 0),
                                             ("2026-02-30", 0), ("0000-01-01", 0)])
def test_a_history_heading_that_is_no_calendar_date_is_skipped(alice, tmp_path, heading, stored):
    path = tmp_path / "HISTORY.md"
    path.write_text(f"# History\n\n## {heading}\n- The user deployed the app\n")
    report = import_file(alice, path)
    assert report.stored == stored
    assert [s.reason for s in report.skipped] == ([] if stored else ["invalid"])


def test_a_history_heading_with_a_one_digit_hour_keeps_its_time(alice, tmp_path):
    path = tmp_path / "HISTORY.md"
    path.write_text("# History\n\n## 2026-03-08 9:30 — sess-1\n- The user deployed the app\n")
    import_file(alice, path)
    (memory,) = alice.find(tier="episodic")
    assert (memory.observed_at.hour, memory.observed_at.minute) == (9, 30)


def test_a_parquet_timestamp_past_year_9999_is_invalid_input(alice, tmp_path):
    path = tmp_path / "mem.parquet"
    pq.write_table(pa.table({"content": ["The user likes tea"], "type": ["user"],
                             "observed_at": pa.array([10**15], pa.timestamp("s"))}), path)
    with pytest.raises(InvalidInput, match="not a readable Parquet file"):
        import_file(alice, path)
    assert alice.find() == []


def test_a_kb_folder_with_a_dangling_link_names_the_file(alice, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# Deploy\nRun make deploy.\n")
    os.symlink(docs / "old-name.md", docs / "moved.md")
    with pytest.raises(InvalidInput, match="moved.md cannot be read"):
        alice.kb_add(docs)
    assert alice.kb_documents() == []


@pytest.mark.parametrize("reason, message", [({"a": 1}, "must be a string"), ("a\x00b", "NUL"),
                                             ("x" * 2000, "limit is 1,000"), ("\ud800", "lone surrogate")])
def test_update_checks_its_reason_as_forget_does(alice, reason, message):
    alice.remember("The cache has three nodes", type="environment", key="cache")
    with pytest.raises(InvalidInput, match=message):
        alice.update("cache", "The cache has five nodes", reason=reason)
    assert [m.content for m in alice.history("cache").versions] == ["The cache has three nodes"]


@pytest.mark.parametrize("content", ["\u200b", " \u2060\ufeff ", "\u200d\n\u200c", "\u2800\u2800", "\u3164", "\u034f",
                                     "\ufe0f", "\u115f\u1160\uffa0"])
def test_content_of_invisible_characters_only_is_empty(alice, content):
    # zero-width spaces and joiners print as nothing: such a write or edit stores an empty memory
    alice.remember("The cache has three nodes", type="environment", key="cache")
    with pytest.raises(InvalidInput, match="only invisible characters"):
        alice.update("cache", content)
    with pytest.raises(InvalidInput, match="only invisible characters"):
        alice.remember(content, type="user")
    assert [m.content for m in alice.history("cache").versions] == ["The cache has three nodes"]
    assert [m.content for m in alice.find()] == ["The cache has three nodes"]


@pytest.mark.parametrize("path, message", [(None, "must be a path"), (5, "must be a path"), ("a\x00b.jsonl", "NUL"),
                                           ("", "non-empty")])
def test_a_file_path_that_is_no_path_is_invalid_input(alice, path, message):
    for call in (lambda: import_file(alice, path), lambda: export_jsonl(alice, path),
                 lambda: export_parquet(alice, path)):
        with pytest.raises(InvalidInput, match=message):
            call()


def test_an_export_into_a_folder_that_takes_no_files_is_invalid_input(tmp_path):
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash") as host:
        host.remember("kept", type="user")
        with pytest.raises(InvalidInput, match="cannot write a file in /proc"):
            export_parquet(host, "/proc/x.parquet")


def test_a_callback_that_is_not_callable_is_refused_before_anything_moves(tmp_path):
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash") as host:
        host.remember("v1", type="environment", key="k")
        host.update("k", "v2")
        live = host.sql("SELECT count(*) FROM memories").item()
        with pytest.raises(InvalidInput, match="progress must be a function"):
            host.archive(older_than_days=0, progress="x")
        assert host.sql("SELECT count(*) FROM memories").item() == live == 2
        with pytest.raises(InvalidInput, match="progress must be a function"):
            host.kb_add("Run make deploy.", source="notes", progress=3)
        with pytest.raises(InvalidInput, match="all must be"):
            host.consolidate(all="yes")


def test_a_tool_call_with_mixed_argument_names_answers_an_error(alice):
    answer = tools.call(alice, "memory_write", {"content": "x", "type": "user", 1: "a", "colour": "b"})
    assert answer["ok"] is False and answer["error"] == "InvalidInput"
    assert alice.find() == []


def test_forget_checks_cascade_without_purge(alice):
    alice.remember("The cache has three nodes", type="environment", key="cache")
    with pytest.raises(InvalidInput, match="cascade"):
        alice.forget("cache", cascade="bogus")
    assert [m.status for m in alice.find()] == ["active"]


def test_an_embedder_that_is_no_embedder_is_invalid_input(tmp_path):
    with pytest.raises(InvalidInput, match="embedder must be"):
        echo_duck.open(tmp_path / "s.duckdb", agent_id="alice", embedder=5)


@pytest.mark.parametrize("option, value, message", [("rerank_min_score", float("nan"), "rerank_min_score must be"),
                                                    ("verifier", 5, "verifier must be a function"),
                                                    ("extractor", "x", "extractor must be a function"),
                                                    ("summarizer", 3, "summarizer must be a function")])
def test_an_open_option_that_cannot_work_is_refused_at_open(tmp_path, option, value, message):
    with pytest.raises(InvalidInput, match=message):
        echo_duck.open(tmp_path / "s.duckdb", embedder="hash", **{option: value})
