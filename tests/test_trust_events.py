"""A tamper-evident, complete event history (SPEC T6, issue 18).

Every change leaves an event (writes, versions, forgetting, purges, reinforcement batches, feedback
marks, memberships, rights, settings, SQL run by an admin), each sealed into a hash chain when its
transaction commits. Edits made to the file from outside echo_duck (a plain DuckDB connection, as an
attacker with the file would) are found by `verify_events()` / `echo-duck audit verify`, which names
the first broken link. A purge redacts events without breaking the chain.
"""

from __future__ import annotations

import json

import duckdb
import pytest
from cli_run import run_cli

import echo_duck
from echo_duck.storage.extensions import load_extensions, quote_literal


def busy_store(path, clock) -> dict:
    """A store where every kind of event happened."""
    with echo_duck.open(path, admin=True, agent_id="host", embedder="hash", now=clock) as host:
        host.grant(team="red", agent_id="a1", publish=True)
        host.grant_right("a1", "publish:public")
        a1 = host.for_agent("a1", team_id="red")
        kept = a1.remember("The deploy window is Tuesday 10:00", type="environment", key="deploy_window", scope="team")
        clock.advance(minutes=1)
        a1.update("deploy_window", "The deploy window is Wednesday 10:00")
        secret = a1.remember("The user's bank PIN hint is marmalade-4417", type="user", key="pin_hint",
                             provenance="user_stated")
        a1.remember_many([{"content": f"note {i} about builds", "type": "environment"} for i in range(20)])
        hits = a1.recall("deploy window builds", k=5)
        a1.mark(hits[0], helpful=True)
        host.set_setting("archive_threshold", 0.06)
        host.sql("UPDATE settings SET value = 31 WHERE name = 'importance_decay_days'", write=True)
        host.revoke(team="red", agent_id="a1")
        forgotten = a1.remember("A fact to forget", type="environment")
        a1.forget(forgotten.id)
        report = a1.forget(secret.id, purge=True, provenance="user_stated")
        return {"kept": kept, "purged": report.purged}


