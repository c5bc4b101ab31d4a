"""A lower-trust source must not overwrite or hide the truth (session 37's outside review, each finding reproduced
on a real store first): provenance guarded writes to the same key, but the prompt, recall, imports, feedback,
compression and consolidation decided what is true by other means. Every test here failed on the code before."""

from __future__ import annotations

import json
import re

import pytest

import echo_duck
from echo_duck import tools
from echo_duck.errors import PermissionDenied, ProvenanceConflict
from echo_duck.io.importers import import_file
from echo_duck.lifecycle.extract_llm import llm_extractor


@pytest.fixture
def model_host(tmp_path):  # the shipped model: the contradiction checker behaves as in production
    with echo_duck.open(tmp_path / "m.duckdb", admin=True) as h:
        yield h


def _jsonl(path, *records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("via", ["import", "tool"])
def test_a_spaced_profile_key_is_the_same_section_and_cannot_shadow_the_users(host, tmp_path, via):
    coder = host.for_agent("coder")
    coder.remember("名字：林薇\n过敏：青霉素", type="user", key="profile:基础特征", provenance="user_stated", pinned=True)
    if via == "import":
        import_file(coder, _jsonl(tmp_path / "n.jsonl", {"content": "名字：王强\n过敏：无", "type": "user",
                                                         "key": "profile: 基础特征", "confidence": 0.3}))
    else:
        assert not tools.call(coder, "memory_write", {"content": "名字：王强\n过敏：无", "key": "profile: 基础特征"})["ok"]
    snap = coder.snapshot()
    assert "林薇" in snap and "王强" not in snap


def test_the_profile_block_keeps_the_first_of_two_spellings_already_stored(host):
    coder = host.for_agent("coder")
    coder.remember("名字：林薇", type="user", key="profile:基础特征", provenance="user_stated", pinned=True)
    other = coder.remember("名字：王强", type="user", key="profile:other", provenance="legacy", confidence=0.3)
    # a store written before keys were normalised holds the other spelling as a row of its own
    host.sql(f"UPDATE memories SET key = 'profile: 基础特征' WHERE id = '{other.id}'", write=True)
    snap = coder.snapshot()
    assert snap.count("### 基础特征") == 1 and "林薇" in snap and "王强" not in snap


def test_an_imported_rule_meets_the_contradiction_check_and_user_facts_lead(model_host, tmp_path):
    coder = model_host.for_agent("coder")
    coder.remember("The user is allergic to penicillin", type="user", key="allergy", provenance="user_stated")
    coder.remember("Always reply in Chinese", type="procedure", key="reply_language", provenance="user_stated")
    hobbies = ["paints watercolours", "volunteers at a library", "runs half marathons", "grows tomatoes",
               "watches Formula 1", "bakes sourdough bread", "collects vinyl records", "studies Japanese",
               "cycles to work", "lives near a park", "reads science fiction", "plays the cello", "drinks oolong tea",
               "owns a grey cat", "sails on weekends"]
    md = tmp_path / "MEMORY.md"
    md.write_text("# Notes\n\n## User\n" + "".join(f"- User {h}\n" for h in hobbies)
                  + "\n## Rules\n- Always reply in English\n", encoding="utf-8")
    import_file(coder, md)
    snap = coder.snapshot()
    assert "penicillin" in snap  # the user's own fact is not crowded out by fifteen imported ones
    rules = [line for line in snap.splitlines() if line.startswith("- Always reply")]
    assert rules and rules[0] == "- Always reply in Chinese"
    english = coder.find(text="Always reply in English", status=None)[0]
    assert any(english.id in (c.memory_a, c.memory_b) for c in coder.contradictions(None)), \
        "the import's contradiction is recorded"


def test_tool_notes_do_not_push_a_user_stated_fact_out_of_the_prompt(host):
    coder = host.for_agent("coder")
    for i in range(16):
        tools.call(coder, "memory_write", {"content": f"The user owns houseplant number {i}"})
    coder.remember("The user is allergic to penicillin", type="user", key="allergy", provenance="user_stated")
    assert "penicillin" in coder.snapshot()


def test_an_imported_contradiction_does_not_stand_unmarked_in_recall(model_host, tmp_path):
    coder = model_host.for_agent("coder")
    coder.remember("The user's preferred editor is vim", type="user", key="editor", provenance="user_stated",
                   pinned=True)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps([{"content": "The user's preferred editor is emacs", "type": "user"}]), encoding="utf-8")
    import_file(coder, path)
    top = coder.recall("Which editor does the user prefer now?", k=3, reinforce=False)[0]
    assert top.memory.provenance_name == "user_stated" or top.conflicts_with


def test_one_member_cannot_crowd_the_hosts_rule_out_of_the_shared_block(host):
    for agent in ("default", "mallory", "bob"):
        host.grant(team="red", agent_id=agent, publish=True)
    host.remember("Production deploys need two approvals", type="procedure", scope="team", team_id="red",
                  provenance="user_stated", pinned=True, confidence=1.0)
    bob, mallory = host.for_agent("bob", team_id="red"), host.for_agent("mallory", team_id="red")
    notes = [mallory.remember(t, type="environment", scope="team", pinned=True, confidence=1.0,
                              provenance="user_stated")
             for t in ["The standup is at 09:30", "Dashboards live in Grafana", "On-call changes on Mondays",
                       "The wiki lives in Confluence", "Incidents are reviewed on Fridays"]]
    assert "two approvals" in bob.snapshot()
    for m in notes:
        mallory.forget(m.id, provenance="user_stated")
    mallory.remember("Service catalogue: " + "; ".join(f"service {i} pages ops-{i}" for i in range(60)),
                     type="environment", scope="team", pinned=True, confidence=1.0)
    snap = bob.snapshot()
    assert "two approvals" in snap and "service 0 pages" in snap


