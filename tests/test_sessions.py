import pytest

import echo_duck


def test_a_session_is_written_only_with_its_first_message(mem):
    sid = mem.start_session()
    assert mem.sessions() == []
    mem.add_message(sid, "user", "I use pnpm for this repo")
    mem.add_message(sid, "assistant", "Noted.")
    [session] = mem.sessions()
    assert (session.id, session.message_count) == (sid, 2)
    assert [(m.seq, m.role) for m in mem.messages(sid)] == [(1, "user"), (2, "assistant")]


def test_session_found_by_unique_suffix(mem):
    mem.add_message("aaaa-1111", "user", "one")
    mem.add_message("bbbb-1111", "user", "two")
    assert mem.session("a-1111").id == "aaaa-1111"
    with pytest.raises(echo_duck.AmbiguousMatch, match="several"):
        mem.session("1111")
    with pytest.raises(echo_duck.MemoryNotFound):
        mem.session("zzzz")
    with pytest.raises(echo_duck.InvalidInput, match="too short"):
        mem.session("11")


def test_search_sessions_is_case_insensitive_and_literal(mem):
    mem.add_message("s1", "user", "We deploy with ArgoCD")
    mem.add_message("s2", "user", "100% of tests pass_ok")
    assert [m.id for m in mem.search_sessions("argocd")] == ["s1"]
    assert [m.id for m in mem.search_sessions("100%")] == ["s2"]
    assert mem.search_sessions("%") != [] and mem.search_sessions("_o") != []
    assert mem.search_sessions("nothing like this") == []


def test_sessions_are_per_agent(db_path):
    with echo_duck.open(db_path, agent_id="a", admin=True) as a:
        a.add_message("shared-id", "user", "hello")
    with echo_duck.open(db_path, agent_id="b", admin=True) as b:
        assert b.sessions() == [] and b.search_sessions("hello") == []
        with pytest.raises(echo_duck.InvalidInput, match="another agent"):
            b.add_message("shared-id", "user", "hijack")


def test_empty_sessions_are_cleaned(mem):
    mem.sql("INSERT INTO sessions VALUES ('legacy', 'default', NULL, now()::TIMESTAMP, now()::TIMESTAMP, NULL, NULL)", write=True)
    mem.add_message("real", "user", "hi")
    assert mem.session_log.clean_empty() == 1
    assert [s.id for s in mem.sessions()] == ["real"]


def test_bad_message_input(mem):
    with pytest.raises(echo_duck.InvalidInput, match="role"):
        mem.add_message("s", "narrator", "x")
    with pytest.raises(echo_duck.InvalidInput, match="session id"):
        mem.add_message("bad id with spaces", "user", "x")
    assert mem.sessions() == []


def test_end_session(mem):
    mem.add_message("s", "user", "bye")
    assert mem.end_session("s").ended_at is not None
