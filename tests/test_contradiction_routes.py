"""Which pairs the contradiction check reads (lifecycle/contradictions.py, sql/queries/contradictions.sql), against an
agent that shares a scope with others (session 54's reviews): the keyword route reads as the writer's recall would,
so hidden memories neither move its cut nor can be learnt from it, and the writer's own notes cannot crowd another
author's fact out of it; a member's claim meets the host's team fact even when the host's agent id is no member."""
from __future__ import annotations

import pytest

import echo_duck

MANAGER = "The user's manager is Alice Chen"
DECOYS = [dict(content=f"Sync {i}: the user's manager manager weekly", type="user") for i in range(60)]


def _probe(path, hidden_note: str) -> int:
    """Contradictions mallory's probe records when bob's hidden note holds the probed word, or does not."""
    with echo_duck.open(path, agent_id="bob") as bob:  # the real model
        bob.remember(hidden_note, type="user", scope="private")
    with echo_duck.open(path, agent_id="mallory") as mallory:
        mallory.remember(MANAGER, type="user")
        mallory.remember_many([dict(d, tier="episodic") for d in DECOYS[:49]])
        mallory.remember("The user's manager is Hartmann", type="user")
        return len(mallory.contradictions(status=None))


def test_a_hidden_note_neither_moves_the_keyword_route_nor_shows_through_it(tmp_path):
    with_word = _probe(tmp_path / "a.duckdb", "Dr. Hartmann called bob about the layoffs")
    without = _probe(tmp_path / "b.duckdb", "Dr. Weber called bob about the layoffs")
    assert with_word == without == 1


def test_the_writers_own_notes_cannot_crowd_a_teammates_fact_out(tmp_path):
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash") as host:
        for agent in ("bob", "mallory"):
            host.grant(team="core", agent_id=agent, publish=True)
        bob, mallory = host.for_agent("bob"), host.for_agent("mallory")
        fact = bob.remember(MANAGER, type="user", scope="team", team_id="core", provenance="user_stated")
        mallory.remember_many([dict(d, scope="team", team_id="core") for d in DECOYS])  # 60 better keyword matches
        claim = mallory.remember("The user's manager is Bob Li", type="user", scope="team", team_id="core")
        assert [{c.memory_a, c.memory_b} for c in host.contradictions(status=None)] == [{fact.id, claim.id}]


def test_a_members_claim_meets_the_hosts_team_fact_and_the_host_lists_it(tmp_path):
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash") as host:
        host.grant(team="core", agent_id="mallory", publish=True)  # the host's own id is no member
        fact = host.remember("The staging database port is 5432", type="environment", scope="team", team_id="core",
                             tags=["staging-db"], provenance="user_stated")
        claim = host.for_agent("mallory").remember("The staging database port is 6543", type="environment",
                                                   scope="team", team_id="core", tags=["staging-db"])
        (c,) = host.contradictions(status=None)
        assert {c.memory_a, c.memory_b} == {fact.id, claim.id}


class Killed(BaseException):
    """The process dying between a write's commit and its contradiction check."""


def test_a_check_a_crash_cut_short_runs_on_the_next_open(tmp_path, monkeypatch):
    # the write commits first and is checked after: a process killed between the two left the lower-trust claim
    # beside the user's fact, undisputed, for good (session 54, reviewer T)
    path = tmp_path / "s.duckdb"
    with echo_duck.open(path, admin=True, embedder="hash") as host:
        vim = host.remember("The user's favourite editor is vim", type="user", key="editor",
                            provenance="user_stated", pinned=True)
    for write, editor in (("remember_many", "emacs"), ("remember", "vscode")):
        with echo_duck.open(path, admin=True, embedder="hash") as host:
            def killed(*args, **kwargs):
                raise Killed()
            monkeypatch.setattr(host.checker, "after_bulk", killed)
            monkeypatch.setattr(host.checker, "check", killed)
            claim = f"The user's favourite editor is {editor}"
            with pytest.raises(Killed):
                if write == "remember":
                    host.remember(claim, type="user", provenance="legacy")
                else:
                    host.remember_many([{"content": claim, "type": "user", "provenance": "legacy"}])
            assert host.sql("SELECT count(*) FROM pending_checks").item() == 1
            monkeypatch.undo()
        with echo_duck.open(path, admin=True, embedder="hash") as host:  # the next writable open runs it
            assert host.sql("SELECT count(*) FROM pending_checks").item() == 0
            disputed = [c for c in host.contradictions(status=None) if claim in host.get(c.memory_b).content
                        or claim in host.get(c.memory_a).content]
            assert len(disputed) == 1 and disputed[0].winner == vim.id
            assert claim not in host.snapshot()
    with echo_duck.open(path, admin=True, embedder="hash") as host:  # a write checked in full owes nothing
        host.remember("The user's favourite shell is zsh", type="user")
        assert host.sql("SELECT count(*) FROM pending_checks").item() == 0
