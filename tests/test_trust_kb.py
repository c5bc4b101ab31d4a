"""A scoped knowledge base (issue 18): documents belong to an agent and a scope like memories, a symlink
leaving the ingested folder is refused, and secrets are masked before anything is stored.
"""

from __future__ import annotations

import os

import pytest
from cli_run import run_cli

import echo_duck
from echo_duck import InvalidInput, MemoryNotFound, PermissionDenied

KEY = "sk-proj-Zq8v3LmN4pR7sT1uW5xY9bC2dE6fG0hJ"


@pytest.fixture
def host(tmp_path):
    with echo_duck.open(tmp_path / "m.duckdb", admin=True, agent_id="host", embedder="hash") as h:
        yield h


def test_a_private_document_is_its_owners_alone(host, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "plan.md").write_text("# Plan\n\nThe acquisition of Initech closes on 3 March.\n")
    a1, a2 = host.for_agent("a1"), host.for_agent("a2")
    a1.kb_add(folder, source="a1-notes")
    assert [h.chunk.source for h in a1.kb_search("Initech acquisition")] == ["a1-notes"]
    assert a2.kb_search("Initech acquisition") == []
    assert a2.kb_documents() == []
    assert not [h for h in a2.recall("Initech acquisition", include_kb=True) if h.origin == "kb"]
    with pytest.raises(MemoryNotFound):
        a2.kb_remove("a1-notes")
    with pytest.raises(MemoryNotFound):
        a2.kb_remove(folder / "plan.md")
    assert len(a1.kb_documents()) == 1
    # a2 adding the same file gets its own document; removing it leaves a1's
    a2.kb_add(folder, source="a2-copy")
    a2.kb_remove(folder)
    assert [d.source for d in a1.kb_documents()] == ["a1-notes"]
    assert host.kb_remove("a1-notes").documents_removed == 1  # an admin removes anyone's


def test_publishing_a_document_needs_the_right(host):
    a1 = host.for_agent("a1")
    with pytest.raises(PermissionDenied, match="may not publish"):
        a1.kb_add("# Runbook\n\nRestart the queue with make restart.\n", source="runbook", scope="public")
    host.grant_right("a1", "publish:public")
    a1.kb_add("# Runbook\n\nRestart the queue with make restart.\n", source="runbook", scope="public")
    assert [h.chunk.source for h in host.for_agent("a2").kb_search("restart the queue")] == ["runbook"]
    host.grant(team="red", agent_id="a3")
    with pytest.raises(PermissionDenied):
        host.for_agent("a3").kb_add("# Red\n\nRed team notes.\n", source="red", scope="team", team_id="red")


def test_a_symlink_out_of_the_folder_is_refused(host, tmp_path):
    outside = tmp_path / "home" / ".aws"
    outside.mkdir(parents=True)
    (outside / "credentials").write_text("[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "ok.md").write_text("# Fine\n\nA normal document.\n")
    (folder / "inside.md").symlink_to(folder / "ok.md")  # a link within the folder is fine
    (folder / "creds.md").symlink_to(outside / "credentials")
    with pytest.raises(InvalidInput, match="outside the folder"):
        host.kb_add(folder)
    assert host.kb_documents() == []
    os.remove(folder / "creds.md")
    assert host.kb_add(folder).documents_added == 2
    link = tmp_path / "single.md"
    link.symlink_to(outside / "credentials")
    with pytest.raises(InvalidInput, match="symlink"):
        host.kb_add(link)
    assert host.sql("SELECT count(*) FROM kb_chunks WHERE content LIKE '%wJalrXUtnFEMI%'").item() == 0


def test_secrets_are_masked_before_anything_is_stored(tmp_path):
    path = tmp_path / "m.duckdb"
    doc = tmp_path / "setup.md"
    doc.write_text(f"# Setup\n\nExport OPENAI_API_KEY={KEY} before running the evals.\n")
    with echo_duck.open(path, admin=True, embedder="hash") as mem:
        report = mem.kb_add(doc)
        assert report.flagged and "masked" in report.flagged[0]
        chunk = mem.kb_search("running the evals")[0].chunk
        assert KEY not in chunk.content and "****" in chunk.content and chunk.flagged
    leaked = [p.name for p in tmp_path.rglob("*") if p.is_file() and p != doc and KEY[8:].encode() in p.read_bytes()]
    assert leaked == []


@pytest.mark.slow
def test_the_cli_kb_commands_are_scoped_to_the_agent(tmp_path):
    db = str(tmp_path / "cli.duckdb")
    doc = tmp_path / "faq.md"
    doc.write_text("# FAQ\n\nThe wifi password rotates every Monday.\n")

    def run(*args):
        return run_cli("kb", *args, "--db", db)

    assert run("add", str(doc), "--agent", "a1").returncode == 0
    assert "wifi" in run("search", "wifi password", "--agent", "a1").stdout
    assert "wifi" not in run("search", "wifi password", "--agent", "a2").stdout
    assert run("remove", "faq.md", "--agent", "a2").returncode == 1
    assert run("remove", "faq.md", "--agent", "a1").returncode == 0
