"""Bad input on the Python API (issue 6 "Bad input"): property-based and table-driven.

The property, for every public call: it either raises a typed echo_duck error (a subclass of
EchoDuckError) and leaves what is stored unchanged, or it succeeds and what it stored comes back
byte-exactly. No raw duckdb.Error, TypeError, KeyError or UnicodeEncodeError may escape. Also:
malformed import files, corrupted / truncated / foreign database files, and a file from a newer schema.
"""

from __future__ import annotations

import json
import math
import random
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import echo_duck
from echo_duck.io.importers import import_file

FUZZ = settings(max_examples=60, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])

# Every Unicode category, lone surrogates (Cs) and NUL included; plus the awkward cases named outright.
ANY_CHAR = st.characters(blacklist_categories=())
SPECIAL = ["", " ", "\x00", "a\x00b", "\ud800", "x\udfffy", "e\u0301\u0301\u0301", "\u202eevil\u202c", "שלום עולם",
           "مرحبا", "👩‍👩‍👧‍👦🦆", "\ufeffbom", "\n\t\r", "'; DROP TABLE memories; --", "%", "_", "\\", '"', "%_\\'\"",
           "$1", "?", "NULL", "' OR 1=1 --", "memories", "a" * 201, "😀" * 120]
TEXT = st.one_of(st.sampled_from(SPECIAL), st.text(ANY_CHAR, max_size=40), st.text(max_size=200))
WRONG = [None, 0, 1, -1, 1.5, b"bytes", ["list"], {"a": 1}, object(), True]
NUMBERS = [2.0, -1, -0.0, 0, 1, 1.0000001, math.nan, math.inf, -math.inf, 10**9, 10**30, True, "0.5", None]
METAS = ["'; DROP TABLE memories; --", "%", "_", "\\", '"', "%%", "a%b_c", "\\'", "--", "/*", "*/", "'", "$key", "?"]


def fingerprint(mem) -> tuple:
    """Everything stored about memories, plus the event count: unchanged by a refused call."""
    frame = mem.sql("SELECT md5(coalesce(string_agg(concat_ws('|', id, content, status, version, key, tags::VARCHAR, "
                    "superseded_by, importance, confidence, pinned, scope), '\n' ORDER BY id), '')) AS h, "
                    "count(*) AS n FROM memories")
    events = mem.sql("SELECT count(*) FROM memory_events").item()
    messages = mem.sql("SELECT count(*) FROM messages").item()
    return frame["h"].item(), frame["n"].item(), events, messages


def attempt(mem, fn, *args, **kwargs):
    """(result, None) on success, (None, error) on a typed error that changed nothing. Anything else fails."""
    before = fingerprint(mem)
    try:
        return fn(*args, **kwargs), None
    except echo_duck.EchoDuckError as e:
        assert str(e).strip(), f"{type(e).__name__} without a message"
        assert fingerprint(mem) == before, f"{fn.__name__} failed with {type(e).__name__} but changed the store"
        return None, e


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "fuzz.duckdb"
    with echo_duck.open(path, embedder="hash", admin=True) as mem:
        mem.remember("The deploy key lives in vault", type="environment", key="deploy_key", tags=["ops"])
        mem.remember("User prefers answers in Chinese", type="user", key="reply_language")
        yield mem


# -- property-based: arbitrary text on every text parameter ------------------------------------------

@pytest.mark.slow
@FUZZ
@given(content=TEXT, key=st.none() | TEXT, tags=st.lists(TEXT, max_size=3), type_=st.sampled_from(["user", "environment", "bogus", ""]))
def test_remember_stores_byte_exactly_or_refuses_cleanly(store, content, key, tags, type_):
    m, err = attempt(store, store.remember, content, type=type_, key=key, tags=tags)
    if err is None:
        got = store.get(m.id)
        assert got.content == content and got.content.encode("utf-8") == content.encode("utf-8")
        assert got.key == (key.strip() if key is not None else None)
        assert [t for t in got.tags] == list(dict.fromkeys(t.strip() for t in tags))
        if got.key:  # the exact-key filter finds it, whatever characters the key holds
            assert m.id in [x.id for x in store.find(key=got.key, status=None, limit=1000)]
        hits = store.recall(content, k=50, reinforce=False) if content.strip() and len(content) <= 10_000 else []
        assert all(h.memory.content == store.get(h.memory.id).content for h in hits)


