"""Bad input, second outside review (session 58, reviewer AS): update(tags=None) cleared the field where content=None
left it alone, and an update changing nothing wrote a version; an import crashed with a raw TypeError on a list key
and with a raw ValueError on an integer of 5,000 digits; a key 'profile:' gave the snapshot an empty heading; an
export named *.PARQUET was written as JSONL, and one named *.jsonl as Parquet. Real stores in tmp_path; each test
fails on the code before.
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from cli_run import run_cli

import echo_duck
from echo_duck import InvalidInput
from echo_duck.io.exporters import export_jsonl, export_parquet
from echo_duck.io.importers import import_file


@pytest.fixture
def mem(tmp_path):
    with echo_duck.open(tmp_path / "s.duckdb", agent_id="coder", embedder="hash") as m:
        m.remember("The project uses pnpm 9", type="environment", key="pm", tags=["node", "tooling"],
                   entities=["pnpm"], source_session="s-1", observed_at=datetime(2026, 1, 5))
        yield m


def events(mem) -> int:
    return mem.db.con.execute("SELECT count(*) FROM memory_events").fetchone()[0]


def test_a_field_given_as_none_is_left_as_it_is(mem):
    before = mem.find(key="pm")[0]
    changed = mem.update("pm", "The project uses pnpm 10", tags=None, entities=None, source_session=None,
                         observed_at=None, importance=None, confidence=None)
    assert changed.content == "The project uses pnpm 10"
    assert (changed.tags, changed.entities, changed.source_session, changed.observed_at, changed.importance) == (
        before.tags, before.entities, before.source_session, before.observed_at, before.importance)
    with pytest.raises(InvalidInput, match="None is left as it is"):
        mem.update("pm", tags=None)
    assert not mem.update("pm", tags=[]).tags  # clearing says so


def test_an_update_that_changes_nothing_writes_no_version(mem):
    n = events(mem)
    for change in ({"content": "The project uses pnpm 9"}, {"tags": ["node", "tooling"]}, {"importance": 0.5}):
        assert mem.update("pm", **change).version == 1
    assert len(mem.history("pm").versions) == 1 and events(mem) == n
    assert mem.update("pm", tags=["tooling", "node"]).version == 2  # order is part of the value


@pytest.mark.parametrize("record", [{"id": "1", "content": "hello world one", "key": ["x"], "type": "user"},
                                    {"id": "2", "content": "hello world two", "key": "k", "agent_id": {"a": 1},
                                     "type": "user"}], ids=["list-key", "object-agent"])
def test_an_import_record_with_a_list_key_is_skipped_by_name(mem, tmp_path, record):
    # a raw TypeError (unhashable) came out of the chain ordering before any record was checked
    f = tmp_path / "r.jsonl"
    f.write_text(json.dumps(record) + "\n")
    report = import_file(mem, f)
    if isinstance(record["key"], list):  # refused by name, nothing written
        assert report.stored == 0 and "key" in str(report.skipped[0])
    else:  # an untrusted import never takes a file's agent_id: the record is the importer's
        assert report.stored == 1 and mem.find(key="k")[0].agent_id == "coder"


def test_an_import_with_a_number_too_long_to_read_is_refused_by_name(mem, tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text('{"content": "hello there", "type": "user", "access_count": ' + "9" * 5000 + "}\n")
    with pytest.raises(InvalidInput, match="number too long"):
        import_file(mem, f)
    result = run_cli("--db", str(tmp_path / "s2.duckdb"), "import", str(f))
    assert result.returncode != 0 and "Traceback" not in result.stderr and "number too long" in result.stderr


@pytest.mark.parametrize("key", ["profile:", "profile:   ", "profile:\u200b"])
def test_a_profile_key_naming_no_section_is_refused(mem, key):
    with pytest.raises(InvalidInput, match="names no section"):
        mem.remember("Prefers short answers", type="user", key=key)
    assert "### \n" not in mem.snapshot() + "\n"


def test_an_export_is_named_for_its_format(mem, tmp_path):
    mem.close()
    result = run_cli("--db", str(mem.path), "--agent", "coder", "export", str(tmp_path / "backup.PARQUET"))
    assert result.returncode == 0, result.stderr
    mem = echo_duck.open(tmp_path / "s.duckdb", agent_id="coder", embedder="hash")
    with echo_duck.open(tmp_path / "other.duckdb", agent_id="coder", embedder="hash") as other:
        assert import_file(other, tmp_path / "backup.PARQUET").stored == 1  # Parquet, as its name says
    with pytest.raises(InvalidInput, match="named as a jsonl file"):
        export_parquet(mem, tmp_path / "x.jsonl")
    with pytest.raises(InvalidInput, match="named as a parquet file"):
        export_jsonl(mem, tmp_path / "x.parquet")
    for name in ("backup.md", "backup.JSON"):  # reviewer AT: import read them as MEMORY.md or JSON, storing nothing
        with pytest.raises(InvalidInput, match="reads as Markdown or JSON"):
            export_jsonl(mem, tmp_path / name)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(("x.", "backup.m", "backup.J"))]
    mem.close()
