"""Recall ranks the lower side of a pending dispute after the kept (session 48): the snapshot said the user's fact
stood, but recall() and memory_search put a teammate's (or a tool's) contradicting claim first, since provenance
played no part in ranking. Among the k winners, one whose pending dispute is with a live fact that stands against it
in the caller's snapshot (of higher provenance by its own author, or the caller's own: session 58) is ranked after the
kept (fusion.OUTRANKED), in recall_fused (SQL), in process and as of a past instant alike; and one member's
near-copies do not crowd the caller's answer out of the pools (session 58). Real stores in tmp_path, the hash
embedder and the real model; each test fails on the code before it.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

import echo_duck
from echo_duck import tools
from echo_duck.recall import fusion

FACT = "The user's favourite editor is vim"
CLAIM = "The user's favourite editor is emacs"
QUESTION = "the user's favourite editor"
FILLER = [f"The {w} service listens on port {9000 + i}" for i, w in enumerate(
    ["search", "ingest", "billing", "mail", "auth", "report", "queue", "cache", "backup", "metrics"])]


def store(tmp_path, embedder):
    host = echo_duck.open(tmp_path / "d.duckdb", agent_id="host", admin=True, embedder=embedder)
    for member in ("host", "helper"):
        host.grant(team="dev", agent_id=member, publish=True)
    host.remember_many([{"content": t, "type": "environment", "scope": "team", "team_id": "dev"} for t in FILLER])
    fact = host.remember(FACT, type="user", provenance="user_stated", scope="team", team_id="dev")
    helper = host.for_agent("helper", team_id="dev")
    # model_inferred, another author: a pending dispute; the agent rates its claim as important as it can
    claim = helper.remember(CLAIM, type="user", scope="team", importance=1.0, pinned=True)
    (dispute,) = host.contradictions(status="pending")
    assert {dispute.memory_a, dispute.memory_b} == {fact.id, claim.id}
    return host, helper, fact, claim


@pytest.mark.parametrize("embedder", ["hash", None], ids=["hash", "real-model"])
def test_the_claim_disputing_a_users_fact_is_ranked_after_it(tmp_path, embedder):
    host, _, fact, claim = store(tmp_path, embedder or "default")
    try:
        hits = host.recall(QUESTION, 5, explain=True, reinforce=False)  # the fact is the caller's own
        ids = [h.id for h in hits]
        assert ids.index(fact.id) < ids.index(claim.id)
        gates = {h.id: h.explanation.gate for h in hits}
        assert gates[claim.id] == fusion.OUTRANKED and gates[fact.id] == fusion.KEPT
        assert ids[-1] == claim.id or all(gates[i] != fusion.KEPT for i in ids[ids.index(claim.id):])
        found = tools.call(host, "memory_search", {"query": QUESTION, "k": 5})
        contents = [h["content"] for h in found["hits"]]
        assert contents.index(FACT) < contents.index(CLAIM)
    finally:
        host.close()


def test_another_agents_claimed_provenance_demotes_nothing(tmp_path):
    """An agent's provenance is its own claim (TRUST.md): a teammate claiming user_stated must not push a third
    agent's fact down in the caller's recall. Only a fact of the caller's own, or of the claim's own author, counts."""
    host, helper, _, claim = store(tmp_path, "hash")
    try:
        host.grant(team="dev", agent_id="third")
        for who in (helper, host.for_agent("third", team_id="dev")):
            gates = {h.id: h.explanation.gate for h in who.recall(QUESTION, 5, explain=True, reinforce=False)}
            assert gates[claim.id] == fusion.KEPT
        # the claim's own author holding the user's word in its private notes: its team claim is ranked last
        mine = helper.remember("The user's favourite editor is nano", type="user", provenance="user_stated")
        teamwide = helper.remember("The user's favourite editor is ed", type="user", scope="team")
        assert any({d.memory_a, d.memory_b} == {mine.id, teamwide.id} for d in helper.contradictions(status="pending"))
        gates = {h.id: h.explanation.gate for h in helper.recall(QUESTION, 8, explain=True, reinforce=False)}
        assert gates[teamwide.id] == fusion.OUTRANKED
    finally:
        host.close()


def test_the_macro_ranks_a_disputed_claim_as_recall_does(tmp_path):
    """Inside a transaction a filtered recall runs recall_fused: the same order, gates and scores."""
    host, _, _, _ = store(tmp_path, "hash")
    try:
        in_process = host.recall(QUESTION, 8, explain=True, reinforce=False, types=["user", "environment"])
        with host.db.transaction("comparing with the macro"):
            in_sql = host.recall(QUESTION, 8, explain=True, reinforce=False, types=["user", "environment"])
        assert [h.id for h in in_sql] == [h.id for h in in_process]
        assert [h.explanation.gate for h in in_sql] == [h.explanation.gate for h in in_process]
        # the arms are computed in SQL here (their floats differ in the last bits): tests/test_fusion.py holds the
        # fusion itself equal to the bit over the same arms, a disputed claim included
        assert [h.score for h in in_sql] == pytest.approx([h.score for h in in_process], rel=1e-6)
        assert fusion.OUTRANKED in [h.explanation.gate for h in in_sql]
    finally:
        host.close()


def test_a_resolved_or_equal_trust_dispute_ranks_as_before(tmp_path):
    host, helper, _, claim = store(tmp_path, "hash")
    try:
        (dispute,) = host.contradictions(status="pending")
        host.resolve(dispute.id, winner=None)  # dismissed: both stand, nothing disputes the claim any more
        gates = {h.id: h.explanation.gate for h in helper.recall(QUESTION, 5, explain=True, reinforce=False)}
        assert gates[claim.id] == fusion.KEPT
        other = helper.remember("The user's favourite editor is nano", type="user", scope="team",
                                provenance="user_stated")  # the helper's claim of the user's word: equal or higher
        gates = {h.id: h.explanation.gate for h in helper.recall(QUESTION, 5, explain=True, reinforce=False)}
        assert gates.get(other.id, fusion.KEPT) == fusion.KEPT
    finally:
        host.close()


@pytest.mark.parametrize("embedder", ["hash", None], ids=["hash", "real-model"])
def test_a_teammate_claiming_the_users_word_does_not_outrank_the_callers_own_fact(tmp_path, embedder):
    # reviewer AR (session 58): only a strictly higher provenance demoted a claim, so a teammate's claim saying
    # user_stated ranked first in the host's recall while the host's snapshot said the host's own fact stood
    host = echo_duck.open(tmp_path / "d.duckdb", agent_id="host", admin=True, embedder=embedder or "default")
    try:
        for member in ("host", "helper", "third"):
            host.grant(team="dev", agent_id=member, publish=True)
        host.remember_many([{"content": t, "type": "environment", "scope": "team", "team_id": "dev"} for t in FILLER])
        fact = host.remember(FACT, type="user", provenance="user_stated", scope="team", team_id="dev")
        helper = host.for_agent("helper", team_id="dev")
        claim = helper.remember(CLAIM, type="user", scope="team", provenance="user_stated")
        assert [{d.memory_a, d.memory_b} for d in host.contradictions(status="pending")] == [{fact.id, claim.id}]
        assert "stands (your own memory" in host.snapshot()
        for question in (QUESTION, "What is the user's favourite editor now?"):
            hits = host.recall(question, 5, explain=True, reinforce=False)
            gates = {h.id: h.explanation.gate for h in hits}
            assert (gates[fact.id], gates[claim.id]) == (fusion.KEPT, fusion.OUTRANKED)
            assert [h.id for h in hits].index(fact.id) == 0
            contents = [h["content"] for h in tools.call(host, "memory_search", {"query": question, "k": 5})["hits"]]
            assert contents.index(FACT) < contents.index(CLAIM)
            with host.db.transaction("the macro"):  # recall_fused ranks it so too
                in_sql = host.recall(question, 5, explain=True, reinforce=False, types=["user", "environment"])
            assert {h.id: h.explanation.gate for h in in_sql}[claim.id] == fusion.OUTRANKED
        # in the claim's author's own recall its claim stands, as its snapshot says; a third agent demotes neither
        gates = {h.id: h.explanation.gate for h in helper.recall(QUESTION, 5, explain=True, reinforce=False)}
        assert gates[claim.id] == fusion.KEPT
        third = host.for_agent("third", team_id="dev")
        gates = {h.id: h.explanation.gate for h in third.recall(QUESTION, 5, explain=True, reinforce=False)}
        assert (gates[fact.id], gates[claim.id]) == (fusion.KEPT, fusion.KEPT)
    finally:
        host.close()


@pytest.mark.parametrize("embedder", ["hash", None], ids=["hash", "real-model"])
def test_a_teammates_near_copies_do_not_crowd_the_callers_fact_out_of_recall(tmp_path, embedder):
    # reviewer AR (session 58): 60 team near-copies of the question filled both arms' pools before the caller's own
    # share was applied, so alice's user-stated fact was no candidate at all
    host = echo_duck.open(tmp_path / "d.duckdb", agent_id="host", admin=True, embedder=embedder or "default")
    try:
        for member in ("helper", "alice"):
            host.grant(team="dev", agent_id=member, publish=True)
        alice, helper = host.for_agent("alice", team_id="dev"), host.for_agent("helper", team_id="dev")
        alice.remember_many([{"content": t, "type": "environment"} for t in FILLER])
        fact = alice.remember(FACT, type="user", provenance="user_stated")
        editors = ["emacs", "nano", "vscode", "sublime", "atom", "kate", "gedit", "helix", "micro", "zed"]
        helper.remember_many([{"content": f"The user's favourite editor? {CLAIM.replace('emacs', editors[i % 10])} "
                                          f"(note {i})", "type": "user", "scope": "team"} for i in range(60)])
        for question in (QUESTION, "What is the user's favourite editor?"):
            assert fact.id in [h.id for h in alice.recall(question, 5, reinforce=False)], question
            with alice.db.transaction("the macro"):
                in_sql = alice.recall(question, 5, reinforce=False, types=["user", "environment"])
            assert fact.id in [h.id for h in in_sql], question
    finally:
        host.close()


def test_as_of_recall_ranks_a_disputing_claim_as_recall_does(tmp_path):
    # reviewer AT (session 58): recall(as_of=) had no outranked step: the claim the snapshot (as of then) names as a
    # claim came first
    host = echo_duck.open(tmp_path / "d.duckdb", agent_id="host", admin=True, embedder="hash")
    try:
        for member in ("host", "helper"):
            host.grant(team="dev", agent_id=member, publish=True)
        host.remember_many([{"content": t, "type": "environment", "scope": "team", "team_id": "dev"} for t in FILLER])
        fact = host.remember(FACT, type="user", provenance="user_stated", scope="team", team_id="dev")
        claim = host.for_agent("helper", team_id="dev").remember(CLAIM, type="user", scope="team",
                                                                  provenance="user_stated")
        for hits in (host.recall(QUESTION, 5, explain=True, reinforce=False),
                     host.recall(QUESTION, 5, explain=True, reinforce=False, as_of=host.now() + timedelta(seconds=1))):
            gates = {h.id: h.explanation.gate for h in hits}
            assert (gates[fact.id], gates[claim.id]) == (fusion.KEPT, fusion.OUTRANKED)
            assert hits[0].id == fact.id
    finally:
        host.close()


def test_pools_and_the_share_go_by_author_not_agent_id(tmp_path):
    # reviewer AT: an agent handle under the host's agent id ('default', by_host false) was pooled and shared as the
    # host's own (every other member still shares one pool: pools per author made many-agent stores slow, AU)
    host = echo_duck.open(tmp_path / "d.duckdb", admin=True, embedder="hash")  # the host acts as agent 'default'
    try:
        fact = host.remember("the staging bucket is host-stage in cold storage", type="environment",
                             provenance="user_stated")
        host.for_agent("default").remember_many([  # what echo_duck.open(path) without admin is: an agent
            {"content": f"which bucket does staging use? the staging bucket is bucket-{i} in cold storage",
             "type": "environment"} for i in range(60)])
        for q in ("which staging bucket", "the staging bucket in cold storage"):
            assert fact.id in [h.id for h in host.recall(q, 5, reinforce=False)], q
            with host.db.transaction("the macro"):
                assert fact.id in [h.id for h in host.recall(q, 5, reinforce=False, types=["environment"])], q
            later = host.now() + timedelta(seconds=1)
            assert fact.id in [h.id for h in host.recall(q, 5, reinforce=False, as_of=later)], q
        for member in ("default", "alice", "mallory"):
            host.grant(team="dev", agent_id=member, publish=True)
        team_fact = host.remember("the kestrel staging bucket is host-stage", scope="team", team_id="dev",
                                  type="environment", provenance="user_stated")
        host.for_agent("mallory", team_id="dev").remember_many([
            {"content": f"kestrel staging bucket? the kestrel staging bucket is k-{i}", "type": "environment",
             "scope": "team"} for i in range(60)])
        alice = host.for_agent("alice", team_id="dev")  # the host's rows are pooled apart from the members'
        assert team_fact.id in [h.id for h in alice.recall("which kestrel staging bucket", 5, reinforce=False)]
    finally:
        host.close()


@pytest.mark.parametrize("embedder, arms", [("none", ("keyword", "vector")), ("hash", ("keyword",))])
def test_a_filtered_recall_in_process_ranks_as_the_macro_among_many_authors(tmp_path, embedder, arms):
    # reviewer AT: a filtered recall in process read only the best keyword_pool matches of all, while recall_fused
    # pools each author's: with a member's 60 keyword copies the caller's answer left the in-process list only
    host = echo_duck.open(tmp_path / "d.duckdb", agent_id="host", admin=True, embedder=embedder)
    try:
        for member in ("alice", "helper"):
            host.grant(team="dev", agent_id=member, publish=True)
        alice, helper = host.for_agent("alice", team_id="dev"), host.for_agent("helper", team_id="dev")
        fact = alice.remember("the kestrel staging bucket is alice-stage", type="environment", provenance="user_stated")
        helper.remember_many([{"content": f"kestrel staging bucket? note {i}: kestrel staging bucket kestrel staging "
                                          f"bucket id {i}", "type": "environment", "scope": "team"} for i in range(60)])
        q = "kestrel staging bucket"
        in_process = [h.id for h in alice.recall(q, 5, reinforce=False, types=["environment"], arms=arms)]
        with alice.db.transaction("the macro"):
            in_sql = [h.id for h in alice.recall(q, 5, reinforce=False, types=["environment"], arms=arms)]
        assert in_process == in_sql and fact.id in in_process
    finally:
        host.close()
