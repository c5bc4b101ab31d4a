"""Sensitivity (SPEC T2, issue 18): ``sensitive`` never leaves its owner, whatever the scope; ``personal``
stays out of other agents' reads unless the owner shares it (share(): tag ``share:personal``).

Every read path is tried as the owner and as a teammate who may read the scope: recall (both arms,
filtered and not, inside a transaction), find, get, history, snapshot, the memory_search tool, exports,
the audit report, contradictions, recall(include_kb=True) and the knowledge base. The real model
stands in for the vector arm in one test.
"""

from __future__ import annotations

import json

import pytest

import echo_duck
from echo_duck import tools
from echo_duck.io.exporters import export_jsonl

HEALTH = "thyroid-zx91 endocrinologist appointment on Monday"
FAMILY = "sister-qk44 lives in Lyon with her two cats"
NORMAL = "team-vv73 standup is at 09:30 in room Lyon"


def _world(host):
    """a1 writes a sensitive, a personal and a normal memory into team red (a2 is a member)."""
    host.grant(team="red", agent_id="a1", publish=True)
    host.grant(team="red", agent_id="a2")
    host.grant_right("a1", "publish:public")
    a1, a2 = host.for_agent("a1", team_id="red"), host.for_agent("a2", team_id="red")
    made = {
        "sensitive": a1.remember(HEALTH, type="user", key="health", scope="public", sensitivity="sensitive",
                                 pinned=True, tags=["share:personal"]),  # the tag cannot share a sensitive one
        "personal": a1.remember(FAMILY, type="user", key="family", scope="team", sensitivity="personal",
                                pinned=True),
        "normal": a1.remember(NORMAL, type="environment", key="standup", scope="team", pinned=True),
    }
    return a1, a2, made


def _reads(mem, query: str) -> dict[str, str]:
    """Everything every read path returns to ``mem`` for ``query``, as text per path."""
    out = {
        "recall": [h.content for h in mem.recall(query, k=20)],
        "recall keyword": [h.content for h in mem.recall(query, k=20, arms=["keyword"])],
        "recall vector": [h.content for h in mem.recall(query, k=20, arms=["vector"])],
        "recall filtered": [h.content for h in mem.recall(query, k=20, types=["user", "environment"])],
        "recall archived": [h.content for h in mem.recall(query, k=20, include_archived=True)],
        "find": [m.content for m in mem.find(status=None, limit=1000)],
        "snapshot": mem.snapshot(),
        "tool": tools.call(mem, "memory_search", {"query": query, "k": 20}),
        "audit": {name: frame.to_dicts() for name, frame in mem.audit().items() if name != "memory_health"},
        "contradictions": [c.to_dict() for c in mem.contradictions(None)],
    }
    with mem.db.transaction("a filtered recall inside a transaction runs in SQL"):
        out["recall in sql"] = [h.content for h in mem.recall(query, k=20, types=["user", "environment"],
                                                              reinforce=False)]
    return {k: json.dumps(v, default=str, ensure_ascii=False) for k, v in out.items()}


@pytest.mark.parametrize("query", ["thyroid-zx91 endocrinologist", "sister-qk44 Lyon cats", "Lyon"])
def test_sensitive_and_personal_memories_never_reach_a_teammate(tmp_path, clock, query):
    with echo_duck.open(tmp_path / "m.duckdb", admin=True, embedder="hash", now=clock) as host:
        a1, a2, made = _world(host)
        theirs = _reads(a2, query)
        for path, text in theirs.items():
            assert "thyroid-zx91" not in text and "sister-qk44" not in text, f"{path} leaked to a2: {text[:300]}"
        if query == "Lyon":
            assert "team-vv73" in theirs["recall"] and "team-vv73" in theirs["snapshot"]
        mine = _reads(a1, query)
        assert "thyroid-zx91" in mine["find"] and "sister-qk44" in mine["find"]  # the owner keeps them
        assert "thyroid-zx91" in mine["snapshot"]
        for memory in (made["sensitive"], made["personal"]):
            with pytest.raises(echo_duck.MemoryNotFound):
                a2.get(memory.id)
            with pytest.raises(echo_duck.MemoryNotFound):
                a2.history(memory.id)
        assert host.sql("SELECT count(*) FROM leaked_recalls").item() == 0


def test_sharing_a_personal_memory_is_the_owners_explicit_act(tmp_path, clock):
    with echo_duck.open(tmp_path / "m.duckdb", admin=True, embedder="hash", now=clock) as host:
        a1, a2, made = _world(host)
        with pytest.raises(echo_duck.MemoryNotFound):
            a2.share(made["personal"].id)  # not a2's to share: a2 cannot even see it
        with pytest.raises(echo_duck.PermissionDenied):
            a2.share(made["normal"].id)  # a2 sees this one, but it is a1's
        with pytest.raises(echo_duck.InvalidInput, match="sensitive"):
            a1.share(made["sensitive"].id)
        shared = a1.share(made["personal"].id)
        assert "share:personal" in shared.tags and shared.version == 2
        assert a2.get(shared.id).content == FAMILY
        assert FAMILY in a2.snapshot()
        assert "thyroid-zx91" not in a2.snapshot()


