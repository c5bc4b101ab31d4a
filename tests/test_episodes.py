"""Episodes worth recalling (issue 20 item 5): an extractive summary, not the transcript; titled; embedded
and found by meaning when recall is restricted to episodes; filtered by time and entity; never injected
as a fact nor contradicting its own facts; working memory handed to consolidation at session end."""

from __future__ import annotations

from datetime import timedelta

import echo_duck

CI_SESSION = [
    ("user", "Our CI pipeline keeps timing out when it restores the npm cache."),
    ("assistant", "The cache key includes the lockfile hash; a corrupted archive can stall the restore step."),
    ("user", "We fixed it by clearing the cache and pinning actions/cache to v4."),
    ("assistant", "Good. I will remember that pinning actions/cache to v4 solved the timeouts."),
    ("user", "Thanks. Also remember that I prefer short answers."),
    ("assistant", "Noted: short answers from now on."),
]


def write_session(mem, clock, session, messages):
    for role, text in messages:
        mem.add_message(session, role, text)
        clock.advance(seconds=20)


def test_a_session_gets_a_title_from_its_first_user_message(db_path, clock):
    with echo_duck.open(db_path, now=clock, embedder="hash", admin=True) as mem:
        mem.add_message("s0", "assistant", "Hello! How can I help?")
        assert mem.session("s0").title is None
        mem.add_message("s0", "user", "Please look at the flaky integration tests in the payments service")
        assert mem.session("s0").title == "Please look at the flaky integration tes…"
        mem.add_message("s0", "user", "Another message")
        assert mem.session("s0").title.startswith("Please look")  # the first one names the session
        mem.add_message("s1", "user", "短问题", title="My own title")
        assert mem.session("s1").title == "My own title"


def test_the_episode_is_a_summary_and_is_found_by_meaning(db_path, clock):
    with echo_duck.open(db_path, now=clock, admin=True) as mem:  # the real model
        write_session(mem, clock, "ci", CI_SESSION)
        mem.consolidate("ci")
        (episode,) = mem.find(tier="episodic")
        transcript = " ".join(text for _, text in CI_SESSION)
        assert len(episode.content) < 0.6 * len(transcript)
        assert episode.content.startswith("Our CI pipeline keeps timing out")
        assert "actions/cache to v4" in episode.content
        row = mem.sql("SELECT summary FROM episodes").to_dicts()[0]
        assert row["summary"] == episode.content
        hits = mem.recall("what went wrong with the build caching last time?", k=3, tiers=["episodic"])
        assert [h.id for h in hits] == [episode.id]
        hits = mem.recall("what went wrong with the build caching last time?", k=3, tiers=["episodic"],
                          arms=["vector"])
        assert [h.id for h in hits] == [episode.id]


def test_episodes_filter_by_time_and_entity_and_stay_out_of_facts(db_path, clock):
    with echo_duck.open(db_path, now=clock, embedder="hash", admin=True) as mem:
        write_session(mem, clock, "ci", CI_SESSION)
        mem.consolidate("ci")
        clock.advance(days=10)
        write_session(mem, clock, "db", [("user", "Postgres vacuum on the orders table took four hours."),
                                         ("assistant", "Autovacuum was off for the orders table; we turned it on.")])
        mem.consolidate("db")
        later = clock.now - timedelta(days=1)
        found = mem.recall("table cache pipeline vacuum", k=5, tiers=["episodic"], since=later)
        assert {h.memory.source_session for h in found} == {"db"}
        found = mem.recall("table cache pipeline vacuum", k=5, tiers=["episodic"], until=later)
        assert {h.memory.source_session for h in found} == {"ci"}
        (db_episode,) = [m for m in mem.find(tier="episodic") if m.source_session == "db"]
        assert "postgres" in db_episode.entities  # known tools are entities, lower-cased
        found = mem.recall("table cache pipeline vacuum", k=5, tiers=["episodic"], entities=["postgres"])
        assert {h.memory.source_session for h in found} == {"db"}
        snap = mem.snapshot()
        assert "Our CI pipeline" not in snap and "vacuum" not in snap  # an episode is no fact
        assert "short answers" in snap  # the fact the episode's session yielded is
        assert mem.contradictions(None) == []  # an episode never contradicts its own facts


def test_working_memory_goes_to_consolidation_at_session_end(db_path, clock):
    with echo_duck.open(db_path, now=clock, embedder="hash", admin=True) as mem:
        write_session(mem, clock, "w", [("user", "Let's set up the release checklist."),
                                        ("assistant", "Sure, drafting it now.")])
        mem.working.add("Remember that releases need a signed tag", role="user", importance=0.9)
        mem.working.add("Drafted steps 1-4 of the release checklist, step 5 pending review", role="note")
        mem.end_session("w")
        assert mem.working.items() == []  # handed over, never persisted
        assert mem.sql("SELECT count(*) AS n FROM messages WHERE content ILIKE '%signed tag%'")["n"][0] == 0
        mem.run_jobs()
        facts = [m.content for m in mem.find(tier="semantic")]
        assert any("signed tag" in f for f in facts)
        (episode,) = mem.find(tier="episodic")
        assert "release checklist" in episode.content
