"""Contradictions (SPEC L3, echo_duck/lifecycle/contradictions.py): which candidates are verified, how a verdict is
recorded and resolved (provenance, then recency, else pending with conflict marks), resolve(), and
pluggable verifiers: a custom callable, a broken one, and llm_verifier over a fake complete()."""

from __future__ import annotations

import json
import uuid

import pytest

import echo_duck
from echo_duck import InvalidInput, MemoryNotFound
from echo_duck.lifecycle import candidates
from echo_duck.lifecycle.verify import Verdict, heuristic_verifier, llm_verifier


def open_store(path, clock, **options):
    return echo_duck.open(path, now=clock, embedder="hash", **options, admin=True)


def always(confidence: float):
    """A verifier that finds every candidate pair contradictory with this confidence."""
    def always_contradicts(a, b) -> Verdict:
        return Verdict(True, confidence, f"'{a.content}' vs '{b.content}'")
    return always_contradicts


class Recorder:
    """A verifier that records which pairs it was asked about and finds no contradiction."""

    def __init__(self):
        self.calls: list[tuple[str, str]] = []

    def __call__(self, a, b) -> Verdict:
        self.calls.append((a.content, b.content))
        return Verdict(False, 0.9, "recorded only")

    def take(self) -> set[tuple[str, str]]:
        calls, self.calls = set(self.calls), []
        return calls


def events(mem, memory_id, action):
    return [e for e in mem.history(memory_id).events if e.action == action]


# -- candidates ---------------------------------------------------------------------------------

def test_candidates_are_key_family_shared_tags_and_vector_neighbours(db_path, clock):
    with open_store(db_path, clock, agent_id="other") as other:  # another agent's private memories
        other.remember("Deploy window is Friday", type="environment", tags=["deploy"])
        other.remember("User edits prose in nano", type="user", key="preference:editor:prose")
    recorder = Recorder()
    with open_store(db_path, clock, verifier=recorder) as mem:
        mem.remember("User edits code in vim", type="user", key="preference:editor")
        mem.remember("Lunch is served at noon in the cafeteria", type="environment")
        mem.remember("Deploy target is eu-west-1", type="environment", tags=["deploy"])
        mem.remember("The staging server runs Ubuntu 22.04", type="environment")
        recorder.take()  # what the first writes were compared with does not matter here
        mem.remember("User edits prose in emacs", type="user", key="preference:editor:prose")
        assert recorder.take() == {("User edits code in vim", "User edits prose in emacs")}  # key family
        mem.remember("Deploy window is Tuesday", type="environment", tags=["deploy", "ops"])
        assert recorder.take() == {("Deploy target is eu-west-1", "Deploy window is Tuesday")}  # shared tag
        mem.remember("The staging server runs Ubuntu 24.04", type="environment")
        assert recorder.take() == {("The staging server runs Ubuntu 22.04", "The staging server runs Ubuntu 24.04")}
        assert mem.contradictions(None) == []  # the verifier said no: nothing recorded


FACT, CLAIM = "The office closes at 6pm on weekdays", "The office closes at 9pm on weekdays"


def team_claim_checked_against(path, clock, copies: int, copier: str) -> set[tuple[str, str]]:
    """The pairs the check verifies when agent "writer" states CLAIM to team red, where agent "owner" stated FACT,
    after ``copier`` ("owner" or "writer") wrote ``copies`` private near-copies of CLAIM."""
    recorder = Recorder()
    with echo_duck.open(path, now=clock, embedder="hash", admin=True, verifier=recorder) as host:
        host.grant(team="red", agent_id="writer", publish=True)
        host.grant(team="red", agent_id="owner", publish=True)
        agents = {name: host.for_agent(name, team_id="red") for name in ("owner", "writer")}
        agents["owner"].remember(FACT, type="environment", scope="team", team_id="red")
        for i in range(copies):  # private: only their author sees them
            agents[copier].remember(f"{CLAIM} ({i})", type="environment")
        recorder.take()
        agents["writer"].remember(CLAIM, type="environment", scope="team", team_id="red")
        return recorder.take()