def test_exports_of_a_teammate_hold_no_sensitive_or_personal_memory(tmp_path, clock):
    with echo_duck.open(tmp_path / "m.duckdb", admin=True, embedder="hash", now=clock) as host:
        a1, a2, _ = _world(host)
        export_jsonl(a2, tmp_path / "a2.jsonl", include_history=True)
        export_jsonl(a1, tmp_path / "a1.jsonl", include_history=True)
    theirs = (tmp_path / "a2.jsonl").read_text(encoding="utf-8")
    assert "team-vv73" in theirs and "thyroid-zx91" not in theirs and "sister-qk44" not in theirs
    mine = (tmp_path / "a1.jsonl").read_text(encoding="utf-8")
    assert "thyroid-zx91" in mine and "sister-qk44" in mine


def test_a_leak_would_show_in_the_audit(tmp_path, clock):
    """leaked_recalls judges sensitivity too: a recall_log row naming another agent's sensitive memory
    (written here by hand, as a bug would) is counted."""
    with echo_duck.open(tmp_path / "m.duckdb", admin=True, embedder="hash", now=clock) as host:
        _, _, made = _world(host)
        host.sql("INSERT INTO recall_log (occurred_at, agent_id, query, k, memory_ids, scores, reinforced) "
                 "VALUES (?, 'a2', 'q', 1, [?::UUID], [1.0], false)", [clock.now, made["sensitive"].id], write=True)
        assert host.sql("SELECT count(*) FROM leaked_recalls").item() == 1


def test_the_real_model_finds_nothing_sensitive_for_a_teammate(tmp_path, clock):
    with echo_duck.open(tmp_path / "m.duckdb", admin=True, now=clock) as host:
        if host.indexer.vectors is None:
            pytest.skip("the default ONNX model is not installed")
        a1, a2, _ = _world(host)
        for query in ("which doctor did the user see?", "where does the user's sister live?", "用户看了什么医生"):
            hits = a2.recall(query, k=10, arms=["vector"])
            assert all(h.memory.agent_id == "a2" or h.memory.sensitivity == "normal" for h in hits)
            assert not any("thyroid" in h.content or "sister" in h.content for h in a2.recall(query, k=10))
        assert "thyroid-zx91" in a1.recall("which doctor did the user see?", k=3)[0].content


def test_sensitive_knowledge_base_documents_stay_with_their_owner(tmp_path, clock):
    with echo_duck.open(tmp_path / "m.duckdb", admin=True, embedder="hash", now=clock) as host:
        host.grant_right("a1", "publish:public")
        a1, a2 = host.for_agent("a1"), host.for_agent("a2")
        a1.kb_add("# Medical\n\nThe user's thyroid-zx91 results are in the blue folder.\n", source="medical",
                  scope="public", sensitivity="sensitive")
        a1.kb_add("# Office\n\nThe blue folder holds the office lease.\n", source="office", scope="public")
        assert [h.chunk.source for h in a2.kb_search("blue folder")] == ["office"]
        assert [d.source for d in a2.kb_documents()] == ["office"]
        assert not any("thyroid" in getattr(h, "content", "") for h in a2.recall("blue folder thyroid", include_kb=True))
        assert {h.chunk.source for h in a1.kb_search("blue folder")} == {"office", "medical"}


def test_a_team_lake_never_receives_sensitive_or_personal_memories(tmp_path, clock):
    from echo_duck.io.scaleout import publish_to_ducklake, read_team_memories

    with echo_duck.open(tmp_path / "m.duckdb", admin=True, agent_id="a1", team_id="red", embedder="hash",
                        now=clock) as host:
        a1, _, _ = _world(host)
        with pytest.raises(echo_duck.PermissionDenied, match="admin"):
            publish_to_ducklake(a1, tmp_path / "lake.ducklake", tmp_path / "lake-data")
        report = publish_to_ducklake(host, tmp_path / "lake.ducklake", tmp_path / "lake-data", team_id="red")
    assert report.published == 1
    assert read_team_memories(tmp_path / "lake.ducklake", "red")["content"].to_list() == [NORMAL]


def test_history_hides_an_older_version_that_was_sensitive(tmp_path, clock):
    with echo_duck.open(tmp_path / "m.duckdb", admin=True, embedder="hash", now=clock) as host:
        host.grant_right("a1", "publish:public")
        a1, a2 = host.for_agent("a1"), host.for_agent("a2")
        old = a1.remember("Diagnosis-qq19: the user has type 1 diabetes", type="user", key="health_note",
                          scope="public", sensitivity="sensitive", provenance="user_stated")
        new = a1.update(old.id, "The user prefers meetings after 10:00", sensitivity="normal", provenance="user_stated")
        seen = a2.history(new.id)
        assert [v.id for v in seen.versions] == [new.id]
        assert "qq19" not in json.dumps(seen.to_dict(), default=str)
        assert [v.id for v in a1.history(new.id).versions] == [old.id, new.id]
