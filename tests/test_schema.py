import json
from pathlib import Path

import duckdb
import pytest

import echo_duck
from echo_duck.storage import sqlfiles
from echo_duck.storage.connection import connect
from echo_duck.storage.schema import NotAStore, current_version

CHECKSUMS = Path(__file__).parent / "migration_checksums.json"


def test_blank_file_gets_every_migration_once(db_path):
    with echo_duck.open(db_path, admin=True) as mem:
        versions = mem.sql("SELECT version, name FROM schema_version ORDER BY version").rows()
        assert versions == [(m.version, m.name) for m in sqlfiles.migrations()]
        assert mem.schema_version == current_version()
    with echo_duck.open(db_path, admin=True) as mem:  # reopening applies nothing twice
        assert mem.sql("SELECT count(*) FROM schema_version").item() == len(sqlfiles.migrations())


def test_released_migrations_never_change():
    """A released migration is immutable: change the schema with a new numbered file instead."""
    recorded = json.loads(CHECKSUMS.read_text())
    for migration in sqlfiles.migrations():
        name = f"{migration.version:04d}_{migration.name}"
        if name in recorded:
            assert migration.checksum == recorded[name], f"sql/migrations/{name}.sql changed after release"
    assert set(recorded) <= {f"{m.version:04d}_{m.name}" for m in sqlfiles.migrations()}


def test_newer_schema_is_refused_and_left_untouched(db_path):
    with echo_duck.open(db_path, admin=True) as mem:
        mem.remember("kept", type="user")
        mem.sql("INSERT INTO schema_version VALUES (999, 'future', 'x', now()::TIMESTAMP)", write=True)
    with pytest.raises(echo_duck.SchemaTooNew, match="upgrade echo_duck"):
        echo_duck.open(db_path, admin=True)
    con = duckdb.connect(str(db_path), read_only=True)
    assert con.execute("SELECT count(*) FROM memories").fetchone()[0] == 1
    con.close()


def test_older_file_is_migrated_and_keeps_its_data(db_path):
    """Build a file at schema version 1 exactly as the first release wrote it, then open it."""
    con = connect(db_path)
    con.execute(sqlfiles.query("create_schema_version").sql)
    first = sqlfiles.migrations()[0]
    con.execute(first.sql)
    con.execute("INSERT INTO schema_version VALUES (1, ?, ?, now()::TIMESTAMP)", [first.name, first.checksum])
    con.execute("""INSERT INTO memories (id, agent_id, type, content, created_at, updated_at, provenance)
                   VALUES (uuid(), 'default', 'user', 'old fact', now()::TIMESTAMP, now()::TIMESTAMP, 3)""")
    con.close()
    with echo_duck.open(db_path, admin=True) as mem:
        assert mem.schema_version == current_version()
        assert [m.content for m in mem.find()] == ["old fact"]


def test_read_only_open_never_migrates(db_path):
    with echo_duck.open(db_path, admin=True) as mem:
        mem.remember("a", type="user")
    with echo_duck.open(db_path, read_only=True, admin=True) as ro:
        assert ro.find()[0].content == "a"
        with pytest.raises(echo_duck.EchoDuckError, match="read_only"):
            ro.remember("b", type="user")


def test_read_only_open_of_missing_file_says_how_to_create_it(tmp_path):
    with pytest.raises(echo_duck.MemoryNotFound, match="echo-duck init"):
        echo_duck.open(tmp_path / "nope.duckdb", read_only=True, admin=True)


def test_foreign_duckdb_file_is_not_taken_over(db_path):
    con = duckdb.connect(str(db_path))
    con.execute("CREATE TABLE sales(x INT)")
    con.close()
    with pytest.raises(NotAStore):
        echo_duck.open(db_path, admin=True)


def test_garbage_file_is_a_clear_storage_error(db_path):
    db_path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(echo_duck.StorageError, match="cannot open"):
        echo_duck.open(db_path, admin=True)


def test_every_macro_and_view_file_installs(mem):
    macros = set(mem.sql("SELECT function_name FROM duckdb_functions() WHERE database_name = 'mem'")["function_name"])
    assert {"can_see", "visible_memories"} <= macros


def test_tables_are_commented_for_analysts(mem):
    comments = dict(mem.sql("SELECT table_name, comment FROM duckdb_tables() WHERE database_name = 'mem'").rows())
    for table in ("memories", "memory_vectors", "sessions", "messages", "episodes", "contradictions",
                  "memory_events", "blocked_writes", "memberships", "settings"):
        assert comments.get(table), f"table {table} has no COMMENT"


def test_schema_8_sessions_are_rekeyed_by_agent_and_keep_their_messages(db_path):
    """0009 rebuilds sessions, messages and consolidation_jobs keyed by (agent, id); nothing is lost."""
    con = connect(db_path)
    con.execute(sqlfiles.query("create_schema_version").sql)
    for migration in sqlfiles.migrations():
        if migration.version > 8:
            break
        con.execute(migration.sql)
        con.execute("INSERT INTO schema_version VALUES (?, ?, ?, now()::TIMESTAMP)",
                    [migration.version, migration.name, migration.checksum])
    con.execute("""INSERT INTO sessions VALUES ('chat-1', 'alice', 'Release plan', TIMESTAMP '2026-01-01 09:00',
                                                TIMESTAMP '2026-01-01 09:05', NULL, NULL)""")
    con.execute("""INSERT INTO messages VALUES (uuid(), 'chat-1', 1, 'user', 'Release plan first', TIMESTAMP '2026-01-01 09:00'),
                                               (uuid(), 'chat-1', 2, 'assistant', 'Noted', TIMESTAMP '2026-01-01 09:05'),
                                               (uuid(), 'gone', 1, 'user', 'orphan', TIMESTAMP '2026-01-01 09:00')""")
    con.execute("""INSERT INTO consolidation_jobs (session_id, agent_id, status, requested_at, next_attempt_at)
                   VALUES ('chat-1', 'alice', 'pending', TIMESTAMP '2026-01-01 10:00', TIMESTAMP '2026-01-01 10:00')""")
    con.close()
    with echo_duck.open(db_path, admin=True, embedder="hash") as host:
        assert host.schema_version == current_version()
        alice, bob = host.for_agent("alice"), host.for_agent("bob")
        assert [(m.seq, m.content) for m in alice.messages("chat-1")] == [(1, "Release plan first"), (2, "Noted")]
        assert alice.session("chat-1").title == "Release plan"
        assert host.sql("SELECT agent_id FROM messages WHERE session_id = 'gone'").item() == ""
        assert [j["session_id"] for j in alice.jobs()] == ["chat-1"]
        bob.add_message("chat-1", "user", "bob's own chat-1")
        assert [m.seq for m in bob.messages("chat-1")] == [1] and len(alice.messages("chat-1")) == 2