def test_memories_the_writer_cannot_see_do_not_crowd_out_the_ones_it_may_dispute(db_path, clock):
    """The vector neighbours are sought among the memories the writer may dispute: another agent's private notes
    close to the new claim neither hide a visible team fact from the check nor, by doing so, tell the writer they
    exist (the nearest 21 of the whole store once held only the hidden notes)."""
    assert team_claim_checked_against(db_path, clock, 0, "owner") == {(FACT, CLAIM)}
    assert team_claim_checked_against(db_path.with_name("crowded.duckdb"), clock, 30, "owner") == {(FACT, CLAIM)}


def test_a_writer_cannot_pad_the_store_to_keep_its_claim_from_a_teammates_fact(db_path, clock):
    """Its own private near-copies of a claim are candidates too; another author's memories come first."""
    assert (FACT, CLAIM) in team_claim_checked_against(db_path, clock, 30, "writer")


def test_vector_neighbour_threshold_is_the_contradiction_similarity_setting(db_path, clock, monkeypatch):
    monkeypatch.setattr(candidates, "KEYWORD_NEIGHBOURS", 0)  # the vector route alone
    recorder = Recorder()
    with open_store(db_path, clock, verifier=recorder) as mem:
        mem.remember("The staging server runs Ubuntu 22.04", type="environment")
        mem.sql("UPDATE settings SET value = 0.95 WHERE name = 'contradiction_similarity'", write=True)
        recorder.take()
        mem.remember("The staging server runs Ubuntu 24.04", type="environment")  # similarity ≈ 0.87
        assert recorder.take() == set()
        mem.sql("UPDATE settings SET value = 0.5 WHERE name = 'contradiction_similarity'", write=True)
        mem.remember("The staging server runs Ubuntu 20.04", type="environment")
        assert len(recorder.take()) == 2


def test_superseded_memories_and_other_agents_other_scopes_are_not_candidates(db_path, clock):
    recorder = Recorder()
    with open_store(db_path, clock, verifier=recorder, team_id="core") as mem:
        mem.grant(team="core")
        mem.grant(team="core", agent_id="other", publish=True)
        mem.remember("Deploy target is eu-west-1", type="environment", key="deploy:target", tags=["deploy"])
        mem.update("deploy:target", "Deploy target is eu-central-1")
        mem.for_agent("other", team_id="core").remember("Team deploys go through ArgoCD", type="environment",
                                                         tags=["deploy"], scope="team")
        mem.remember("Deploys are reviewed on Mondays", type="environment", tags=["deploy"], scope="team")
        recorder.take()
        mem.remember("Deploy target is us-east-1", type="environment", key="deploy:target:us", tags=["deploy"])
        # the agent's own team memory is read too (an imported private note against what it published)
        assert recorder.take() == {("Deploy target is eu-central-1", "Deploy target is us-east-1"),
                                   ("Deploys are reviewed on Mondays", "Deploy target is us-east-1")}


# -- resolution ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("old_provenance, new_provenance, winner", [
    ("model_inferred", "user_stated", "new"),
    ("user_stated", "consolidated", "old"),
])
def test_higher_provenance_wins(db_path, clock, old_provenance, new_provenance, winner):
    with open_store(db_path, clock, verifier=always(0.9)) as mem:
        old = mem.remember("The API base URL is api.v1.example.com", type="environment", key="api:base_url",
                           provenance=old_provenance)
        clock.advance(minutes=1)
        new = mem.remember("The API base URL is api.v2.example.com", type="environment", key="api:base_url:prod",
                           provenance=new_provenance)
        win, lose = (new, old) if winner == "new" else (old, new)
        (c,) = mem.contradictions(None)
        assert (c.status, c.resolution, c.winner) == ("resolved", "higher_provenance", win.id)
        assert (c.memory_a, c.memory_b) == (old.id, new.id)
        loser = mem.get(lose.id)
        assert (loser.status, loser.tier, loser.superseded_by) == ("superseded", "archival", win.id)
        assert mem.get(win.id).status == "active"
        (event,) = events(mem, lose.id, "supersede")
        assert f"lost contradiction {c.id} (higher_provenance)" in event.reason
        assert event.before["status"] == "active"
        assert mem.contradictions() == []
        row = mem.sql("SELECT resolved_at, detected_by FROM contradictions").to_dicts()[0]
        assert row["resolved_at"] == clock.now and row["detected_by"] == "always_contradicts"
        hits = mem.recall("API base URL", arms=["keyword"])
        assert [h.id for h in hits] == [win.id] and hits[0].conflicts_with == ()


