"""Bad input gets a clear, typed error naming what was wrong, and nothing stored changes: the paths an outside review
found open (session 48). Raw OverflowErrors from timestamps near year 1 or 9999 with a time zone and from integers
past a float's range; a key lengthened past its limit by NFKC folding (DuckDB's constraint message reached the
agent); an import that stopped half-way, earlier batches committed and unchecked, on one record the store refused;
start_worker(0) spinning a core; `--agent ""` acting as agent 'default'; update() with nothing to change writing a
new version; mark(recall_id=-1) stored; recall(since > until); set_setting without ranges (archive_threshold=5
archived everything on the next decay); gc(nan), lock_timeout='abc', protected_paths='/srv' (one path per
character), kb_render(None). Real stores in tmp_path; each test fails on the code before.
"""

from __future__ import annotations

import json
import math

import pytest
from cli_run import run_cli

import echo_duck
from echo_duck import InvalidInput
from echo_duck.io.importers import import_file

LOW, HIGH = "0001-01-01T00:30+05:00", "9999-12-31T23:00-05:00"  # out of range once in UTC


@pytest.fixture
def host(tmp_path):
    with echo_duck.open(tmp_path / "s.duckdb", agent_id="coder", embedder="hash", admin=True) as m:
        m.remember("The CI cache lives in /var/cache/ci", type="environment", key="ci.cache")
        yield m


def rows(mem) -> tuple[int, int]:
    return (mem.sql("SELECT count(*) AS n FROM memories")["n"][0],
            mem.sql("SELECT count(*) AS n FROM memory_events")["n"][0])


@pytest.mark.parametrize("call", [
    lambda m: m.remember("fact", type="environment", observed_at=LOW),
    lambda m: m.update("ci.cache", observed_at=HIGH),
    lambda m: m.recall("cache", since=HIGH),
    lambda m: m.recall("cache", as_of=LOW),
    lambda m: m.get(m.find()[0].id, as_of=LOW),
    lambda m: m.snapshot(as_of=HIGH),
    lambda m: m.remember("fact", type="environment", importance=10**400),
    lambda m: m.remember("fact", type="environment", confidence=-10**400),
    lambda m: m.recall("cache", min_score=10**400),
    lambda m: m.set_setting("rrf_k", 10**400),
    lambda m: m.remember("fact", type="user", key="profile:" + "\ufb03" * 70),  # 78 typed, 218 folded
    lambda m: m.recall("cache", since="2030-01-01", until="2020-01-01"),
    lambda m: m.update("ci.cache"),
    lambda m: m.mark(m.find()[0].id, True, recall_id=-1),
    lambda m: m.mark(m.find()[0].id, True, recall_id=1.5),
    lambda m: m.set_setting("archive_threshold", 5),
    lambda m: m.set_setting("vector_pool", -1),
    lambda m: m.set_setting("keyword_pool", 2.5),
    lambda m: m.gc(retention_days=math.nan),
    lambda m: m.start_worker(0),
    lambda m: m.start_worker(math.nan),
    lambda m: m.kb_render(None),
    lambda m: m.kb_render([1, 2, 3]),
], ids=["observed_at-low", "update-observed_at-high", "since-high", "recall-as_of-low", "get-as_of", "snapshot-as_of",
        "importance-huge-int", "confidence-huge-int", "min_score-huge-int", "setting-huge-int", "key-folded-too-long",
        "since-after-until", "update-nothing", "recall_id-negative", "recall_id-float", "archive_threshold-5",
        "vector_pool-negative", "keyword_pool-fraction", "gc-nan", "worker-poll-0", "worker-poll-nan", "kb_render-none",
        "kb_render-ints"])
def test_bad_input_is_refused_by_name_and_changes_nothing(host, call):
    before = rows(host)
    with pytest.raises(InvalidInput):
        call(host)
    assert rows(host) == before
    assert host.worker is None


def test_a_folded_key_names_the_limit(host):
    with pytest.raises(InvalidInput, match="key is 218 characters once its section name is folded"):
        host.remember("fact", type="user", key="profile:" + "\ufb03" * 70)


@pytest.mark.parametrize("option", [{"lock_timeout": "abc"}, {"lock_timeout": None}, {"lock_timeout": -1},
                                    {"protected_paths": "/srv/secrets"}])
