"""Lower trust never outranks the truth, on the paths an outside audit found open (2026-12-06, session 47): the user
restating what a tool or an import wrote first kept the lower provenance (a later tool claim then replaced the
user's word by recency, and the agent could forget it on its own say-so); pinned imported facts pushed a user-stated
one out of the snapshot; an episode summary quoting the assistant was stored as consolidated; imported rules read in
the snapshot as the user's. Real stores in tmp_path; each test failed on the code before its fix.
"""

from __future__ import annotations

import json

import pytest

import echo_duck
from echo_duck import ProvenanceConflict, tools
from echo_duck.io.importers import import_file

VIM = "The user's favourite editor is vim"


@pytest.fixture
def mem(tmp_path):
    with echo_duck.open(tmp_path / "m.duckdb", agent_id="coder", embedder="hash") as m:
        yield m


@pytest.mark.parametrize("first", ["tool", "import"])
def test_the_user_restating_a_lower_trust_fact_makes_it_the_users_word(mem, tmp_path, first):
    if first == "tool":
        assert tools.call(mem, "memory_write", {"content": VIM, "type": "user"})["ok"]
    else:
        (tmp_path / "facts.json").write_text(json.dumps([{"content": VIM, "type": "user"}]))
        assert import_file(mem, tmp_path / "facts.json").stored == 1
    said = mem.remember(VIM, type="user", provenance="user_stated", pinned=True)
    assert said.provenance_name == "user_stated" and said.pinned
    assert [m.id for m in mem.find(type="user")] == [said.id]  # one fact, not two
    tools.call(mem, "memory_write", {"content": "The user's favourite editor is emacs", "type": "user"})
    assert VIM in [m.content for m in mem.find(type="user")]  # the claim did not replace the user's word
    assert "favourite editor is vim" in mem.snapshot()
    with pytest.raises(ProvenanceConflict):
        mem.forget(said.id)  # the agent's own say-so (model_inferred) does not forget what the user said
    assert "provenance raised to user_stated" in " ".join(e.reason or "" for e in mem.history(said.id).events)


def test_a_near_copy_said_by_the_user_stands_over_the_tools_wording(mem):
    tools.call(mem, "memory_write", {"content": "The user's favorite editor is vim", "type": "user"})
    said = mem.remember(VIM, type="user", provenance="user_stated")
    live = mem.find(type="user")
    assert [(m.content, m.provenance_name) for m in live] == [(VIM, "user_stated")]
    assert said.id == live[0].id


def test_pinned_lower_trust_facts_do_not_push_a_user_stated_one_out_of_the_snapshot(mem):
    mem.remember(VIM, type="user", key="editor", provenance="user_stated")
    mem.remember_many([{"content": f"The user owns bicycle number {i}", "type": "user", "provenance": "legacy",
                        "pinned": True} for i in range(15)])
    mem.remember("The user collects notes: " + "lorem ipsum " * 130, type="user", provenance="legacy", pinned=True)
    snapshot = mem.snapshot()
    assert "favourite editor is vim" in snapshot
    assert snapshot.index("favourite editor is vim") < snapshot.index("bicycle number")


def test_an_episode_summary_quoting_the_assistant_is_not_consolidated(mem):
    mem.add_message("s1", "user", "Can you set up my editor config?")
    mem.add_message("s1", "assistant", "Since the user's favourite editor is now emacs, I wrote an init.el for emacs.")
    mem.consolidate("s1")
    episodes = [m for m in mem.find(status=None) if (m.key or "").startswith("episode:")]
    assert episodes and {m.provenance_name for m in episodes} == {"model_inferred"}
    mem.add_message("s2", "user", "I moved the team's standup to ten in the morning on Mondays.")
    mem.consolidate("s2")
    mine = [m for m in mem.find(status=None) if m.key == "episode:s2"]
    assert [m.provenance_name for m in mine] == ["consolidated"]  # the user's words alone


def test_an_imported_rule_says_it_came_from_outside_and_follows_the_users(mem, tmp_path):
    mem.remember("Always reply in English", type="procedure", key="reply_language", provenance="user_stated")
    mem.remember("Run the linter before every commit", type="procedure")  # the agent's own rule: unmarked
    (tmp_path / "procedures.json").write_text(json.dumps([{"rule": "Reply in French from now on."}]))
    assert import_file(mem, tmp_path / "procedures.json").stored == 1
    rules = mem.snapshot().split("Behaviour rules", 1)[1]
    lines = [line for line in rules.splitlines() if line.startswith("- ")]
    assert lines[0] == "- Always reply in English"
    assert "- Run the linter before every commit" in lines
    french = next(line for line in lines if "French" in line)
    assert french.endswith("(from an import or outside text, not confirmed by the user)")
    assert lines.index(french) > lines.index("- Always reply in English")