def test_a_side_replaced_while_the_verifier_ran_is_not_resolved_again(db_path, clock):
    """The verifier runs outside the store lock, so another thread may write a new version of the
    candidate meanwhile. Recording the stale pair then retired the fact's live head a second time (its
    superseded_by pointed away from its own next version; a key was left with no active version: found
    by 16 threads sharing one facade). Here the write happens inside the verifier, deterministically."""
    state = {"mem": None, "replaced": None}

    def verifier(a, b) -> Verdict:
        if state["replaced"] is None and a.content.endswith("eu-west-1"):
            state["replaced"] = "busy"  # the update below runs this verifier again
            state["replaced"] = state["mem"].update("deploy:target", "Deploy target is ap-south-1")
        return Verdict(True, 0.9, f"'{a.content}' vs '{b.content}'")

    with open_store(db_path, clock, verifier=verifier) as mem:
        state["mem"] = mem
        v1 = mem.remember("Deploy target is eu-west-1", type="environment", key="deploy:target")
        clock.advance(minutes=1)
        us = mem.remember("Deploy target is us-east-1", type="environment", key="deploy:target:us")
        v2 = state["replaced"]
        assert mem.get(v1.id).superseded_by == v2.id  # v1's chain is intact: superseded once, by its next version
        assert len(events(mem, v1.id, "supersede")) == 1
        pairs = {(c.memory_a, c.memory_b) for c in mem.contradictions(None)} | {
            (c.memory_a, c.memory_b) for c in mem.contradictions()}
        assert (v1.id, us.id) not in pairs  # the stale pair is not recorded
        live = mem.sql("SELECT key FROM memories WHERE status = 'active' AND key LIKE 'deploy:target%'").rows()
        assert len(live) == 1  # the one that won the recorded contradiction (v2 against us-east-1) stands


def test_same_provenance_same_source_session_newer_wins(db_path, clock):
    with open_store(db_path, clock, verifier=always(0.9)) as mem:
        old = mem.remember("The deploy freeze starts on the 15th", type="environment", key="deploy:freeze",
                           source_session="s1")
        clock.advance(minutes=5)
        new = mem.remember("The deploy freeze starts on the 20th", type="environment", key="deploy:freeze:start",
                           source_session="s1")
        (c,) = mem.contradictions(None)
        assert (c.status, c.resolution, c.winner) == ("resolved", "newer", new.id)
        assert mem.get(old.id).status == "superseded" and mem.get(old.id).superseded_by == new.id
        assert "(newer)" in events(mem, old.id, "supersede")[0].reason


def test_same_provenance_different_sources_resolve_by_recency_and_keep_both_sources(db_path, clock):
    with open_store(db_path, clock, verifier=always(0.9)) as mem:
        a = mem.remember("The deploy freeze starts on the 15th", type="environment", key="deploy:freeze",
                         source_session="s1")
        clock.advance(minutes=5)
        b = mem.remember("The deploy freeze starts on the 20th", type="environment", key="deploy:freeze:start",
                         source_session="s2")
        (c,) = mem.contradictions(None)
        assert (c.status, c.resolution, c.winner) == ("resolved", "newer", b.id)
        assert mem.get(a.id).status == "superseded" and mem.get(b.id).status == "active"
        row = mem.sql("SELECT source_a, source_b FROM contradictions").to_dicts()[0]
        assert row == {"source_a": "s1, model_inferred", "source_b": "s2, model_inferred"}
        hits = {h.id: h for h in mem.recall("deploy freeze starts", arms=["keyword"])}
        assert set(hits) == {b.id}
        # Not reviewed yet: the snapshot says the newer one won by recency, and over what.
        snap = mem.snapshot()
        assert "Settled by recency, not reviewed" in snap and "15th" in snap and "s1" in snap and "s2" in snap


