"""Reinforcement (SPEC R10, issue 20 item 9): a recall reviews only the hits the caller plausibly used — at
most reinforce_top (3) of the best, each within reinforce_min_relevance (0.5) of the best score — so weak
hits that merely made the list keep decaying. Each review is a 'reinforce' event (time travel)."""

from __future__ import annotations

import pytest

import echo_duck
from echo_duck.recall.hits import Hit
from echo_duck.recall.hybrid import reinforced_hits


def fake_hits(scores):
    class M:
        def __init__(self, i):
            self.id = f"m{i}"

    return [Hit(M(i), s) for i, s in enumerate(scores)]  # type: ignore[arg-type]


@pytest.mark.parametrize("scores, expected", [
    ([1.0, 0.9, 0.8, 0.7, 0.6], ["m0", "m1", "m2"]),  # at most three
    ([1.0, 0.49, 0.3], ["m0"]),  # the rest are far below the best
    ([0.02, 0.011, 0.009], ["m0", "m1"]),  # relative to the best, whatever the scale
    ([], []),
    ([0.0, 0.0], []),
    ([0.3, 1.0, 0.45], ["m1"]),  # reranked: a weak hit first does not lower the floor (the best is the highest)
])
def test_the_rule(scores, expected):
    assert list(reinforced_hits(fake_hits(scores), 0.5, 3)) == expected


def test_another_agents_hits_ranked_above_do_not_take_the_owners_reviews():
    """Reviewer AF (session 56): the top three were taken before the owner's were kept, so a teammate's notes ranked
    above bob's memory left it unreviewed (0 of 6 recalls) and decay() archived it."""
    class M:
        def __init__(self, i, agent):
            self.id, self.agent_id = f"m{i}", agent

    hits = [Hit(M(i, "alice"), 1.0 - i / 100) for i in range(5)] + [Hit(M(5, "bob"), 0.8), Hit(M(6, "bob"), 0.3)]
    assert list(reinforced_hits(hits, 0.5, 3, owner="bob")) == ["m5"]  # others still set the floor
    assert list(reinforced_hits(hits, 0.5, 3, owner="alice")) == ["m0", "m1", "m2"]


def test_weak_hits_keep_decaying_while_the_used_one_is_reviewed(db_path, clock):
    with echo_duck.open(db_path, now=clock, embedder="hash", admin=True) as mem:
        strong = mem.remember("Deploy the borealis service with make release-borealis", type="environment")
        weak = [mem.remember(f"Borealis dashboard widget {i} shows queue depth", type="environment")
                for i in range(6)]
        for _ in range(60):  # the agent asks the same thing every day for two months
            clock.advance(days=1)
            hits = mem.recall("how do I deploy borealis?", k=10, arms=["keyword"])
            assert hits[0].id == strong.id and len(hits) > 3
        decay = {r["id"]: r for r in mem.sql("SELECT id::VARCHAR AS id, effective_importance, access_count "
                                             "FROM memory_decay_at(?::TIMESTAMP)", [clock.now]).to_dicts()}
        assert decay[strong.id]["access_count"] == 60 and decay[strong.id]["effective_importance"] > 0.45
        reviewed_weak = [m for m in weak if decay[m.id]["access_count"] > 0]
        assert len(reviewed_weak) <= 2  # never more than three reviews per recall, the best first
        for m in weak:
            if m not in reviewed_weak:  # 60 days unreviewed: half-life 30 days, a quarter left
                assert decay[m.id]["effective_importance"] == pytest.approx(0.5 * 0.25, rel=1e-6)
        events = mem.sql("SELECT count(*) AS n FROM memory_events WHERE action = 'reinforce' "
                         "AND memory_id IS NOT NULL")["n"][0]  # one per review; NULL: the batch summary
        assert events == sum(r["access_count"] for r in decay.values())
        logged = mem.sql("SELECT list_sort(reinforced_ids)::VARCHAR[] AS ids FROM recall_log ORDER BY id LIMIT 1")
        assert strong.id in logged["ids"][0]
