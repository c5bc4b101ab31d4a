"""SQL that is what it says (SPEC T4, issue 18): the read-only path cannot write, redefine or reach the
filesystem; file access is an explicit admin option; writable SQL is an admin operation and logged.

Every attack the audit reproduced on 587d2a6 is replayed here, and each time the store's every table
and the filesystem are compared before and after.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import run_cli

import echo_duck
from echo_duck import EchoDuckError, InvalidInput


@pytest.fixture
def admin(tmp_path):
    with echo_duck.open(tmp_path / "m.duckdb", admin=True, agent_id="a1", embedder="hash") as mem:
        mem.remember("a1's private fact about ferns", type="user")
        mem.for_agent("a2").remember("a2's private fact about cacti", type="user")
        yield mem


def fingerprint(mem) -> dict:
    tables = mem.sql("SELECT table_name FROM duckdb_tables() WHERE database_name = 'mem' ORDER BY 1").to_series()
    out = {t: mem.sql(f'SELECT md5(string_agg(CAST(t AS VARCHAR), \'|\' ORDER BY CAST(t AS VARCHAR))) FROM "{t}" t').item()
           for t in tables}
    out["macros"] = mem.sql("SELECT string_agg(function_name || coalesce(macro_definition, ''), '|' "
                            "ORDER BY function_name) FROM duckdb_functions() WHERE database_name = 'mem'").item()
    return out


ATTACKS = [
    "EXPLAIN ANALYZE DELETE FROM memories",
    "explain  /* hidden */ analyze UPDATE memories SET content = 'rewritten past the scanner'",
    "EXPLAIN (ANALYZE) DELETE FROM memory_events",
    "EXPLAIN ANALYZE DROP TABLE blocked_writes",
    "EXPLAIN ANALYZE INSERT INTO memberships VALUES ('a2', 'team', 'red', now()::TIMESTAMP, NULL)",
    "EXPLAIN ANALYZE CREATE OR REPLACE MACRO can_see(a,b,c,d,e,f,g,h,i) AS true",
    "CREATE OR REPLACE MACRO can_see(a,b,c,d,e,f,g,h,i) AS true",
    "CREATE TEMP MACRO can_see(a,b,c,d,e,f,g,h,i) AS true",
    "DELETE FROM memories",
    "UPDATE memory_events SET after = NULL",
    "INSERT INTO agent_rights VALUES ('a2', 'publish:public', now()::TIMESTAMP, 'me', NULL)",
    "COPY (SELECT * FROM memories) TO '{out}/leak.csv'",
    "EXPLAIN ANALYZE COPY (SELECT content FROM memories) TO '{out}/leak2.csv'",
    "EXPORT DATABASE '{out}/dump'",
    "ATTACH '{out}/other.duckdb' AS other",
    "SET enable_external_access = true",
    "PRAGMA enable_profiling",
    "CHECKPOINT",
    "SELECT nextval('memory_event_seq')",
    "SELECT 1; DELETE FROM memories",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_the_read_only_path_refuses_every_write(admin, tmp_path, attack):
    out = tmp_path / "out"
    out.mkdir()
    before = fingerprint(admin)
    with pytest.raises(EchoDuckError):
        admin.sql(attack.format(out=out))
    assert fingerprint(admin) == before
    assert list(out.iterdir()) == []
    # and the store still works with its own macros (can_see was not redefined)
    assert [h.content for h in admin.for_agent("a2").recall("ferns cacti", arms=["keyword"])] == [
        "a2's private fact about cacti"]


FILE_READS = [
    "SELECT * FROM read_csv('/etc/passwd', sep = ':')",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM read_blob('{neighbour}')",  # another store beside this one (the store itself is attached)
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM read_parquet('{outside}')",
    "SELECT * FROM read_json_auto('/etc/os-release')",
]


@pytest.mark.parametrize("query", FILE_READS)
def test_the_read_only_path_cannot_reach_the_filesystem(admin, tmp_path, query):
    outside = tmp_path / "outside.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"secret": ["from outside the store"]}), outside)
    neighbour = Path(admin.path).with_name("another-tenant.duckdb")
    neighbour.write_bytes(b"another tenant's store")
    with pytest.raises(EchoDuckError):
        admin.sql(query.format(neighbour=neighbour, outside=outside))


def test_the_working_folders_spill_directory_is_no_way_out(tmp_path, monkeypatch):
    # DuckDB keeps its spill folder readable with external access off; an in-memory instance's is <cwd>/.tmp
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "notes.txt").write_text("a file in the working folder")
    with echo_duck.open(tmp_path / "store" / "m.duckdb", admin=True, embedder="hash") as mem:
        with pytest.raises(EchoDuckError):
            mem.sql("SELECT content FROM read_text('.tmp/notes.txt')")


def test_files_are_an_explicit_admin_option(tmp_path):
    data = tmp_path / "labels.csv"
    data.write_text("key,label\nferns,plants\n")
    path = tmp_path / "m.duckdb"
    with echo_duck.open(path, admin=True, embedder="hash") as mem:
        mem.remember("fact", type="user")
    with echo_duck.open(path, admin=True, allow_files=True, embedder="hash") as analyst:
        assert analyst.sql(f"SELECT label FROM read_csv('{data}')").item() == "plants"
        with pytest.raises(InvalidInput):  # reading files, yes; the read-only path still writes nothing
            analyst.sql(f"COPY (SELECT 1) TO '{tmp_path / 'x.csv'}'")
        with pytest.raises(InvalidInput, match="EXPLAIN ANALYZE"):
            analyst.sql(f"EXPLAIN ANALYZE COPY (SELECT 1) TO '{tmp_path / 'y.csv'}'")
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "y.csv").exists()


def test_plain_selects_explain_and_describe_still_work(admin):
    assert admin.sql("SELECT count(*) FROM memories").item() == 2
    assert admin.sql("DESCRIBE memories").height > 20
    assert "explain_value" in admin.sql("EXPLAIN SELECT * FROM memories").columns
    assert admin.sql("SELECT * FROM memory_health").height == 1
    assert admin.sql("SELECT content FROM memories WHERE agent_id = $a", {"a": "a2"}).item() == "a2's private fact about cacti"


def test_writable_sql_is_logged_with_the_settings_it_changed(admin):
    admin.sql("UPDATE settings SET value = 0.07 WHERE name = 'archive_threshold'", write=True)
    admin.set_setting("importance_decay_days", 45)
    events = admin.sql("SELECT action, actor, reason, before::VARCHAR AS b, after::VARCHAR AS a FROM memory_events "
                       "WHERE memory_id IS NULL ORDER BY event_id").to_dicts()
    assert [e["action"] for e in events] == ["sql", "setting", "setting"]
    assert events[0]["reason"].startswith("UPDATE settings") and events[0]["actor"] == "admin:a1"
    assert '"archive_threshold"' in events[1]["a"] and '0.05' in events[1]["b"] and '0.07' in events[1]["a"]
    assert '"importance_decay_days"' in events[2]["a"]
    assert admin.settings()["importance_decay_days"] == 45
    assert admin.verify_events().ok


@pytest.mark.slow
def test_the_cli_sql_is_read_only_and_file_free_unless_asked(tmp_path):
    db = str(tmp_path / "cli.duckdb")

    def run(*args):
        return run_cli(*args, "--db", db)

    assert run("add", "fact", "--type", "user").returncode == 0
    assert run("sql", "--admin", "EXPLAIN ANALYZE DELETE FROM memories").returncode == 2
    assert run("sql", "--admin", "SELECT * FROM read_text('/etc/hostname')").returncode == 1
    ok = run("sql", "--admin", "--allow-files", "SELECT count(*) AS n FROM read_text('/etc/hostname')", "--json")
    assert ok.returncode == 0, ok.stderr
    assert run("sql", "--admin", "SELECT count(*) AS n FROM memories", "--json").stdout.count('"n": 1') == 1
