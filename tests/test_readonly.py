"""Read-only analyst access (issue 7): `echo_duck.open(path, read_only=True)` and `echo-duck sql` never
write. No reinforcement on recall, no retrieval-log rows, no migrations, and the .duckdb file keeps its
bytes and mtime with no .wal appearing. Also: the file opens from plain DuckDB with the extensions
loaded from their wheels, as the README and sql/REFERENCE.md describe, and the fts-dependent macros
fail clearly without fts."""

from __future__ import annotations

import hashlib
import json
import shutil
import warnings
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

import echo_duck
from echo_duck import EchoDuckError, InvalidInput, SchemaTooNew
from echo_duck.cli.main import cli
from echo_duck.storage.extensions import extension_path


def fingerprint(path: Path) -> tuple[str, int, bool]:
    """sha256 of the file, its mtime, and whether a write-ahead log exists next to it."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest, path.stat().st_mtime_ns, Path(f"{path}.wal").exists()


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    path = tmp_path_factory.mktemp("template") / "mem.duckdb"
    with echo_duck.open(path, embedder="hash", admin=True) as mem:
        memory = mem.remember("The package manager is pnpm", type="environment", key="package_manager")
        mem.remember("User prefers answers in Chinese", type="user", key="reply_language")
    return path, memory.id


@pytest.fixture
def store(template, tmp_path):
    """A fresh copy of the template store for each test (building one costs more than copying)."""
    path = tmp_path / "mem.duckdb"
    shutil.copyfile(template[0], path)
    return path, template[1]


def test_read_only_open_never_writes(store):
    path, memory_id = store
    before = fingerprint(path)
    assert before[2] is False  # a clean close checkpoints: no WAL to begin with
    with echo_duck.open(path, read_only=True, embedder="hash", admin=True) as mem:
        hits = mem.recall("package manager")
        assert hits and hits[0].id == memory_id
        assert mem.find(key="package_manager") and mem.snapshot()
        counts = mem.sql("SELECT access_count, last_accessed FROM memories WHERE key = 'package_manager'").to_dicts()
        assert counts == [{"access_count": 0, "last_accessed": None}]  # not reinforced
        assert mem.sql("SELECT count(*) AS n FROM recall_log")["n"][0] == 0  # not logged
        with pytest.raises(EchoDuckError, match="read_only"):
            mem.remember("A new fact", type="environment")
        with pytest.raises(InvalidInput):
            mem.sql("DELETE FROM memories", write=True)
    assert fingerprint(path) == before
    with echo_duck.open(path, embedder="hash", admin=True) as mem:  # and nothing was deferred to a later writer
        assert mem.get(memory_id).access_count == 0


def test_writable_recall_does_reinforce_and_log(store):
    """The contrast that makes the read-only test meaningful: the same recall on a writable store writes."""
    path, memory_id = store
    with echo_duck.open(path, embedder="hash", admin=True) as mem:
        mem.recall("package manager")
        assert mem.get(memory_id).access_count == 1
        assert mem.sql("SELECT count(*) AS n FROM recall_log")["n"][0] == 1


def test_cli_sql_is_read_only(store):
    path, _ = store
    before = fingerprint(path)
    runner = CliRunner()
    result = runner.invoke(cli, ["sql", "SELECT key, access_count FROM memories ORDER BY key", "--db", str(path), "--json", "--admin"])
    assert result.exit_code == 0, result.output
    assert {r["key"] for r in json.loads(result.stdout)} == {"package_manager", "reply_language"}
    refused = runner.invoke(cli, ["sql", "UPDATE memories SET importance = 1", "--db", str(path), "--admin"])
    assert refused.exit_code != 0 and "read-only" in refused.output
    assert fingerprint(path) == before


def _downgrade(path: Path) -> None:
    """Make the file look as if written by an echo_duck that knew one migration less."""
    with duckdb.connect(str(path)) as raw:
        raw.execute("DELETE FROM schema_version WHERE version = (SELECT max(version) FROM schema_version)")


def test_older_schema_is_refused_read_only_without_migrating(store):
    path, _ = store
    _downgrade(path)
    before = fingerprint(path)
    with pytest.raises(EchoDuckError, match="needs migrating") as caught:
        echo_duck.open(path, read_only=True, embedder="hash", admin=True)
    assert "without read_only" in str(caught.value)
    assert fingerprint(path) == before
    result = CliRunner().invoke(cli, ["sql", "SELECT 1", "--db", str(path), "--admin"])
    assert result.exit_code != 0 and "needs migrating" in result.output
    assert fingerprint(path) == before


def test_newer_schema_is_refused_read_only(store):
    path, _ = store
    with duckdb.connect(str(path)) as raw:
        raw.execute("INSERT INTO schema_version VALUES (99, 'future', 'x', TIMESTAMP '2030-01-01')")
    before = fingerprint(path)
    with pytest.raises(SchemaTooNew, match="pip install -U echo-duck"):
        echo_duck.open(path, read_only=True, embedder="hash", admin=True)
    assert fingerprint(path) == before


def test_macros_from_another_version_warn_read_only_and_are_updated_by_a_writable_open(store):
    path, memory_id = store
    with duckdb.connect(str(path)) as raw:  # as if the last writable open was by another echo-duck
        raw.execute("INSERT INTO schema_objects VALUES ('from-another-version', now()::TIMESTAMP)")
    before = fingerprint(path)
    with pytest.warns(RuntimeWarning, match="open it once without read_only"):
        echo_duck.open(path, read_only=True, embedder="hash", admin=True).close()
    assert fingerprint(path) == before  # warned, changed nothing
    echo_duck.open(path, embedder="hash", admin=True).close()  # reinstalls the current macros and views
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with echo_duck.open(path, read_only=True, embedder="hash", admin=True) as mem:
            assert mem.recall("package manager")[0].id == memory_id


# -- plain DuckDB ------------------------------------------------------------------------------------

def load(con, name):
    con.execute(f"LOAD '{extension_path(name)}'")


def test_plain_duckdb_reads_the_store_with_the_wheel_extensions(store):
    """What the README's *Analyst access* section shows, run as written (offline: no INSTALL)."""
    path, memory_id = store
    before = fingerprint(path)
    config = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    with duckdb.connect(":memory:", config=config) as con:
        load(con, "vss")
        load(con, "fts")
        con.execute(f"ATTACH '{path}' AS mem (READ_ONLY)")
        con.execute("USE mem")
        (hit,) = con.execute("SELECT memory_id::VARCHAR FROM bm25_search('package manager', 5)").fetchall()
        assert hit[0] == memory_id
        decay = con.execute("SELECT key, effective_importance FROM memory_decay ORDER BY key").fetchall()
        assert [k for k, _ in decay] == ["package_manager", "reply_language"]
    assert fingerprint(path) == before


def test_fts_macros_fail_clearly_without_fts_and_others_work(store):
    """The macros sql/REFERENCE.md marks as needing fts do; the unmarked ones do not."""
    path, _ = store
    config = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    with duckdb.connect(str(path), read_only=True, config=config) as con:
        assert con.execute("SELECT count(*) FROM memory_decay").fetchone()[0] == 2
        assert con.execute("SELECT count(*) FROM memories WHERE can_see(scope, agent_id, team_id, tenant_id, "
                           "source_session, tags, sensitivity, 'default', NULL)").fetchone()[0] == 2
        with pytest.raises(duckdb.Error, match="stem"):
            con.execute("SELECT * FROM bm25_search('package', 5)").fetchall()