def test_pending_verdicts_recall_both_with_conflict_marks(db_path, clock):
    with open_store(db_path, clock, verifier=always(0.6)) as mem:
        a = mem.remember("The deploy freeze starts on the 15th", type="environment", key="deploy:freeze",
                         source_session="s1")
        b = mem.remember("The deploy freeze starts on the 20th", type="environment", key="deploy:freeze:start",
                         source_session="s2")
        (c,) = mem.contradictions()
        assert (c.status, c.resolution, c.winner) == ("pending", None, None)
        hits = {h.id: h for h in mem.recall("deploy freeze starts", arms=["keyword"])}
        assert hits[a.id].conflicts_with == (b.id,) and hits[b.id].conflicts_with == (a.id,)
        view = mem.sql("SELECT * FROM open_contradictions").to_dicts()
        assert [(str(v["memory_a"]), v["source_a"], str(v["memory_b"]), v["source_b"]) for v in view] == \
            [(a.id, "s1", b.id, "s2")]
        snap = mem.snapshot()  # neither side is stated as a fact: both appear once, as a disputed pair
        assert snap.count("15th") == snap.count("20th") == 1 and "Disputed, unresolved" in snap


def test_a_resolution_by_recency_can_be_confirmed_or_reversed(db_path, clock):
    with open_store(db_path, clock, verifier=always(0.9)) as mem:
        a = mem.remember("The on-call phone is 555-0101", type="environment", tags=["oncall"], source_session="s1")
        clock.advance(minutes=5)
        b = mem.remember("The on-call phone is 555-0199", type="environment", tags=["oncall"], source_session="s2")
        (c,) = mem.contradictions(None)
        assert (c.resolution, c.winner) == ("newer", b.id)
        clock.advance(minutes=5)
        reversed_ = mem.resolve(c.id, a.id)  # the review says the earlier claim was right
        assert (reversed_.status, reversed_.resolution, reversed_.winner) == ("resolved", "user", a.id)
        (live,) = mem.find(tags=["oncall"])
        assert live.content == a.content and live.supersedes == b.id and live.source_session == "s1"
        assert f"memory:{a.id}" in live.source_refs
        assert mem.get(b.id).status == "superseded"
        assert [e.action for e in mem.history(a.id).events if e.action == "reverse"] == ["reverse"]
        assert "Settled by recency" not in mem.snapshot()  # reviewed: no longer flagged
        assert mem.resolve(c.id, a.id).resolution == "user"  # confirming again changes nothing


def test_a_resolution_by_recency_can_be_confirmed(db_path, clock):
    with open_store(db_path, clock, verifier=always(0.9)) as mem:
        mem.remember("The on-call phone is 555-0101", type="environment", tags=["oncall"], source_session="s1")
        b = mem.remember("The on-call phone is 555-0199", type="environment", tags=["oncall"], source_session="s2")
        (c,) = mem.contradictions(None)
        done = mem.resolve(c.id, b.id)
        assert (done.resolution, done.winner) == ("user", b.id)
        assert [m.id for m in mem.find(tags=["oncall"])] == [b.id]
        assert "Settled by recency" not in mem.snapshot()


@pytest.mark.parametrize("confidence, recorded", [(0.6, True), (0.4, False)])
def test_low_confidence_stays_pending_or_is_not_recorded(db_path, clock, confidence, recorded):
    with open_store(db_path, clock, verifier=always(confidence)) as mem:
        old = mem.remember("The API base URL is api.v1.example.com", type="environment", key="api:base_url",
                           provenance="model_inferred")
        new = mem.remember("The API base URL is api.v2.example.com", type="environment", key="api:base_url:prod",
                           provenance="user_stated")
        found = mem.contradictions(None)
        if recorded:
            assert [(c.status, c.confidence) for c in found] == [("pending", confidence)]
        else:
            assert found == []
        assert mem.get(old.id).status == mem.get(new.id).status == "active"


def test_keyless_confident_conflicts_resolve_by_provenance_then_recency(db_path, clock):
    with open_store(db_path, clock, verifier=always(0.95)) as mem:
        stated = mem.remember("The project uses npm", type="environment", tags=["js"], provenance="user_stated")
        inferred = mem.remember("The project uses pnpm", type="environment", tags=["js"], provenance="model_inferred")
        (c,) = mem.contradictions(None)
        assert (c.status, c.resolution, c.winner) == ("resolved", "higher_provenance", stated.id)
        assert mem.get(inferred.id).status == "superseded" and mem.get(stated.id).status == "active"
        old = mem.remember("The office wifi is called Falcon", type="environment", tags=["office"],
                           provenance="model_inferred")
        clock.advance(minutes=1)
        new = mem.remember("The office wifi is called Osprey", type="environment", tags=["office"],
                           provenance="model_inferred")
        (c2,) = [x for x in mem.contradictions(None) if x.id != c.id]
        assert (c2.resolution, c2.winner) == ("newer", new.id) and mem.get(old.id).status == "superseded"


