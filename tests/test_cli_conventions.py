"""What a person typing at a terminal expects of `echo-duck` (issue: CLI conventions)."""

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

import echo_duck
from echo_duck.cli.main import cli


@pytest.fixture
def runner():
    return CliRunner()


def test_target_options_go_before_or_after_the_command(runner, db_path):
    assert runner.invoke(cli, ["--db", str(db_path), "add", "User likes green tea"]).exit_code == 0
    before = runner.invoke(cli, ["--db", str(db_path), "--json", "list"])
    after = runner.invoke(cli, ["list", "--db", str(db_path), "--json"])
    assert before.exit_code == after.exit_code == 0, before.output + after.output
    assert json.loads(before.stdout) == json.loads(after.stdout)
    assert [m["content"] for m in json.loads(before.stdout)] == ["User likes green tea"]
    # the command's own value wins over the one given before it
    other = db_path.parent / "other.duckdb"
    runner.invoke(cli, ["init", "--db", str(other)])
    assert json.loads(runner.invoke(cli, ["--db", str(db_path), "list", "--db", str(other), "--json"]).stdout) == []


def test_every_store_command_says_which_store_it_used(runner, db_path):
    result = runner.invoke(cli, ["--db", str(db_path), "--agent", "coder", "init"])
    assert result.exit_code == 0
    assert f"store {db_path.resolve()} (agent coder)" in result.stderr
    assert str(db_path.resolve()) not in result.stderr.replace(f"store {db_path.resolve()}", "")  # said once


def test_add_defaults_to_a_note_about_the_user_stated_by_the_user(runner, db_path):
    result = runner.invoke(cli, ["--db", str(db_path), "--json", "add", "Call me Sam"])
    assert result.exit_code == 0, result.output
    with echo_duck.open(db_path) as mem:
        memory = mem.get(json.loads(result.stdout)["id"])
    assert (memory.type, memory.provenance_name) == ("user", "user_stated")


def test_recall_and_search_are_the_same_command_with_readable_output(runner, db_path):
    runner.invoke(cli, ["--db", str(db_path), "add", "The staging database is PostgreSQL 15", "--type", "environment"])
    runner.invoke(cli, ["--db", str(db_path), "add", "User prefers dark mode"])
    recalled = runner.invoke(cli, ["--db", str(db_path), "recall", "staging database", "--no-reinforce"])
    searched = runner.invoke(cli, ["--db", str(db_path), "search", "staging database", "--no-reinforce"])
    assert recalled.exit_code == searched.exit_code == 0, recalled.output
    assert recalled.stdout == searched.stdout
    first = recalled.stdout.splitlines()
    assert first[0].startswith(" 1. ") and "environment" in first[0]
    assert first[1].strip() == "The staging database is PostgreSQL 15"
    nothing = runner.invoke(cli, ["--db", str(db_path), "recall", "zebra quantum xylophone", "--type", "self"])
    assert nothing.exit_code == 0 and nothing.stdout.strip() == "no memory matches"


def test_short_ids_are_accepted_wherever_ids_are_printed(runner, db_path):
    added = json.loads(runner.invoke(cli, ["--db", str(db_path), "--json", "add", "User lives in Lyon"]).stdout)
    short = added["id"][:8]
    listed = runner.invoke(cli, ["--db", str(db_path), "list"]).stdout
    assert short in listed and added["id"] not in listed
    shown = runner.invoke(cli, ["--db", str(db_path), "--json", "show", short])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["content"] == "User lives in Lyon"
    history = runner.invoke(cli, ["--db", str(db_path), "--json", "history", short])
    assert history.exit_code == 0 and json.loads(history.stdout)["versions"][0]["id"] == added["id"]
    assert runner.invoke(cli, ["--db", str(db_path), "forget", short]).exit_code == 0
    with echo_duck.open(db_path) as mem:
        assert mem.get(added["id"]).status == "forgotten"


