"""An agent handle's file rules hold on every path that reads or writes a file (an outside audit, 2026-12-06,
session 47): import_file read files inside the host's protected_paths that kb_add refused, an export replaced any
file the host process could write (another store, which then no longer opened), and kb_add/import_file answered
differently for archive folders that exist and ones that do not (which agents have archived rows, and in which
years) and named the files inside a protected folder. Real stores in tmp_path; each test failed on the code before.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from cli_run import run_cli

import echo_duck
from echo_duck import PermissionDenied
from echo_duck.io.exporters import export_jsonl, export_parquet
from echo_duck.io.importers import import_file

HOST_NOTES = "- The production database password hint is the maiden name plus 1987\n- Payroll runs on the 25th\n"


@pytest.fixture
def guarded(tmp_path, clock):
    """(host, protected folder holding the host's MEMORY.md); carol's superseded note archived to Parquet."""
    protected = tmp_path / "host-only"
    protected.mkdir()
    (protected / "MEMORY.md").write_text(HOST_NOTES)
    (protected / "acquisition-plans-2027.md").write_text("# Plans\n\nConfidential.\n")
    with echo_duck.open(tmp_path / "team.duckdb", admin=True, agent_id="host", embedder="hash", now=clock,
                        protected_paths=[str(protected)]) as host:
        carol = host.for_agent("carol")
        carol.remember("Carol private: interviewing with a competitor", type="user", key="job")
        carol.update("job", "Carol private: accepted the competitor's offer")
        clock.advance(days=120)
        assert host.archive().exported >= 1
        yield host, protected


def _refusal(call) -> str:
    with pytest.raises(PermissionDenied) as refused:
        call()
    return str(refused.value)


def test_an_agent_may_not_import_a_file_inside_the_protected_paths(guarded):
    host, protected = guarded
    bob = host.for_agent("bob")
    assert "may not import" in _refusal(lambda: import_file(bob, protected / "MEMORY.md"))
    assert bob.find() == []
    assert import_file(host, protected / "MEMORY.md").stored == 2  # the host may


def test_an_agent_may_not_import_a_file_with_a_second_hard_link(guarded, tmp_path):
    host, _ = guarded
    elsewhere = tmp_path / "home"
    elsewhere.mkdir()
    (elsewhere / "MEMORY.md").write_text(HOST_NOTES)
    os.link(elsewhere / "MEMORY.md", tmp_path / "notes.md")
    bob = host.for_agent("bob")
    assert "2 hard links" in _refusal(lambda: import_file(bob, tmp_path / "notes.md"))
    assert bob.find() == []


@pytest.mark.parametrize("export", [export_jsonl, export_parquet])
def test_an_agents_export_never_replaces_a_file(guarded, tmp_path, clock, export):
    host, _ = guarded
    other = tmp_path / "other_team.duckdb"
    with echo_duck.open(other, admin=True, embedder="hash", now=clock) as o:
        o.remember("Other team's fact", type="environment")
    before = other.read_bytes()
    bob = host.for_agent("bob")
    bob.remember("bob's note about lunch", type="environment")
    assert "writes only new files" in _refusal(lambda: export(bob, other))
    assert other.read_bytes() == before
    with echo_duck.open(other, admin=True, embedder="hash", now=clock) as o:  # still a store
        assert [m.content for m in o.find()] == ["Other team's fact"]
    assert export(bob, tmp_path / "bob.out").rows == 1  # a new file is written
    assert "writes only new files" in _refusal(lambda: export(bob, tmp_path / "bob.out"))  # and not replaced
    # the host replaces what it likes, with its backup: every agent's memories (bob's two)
    assert export(host, tmp_path / "bob.out").rows == 2


def test_an_agents_export_writes_nothing_inside_the_protected_paths(guarded):
    host, protected = guarded
    bob = host.for_agent("bob")
    assert "may not write" in _refusal(lambda: export_jsonl(bob, protected / "fresh.jsonl"))
    assert sorted(p.name for p in protected.iterdir()) == ["MEMORY.md", "acquisition-plans-2027.md"]


def test_a_refused_path_answers_alike_whether_it_exists_or_not(guarded):
    """carol has an archive partition, dave none, and one year is there, another not: the answers differ only in the
    path the caller gave; a protected folder's answer names none of its files."""
    host, protected = guarded
    bob, archive = host.for_agent("bob"), host.archive_dir
    years = sorted(p.name for p in (archive / "agent_id=carol").iterdir())
    asked = {"carol": archive / "agent_id=carol", "dave": archive / "agent_id=dave",
             "year there": archive / "agent_id=carol" / years[0], "year not": archive / "agent_id=carol" / "year=1999",
             "file there": protected / "MEMORY.md", "file not": protected / "NOTES.md"}
    for verb, call in (("add", lambda p: bob.kb_add(p)), ("import", lambda p: import_file(bob, p))):
        answers = {name: _refusal(lambda p=path, c=call: c(p)).replace(str(path), "<path>")
                   for name, path in asked.items()}
        assert answers["carol"] == answers["dave"] == answers["year there"] == answers["year not"], verb
        assert answers["file there"] == answers["file not"], verb
    folder = _refusal(lambda: bob.kb_add(protected))
    assert "acquisition" not in folder and "MEMORY" not in folder


def test_an_agent_adding_a_folder_skips_the_protected_folders_in_it_unread_and_unnamed(tmp_path, clock):
    project = tmp_path / "project"
    (project / "host-only").mkdir(parents=True)
    (project / "host-only" / "secrets.md").write_text("# Host\n\nThe vault unseal phrase is purple-otter-42.\n")
    (project / "readme.md").write_text("# Project\n\nDeploys go out on Thursdays.\n")
    with echo_duck.open(project / "team.duckdb", admin=True, embedder="hash", now=clock,
                        protected_paths=[str(project / "host-only")]) as host:
        bob = host.for_agent("bob")
        assert bob.kb_add(project).documents_added == 1
        assert [d.path.rsplit("/", 1)[-1] for d in bob.kb_documents()] == ["readme.md"]
        assert not [h for h in bob.kb_search("vault unseal phrase") if "purple-otter" in h.chunk.content]


def test_an_export_never_writes_through_a_leftover_temporary_name(guarded, tmp_path):
    """The export used to write <target>.tmp first, following a symlink or a hard link found under that name."""
    host, _ = guarded
    victim = tmp_path / "victim.txt"
    victim.write_text("the host's own file\n")
    (tmp_path / "out.jsonl.tmp").symlink_to(victim)
    os.link(tmp_path / "team.duckdb", tmp_path / "out.parquet.tmp")
    store = (tmp_path / "team.duckdb").read_bytes()
    for who in (host, host.for_agent("bob")):
        who.remember(f"{who.caller.agent_id}'s note", type="environment")
        assert export_jsonl(who, tmp_path / f"{who.caller.agent_id}-out.jsonl").rows >= 1
    assert export_jsonl(host, tmp_path / "out.jsonl").rows >= 1 and export_parquet(host, tmp_path / "out.parquet")
    assert victim.read_text() == "the host's own file\n"
    assert json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])["content"]
    assert (tmp_path / "out.parquet.tmp").stat().st_nlink == 2 and len(store) > 0
    assert not [p for p in tmp_path.iterdir() if re.fullmatch(r"\..*\.tmp", p.name)]  # no temporary file left


def test_the_cli_as_an_agent_exports_a_new_file_only(tmp_path, clock):
    store = tmp_path / "m.duckdb"
    with echo_duck.open(store, admin=True, embedder="hash", now=clock) as host:
        host.for_agent("bob").remember("bob's note about lunch", type="environment")
    out = tmp_path / "bob.jsonl"
    assert run_cli("--db", store, "--agent", "bob", "export", out).returncode == 0
    first = out.read_bytes()
    again = run_cli("--db", store, "--agent", "bob", "export", out)
    assert again.returncode != 0 and "writes only new files" in again.stdout + again.stderr
    assert out.read_bytes() == first
    assert run_cli("--db", store, "--agent", "bob", "--admin", "export", out).returncode == 0