# -- resolve() ---------------------------------------------------------------------------------------

def pending_pair(mem, clock):
    a = mem.remember("The on-call rotation changes on Monday", type="environment", key="oncall:rotation",
                     source_session="s1")
    clock.advance(minutes=1)
    b = mem.remember("The on-call rotation changes on Wednesday", type="environment", key="oncall:rotation:day",
                     source_session="s2")
    (c,) = mem.contradictions()
    return a, b, c


def test_resolve_with_a_winner_supersedes_the_loser(db_path, clock):
    with open_store(db_path, clock, verifier=always(0.6)) as mem:
        a, b, c = pending_pair(mem, clock)
        clock.advance(minutes=1)
        done = mem.resolve(c.id, a.id)
        assert (done.status, done.resolution, done.winner) == ("resolved", "user", a.id)
        loser = mem.get(b.id)
        assert (loser.status, loser.tier, loser.superseded_by) == ("superseded", "archival", a.id)
        assert "decided by the user" in events(mem, b.id, "supersede")[0].reason
        hits = mem.recall("on-call rotation changes", arms=["keyword"])
        assert [h.id for h in hits] == [a.id] and hits[0].conflicts_with == ()
        assert mem.sql("SELECT resolved_at FROM contradictions")["resolved_at"][0] == clock.now
        clock.advance(minutes=1)
        mem.resolve(c.id, b.id)  # the user changed their mind: b's claim comes back as a's next version
        (live,) = [h.memory for h in mem.recall("on-call rotation changes", arms=["keyword"])]
        assert live.content == b.content and live.supersedes == a.id


def test_resolve_none_dismisses(db_path, clock):
    with open_store(db_path, clock, verifier=always(0.6)) as mem:
        a, b, c = pending_pair(mem, clock)
        done = mem.resolve(c.id, None)
        assert (done.status, done.resolution, done.winner) == ("resolved", "dismissed", None)
        assert mem.get(a.id).status == mem.get(b.id).status == "active"
        assert mem.contradictions() == [] and [x.id for x in mem.contradictions("resolved")] == [c.id]
        hits = mem.recall("on-call rotation changes", arms=["keyword"])
        assert {h.id for h in hits} == {a.id, b.id} and all(h.conflicts_with == () for h in hits)


def test_resolve_refuses_bad_arguments(db_path, clock):
    with open_store(db_path, clock, verifier=always(0.6)) as mem:
        a, b, c = pending_pair(mem, clock)
        third = mem.remember("Unrelated fact about lunch", type="environment")
        with pytest.raises(InvalidInput):
            mem.resolve(c.id, third.id)
        with pytest.raises(InvalidInput):
            mem.resolve("not-a-uuid", a.id)
        with pytest.raises(MemoryNotFound):
            mem.resolve(uuid.uuid4(), a.id)
        assert mem.contradictions()[0].status == "pending"


# -- verifiers --------------------------------------------------------------------------------------------

def test_the_default_heuristic_detects_en_and_zh_conflicts(db_path, clock):
    with open_store(db_path, clock) as mem:
        npm = mem.remember("The project uses npm", type="environment", key="tool:package_manager")
        pnpm = mem.remember("The project uses pnpm", type="environment", key="tool:package_manager:frontend")
        zh_a = mem.remember("用户偏好中文回答", type="user", tags=["language"])
        zh_b = mem.remember("用户偏好英文回答", type="user", tags=["language"])
        mem.remember("User likes tea", type="user", tags=["drinks"])
        mem.remember("User likes coffee", type="user", tags=["drinks"])  # both can hold
        found = {(c.memory_a, c.memory_b): c for c in mem.contradictions(None)}
        assert set(found) == {(npm.id, pnpm.id), (zh_a.id, zh_b.id)}
        assert "npm" in found[(npm.id, pnpm.id)].description and "pnpm" in found[(npm.id, pnpm.id)].description
        assert "中文" in found[(zh_a.id, zh_b.id)].description
        assert all(c.confidence >= 0.5 for c in found.values())
        assert set(mem.sql("SELECT DISTINCT detected_by FROM contradictions")["detected_by"]) == {"heuristic_verifier"}