def plain(path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    load_extensions(con)
    con.execute(f"ATTACH {quote_literal(str(path))} AS mem")
    con.execute("USE mem")
    return con


def verify(path):
    with echo_duck.open(path, admin=True, embedder="hash", read_only=True) as mem:
        return mem.verify_events()


def test_the_history_is_complete_and_the_chain_verifies(tmp_path, clock):
    path = tmp_path / "m.duckdb"
    busy_store(path, clock)
    with echo_duck.open(path, admin=True, embedder="hash", read_only=True) as mem:
        actions = mem.sql("SELECT action, count(*) AS n FROM memory_events GROUP BY ALL").rows()
        report = mem.verify_events()
    assert {a for a, _ in actions} >= {"create", "supersede", "forget", "purge", "reinforce", "feedback", "grant",
                                       "grant_right", "revoke", "revoke_right", "setting", "sql"}
    assert report.ok, report
    assert report.redacted >= 1 and report.sealed == report.events == sum(n for _, n in actions)
    con = plain(path)
    reinforce = json.loads(con.execute("SELECT after::VARCHAR FROM memory_events "
                                       "WHERE action = 'reinforce' AND memory_id IS NULL").fetchone()[0])
    assert reinforce["recall_ids"] and all({"id", "n", "at"} <= set(r) for r in reinforce["reviews"])
    # the purged memory's events keep their links and digests, never their text
    rows = con.execute("SELECT reason, before, after, salt, content_digest, hash FROM memory_events e "
                       "WHERE action <> 'purge' AND memory_id IN (SELECT memory_id FROM memory_events WHERE action = 'purge')"
                       ).fetchall()
    assert rows and all(r[:4] == (None, None, None, None) and r[4] and r[5] for r in rows)
    assert con.execute("SELECT count(*) FROM memory_events WHERE CAST(memory_events AS VARCHAR) LIKE '%marmalade%'"
                       ).fetchone()[0] == 0
    con.close()


TAMPERING = {
    "edit content": "UPDATE memory_events SET after = json_object('content', 'forged') WHERE event_id = {target}",
    "edit actor": "UPDATE memory_events SET actor = 'agent:someone-else' WHERE event_id = {target}",
    "edit time": "UPDATE memory_events SET occurred_at = occurred_at + INTERVAL 1 DAY WHERE event_id = {target}",
    "delete one": "DELETE FROM memory_events WHERE event_id = {target}",
    "fake redaction": "UPDATE memory_events SET before = NULL, after = NULL, reason = NULL, salt = NULL "
                      "WHERE event_id = {target}",
    "insert": "INSERT INTO memory_events (occurred_at, actor, action, memory_id, reason) "
              "VALUES (now()::TIMESTAMP, 'agent:a1', 'forget', NULL, 'never happened')",
    "rehash one": "UPDATE memory_events SET content_digest = sha256('x'), hash = sha256('y') WHERE event_id = {target}",
    "cut the tail": "DELETE FROM memory_events WHERE event_id >= {target}",
}


@pytest.mark.slow
@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_an_edit_from_outside_is_found_at_the_first_broken_link(tmp_path, clock, how):
    path = tmp_path / "m.duckdb"
    busy_store(path, clock)
    con = plain(path)
    target = con.execute("SELECT min(event_id) FROM memory_events WHERE action = 'supersede'").fetchone()[0]
    con.execute(TAMPERING[how].format(target=target))
    con.close()
    report = verify(path)
    assert not report.ok
    if how in ("insert", "cut the tail"):
        assert report.problem
    elif how == "delete one":
        assert report.first_broken_event_id == target + 1 and "deleted, inserted or reordered" in report.problem
    else:
        assert report.first_broken_event_id == target
    cli = run_cli("audit", "verify", "--admin", "--db", str(path))
    assert cli.returncode == 1 and "BROKEN" in cli.stdout
    if report.first_broken_event_id is not None:
        assert f"event {report.first_broken_event_id}" in cli.stdout


def test_the_cli_reports_an_intact_chain(tmp_path, clock):
    path = tmp_path / "m.duckdb"
    busy_store(path, clock)
    ok = run_cli("audit", "verify", "--admin", "--db", str(path), "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["ok"] is True
    refused = run_cli("audit", "verify", "--db", str(path))
    assert refused.returncode == 1 and "PermissionDenied" in refused.stderr


def test_an_admins_sql_is_itself_on_the_record(tmp_path, clock):
    """An admin can still change events with sql(write=True), but the statement is an event of its own."""
    path = tmp_path / "m.duckdb"
    busy_store(path, clock)
    with echo_duck.open(path, admin=True, embedder="hash") as admin:
        admin.sql("UPDATE memory_events SET reason = 'rewritten' WHERE action = 'supersede'", write=True)
        report = admin.verify_events()
        last = admin.sql("SELECT action, reason FROM memory_events ORDER BY event_id DESC LIMIT 1").rows()[0]
    assert not report.ok and last == ("sql", "UPDATE memory_events SET reason = 'rewritten' WHERE action = 'supersede'")


def test_a_store_from_before_the_chain_is_adopted_whole(tmp_path, clock):
    """Events written before migration 0006 (no hashes) are sealed by the first transaction after it."""
    path = tmp_path / "m.duckdb"
    with echo_duck.open(path, admin=True, embedder="hash", now=clock) as mem:
        for i in range(5):
            mem.remember(f"old fact {i}", type="environment")
    con = plain(path)
    con.execute("UPDATE memory_events SET salt = NULL, content_digest = NULL, prev_hash = NULL, hash = NULL")
    con.execute("DELETE FROM store_info WHERE name = 'event_chain_head'")
    con.close()
    with echo_duck.open(path, admin=True, embedder="hash", now=clock) as mem:
        mem.remember("a new fact", type="environment")
        report = mem.verify_events()
    assert report.ok and report.sealed == report.events == 6
