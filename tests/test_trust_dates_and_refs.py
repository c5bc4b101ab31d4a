"""Three values an agent gave that the store took on its word (session 48's note, left): an ``observed_at`` in the
future (a claim dated 2099 would be the newest answer to every "current" question; only imports clamped it), a
``mark(recall_id=)`` naming a recall not made yet (the next recall to take that id, another agent's, would carry
the mark), and an ``episode_id`` naming another agent's episode or none. Real stores in tmp_path; each test fails on
the code before.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

import echo_duck
from echo_duck import InvalidInput

NOW = datetime(2026, 3, 1, 12, 0)
LATER = "2099-01-01T00:00:00"


@pytest.fixture
def clock():
    return [NOW]


@pytest.fixture
def host(tmp_path, clock):
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash", now=lambda: clock[0]) as m:
        yield m


def observed(mem, memory) -> datetime:
    return mem.sql("SELECT observed_at FROM memories WHERE id = ?", [memory.id])["observed_at"][0]


def test_an_agents_future_observed_at_is_taken_as_now(host):
    coder = host.for_agent("coder")
    one = coder.remember("The deploy target is eu-west-1", type="environment", key="deploy.region",
                         observed_at=LATER)
    many = coder.remember_many([{"content": "The staging host is stg-2", "type": "environment",
                                 "observed_at": LATER}])[0]
    assert observed(host, one) == NOW and observed(host, many) == NOW
    updated = coder.update("deploy.region", content="The deploy target is eu-central-1", observed_at=LATER)
    assert observed(host, updated) == NOW
    past = coder.remember("The old staging host was stg-1", type="environment", observed_at="2020-05-01T00:00:00")
    assert observed(host, past) == datetime(2020, 5, 1)  # a past date is the agent's to give


def test_the_hosts_future_observed_at_is_kept(host):
    planned = host.remember("The office moves to Leeds", type="environment", observed_at=LATER)
    assert observed(host, planned) == datetime(2099, 1, 1)


@pytest.mark.parametrize("embedder", ["hash", "default"])
def test_a_future_claim_does_not_stay_the_newest_answer(tmp_path, clock, embedder):
    """A teammate's claim dated 2099 stayed the newest answer to a "now" question after the user's later word."""
    kw = {} if embedder == "default" else {"embedder": embedder}
    with echo_duck.open(tmp_path / "t.duckdb", admin=True, now=lambda: clock[0], **kw) as host:
        for agent, publish in (("coder", True), ("default", True), ("reviewer", False)):
            host.grant(team="red", agent_id=agent, publish=publish)
        host.for_agent("coder", team_id="red").remember("The user's current phone number is 555-0100", type="user",
                                                         scope="team", observed_at=LATER)
        clock[0] = NOW + timedelta(days=2)
        host.remember("The user's current phone number is 555-0199", type="user", provenance="user_stated",
                      scope="team", team_id="red")
        hits = host.for_agent("reviewer", team_id="red").recall("What is the user's phone number now?", k=3)
        assert [h.content[-8:] for h in hits] == ["555-0199", "555-0100"]


def test_mark_refuses_a_recall_id_no_recall_has_yet(host):
    coder, other = host.for_agent("coder"), host.for_agent("other")
    mine = coder.remember("The coder's tests run in CI", type="environment")
    other.remember("The other agent's build runs nightly", type="environment")
    coder.recall("tests CI")
    host.refresh()
    top = host.sql("SELECT max(id) AS n FROM recall_log")["n"][0]
    with pytest.raises(InvalidInput, match="not one of this agent's recalls"):
        coder.mark(mine.id, True, recall_id=top + 1)
    taken = other.recall("build nightly")[0].recall_id  # the id the mark would have claimed
    assert taken == top + 1
    assert host.sql("SELECT count(*) AS n FROM memory_feedback WHERE recall_id = ?", [taken])["n"][0] == 0
    coder.mark(mine.id, True, recall_id=top)  # its own, logged: accepted


def test_mark_accepts_a_recall_id_whose_log_was_collected(host, clock):
    coder = host.for_agent("coder")
    mine = coder.remember("The coder's tests run in CI", type="environment")
    recall_id = coder.recall("tests CI")[0].recall_id
    clock[0] = NOW + timedelta(days=400)
    host.gc(retention_days=30, dry_run=False)
    assert host.sql("SELECT count(*) AS n FROM recall_log WHERE id = ?", [recall_id])["n"][0] == 0
    coder.mark(mine.id, True, recall_id=recall_id)


def test_episode_id_names_one_of_the_callers_own_episodes(host):
    other = host.for_agent("other")
    session = other.start_session()
    other.add_message(session, "user", "I moved to Leeds last month and work from home on Fridays.")
    episode_id = other.consolidate(session)[0].episode_id
    assert episode_id is not None
    coder = host.for_agent("coder")
    for bad in (episode_id, "00000000-0000-4000-8000-000000000001"):
        with pytest.raises(InvalidInput, match="names no episode of agent 'coder'"):
            coder.remember("The user lives in Leeds", type="user", episode_id=bad)
    assert host.sql("SELECT count(*) AS n FROM memories WHERE agent_id = 'coder'")["n"][0] == 0
    own = other.remember("The user works from home on Fridays", type="user", episode_id=episode_id)
    assert str(own.episode_id) == str(episode_id)
    assert host.remember("A host note on the episode", type="environment", episode_id=episode_id).episode_id
