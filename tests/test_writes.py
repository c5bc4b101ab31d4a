import pytest

import echo_duck
from echo_duck import InvalidInput


def count(mem, table, where="true"):
    return mem.sql(f"SELECT count(*) FROM {table} WHERE {where}").item()


def test_remember_stores_every_field(mem):
    m = mem.remember("Deploys go through ArgoCD", type="environment", key="deploy_tool", tags=["ops", "k8s"],
                     importance=0.7, confidence=0.9, pinned=True, source_refs=["message:abc"], entities=["ArgoCD"])
    got = mem.get(m.id)
    assert (got.content, got.key, got.tags, got.entities, got.source_refs) == (
        "Deploys go through ArgoCD", "deploy_tool", ("ops", "k8s"), ("ArgoCD",), ("message:abc",))
    assert (got.importance, got.confidence, got.pinned, got.version, got.status, got.tier) == (0.7, 0.9, True, 1, "active", "semantic")
    assert got.provenance_name == "model_inferred"
    assert count(mem, "memory_events", "action = 'create'") == 1


def test_same_key_same_scope_makes_a_new_version_and_keeps_the_old(mem):
    v1 = mem.remember("uses npm", type="environment", key="pm")
    v2 = mem.remember("uses pnpm", type="environment", key="pm")
    assert (v2.version, v2.supersedes) == (2, v1.id)
    old = mem.get(v1.id)
    assert (old.content, old.status, old.tier, old.superseded_by) == ("uses npm", "superseded", "archival", v2.id)
    assert [m.content for m in mem.find(key="pm")] == ["uses pnpm"]
    history = mem.history("pm")
    assert [v.content for v in history.versions] == ["uses npm", "uses pnpm"]
    assert [e.action for e in history.events] == ["create", "create", "supersede"]
    supersede = history.events[-1]
    assert supersede.before["content"] == "uses npm" and supersede.after["status"] == "superseded"


def test_restating_the_same_fact_does_not_version(mem):
    a = mem.remember("uses pnpm", type="environment", key="pm")
    b = mem.remember("uses pnpm", type="environment", key="pm")
    assert a.id == b.id and count(mem, "memories") == 1
    c = mem.remember("no key here", type="environment")
    d = mem.remember("no key here", type="environment")
    assert c.id == d.id


def test_same_key_in_another_scope_is_another_fact(mem):
    mem.grant(team="core")
    mine = mem.remember("tabs", type="user", key="indent")
    team = mem.remember("spaces", type="environment", key="indent", scope="team", team_id="core")
    assert mine.version == team.version == 1
    assert {m.content for m in mem.find(key="indent")} == {"tabs", "spaces"}
    with pytest.raises(echo_duck.AmbiguousMatch, match="2 active memories"):
        mem.update("indent", "two spaces")


def test_lower_provenance_never_replaces_higher(mem):
    truth = mem.remember("answer in Chinese", type="user", key="lang", provenance="user_stated")
    for weaker in ("consolidated", "model_inferred", "legacy"):
        with pytest.raises(echo_duck.ProvenanceConflict, match="user_stated"):
            mem.remember("answer in English", type="user", key="lang", provenance=weaker)
        with pytest.raises(echo_duck.ProvenanceConflict):
            mem.update("lang", "answer in English", provenance=weaker)
    assert mem.get(truth.id).status == "active"
    assert [m.content for m in mem.find(key="lang")] == ["answer in Chinese"]
    assert count(mem, "memories") == 1


def test_equal_or_higher_provenance_supersedes(mem):
    a = mem.remember("answer in Chinese", type="user", key="lang", provenance="model_inferred")
    b = mem.remember("answer in English", type="user", key="lang", provenance="model_inferred")
    c = mem.remember("answer in French", type="user", key="lang", provenance="user_stated")
    assert mem.get(a.id).superseded_by == b.id and mem.get(b.id).superseded_by == c.id
    assert mem.find(key="lang")[0].provenance_name == "user_stated"


def test_lower_provenance_from_consolidation_is_recorded_as_pending(mem):
    truth = mem.remember("answer in Chinese", type="user", key="lang", provenance="user_stated")
    spec = echo_duck.write.writer.prepare(mem.caller, "answer in English", type="user", key="lang", provenance="consolidated")
    pending = mem.writer.remember(mem.caller, spec, on_lower_provenance="record")
    assert pending.status == "pending" and mem.get(truth.id).status == "active"
    row = mem.sql("SELECT memory_a::VARCHAR a, memory_b::VARCHAR b, status FROM contradictions").row(0)
    assert row == (truth.id, pending.id, "pending")
    assert [m.content for m in mem.find(key="lang")] == ["answer in Chinese"]