@pytest.mark.slow
@FUZZ
@given(records=st.lists(st.fixed_dictionaries({"content": TEXT, "type": st.sampled_from(["user", "self", "nope"])},
                                              optional={"key": TEXT, "importance": st.sampled_from(NUMBERS)}),
                        min_size=1, max_size=4))
def test_remember_many_is_all_or_nothing(store, records):
    stored, err = attempt(store, store.remember_many, records)
    if err is None:
        assert [store.get(m.id).content for m in stored] == [r["content"] for r in records]


@pytest.mark.slow
@FUZZ
@given(target=TEXT, content=TEXT, importance=st.sampled_from(NUMBERS))
def test_update_and_forget_on_arbitrary_targets(store, target, content, importance):
    attempt(store, store.update, target, content, importance=importance)
    attempt(store, store.forget, target, reason="fuzz")
    m, err = attempt(store, store.update, "deploy_key", content)
    if err is None:
        assert store.get(m.id).content == content


@FUZZ
@given(query=TEXT, k=st.sampled_from([0, -1, 1, 10, 10**9, 1.5, None, "3"]), tag=TEXT, text=TEXT,
       key=TEXT, scope=st.sampled_from([None, "team", "everyone", "'; --"]))
@pytest.mark.slow
def test_reads_never_raise_a_raw_error(store, query, k, tag, text, key, scope):
    attempt(store, store.recall, query, k=k, reinforce=False)
    attempt(store, store.recall, query, tags=[tag], reinforce=False)
    found, err = attempt(store, store.find, key=key, tags=[tag], text=text, scope=scope, status=None)
    if err is None:
        assert all(m.key == key.strip() and tag.strip() in m.tags and text.lower() in m.content.lower() for m in found)
    attempt(store, store.get, query)
    attempt(store, store.history, query)
    attempt(store, store.search_sessions, query)
    attempt(store, store.kb_search, query, k=k)
    attempt(store, store.snapshot, budget_user=k if isinstance(k, int) else 100)


@pytest.mark.slow
@FUZZ
@given(session=st.sampled_from(["s1", "chat-2", ""]) | TEXT, role=st.sampled_from(["user", "assistant", "robot"]),
       content=TEXT)
def test_messages_round_trip_or_refuse(store, session, role, content):
    msg, err = attempt(store, store.add_message, session, role, content)
    if err is None:
        assert store.messages(msg.session_id)[-1].content == content


@pytest.mark.slow
@FUZZ
@given(text=TEXT, source=TEXT, query=TEXT)
def test_kb_add_and_search_on_arbitrary_text(store, text, source, query):
    # Spaces around the text keep it from being read as a path (kb_add takes files and folders too).
    report, err = attempt(store, store.kb_add, f"note {text} end", source=source)
    if err is None:
        assert report.chunks_added >= 0
    attempt(store, store.kb_search, query)


@FUZZ
@given(query=TEXT | st.sampled_from(["SELECT 1", "SELECT * FROM memories WHERE key = '%'", "DROP TABLE memories",
                                     "DELETE FROM memories", "SELECT 1; DROP TABLE memories", "SELECT '\\",
                                     "PRAGMA table_info('memories')", "SELECT $1", "SELECT ?", "UPDATE memories SET content = 'x'"]),
       params=st.sampled_from([None, [], ["'; DROP TABLE memories; --"], {"x": 1}, [None], "oops"]))
def test_sql_is_read_only_and_typed(store, query, params):
    frame, err = attempt(store, store.sql, query, params)
    if query.lstrip().upper().startswith(("DROP", "DELETE", "UPDATE")) or ";" in query.rstrip("; "):
        assert err is not None, query  # a write, or several statements: refused without write=True
    assert store.sql("SELECT count(*) FROM memories").item() >= 2  # the table is still there


# -- table-driven: wrong types, out-of-range numbers, SQL metacharacters, 10 MB ----------------------

