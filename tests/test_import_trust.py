"""Imports keep trust (issue 20 item 8, echo_duck/io/import_trust.py): a record's own provenance (or source)
with provenance="keep", its access counts, its version chain, echo-agent's HISTORY.md; and the imported
profile and procedures reach the prompt the way seed 004 injects them."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

import echo_duck
from echo_duck.io.importers import import_file

FIX = Path(__file__).resolve().parent.parent / "data_fixtures" / "import"


@pytest.fixture
def mem(db_path, clock):
    with echo_duck.open(db_path, now=clock, embedder="hash", admin=True) as m:  # keep needs trusted=True
        yield m


def test_keep_takes_each_records_own_provenance_or_source(mem, tmp_path):
    path = tmp_path / "user_memory.json"
    path.write_text(json.dumps([
        {"id": "a", "key": "reply_language", "content": "The user wants answers in Chinese", "source": "user_stated"},
        {"id": "b", "key": "editor", "content": "The user edits in Neovim", "source": "agent_proactive"},
        {"id": "c", "key": "team", "content": "The user is on the platform team", "provenance": "consolidated"},
        {"id": "d", "key": "tz", "content": "The user is in UTC+8"},
    ]), encoding="utf-8")
    import_file(mem, path, provenance="keep", trusted=True)
    got = {m.key: m.provenance_name for m in mem.find()}
    assert got == {"reply_language": "user_stated", "editor": "model_inferred", "team": "consolidated", "tz": "legacy"}
    # the user's own words are not overwritten by a later guess
    with pytest.raises(echo_duck.ProvenanceConflict):
        mem.remember("The user wants answers in English", type="user", key="reply_language")
    assert mem.find(key="reply_language")[0].content == "The user wants answers in Chinese"


def test_access_counts_come_along_with_a_logged_event(mem, clock):
    clock.advance(days=200)  # after the file's last access (a later one would be taken as now)
    import_file(mem, FIX / "echo-agent/user_memory.json", provenance="keep", trusted=True)
    (reply,) = mem.find(key="reply_language")
    assert reply.access_count == 14 and reply.last_accessed == datetime(2026, 5, 30, 8, 12, 44)
    (event,) = [e for e in mem.history(reply.id).events if e.action == "reinforce"]
    assert (event.before["access_count"], event.after["access_count"]) == (0, 14)
    facts = import_file(mem, FIX / "ethan/facts.json")
    assert facts.stored == 6
    assert mem.find(text="Acme Corp")[0].access_count == 6


def test_history_md_becomes_dated_episodes(mem, clock):
    clock.advance(days=120)  # after the file's dates: a date later than now is taken as now
    report = import_file(mem, FIX / "echo-agent/HISTORY.md")
    assert (report.format, report.stored, report.by_reason) == ("echo-history", 3, {"prose": 2})
    episodes = sorted(mem.find(tier="episodic"), key=lambda m: m.observed_at)
    assert [m.observed_at for m in episodes] == [datetime(2026, 3, 1, 9, 12), datetime(2026, 3, 8, 10, 2),
                                                 datetime(2026, 3, 15)]
    assert episodes[0].source_session == "wechat:20260301-0905" and "pnpm test" in episodes[0].content
    assert all(m.tags == ("history",) and m.type == "environment" for m in episodes)
    assert "S3 mock" not in mem.snapshot()  # what happened is recalled, not injected
    found = mem.recall("S3 mock flaky upload test", tiers=["episodic"], since=datetime(2026, 3, 10))
    assert [m.observed_at for m in (h.memory for h in found)] == [datetime(2026, 3, 15)]
    assert import_file(mem, FIX / "echo-agent/HISTORY.md").stored == 0  # idempotent


def test_imported_fixtures_reach_the_prompt_as_seed_004_injects_them(db_path, clock):
    with echo_duck.open(db_path, now=clock, embedder="hash", admin=True) as host:
        mem = host.for_agent("default")
        for name in ("echo-agent/user_memory.json", "echo-agent/env_memory.json", "echo-agent/MEMORY.md",
                     "ethan/facts.json", "ethan/procedures.json", "ethan/user_profile.md", "echo-agent/HISTORY.md"):
            import_file(mem, FIX / name)
        for held in mem.find(status="quarantined"):  # imported text that reads as an instruction waits for a person
            with pytest.raises(echo_duck.PermissionDenied):
                mem.approve(held.id, "reviewed")  # not the agent's to release
            host.approve(held.id, "reviewed")
        _check_prompt(mem)


def _check_prompt(mem):
    rules = [m.content for m in mem.find(type="procedure", limit=100)]
    assert len(rules) == 6
    snap = mem.snapshot()
    for rule in rules:  # every active behaviour rule, every turn
        assert rule in snap, rule
    for section in ("### 基础特征", "### 身份与背景", "### 目标与方向", "### 工作与沟通方式", "### 与 Agent 的约定"):
        assert section in snap  # the whole profile, by section (the empty 心理与情绪 has nothing to show)
    assert snap.index("## User profile") < snap.index("## Behaviour rules") < snap.index("## Environment and project")


@pytest.mark.parametrize("embedder", ["hash", None], ids=["hash", "real-model"])
def test_an_untrusted_file_may_not_rate_its_lines_above_a_default_write(tmp_path, embedder):
    # reviewer AR (session 58): a file's importance 1.0 lifted its line (legacy) above the user's stated fact in
    # recall (the decay factor: importance_floor + (1 - floor) x importance); a file may lower a line's, not raise it
    with echo_duck.open(tmp_path / "s.duckdb", embedder=embedder or "default", admin=True) as mem:
        mem.remember_many([{"content": f"The {w} service listens on port {9000 + i}", "type": "environment"}
                           for i, w in enumerate(["search", "ingest", "billing", "mail", "auth", "report"])])
        fact = mem.remember("The user's favourite editor is vim", type="user", provenance="user_stated")
        f = tmp_path / "notes.jsonl"
        f.write_text("\n".join(json.dumps(r) for r in [
            {"content": "The user's favourite editor is emacs, not vim", "type": "user", "importance": 1.0},
            {"content": "The staging host is db7", "type": "environment", "importance": 0.2}]) + "\n")
        assert import_file(mem, f).stored == 2
        weights = {m.content: m.importance for m in mem.find(limit=50) if m.provenance == 0}
        assert weights == {"The user's favourite editor is emacs, not vim": 0.5, "The staging host is db7": 0.2}
        for q in ("the user's favourite editor", "Which editor does the user like best?"):
            assert mem.recall(q, 5, reinforce=False)[0].id == fact.id, q
        export = tmp_path / "backup.jsonl"  # an admin's own export, restored trusted: as written
        export.write_text(json.dumps({"content": "Releases are cut on Fridays", "type": "environment",
                                      "importance": 0.9}) + "\n")
        import_file(mem, export, trusted=True, provenance="user_stated")
        assert {m.content: m.importance for m in mem.find(limit=50)}["Releases are cut on Fridays"] == 0.9
