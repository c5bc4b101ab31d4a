"""The host's backup: an admin export (every agent's memories) and its trusted restore.

An outside review (session 52) of the change that made an admin export the host's backup found four holes: an agent
handle imported the backup and read every agent's memories; a restored chain whose newest version was forgotten came
back live; restoring into the store it came from wrote archived versions again over the live fact; and an agent's
export, checked "new file only" at its start, replaced a file that appeared while it ran. Real stores in tmp_path;
each test fails on the code before.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

import echo_duck
from echo_duck.io import exporters
from echo_duck.io.exporters import export_jsonl, export_parquet
from echo_duck.io.importers import import_file


@pytest.fixture
def team(tmp_path):
    with echo_duck.open(tmp_path / "team.duckdb", admin=True, embedder="hash") as host:
        host.grant(team="blue", agent_id="carol", publish=True)
        host.for_agent("bob").remember("Bob was diagnosed with diabetes last spring", type="user",
                                       sensitivity="sensitive")
        host.for_agent("carol", team_id="blue").remember("Blue team deploys on Fridays", type="environment",
                                                         scope="team", team_id="blue")
        yield host


@pytest.mark.parametrize("export", [export_jsonl, export_parquet])
def test_an_agent_may_not_import_nor_add_the_hosts_backup(team, tmp_path, export):
    backup = tmp_path / ("team-backup.jsonl" if export is export_jsonl else "team-backup.parquet")
    assert export(team, backup).rows == 2
    mallory = team.for_agent("mallory")
    with pytest.raises(echo_duck.PermissionDenied, match="the host's backup"):
        import_file(mallory, backup)
    copy = tmp_path / "notes.txt"  # named like a document: the knowledge base refuses it too
    copy.write_bytes(backup.read_bytes())
    if export is export_jsonl:
        with pytest.raises(echo_duck.PermissionDenied, match="the host's backup"):
            mallory.kb_add(copy)
    assert mallory.find() == [] and mallory.recall("diabetes") == []
    # the host restores it (and an agent's own export is no backup: another agent may import it)
    with echo_duck.open(tmp_path / "fresh.duckdb", admin=True, embedder="hash") as fresh:
        assert import_file(fresh, backup, trusted=True, provenance="keep").stored == 2
    mine = tmp_path / "mallory.jsonl"
    mallory.remember("Mallory likes tea", type="user")
    export_jsonl(mallory, mine)
    assert "host_backup" not in mine.read_text() and import_file(team.for_agent("eve"), mine).stored == 1
    if export is export_parquet:
        assert pq.read_schema(backup).metadata[b"host_backup"] == b"true"


def test_a_chain_whose_newest_version_was_forgotten_is_not_restored(team, tmp_path):
    bob = team.for_agent("bob")
    bob.remember("Bob's address is 1 Elm Street", type="user", key="addr")
    newer = bob.update("addr", "Bob's address is 2 Oak Avenue")
    bob.forget(newer.id, provenance="user_stated")
    export_jsonl(team, tmp_path / "backup.jsonl", include_history=True)
    with echo_duck.open(tmp_path / "fresh.duckdb", admin=True, embedder="hash") as fresh:
        report = import_file(fresh, tmp_path / "backup.jsonl", trusted=True, provenance="keep")
        assert fresh.sql("SELECT count(*) AS n FROM memories WHERE key = 'addr'")["n"][0] == 0
        assert report.by_reason.get("superseded") == 1 and "Elm Street" not in fresh.for_agent("bob").snapshot()


def test_restoring_into_the_same_store_does_not_write_archived_versions_again(team, tmp_path):
    team.remember("The staging database port is 5432", type="environment", key="port", provenance="user_stated")
    team.update("port", "The staging database port is 6543", provenance="user_stated")
    team.update("port", "The staging database port is 7654", provenance="user_stated")
    team.archive(older_than_days=0)
    export_jsonl(team, tmp_path / "backup.jsonl", include_history=True)
    report = import_file(team, tmp_path / "backup.jsonl", trusted=True, provenance="keep")
    assert report.stored == 0
    assert [m.content for m in team.find(key="port")] == ["The staging database port is 7654"]


def test_an_agents_export_never_replaces_a_file_that_appears_while_it_runs(team, tmp_path, monkeypatch):
    backup = tmp_path / "nightly-backup.jsonl"
    real_rows = exporters._rows

    def rows_then_the_host_exports(mem, history):
        frame = real_rows(mem, history)
        if not mem.caller.admin:  # meanwhile the host's scheduled backup lands at that name
            monkeypatch.setattr(exporters, "_rows", real_rows)
            export_jsonl(team, backup, include_history=True)
        return frame

    monkeypatch.setattr(exporters, "_rows", rows_then_the_host_exports)
    with pytest.raises(echo_duck.PermissionDenied, match="appeared while exporting"):
        export_jsonl(team.for_agent("mallory"), backup)
    owners = {json.loads(line)["agent_id"] for line in backup.read_text().splitlines()}
    assert owners == {"bob", "carol"} and not list(tmp_path.glob(".nightly-backup*"))


# -- a third review: the mark read whole, and a forgotten old version

def test_the_mark_is_read_on_a_first_record_of_any_length(tmp_path):
    """The first line was read up to 1 MiB: an agent's oldest note made longer than that (5,600 source refs) read
    as no backup. A memory now carries at most 200 refs, and the first record is read whole."""
    from echo_duck.storage.agent_files import is_host_backup

    with echo_duck.open(tmp_path / "s.duckdb", embedder="hash") as mem, \
            pytest.raises(echo_duck.InvalidInput, match="source_refs has more than 1,000 values; .* 200 source refs"):
        mem.remember("a note", type="user", source_refs=[f"ref:{i:0>190}" for i in range(5600)])
    long_first = tmp_path / "backup.jsonl"
    long_first.write_text("\n" + json.dumps({"content": "x" * (2 << 20), "host_backup": True}) + "\n"
                          + json.dumps({"content": "y", "host_backup": True}) + "\n", encoding="utf-8")
    assert is_host_backup(long_first)
    with echo_duck.open(tmp_path / "s.duckdb", embedder="hash") as mem, \
            pytest.raises(echo_duck.PermissionDenied, match="the host's backup"):
        import_file(mem, long_first)


def test_a_forgotten_old_version_stays_forgotten_on_a_restore(team, tmp_path):
    old = team.remember("Home address is 12 Elm Street", type="user", key="address", provenance="user_stated")
    team.update("address", content="Home address is 7 Oak Lane", provenance="user_stated")
    team.forget(old.id, reason="the user asked to forget the old address", provenance="user_stated")
    export_jsonl(team, tmp_path / "backup.jsonl", include_history=True)
    with echo_duck.open(tmp_path / "restored.duckdb", admin=True, embedder="hash") as restored:
        import_file(restored, tmp_path / "backup.jsonl", trusted=True, provenance="keep")
        found = [h.memory.content for h in restored.recall("home address Elm Street", k=5, include_archived=True)]
        assert "Home address is 12 Elm Street" not in found and "Home address is 7 Oak Lane" in found


def test_the_cli_restore_of_an_admin_export_keeps_who_said_it(tmp_path):
    """Reviewer AG (session 56): the README calls `export --admin` a backup for `import --trusted`, but the restore
    wrote every record as legacy unless --provenance keep was given: a user_stated fact came back as the lowest
    provenance, which any model-inferred write may replace."""
    from click.testing import CliRunner

    from echo_duck.cli.main import cli

    source, restored, backup = tmp_path / "src.duckdb", tmp_path / "restored.duckdb", tmp_path / "backup.jsonl"
    with echo_duck.open(source, agent_id="coder", embedder="hash") as mem:
        mem.remember("User prefers answers in Chinese", type="user", key="reply_language", provenance="user_stated")
        mem.remember("The build runs nightly", type="environment")
    runner = CliRunner(env={"ECHO_DUCK_MODEL": "hash"})
    assert runner.invoke(cli, ["--db", str(source), "export", str(backup), "--admin"]).exit_code == 0
    done = runner.invoke(cli, ["--db", str(restored), "import", str(backup), "--trusted", "--admin", "--json"])
    assert done.exit_code == 0, done.output
    query = "SELECT agent_id, provenance, status, content FROM memories ORDER BY content"
    with echo_duck.open(source, admin=True, read_only=True, embedder="hash") as before, \
            echo_duck.open(restored, admin=True, read_only=True, embedder="hash") as after:
        assert after.sql(query).rows() == before.sql(query).rows()
    plain = runner.invoke(cli, ["--db", str(tmp_path / "other.duckdb"), "import", str(backup), "--admin", "--json"])
    assert plain.exit_code == 0, plain.output  # without --trusted, legacy as before
    with echo_duck.open(tmp_path / "other.duckdb", admin=True, read_only=True, embedder="hash") as other:
        assert set(other.sql("SELECT DISTINCT provenance FROM memories")["provenance"]) == {0}


def test_a_restore_keeps_a_keys_newer_fact_current_after_its_old_one_went_to_parquet(tmp_path):
    """Reviewer AJ (session 56): a key's old chain was exported (its head still active in Parquet) and the key written
    again; the backup with history holds two chains of the key, and the restore wrote the older chain's head last,
    which superseded the newer fact: find(key) answered with the stale value."""
    from conftest import Clock

    clock = Clock()
    with echo_duck.open(tmp_path / "a.duckdb", admin=True, embedder="hash", now=clock) as host:
        alice = host.for_agent("alice")
        alice.remember("The vault code is 1234", type="environment", key="vault")
        clock.advance(days=3)
        alice.update("vault", "The vault code is 5678")
        clock.advance(days=3000)
        host.decay()
        clock.advance(days=400)
        assert host.archive(older_than_days=30).exported == 2
        alice.remember("The vault code is 9999", type="environment", key="vault")
        export_jsonl(host, tmp_path / "backup.jsonl", include_history=True)
    with echo_duck.open(tmp_path / "b.duckdb", admin=True, embedder="hash") as restored:
        import_file(restored, tmp_path / "backup.jsonl", trusted=True)
        assert [m.content for m in restored.for_agent("alice").find(key="vault")] == ["The vault code is 9999"]