CALLS = {
    "remember.content": lambda m, v: m.remember(v, type="user"),
    "remember.type": lambda m, v: m.remember("x", type=v),
    "remember.key": lambda m, v: m.remember("x", type="user", key=v),
    "remember.tags": lambda m, v: m.remember("x", type="user", tags=v),
    "remember.scope": lambda m, v: m.remember("x", type="user", scope=v),
    "remember.provenance": lambda m, v: m.remember("x", type="user", provenance=v),
    "remember.observed_at": lambda m, v: m.remember("x", type="user", observed_at=v),
    "remember.pinned": lambda m, v: m.remember("x", type="user", pinned=v),
    "remember_many": lambda m, v: m.remember_many(v),
    "remember_many.item": lambda m, v: m.remember_many([v]),
    "update.target": lambda m, v: m.update(v, "new"),
    "update.content": lambda m, v: m.update("deploy_key", v),
    "forget.target": lambda m, v: m.forget(v),
    "forget.purge": lambda m, v: m.forget("nope-key", purge=v),
    "get": lambda m, v: m.get(v),
    "history": lambda m, v: m.history(v),
    "find.key": lambda m, v: m.find(key=v),
    "find.tags": lambda m, v: m.find(tags=v),
    "find.text": lambda m, v: m.find(text=v),
    "find.limit": lambda m, v: m.find(limit=v),
    "recall.query": lambda m, v: m.recall(v),
    "recall.k": lambda m, v: m.recall("deploy", k=v),
    "recall.tags": lambda m, v: m.recall("deploy", tags=v),
    "recall.since": lambda m, v: m.recall("deploy", since=v),
    "recall.arms": lambda m, v: m.recall("deploy", arms=v),
    "recall.query_vector": lambda m, v: m.recall("deploy", query_vector=v),
    "snapshot.budget": lambda m, v: m.snapshot(budget_user=v),
    "snapshot.min_confidence": lambda m, v: m.snapshot(min_confidence=v),
    "add_message.session": lambda m, v: m.add_message(v, "user", "hi"),
    "add_message.content": lambda m, v: m.add_message("s-wrong", "user", v),
    "add_message.role": lambda m, v: m.add_message("s-wrong", v, "hi"),
    "search_sessions": lambda m, v: m.search_sessions(v),
    "search_sessions.limit": lambda m, v: m.search_sessions("hi", limit=v),
    "kb_add": lambda m, v: m.kb_add(v, source="fuzz"),
    "kb_add.source": lambda m, v: m.kb_add("some text here", source=v),
    "kb_search": lambda m, v: m.kb_search(v),
    "kb_search.k": lambda m, v: m.kb_search("deploy", k=v),
    "sql.query": lambda m, v: m.sql(v),
    "sql.params": lambda m, v: m.sql("SELECT $x", v),
    "grant.team": lambda m, v: m.grant(team=v),
    "mark": lambda m, v: m.mark(v, True),
    "decay.now": lambda m, v: m.decay(now=v, dry_run=True),
    "archive.days": lambda m, v: m.archive(older_than_days=v),
    "consolidate": lambda m, v: m.consolidate(v),
    "contradictions": lambda m, v: m.contradictions(v),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_wrong_types_get_a_typed_error(store, call):
    for value in WRONG:
        _, err = attempt(store, CALLS[call], store, value)
        if isinstance(value, bytes) or type(value) is object:  # never a valid value of any parameter
            assert err is not None, (call, value)


@pytest.mark.parametrize("name,call", [
    ("importance", lambda m, v: m.remember("n", type="user", importance=v)),
    ("confidence", lambda m, v: m.remember("n", type="user", confidence=v)),
    ("k", lambda m, v: m.recall("deploy", k=v)),
    ("limit", lambda m, v: m.find(limit=v)),
    ("budget", lambda m, v: m.snapshot(budget_env=v)),
    ("archive", lambda m, v: m.archive(older_than_days=v)),
])
def test_out_of_range_numbers(store, name, call):
    for value in NUMBERS:
        result, err = attempt(store, call, store, value)
        if isinstance(value, float) and not math.isfinite(value):
            assert err is not None, (name, value)
    if name in ("importance", "confidence"):
        for bad in (2.0, -1, math.nan, math.inf):
            assert isinstance(attempt(store, call, store, bad)[1], echo_duck.InvalidInput)
    if name == "k":
        for bad in (0, -1, 10**9):
            assert isinstance(attempt(store, call, store, bad)[1], echo_duck.InvalidInput)


@pytest.mark.parametrize("meta", METAS)
def test_sql_metacharacters_are_plain_data(store, meta):
    key, tag = f"k{meta}", f"t{meta}"
    m, err = attempt(store, store.remember, f"metachar note {meta}", type="environment", key=key, tags=[tag])
    assert err is None, err
    assert [x.id for x in store.find(key=key, status=None)] == [m.id]  # the scanner may hold it for review
    assert m.id in [x.id for x in store.find(tags=[tag], status=None)]
    # LIKE wildcards are not wildcards: a substring search for them finds only rows that contain them
    assert all(meta.lower() in x.content.lower() for x in store.find(text=meta, status=None, limit=1000))
    attempt(store, store.recall, meta, tags=[tag], reinforce=False)
    assert store.get(m.id).content == f"metachar note {meta}"
    assert store.sql("SELECT count(*) FROM memories WHERE key = $k", {"k": key}).item() == 1


def test_ten_megabytes(store):
    huge = "長い" * 5_000_000 + "end"  # ~10 MB of text, not generated by hypothesis
    for call in (lambda: store.remember(huge, type="user"), lambda: store.recall(huge), lambda: store.find(text=huge),
                 lambda: store.update("deploy_key", huge), lambda: store.sql(huge),
                 lambda: store.add_message("huge", "user", huge), lambda: store.kb_add(huge, source="huge"),
                 lambda: store.search_sessions(huge), lambda: store.remember("x", type="user", key=huge)):
        _, err = attempt(store, call)
        assert isinstance(err, echo_duck.InvalidInput), err


def test_unicode_round_trip_with_the_default_model(tmp_path):
    texts = ["User's name is Zoë Ångström-Łukasiewicz 👩‍🔬", "מזהה הפרויקט הוא אלפא", "المشروع يستخدم بايثون",
             "e\u0301te\u0301 combining café", "项目代号是青鸟🐦", "emoji only 🦆🦆🦆 ducks"]
    with echo_duck.open(tmp_path / "model.duckdb", admin=True) as mem:
        stored = [mem.remember(t, type="environment") for t in texts]
        for m, t in zip(stored, texts):
            hits = mem.recall(t, k=3)
            assert hits and hits[0].memory.id == m.id and hits[0].memory.content == t


# -- malformed import files ------------------------------------------------------------------------

def _import_cases(tmp_path: Path) -> dict[str, Path]:
    good = [json.dumps({"content": f"imported fact {i}", "type": "environment"}) for i in range(5)]
    cases = {
        "truncated.jsonl": "\n".join(good)[:-17].encode(),
        "latin1.jsonl": json.dumps({"content": "café", "type": "user"}, ensure_ascii=False).encode("latin-1"),
        "utf16.jsonl": "\n".join(good).encode("utf-16"),
        "garbage.jsonl": bytes(random.Random(1).randrange(256) for _ in range(4096)),
        "empty.jsonl": b"",
        "wrong_shape.jsonl": b"[1, 2, 3]\n\"just a string\"\nnull\n{\"content\": 5, \"type\": []}\n",
        "wrong_types.jsonl": b'{"content": "x", "type": "user", "tags": 7, "importance": "high", "observed_at": 1e300}\n',
        "huge_line.jsonl": json.dumps({"content": "x" * 3_000_000, "type": "user"}).encode(),
        "number_facts.json": b"42",
        "nested_facts.json": b"[[[[]]]]",
        "dict_facts.json": b'{"a": 1, "b": [1, 2], "c": null}',
        "truncated_facts.json": b'[{"content": "half',
        "nul_user_memory.json": b'[{"content": "a\\u0000b"}]',
        "surrogate_facts.json": b'[{"content": "lone \\ud800 surrogate", "category": "x"}]',
        "garbage.parquet": b"PAR1" + bytes(100) + b"PAR1",
        "binary.md": bytes(range(256)) * 4,
    }
    paths = {}
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        paths[name] = path
    return paths


def test_malformed_import_files_store_nothing(store, tmp_path):
    for name, path in _import_cases(tmp_path).items():
        before = fingerprint(store)
        report, err = attempt(store, import_file, store, path)
        if err is not None:
            assert name in str(err), (name, err)
        else:  # parsed, but every record skipped with a reason
            assert report.stored == 0 and len(report.skipped) + len(report.errors) == report.read, (name, report.to_dict())
        assert fingerprint(store) == before, name


@FUZZ
@given(lines=st.lists(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
                                   lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                                       st.sampled_from(["content", "type", "key", "tags", "scope", "importance",
                                                        "observed_at", "status", "tier", "pinned"]), inner, max_size=5),
                                   max_leaves=8), min_size=1, max_size=5))