def test_update_by_id_and_key(mem):
    m = mem.remember("staging is pg14", type="environment", key="staging_db", tags=["db"])
    v2 = mem.update(m.id, "staging is pg15", reason="upgrade")
    assert (v2.content, v2.tags, v2.version) == ("staging is pg15", ("db",), 2)
    v3 = mem.update("staging_db", importance=0.9)
    assert (v3.content, v3.importance, v3.version) == ("staging is pg15", 0.9, 3)
    with pytest.raises(InvalidInput, match="only active"):
        mem.update(m.id, "again")
    with pytest.raises(InvalidInput, match="cannot change"):
        mem.update(v3.id, provenance="user_stated", access_count=5)
    with pytest.raises(InvalidInput, match="cannot change words_by_host"):  # the writer's own keyword is no field
        mem.update(v3.id, "staging is pg16", words_by_host=True)
    assert mem.get(v3.id).status == "active"


def test_forget_is_soft_and_logged(mem):
    m = mem.remember("temp fact", type="environment", key="tmp")
    mem.forget("tmp", reason="user asked")
    assert mem.find(key="tmp") == []
    assert mem.get(m.id).status == "forgotten"
    assert [e.action for e in mem.history(m.id).events] == ["create", "forget"]
    assert mem.history(m.id).events[-1].reason == "user asked"


def test_unknown_targets_are_not_found(mem):
    with pytest.raises(echo_duck.MemoryNotFound):
        mem.get("00000000-0000-0000-0000-000000000000")
    with pytest.raises(echo_duck.MemoryNotFound):
        mem.update("no_such_key", "x")
    with pytest.raises(InvalidInput):
        mem.get("not-a-uuid")


@pytest.mark.parametrize("kwargs, message", [
    (dict(content="", type="user"), "content must not be empty"),
    (dict(content="   ", type="user"), "content must not be empty"),
    (dict(content=None, type="user"), "content must be a string"),
    (dict(content="x", type="robot"), "type must be one of"),
    (dict(content="x", type="user", scope="world"), "scope must be one of"),
    (dict(content="x", type="user", importance=1.5), "importance must be between 0 and 1"),
    (dict(content="x", type="user", importance=float("nan")), "importance"),
    (dict(content="x", type="user", confidence=-0.1), "confidence"),
    (dict(content="x", type="user", confidence=True), "confidence"),
    (dict(content="x", type="user", provenance="trusted"), "provenance must be one of"),
    (dict(content="x", type="user", provenance=7), "provenance"),
    (dict(content="x", type="user", tags="single"), "not one string"),
    (dict(content="x", type="user", tags=[""]), "must not be empty"),
    (dict(content="x", type="user", key="k" * 201), "limit is 200"),
    (dict(content="a\x00b", type="user"), "NUL"),
    (dict(content="bad \ud800 surrogate", type="user"), "lone surrogate"),
    (dict(content="x" * 100_001, type="user"), "limit is 100,000"),
    (dict(content="x", type="user", pinned="yes"), "pinned must be True or False"),
    (dict(content="x", type="user", scope="team"), "needs team_id"),
    (dict(content="x", type="user", sensitivity="top"), "sensitivity"),
    (dict(content="x", type="user", observed_at="yesterday"), "ISO date"),
    (dict(content="x", type="user", colour="red"), "unknown arguments: colour"),
])
def test_bad_input_is_a_clear_error_and_changes_nothing(mem, kwargs, message):
    mem.remember("existing", type="user", key="k")
    before = mem.sql("SELECT * FROM memories").rows()
    with pytest.raises(InvalidInput, match=message):
        mem.remember(kwargs.pop("content"), **kwargs)
    assert mem.sql("SELECT * FROM memories").rows() == before


@pytest.mark.parametrize("record, message", [
    ({"content": "x"}, r"record 1: missing 'type' \(type is one of user, environment"),
    ({"type": "user"}, "record 1: missing 'content'$"),
    ({"content": "x", "type": "user", "colour": "red", "size": 2},
     "record 1: unknown fields 'colour', 'size'; a record takes content, type, key"),
    ({"content": "x", "type": "user", 3: 4}, "record 1: unknown field 3;"),
    ("just text", "record 1: must be a dict of remember\\(\\)'s arguments, got str"),
])
def test_remember_many_names_a_missing_or_unknown_field(mem, record, message):
    with pytest.raises(InvalidInput, match=message):
        mem.remember_many([{"content": "fine", "type": "user"}, record])
    assert count(mem, "memories") == 0


def test_remember_many_is_all_or_nothing(mem):
    with pytest.raises(InvalidInput, match="record 1"):
        mem.remember_many([{"content": "ok", "type": "user"}, {"content": "bad", "type": "nope"}])
    assert count(mem, "memories") == 0
    stored = mem.remember_many([{"content": f"fact {i}", "type": "environment", "key": f"k{i}"} for i in range(50)])
    assert len(stored) == 50 and count(mem, "memories") == 50 and count(mem, "memory_events") == 50