def test_bad_open_options_are_refused_by_name(tmp_path, option):
    with pytest.raises(InvalidInput, match=next(iter(option))):
        echo_duck.open(tmp_path / "o.duckdb", embedder="hash", **option)


def test_an_import_reports_a_record_the_store_refuses_and_keeps_going(host, tmp_path):
    """One record past the key limit only once folded sank the import after 500 records were committed; now it
    is skipped as invalid (the parse catches it) and the rest is stored and checked."""
    path = tmp_path / "big.jsonl"
    lines = [{"content": f"Imported build note number {i} about caching", "type": "environment"} for i in range(500)]
    lines.insert(250, {"content": "User goal text", "type": "user", "key": "profile:" + "\ufb03" * 70})
    lines.append({"content": "A late note", "type": "environment", "observed_at": LOW})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    report = import_file(host, path, batch_size=100)
    assert report.stored == 500
    assert [(s.where, s.reason) for s in report.skipped] == [("line 251", "invalid"), ("line 502", "invalid")]


def test_the_cli_refuses_an_empty_agent(tmp_path, monkeypatch):
    """An unset $AGENT (`--agent ""`) acted as agent 'default' and wrote there."""
    monkeypatch.setenv("ECHO_DUCK_MODEL", "hash")
    db = str(tmp_path / "c.duckdb")
    result = run_cli("--db", db, "--agent", "", "add", "User likes tea")
    assert result.returncode == 2 and "--agent" in result.stderr
    with echo_duck.open(db, admin=True, embedder="hash") as m:
        assert rows(m)[0] == 0


def test_a_mark_names_one_of_the_callers_own_recalls(host):
    """Another agent's recall id was stored with the caller's feedback, as if its recall had served it."""
    other = host.for_agent("other")
    other.remember("The other agent's build runs nightly", type="environment")
    other.recall("build nightly")  # the log is written behind the recall: flushed by the next write or close
    host.refresh()
    logged = host.sql("SELECT id FROM recall_log WHERE agent_id = 'other' ORDER BY id")["id"].to_list()
    assert logged
    coder = host.for_agent("coder")
    mine = coder.remember("The coder's tests run in CI", type="environment")
    before = rows(host)
    with pytest.raises(InvalidInput, match="not one of this agent's recalls"):
        coder.mark(mine.id, True, recall_id=logged[0])
    assert rows(host) == before
    coder.mark(mine.id, True, recall_id=coder.recall("tests CI")[0].recall_id)  # its own: accepted


def _endless():
    n = 0
    while True:
        n += 1
        yield f"t{n}"


@pytest.mark.parametrize("call", [
    lambda m, tags: m.remember("fact", type="environment", tags=tags),
    lambda m, tags: m.recall("fact", tags=tags),
    lambda m, tags: m.find(tags=tags),
    lambda m, tags: m.remember("fact", type="environment", entities=tags),
], ids=["remember", "recall", "find", "entities"])
@pytest.mark.parametrize("tags", [[f"t{i}" for i in range(100_000)], _endless], ids=["100k", "endless"])
def test_a_huge_or_endless_label_list_is_refused_before_it_is_read_whole(host, call, tags):
    # session 55 (reviewer Z): labels were de-duplicated in quadratic time before the count was checked (100,000
    # tags: ~60 s to the refusal) and a generator was read to its end (an endless one never returned)
    before = rows(host)
    with pytest.raises(InvalidInput, match="more than 1,000 values"):
        call(host, tags() if callable(tags) else tags)
    assert rows(host) == before


def test_sharing_a_memory_that_holds_64_tags_says_what_to_do(tmp_path):
    # reviewer AE: share() added share:personal as a 65th tag and update() answered "tags has 65 values"
    with echo_duck.open(tmp_path / "s.duckdb", embedder="hash", agent_id="alice") as alice:
        note = alice.remember("Alice's dentist is Dr Wu", type="user", sensitivity="personal",
                              tags=[f"t{i}" for i in range(64)])
        with pytest.raises(InvalidInput, match="has 64 tags, the most one holds, so 'share:personal' cannot be added"):
            alice.share(note.id)
        assert alice.get(note.id).version == 1