def test_arbitrary_jsonl_imports_are_typed(store, tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("jsonl") / "fuzz.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8", errors="surrogatepass")
    report, _ = attempt(store, import_file, store, path)
    for memory_id in report.ids if report else ():
        assert isinstance(store.get(memory_id).content, str)


# -- damaged database files --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real_store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("real") / "real.duckdb"
    with echo_duck.open(path, embedder="hash", admin=True) as mem:
        mem.remember_many([{"content": f"fact number {i} about deploys", "type": "environment"} for i in range(300)])
    return path


def _damage(src: Path, dst: Path, how: str) -> None:
    data = bytearray(src.read_bytes())
    rng = random.Random(how)
    if how == "header":
        data[:4096] = bytes(rng.randrange(256) for _ in range(4096))
    elif how == "middle":
        start = len(data) // 2
        data[start:start + 16384] = bytes(rng.randrange(256) for _ in range(16384))
    elif how == "scattered":
        for _ in range(64):
            i = rng.randrange(4096, len(data))
            data[i] ^= 0xFF
    elif how == "truncated":
        data = data[: len(data) // 3]
    elif how == "tiny":
        data = data[:100]
    elif how == "empty":
        data = bytearray()
    elif how == "text":
        data = bytearray(b"this is a plain text file, not a database\n" * 100)
    elif how == "sqlite":
        data = bytearray(b"SQLite format 3\x00" + bytes(4080))
    dst.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["header", "middle", "scattered", "truncated", "tiny", "empty", "text", "sqlite"])