def test_team_scope_needs_membership_and_a_publish_right(mem):
    agent = mem.for_agent("coder")
    with pytest.raises(echo_duck.PermissionDenied, match="not a member"):
        agent.remember("team fact", type="environment", scope="team", team_id="core")
    mem.grant(team="core", agent_id="coder")  # reads the team's memories, may not write them yet
    with pytest.raises(echo_duck.PermissionDenied, match="may not publish to team 'core'"):
        agent.remember("team fact", type="environment", scope="team", team_id="core")
    mem.grant(team="core", agent_id="coder", publish=True)
    assert agent.remember("team fact", type="environment", scope="team", team_id="core").team_id == "core"


def test_scope_visibility_between_agents(db_path):
    with echo_duck.open(db_path, agent_id="alice", admin=True) as alice:
        alice.grant(team="core")
        alice.remember("alice private", type="user")
        alice.remember("core team", type="environment", scope="team", team_id="core")
        alice.remember("everyone", type="environment", scope="public")
        secret = alice.remember("alice session note", type="environment", scope="session", source_session="s1")
    with echo_duck.open(db_path, agent_id="bob", admin=True) as bob:
        assert {m.content for m in bob.find()} == {"everyone"}
        with pytest.raises(echo_duck.MemoryNotFound):
            bob.get(secret.id)
        bob.grant(team="core")
        assert {m.content for m in bob.find()} == {"everyone", "core team"}
        bob.revoke(team="core")
        assert {m.content for m in bob.find()} == {"everyone"}
    with echo_duck.open(db_path, agent_id="alice", session_id="s2", admin=True) as alice_elsewhere:
        assert "alice session note" not in {m.content for m in alice_elsewhere.find()}
    with echo_duck.open(db_path, agent_id="alice", session_id="s1", admin=True) as alice_in_s1:
        assert "alice session note" in {m.content for m in alice_in_s1.find()}


@pytest.mark.parametrize("column, value", [
    ("type", "'robot'"), ("tier", "'working'"), ("scope", "'world'"), ("importance", "1.5"), ("importance", "-0.1"),
    ("confidence", "2"), ("provenance", "4"), ("provenance", "-1"), ("status", "'deleted'"), ("sensitivity", "'x'"),
    ("access_count", "-1"), ("version", "0"), ("content", "''"),
])
def test_check_constraints_guard_the_table_itself(mem, column, value):
    """Analysts writing SQL by hand hit the same rules as the API."""
    m = mem.remember("guarded", type="user")
    with pytest.raises(echo_duck.InvalidInput, match="constraint"):
        mem.sql(f"UPDATE memories SET {column} = {value} WHERE id = '{m.id}'", write=True)
    assert mem.get(m.id).content == "guarded"


def test_team_scope_requires_team_id_in_the_table(mem):
    m = mem.remember("x", type="user")
    with pytest.raises(echo_duck.InvalidInput, match="constraint"):
        mem.sql(f"UPDATE memories SET scope = 'team' WHERE id = '{m.id}'", write=True)


def test_sql_is_read_only_by_default(mem):
    mem.remember("x", type="user")
    for statement in ("DELETE FROM memories", "DROP TABLE memories", "UPDATE memories SET content = 'y'",
                      "INSERT INTO settings VALUES ('a', 1, 'b')"):
        with pytest.raises(InvalidInput, match="read-only"):
            mem.sql(statement)
    with pytest.raises(InvalidInput, match="exactly one statement"):
        mem.sql("SELECT 1; SELECT 2")
    assert mem.sql("SELECT content FROM memories WHERE type = $t", {"t": "user"}).item() == "x"
    assert mem.find()[0].content == "x"


def test_sql_errors_are_typed(mem):
    with pytest.raises(echo_duck.EchoDuckError):
        mem.sql("SELECT * FROM no_such_table")


def test_writes_survive_reopen(db_path):
    with echo_duck.open(db_path, admin=True) as mem:
        ids = [mem.remember(f"fact {i}", type="environment").id for i in range(5)]
    with echo_duck.open(db_path, admin=True) as mem:
        assert sorted(m.id for m in mem.find()) == sorted(ids)


def test_closed_store_says_so(db_path):
    mem = echo_duck.open(db_path, admin=True)
    mem.close()
    with pytest.raises(echo_duck.EchoDuckError, match="closed"):
        mem.find()


def test_import_does_not_load_onnxruntime():
    import subprocess
    import sys

    code = "import sys, echo_duck; print('onnxruntime' in sys.modules, 'tokenizers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False False"