def test_an_ambiguous_or_unknown_prefix_is_refused_with_the_candidates(db_path):
    with echo_duck.open(db_path, embedder="hash") as mem:
        # 2,000 random ids share a 4-character prefix somewhere with probability 1 - e^-30
        ids = sorted(m.id for m in mem.remember_many([dict(content=f"note {i}", type="user") for i in range(2000)]))
        shared = next(a[:4] for a, b in zip(ids, ids[1:]) if a[:4] == b[:4])
        with pytest.raises(echo_duck.AmbiguousMatch, match="give more characters"):
            mem.get(shared)
        unused = next(p for p in (f"{n:04x}" for n in range(65536)) if not any(i.startswith(p) for i in ids))
        with pytest.raises(echo_duck.MemoryNotFound, match=f"id prefix '{unused}'"):
            mem.get(unused)
        with pytest.raises(echo_duck.InvalidInput):  # three characters are too few to be an id
            mem.get(ids[0][:3])


def test_json_errors_under_json_and_flags_named_in_messages(runner, db_path):
    runner.invoke(cli, ["--db", str(db_path), "init"])
    refused = runner.invoke(cli, ["--db", str(db_path), "--json", "--admin", "sql", "DELETE FROM memories"])
    assert refused.exit_code == 2
    error = json.loads(refused.stdout)["error"]
    assert error["type"] == "InvalidInput" and "--write" in error["message"] and "write=True" not in error["message"]
    plain = runner.invoke(cli, ["--db", str(db_path), "sql", "DELETE FROM memories", "--admin"])
    assert plain.exit_code == 2 and "pass --write" in plain.stderr and "Usage:" not in plain.output


def test_a_malformed_import_file_is_one_line_not_a_usage_banner(runner, db_path, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"content": "fine", "type": "user"}\n{"content": [[[\n')
    result = runner.invoke(cli, ["--db", str(db_path), "import", str(bad)])
    assert result.exit_code == 2
    assert "Usage:" not in result.output and "line 2" in result.stderr
    assert result.stderr.strip().count("\n") == 1  # the store line, then the error


def test_a_store_keeps_its_embedding_model_across_cli_calls(runner, db_path):
    assert runner.invoke(cli, ["--db", str(db_path), "add", "first note"]).exit_code == 0
    switched = runner.invoke(cli, ["--db", str(db_path), "--admin", "reembed", "--model", "hash"])
    assert switched.exit_code == 0, switched.output
    assert runner.invoke(cli, ["--db", str(db_path), "add", "second note"]).exit_code == 0  # written with hash
    with echo_duck.open(db_path, admin=True) as mem:
        models = mem.sql("SELECT DISTINCT model_id FROM memory_vectors")["model_id"].to_list()
        assert models == ["hash-64"]
        assert mem.sql("SELECT count(*) AS n FROM stale_vectors")["n"][0] == 0


@pytest.mark.slow
def test_the_demo_leaves_no_file_behind_unless_asked(tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    result = subprocess.run([sys.executable, "-m", "echo_duck.cli", "demo"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert "removed afterwards" in result.stdout
    assert [p.name for p in tmp_path.iterdir() if "echo_duck" in p.name or p.suffix == ".duckdb"] == []
    kept = tmp_path / "kept.duckdb"
    result = subprocess.run([sys.executable, "-m", "echo_duck.cli", "--db", str(kept), "demo"],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0 and kept.exists()
    # the kept store's first line says how to look around in it (the demo writes as its own agent)
    command = result.stdout.splitlines()[0].split("look around: ")[1].rstrip(")")
    assert command.startswith(f"echo-duck --db {kept} --agent demo-agent recall ")
    question = command.split("recall ")[1].strip('"')
    recalled = subprocess.run([sys.executable, "-m", "echo_duck.cli", "--db", str(kept), "--agent", "demo-agent",
                               "recall", question], capture_output=True, text=True, env=env)
    assert recalled.returncode == 0 and "pnpm" in recalled.stdout


def test_help_names_the_verbs_a_newcomer_looks_for(runner):
    result = runner.invoke(cli, ["--help"])
    assert result.exit_code == 0
    for verb in ("add", "recall", "search", "list", "show", "forget", "snapshot", "sql"):
        assert f"  {verb} " in result.output, verb


def test_the_cli_module_runs_as_a_script():
    result = subprocess.run([sys.executable, "-m", "echo_duck.cli", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and "version" in result.stdout