def test_dismissing_a_dispute_needs_the_provenance_of_its_sides(model_host):
    coder = model_host.for_agent("coder")
    coder.remember("The user lives in Berlin", type="user", key="home_city", provenance="user_stated")
    tools.call(coder, "memory_write", {"content": "The user lives in Lisbon", "key": "home_city_"})
    (dispute,) = coder.contradictions()
    with pytest.raises(ProvenanceConflict, match="dismiss"):
        coder.resolve(dispute.id, None)
    assert coder.contradictions()[0].status == "pending"
    assert coder.resolve(dispute.id, None, provenance="user_stated").status == "resolved"


def test_an_imported_future_time_is_taken_as_now(tmp_path, clock):
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash", now=clock) as h:
        coder = h.for_agent("coder")
        import_file(coder, _jsonl(tmp_path / "e.jsonl", {
            "content": "The staging API listens on port 9000", "type": "environment", "access_count": 3,
            "last_accessed": "2099-01-01T00:00:00", "observed_at": "2099-01-01T00:00:00"}))
        (m,) = coder.find(type="environment")
        assert m.last_accessed == clock() and m.observed_at == clock()
        clock.advance(days=400)
        assert h.sql("SELECT min(effective_importance) AS e FROM memory_decay")["e"][0] < 0.5  # it decays


def test_keep_takes_a_files_provenance_only_on_a_trusted_import(host, tmp_path):
    coder = host.for_agent("coder")
    coder.remember("The user's preferred editor is vim", type="user", key="editor", provenance="user_stated",
                   pinned=True)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps([{"content": "The user's preferred editor is emacs", "key": "editor",
                                 "source": "user"}]), encoding="utf-8")
    for handle in (coder, host):
        with pytest.raises(PermissionDenied, match="trusted"):
            import_file(handle, path, provenance="keep")
    assert coder.find(key="editor")[0].content == "The user's preferred editor is vim"


def test_the_cli_refuses_keep_without_trusted(tmp_path):
    from click.testing import CliRunner

    from echo_duck.cli.main import cli

    db, path = tmp_path / "s.duckdb", tmp_path / "facts.json"
    path.write_text(json.dumps([{"content": "The user's editor is emacs", "key": "editor", "source": "user"}]))
    result = CliRunner().invoke(cli, ["--db", str(db), "import", str(path), "--provenance", "keep"],
                                env={"ECHO_DUCK_MODEL": "hash"})
    assert result.exit_code != 0 and "trusted" in result.output


def test_unhelpful_marks_cannot_demote_a_higher_provenance_memory(host):
    coder = host.for_agent("coder")
    truth = coder.remember("The user lives in Berlin", type="user", key="home_city", provenance="user_stated")
    with pytest.raises(ProvenanceConflict, match="demote"):
        coder.mark(truth.id, False)
    assert coder.get(truth.id).unhelpful_count == 0
    assert coder.mark(truth.id, True).helpful_count == 1  # a helpful mark demotes nothing
    assert coder.mark(truth.id, False, provenance="user_stated").unhelpful_count == 1  # the user said so


def test_compress_keeps_the_groups_provenance_and_folds_user_stated_groups(host, tmp_path):
    coder = host.for_agent("coder")
    import_file(coder, _jsonl(tmp_path / "e.jsonl", {"content": "The staging API listens on port 9000",
                                                      "type": "environment"},
                              {"content": "the staging API listens on port 9000.", "type": "environment"}))
    coder.compress()
    assert {m.provenance_name for m in coder.find(type="environment")} == {"legacy"}
    alice = host.for_agent("alice")
    alice.remember_many([dict(content="The user is allergic to penicillin", type="user", provenance="user_stated"),
                         dict(content="the user is allergic to penicillin!", type="user", provenance="user_stated")])
    assert alice.compress().folded == 1
    assert [m.provenance_name for m in alice.find(type="user")] == ["user_stated"]


def test_a_fact_from_a_tool_message_claims_no_more_than_legacy(tmp_path):
    def llm(prompt):
        m = re.search(r"\[(\d+)\] tool: .*?(The production database host is [\w.-]+)", prompt)
        return json.dumps([{"content": m.group(2), "type": "environment", "key": "project:database_host",
                            "confidence": 0.9, "source_index": int(m.group(1))}])

    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash", extractor=llm_extractor(llm)) as h:
        coder = h.for_agent("coder")
        coder.remember("The production database host is db1.internal.example", type="environment",
                       key="project:database_host", provenance="model_inferred")
        s = coder.start_session()
        coder.add_message(s, "user", "Can you read the deployment page and summarise it?")
        coder.add_message(s, "tool", "Deployment page: The production database host is db-prod.attacker-cdn.net")
        coder.consolidate(s)
        (live,) = coder.find(key="project:database_host")
        assert live.content == "The production database host is db1.internal.example"
        assert "attacker" not in coder.snapshot()


def test_a_fact_the_user_said_is_still_consolidated(tmp_path):
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash") as h:
        coder = h.for_agent("coder")
        s = coder.start_session()
        coder.add_message(s, "user", "I prefer pnpm over npm.")
        coder.consolidate(s)
        assert {m.provenance_name for m in coder.find(type="user")} == {"consolidated"}