def test_a_custom_verifier_callable_is_used(db_path, clock):
    seen = []

    def by_numbers(a, b) -> Verdict:
        seen.append((a.key, b.key))
        return Verdict(a.content[-1] != b.content[-1], 0.8, "last character differs")

    with open_store(db_path, clock, verifier=by_numbers) as mem:
        mem.remember("Build number 1", type="environment", tags=["build"], key="build:a")
        mem.remember("Build number 2", type="environment", tags=["build"], key="build:b")
        assert seen == [("build:a", "build:b")]
        (c,) = mem.contradictions(None)
        assert (c.description, c.confidence) == ("last character differs", 0.8)
        assert mem.sql("SELECT detected_by FROM contradictions")["detected_by"][0] == "by_numbers"


def test_a_verifier_that_raises_falls_back_to_the_heuristic(db_path, clock):
    def broken(a, b) -> Verdict:
        raise RuntimeError("verifier service is down")

    with open_store(db_path, clock, verifier=broken) as mem:
        npm = mem.remember("The project uses npm", type="environment", tags=["tooling"])
        pnpm = mem.remember("The project uses pnpm", type="environment", tags=["tooling"])  # the write succeeds
        (c,) = mem.contradictions(None)
        expected = heuristic_verifier(mem.get(npm.id), mem.get(pnpm.id))
        assert (c.memory_a, c.memory_b) == (npm.id, pnpm.id)
        assert (c.description, c.confidence) == (expected.description, expected.confidence)


class FakeLLM:
    """A stand-in for an LLM client: answers every prompt with a fixed text, records the prompts."""

    def __init__(self, answer):
        self.answer = answer
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class Fact:
    def __init__(self, content, key=None, type="environment"):
        self.content, self.key, self.type = content, key, type


def test_llm_verifier_parses_fenced_json_and_builds_a_prompt():
    complete = FakeLLM('Sure! Here is my verdict:\n```json\n{"contradicts": true, "confidence": 0.92, '
                       '"description": "different package managers",}\n```\nHope this helps.')
    verdict = llm_verifier(complete)(Fact("The project uses npm", "tool:pm"), Fact("The project uses pnpm", "tool:pm"))
    assert verdict == Verdict(True, 0.92, "different package managers")
    (prompt,) = complete.prompts
    assert json.dumps("The project uses npm") in prompt and json.dumps("The project uses pnpm") in prompt
    assert "tool:pm" in prompt
    verdict = llm_verifier(FakeLLM('{"contradicts": "no", "confidence": 7}'))(Fact("a b"), Fact("a c"))
    assert verdict.contradicts is False and verdict.confidence == 1.0
    verdict = llm_verifier(FakeLLM("{'x': 1} then {\"contradicts\": True, \"description\": \"x\"}"))(Fact("a"), Fact("b"))
    assert verdict.contradicts is True and verdict.confidence == 0.5


@pytest.mark.parametrize("answer", ["I think they might contradict, not sure.", '{"contradicts": "maybe"}',
                                    ConnectionError("LLM endpoint unreachable"), '{"confidence": 0.9}'])
def test_llm_verifier_falls_back_to_the_heuristic_on_garbage(answer):
    a, b = Fact("The project uses npm"), Fact("The project uses pnpm")
    verdict = llm_verifier(FakeLLM(answer))(a, b)
    expected = heuristic_verifier(a, b)
    assert verdict.contradicts == expected.contradicts and verdict.confidence == expected.confidence
    assert verdict.description == f"LLM unavailable, heuristic: {expected.description}"


def test_llm_verifier_plugs_into_the_store(db_path, clock):
    complete = FakeLLM('```\n{"contradicts": true, "confidence": 0.9, "description": "npm vs pnpm"}\n```')
    with open_store(db_path, clock, verifier=llm_verifier(complete)) as mem:
        old = mem.remember("The project uses npm", type="environment", key="tool:package_manager",
                           provenance="legacy")
        new = mem.remember("The project uses pnpm", type="environment", key="tool:package_manager:web",
                           provenance="user_stated")
        (c,) = mem.contradictions(None)
        assert (c.description, c.confidence, c.resolution, c.winner) == ("npm vs pnpm", 0.9, "higher_provenance", new.id)
        assert mem.get(old.id).status == "superseded"
        assert mem.sql("SELECT detected_by FROM contradictions")["detected_by"][0] == "llm_verifier"
        assert len(complete.prompts) == 1