def test_damaged_files_fail_with_a_typed_error_naming_the_file(real_store, tmp_path, how):
    path = tmp_path / f"damaged-{how}.duckdb"
    _damage(real_store, path, how)
    try:
        mem = echo_duck.open(path, embedder="hash", admin=True)
    except echo_duck.EchoDuckError as e:
        assert path.name in str(e), e
        return
    # DuckDB reads blocks lazily: a file that opens must still fail only with typed errors later,
    # closing included (close writes the recall log and its reinforce events, which read damaged rows).
    try:
        with mem:
            for call in (lambda: mem.find(status=None, limit=1000), lambda: mem.recall("deploys"),
                         lambda: mem.sql("SELECT count(*), sum(length(content)) FROM memories"),
                         lambda: mem.remember("after the damage", type="user"), lambda: mem.snapshot()):
                try:
                    call()
                except echo_duck.EchoDuckError:
                    pass
    except echo_duck.EchoDuckError:
        pass
    assert how in ("empty", "middle", "scattered"), f"{how}: a damaged file opened without complaint"


def test_a_file_from_a_newer_schema_is_refused(real_store, tmp_path):
    path = tmp_path / "future.duckdb"
    shutil.copy(real_store, path)
    with echo_duck.open(path, embedder="hash", admin=True) as mem:
        mem.sql("INSERT INTO schema_version VALUES (999, 'from_the_future', 'x', now()::TIMESTAMP)", write=True)
    for read_only in (False, True):
        with pytest.raises(echo_duck.SchemaTooNew, match="999"):
            echo_duck.open(path, embedder="hash", read_only=read_only, admin=True)
    before = path.read_bytes()
    with pytest.raises(echo_duck.SchemaTooNew):
        echo_duck.open(path, embedder="hash", admin=True)
    assert path.read_bytes() == before  # refused without touching the file


def test_a_foreign_duckdb_file_is_refused(tmp_path):
    import duckdb

    path = tmp_path / "foreign.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT 1 AS x")
    con.close()
    with pytest.raises(echo_duck.EchoDuckError):
        echo_duck.open(path, embedder="hash", admin=True)
