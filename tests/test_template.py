"""New files start as a copy of the first empty store the process created (storage/template.py)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

import echo_duck
from echo_duck.lifecycle.archive import archive_dir
from echo_duck.storage import template

EXCLUDE = re.compile(r"EXCLUDE \(([^()]*)\)")
CATALOG = {
    "tables": "SELECT table_name, sql, comment FROM duckdb_tables() WHERE database_name = current_database() "
              "ORDER BY table_name",
    "columns": "SELECT table_name, column_name, data_type, column_default, comment FROM duckdb_columns() "
               "WHERE database_name = current_database() ORDER BY table_name, column_index",
    "views": "SELECT view_name, sql, comment FROM duckdb_views() WHERE database_name = current_database() "
             "AND NOT internal ORDER BY view_name",
    "macros": "SELECT function_name, function_type, macro_definition, comment FROM duckdb_functions() "
              "WHERE database_name = current_database() AND NOT internal ORDER BY ALL",
    "indexes": "SELECT index_name, table_name, sql FROM duckdb_indexes() WHERE database_name = current_database() "
               "ORDER BY index_name",
    "sequences": "SELECT sequence_name, start_value FROM duckdb_sequences() WHERE database_name = current_database() "
                 "ORDER BY sequence_name",
}


def _exclude_sorted(sql):
    """DuckDB prints an EXCLUDE list from a hash set, in no fixed order: compare its names sorted."""
    return EXCLUDE.sub(lambda m: "EXCLUDE (" + ", ".join(sorted(m.group(1).split(", "))) + ")", sql or "")


def _read(path) -> dict:
    """Everything in a closed store file but the dates its schema was applied."""
    con = duckdb.connect(str(path), read_only=True, config={"allow_unsigned_extensions": True})
    try:
        out = {name: [tuple(_exclude_sorted(v) if isinstance(v, str) else v for v in row)
                      for row in con.execute(sql).fetchall()] for name, sql in CATALOG.items()}
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
                                    "ORDER BY table_name").fetchall():
            columns = [c for (c,) in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = ? "
                                                 "AND database_name = current_database() ORDER BY column_index",
                                                 [table]).fetchall() if c != "applied_at"]
            out[f"rows of {table}"] = sorted(map(repr, con.execute(
                f'SELECT {", ".join(chr(34) + c + chr(34) for c in columns)} FROM "{table}"').fetchall()))
        out["applied_at"] = con.execute("SELECT min(applied_at), max(applied_at) FROM schema_version").fetchone()
        return out
    finally:
        con.close()


@pytest.fixture
def no_template(monkeypatch):
    """This process has created no store yet: the next new file builds its schema statement by statement."""
    monkeypatch.setattr(template, "_TEMPLATES", {})


def test_a_copied_store_is_exactly_the_store_its_statements_build(tmp_path, no_template):
    built, copied = tmp_path / "built.duckdb", tmp_path / "copied.duckdb"
    echo_duck.open(built, embedder="hash").close()
    assert len(template._TEMPLATES) == 1, "the first new file became the template"
    assert template.place_template(str(copied)), "the next new file is a copy of it"
    copied.unlink()
    echo_duck.open(copied, embedder="hash").close()
    a, b = _read(built), _read(copied)
    assert a.pop("applied_at") < b.pop("applied_at"), "the copy's schema is dated when it was copied, not before"
    for part in a:
        assert a[part] == b[part], part
    with echo_duck.open(copied, embedder="hash") as mem:
        mem.remember("the copy works like any store", type="user")
        assert [m.content for m in mem.recall("copy works")] == ["the copy works like any store"]


def test_a_file_that_exists_or_left_a_write_ahead_log_is_never_replaced(tmp_path, no_template):
    echo_duck.open(tmp_path / "first.duckdb").close()
    taken = tmp_path / "taken.duckdb"
    taken.write_bytes(b"somebody's file")
    assert not template.place_template(str(taken))
    assert taken.read_bytes() == b"somebody's file"
    orphan = tmp_path / "orphan.duckdb"
    (tmp_path / "orphan.duckdb.wal").write_bytes(b"a log DuckDB would replay")
    assert not template.place_template(str(orphan))
    assert not orphan.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first.duckdb", "orphan.duckdb.wal", "taken.duckdb"]


def test_the_template_follows_the_sql_files(tmp_path, no_template, monkeypatch):
    echo_duck.open(tmp_path / "first.duckdb").close()
    monkeypatch.setattr(template.sqlfiles, "objects_checksum", lambda: "macros of another version")
    assert not template.place_template(str(tmp_path / "second.duckdb"))


def test_a_store_with_an_archive_folder_is_not_kept_as_the_template(tmp_path, no_template):
    path = tmp_path / "leftover.duckdb"
    archive_dir(str(path)).mkdir()  # a folder left behind by a deleted store of the same name
    echo_duck.open(path).close()
    assert template._TEMPLATES == {}


def test_the_template_folder_goes_when_the_process_ends(tmp_path):
    code = ("import echo_duck, sys; from echo_duck.storage import template\n"
            "for name in ('a', 'b'): echo_duck.open(sys.argv[1] + '/' + name + '.duckdb').close()\n"
            "[path] = template._TEMPLATES.values(); print(path)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    kept = Path(out.stdout.strip())
    assert kept.name.endswith(".duckdb") and kept.parent.name.startswith("echo_duck-templates-")
    assert not kept.parent.exists(), "removed at exit"


def test_keeping_the_template_leaves_the_new_store_locked(tmp_path, no_template):
    """The first new file is copied by a child process: closing a descriptor of it here would drop
    DuckDB's POSIX lock, and another process could open the store while this one writes."""
    path = tmp_path / "first.duckdb"
    code = ("import sys, echo_duck\ntry:\n    echo_duck.open(sys.argv[1], admin=True)\n"
            "except echo_duck.DatabaseLocked:\n    print('locked')")
    with echo_duck.open(path, embedder="hash", admin=True) as mem:
        assert len(template._TEMPLATES) == 1
        mem.remember("written while another process tries to open the file", type="user")
        out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "locked"


def test_a_killed_process_leaves_no_template_folder_behind_for_long(tmp_path, no_template, monkeypatch):
    """A process killed before its exit handlers left its folder: the next process to make one removes it."""
    monkeypatch.setattr(template, "_FOLDER", None)
    monkeypatch.setattr(template.tempfile, "tempdir", str(tmp_path))
    code = ("import os, sys, echo_duck; from echo_duck.storage import template\n"
            "echo_duck.open(sys.argv[1]).close(); print(template._FOLDER, flush=True); os._exit(0)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "a.duckdb")], capture_output=True, text=True,
                         check=True, env={**os.environ, "TMPDIR": str(tmp_path)})
    orphan = Path(out.stdout.strip())
    assert orphan.parent == tmp_path and orphan.exists(), "os._exit skips the exit handlers"
    echo_duck.open(tmp_path / "b.duckdb", embedder="hash").close()
    assert not orphan.exists() and template._FOLDER.exists()
