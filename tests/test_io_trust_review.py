"""Imports and exports against the store's own files, and what an imported file can do to the store (an outside
review, 2026-12-05, session 36): an agent handle may not import the store's archive (every agent's archived rows),
no handle may export over the store, its .wal or its archive, an imported access count cannot wedge the recall
log, a failing import stores nothing, and a long supersede chain parses in linear work. Real stores in tmp_path;
each test failed on the code before its fix.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import run_cli

import echo_duck
from echo_duck import InvalidInput, PermissionDenied
from echo_duck.io import import_trust
from echo_duck.io.exporters import export_jsonl, export_parquet
from echo_duck.io.importers import import_file
from echo_duck.recall import recall_log

SECRET = "Alice private: the vault code is 9902 for the basement"
SICK = "Alice note: my clinic visit for Parkinson is on Tuesday"
INT32_MAX = 2**31 - 1


def _archived_store(tmp_path, clock) -> tuple[Path, list[Path]]:
    """A closed store whose Parquet archive holds alice's private and sensitive rows; (store, archive files)."""
    path = tmp_path / "team.duckdb"
    with echo_duck.open(path, admin=True, embedder="hash", now=clock) as host:
        alice = host.for_agent("alice")
        alice.remember("Alice private: the vault code is 4471 for the basement", type="environment", key="vault")
        alice.remember(SECRET, type="environment", key="vault")  # the first version is superseded
        alice.remember(SICK, type="environment", key="clinic", sensitivity="sensitive", importance=0.1)
        clock.advance(days=400)
        host.decay()
        clock.advance(days=400)
        assert host.archive(older_than_days=30).exported >= 2
    files = sorted((tmp_path / "team_archive").rglob("*.parquet"))
    assert files
    return path, files


def _contents(mem) -> set[str]:
    return {m.content for m in mem.find(status=None)}


def _archive_rows(path, clock) -> list[tuple]:
    with echo_duck.open(path, admin=True, embedder="hash", now=clock) as host:
        return host.sql("SELECT agent_id, storage, content FROM memories_all ORDER BY content").rows()


# -- F1: an agent handle may not import the store's own files ------------------------------------------------------

def _aliases(tmp_path, store: Path, archive_file: Path) -> dict[str, Path]:
    """The store's own files, named directly, through a symlink, a symlinked folder and a hard link."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "link.parquet").symlink_to(archive_file)
    (outside / "folder").symlink_to(archive_file.parent, target_is_directory=True)
    os.link(archive_file, outside / "hard.parquet")
    os.link(store, outside / "hard.duckdb")
    return {"archive file": archive_file, "symlink": outside / "link.parquet",
            "symlinked folder": outside / "folder" / archive_file.name, "hard link": outside / "hard.parquet",
            "store file": store, "store hard link": outside / "hard.duckdb"}


@pytest.mark.parametrize("kind", ["archive file", "symlink", "symlinked folder", "hard link", "store file",
                                  "store hard link"])
def test_an_agent_handle_cannot_import_the_stores_own_files(tmp_path, clock, kind):
    """mallory imported the archive's Parquet file and got alice's private and sensitive memories as her own."""
    store, files = _archived_store(tmp_path, clock)
    target = _aliases(tmp_path, store, files[0])[kind]
    fmt = "parquet" if kind.startswith(("archive", "sym", "hard link")) else "jsonl"
    with echo_duck.open(store, agent_id="mallory", embedder="hash", now=clock) as mallory:
        with pytest.raises(PermissionDenied, match="cannot import|may not import") as refused:
            import_file(mallory, target, format=fmt)
        assert str(target) in str(refused.value)
        assert _contents(mallory) == set()
        own = tmp_path / "mine.jsonl"  # control: a file of her own imports as before
        own.write_text(json.dumps({"content": "mallory's own lunch note", "type": "environment"}) + "\n")
        assert import_file(mallory, own).stored == 1
        assert _contents(mallory) == {"mallory's own lunch note"}


def test_an_admin_handle_may_import_the_archive(tmp_path, clock):
    """The host is trusted (its sql reads the archive anyway): an admin import of an archive file still works, and
    untrusted as every import, its rows are written private to the admin's agent."""
    store, files = _archived_store(tmp_path, clock)
    with echo_duck.open(store, admin=True, agent_id="host", embedder="hash", now=clock) as host:
        report = import_file(host, files[0], format="parquet")
        assert report.stored >= 1
        assert {m.agent_id for m in host.find()} == {"host"}


@pytest.mark.parametrize("kind", ["store file", "store hard link"])
def test_not_even_an_admin_handle_imports_the_store_file_itself(tmp_path, clock, kind):
    """Reading the open store file through a second descriptor dropped this process's lock on it: a second process
    then opened the store while this one held it (session 54, reviewer T)."""
    store, files = _archived_store(tmp_path, clock)
    target = _aliases(tmp_path, store, files[0])[kind]
    with echo_duck.open(store, admin=True, agent_id="host", embedder="hash", now=clock) as host:
        with pytest.raises(PermissionDenied, match="cannot import"):
            import_file(host, target, format="jsonl")
        opener = f"import echo_duck; echo_duck.open({str(store)!r}, embedder='hash')"
        probe = subprocess.run([sys.executable, "-c", opener], capture_output=True, text=True, check=False)
        assert probe.returncode != 0 and "DatabaseLocked" in probe.stderr


def test_not_even_an_admin_handle_adds_the_store_file_to_the_knowledge_base(tmp_path, clock):
    """kb_add read a hard link of the store named notes.md through a second descriptor: the same lock drop."""
    store, _ = _archived_store(tmp_path, clock)
    notes = tmp_path / "notes.md"
    os.link(store, notes)
    with echo_duck.open(store, admin=True, embedder="hash", now=clock) as host:
        with pytest.raises(PermissionDenied, match="cannot add"):
            host.kb_add(notes)
        for text in ("note \x00 end", "note \ud800 end"):  # no path: the check passes it on to the text's own
            with pytest.raises(InvalidInput):
                host.kb_add(text, source="odd")
        assert host.kb_documents() == []


def test_the_cli_refuses_an_agents_import_of_the_archive(tmp_path, clock):
    store, files = _archived_store(tmp_path, clock)
    result = run_cli("--db", store, "--agent", "mallory", "import", files[0], "--json")
    assert result.returncode != 0 and "PermissionDenied" in result.stdout + result.stderr
    listed = run_cli("--db", store, "--agent", "mallory", "list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []


# -- F2: no handle may export over the store, its .wal or into its archive ------------------------------------------

@pytest.mark.parametrize("admin", [False, True])
@pytest.mark.parametrize("kind", ["archive file", "new file in the archive", "symlinked folder", "store file", "wal"])
def test_no_handle_exports_onto_the_stores_own_files(tmp_path, clock, admin, kind):
    """mallory's export replaced alice's archive partition (her archived versions vanished) or the store file."""
    store, files = _archived_store(tmp_path, clock)
    before = _archive_rows(store, clock)
    archive_bytes = files[0].read_bytes()
    link = tmp_path / "elsewhere"
    link.symlink_to(files[0].parent, target_is_directory=True)
    target = {"archive file": files[0], "new file in the archive": files[0].with_name("part-zzz.parquet"),
              "symlinked folder": link / files[0].name, "store file": store, "wal": Path(f"{store}.wal")}[kind]
    options = dict(admin=True) if admin else dict(agent_id="mallory")
    with echo_duck.open(store, embedder="hash", now=clock, **options) as mem:
        mem.remember("mallory's note about lunch", type="environment")
        for export in (export_parquet, export_jsonl):
            with pytest.raises(PermissionDenied, match="cannot export|may not write"):
                export(mem, target, include_history=True)
    assert files[0].read_bytes() == archive_bytes
    assert sorted(p for p in (tmp_path / "team_archive").rglob("*") if p.is_file()) == files  # nothing written there
    after = _archive_rows(store, clock)  # the store opens, alice's archived rows are all there
    assert [r for r in after if r[2] != "mallory's note about lunch"] == before


def test_an_export_elsewhere_still_works(tmp_path, clock):
    store, _ = _archived_store(tmp_path, clock)
    with echo_duck.open(store, agent_id="mallory", embedder="hash", now=clock) as mallory:
        mallory.remember("mallory's note about lunch", type="environment")
        assert export_parquet(mallory, tmp_path / "out.parquet").rows == 1
        assert export_jsonl(mallory, tmp_path / "out.jsonl").rows == 1


def test_the_cli_refuses_an_agents_export_over_the_archive(tmp_path, clock):
    store, files = _archived_store(tmp_path, clock)
    before, archive_bytes = _archive_rows(store, clock), files[0].read_bytes()
    result = run_cli("--db", store, "--agent", "mallory", "export", files[0])
    assert result.returncode != 0 and "PermissionDenied" in result.stdout + result.stderr
    assert files[0].read_bytes() == archive_bytes and _archive_rows(store, clock) == before


@pytest.mark.parametrize("where", ["catalog is the store", "data in the archive"])
def test_an_admin_cannot_publish_a_ducklake_over_the_stores_own_files(tmp_path, clock, where):
    """publish_to_ducklake (admin only) wrote its catalog and Parquet files wherever it was told."""
    from echo_duck.io.scaleout import publish_to_ducklake

    store, files = _archived_store(tmp_path, clock)
    archive = tmp_path / "team_archive"
    catalog, data = (store, tmp_path / "lake") if where == "catalog is the store" else (tmp_path / "lake.db", archive)
    with echo_duck.open(store, admin=True, embedder="hash", now=clock) as host:
        with pytest.raises(PermissionDenied, match="cannot publish"):
            publish_to_ducklake(host, catalog, data, team_id="red")
    assert sorted(p for p in archive.rglob("*") if p.is_file()) == files  # nothing written there
    assert not (tmp_path / "lake.db").exists() and not (tmp_path / "lake").exists()


# -- F5 / F6: imported access counts ---------------------------------------------------------------------------------

def _jsonl(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("count", [2**31, INT32_MAX, import_trust.MAX_IMPORTED_ACCESS_COUNT + 1])
def test_an_out_of_range_access_count_refuses_the_file_before_anything_is_stored(tmp_path, count):
    """2**31 raised InvalidInput after the first record was stored; 2**31-1 was stored and overflowed recalls."""
    with echo_duck.open(tmp_path / "s.duckdb", agent_id="mallory", embedder="hash") as mem:
        crafted = _jsonl(tmp_path / "usage.jsonl", {"content": "first record, fine", "type": "environment"},
                         {"content": "usage overflow probe", "type": "environment", "access_count": count})
        with pytest.raises(InvalidInput, match=r"line 2: access_count .* out of range"):
            import_file(mem, crafted)
        assert _contents(mem) == set()
        fine = _jsonl(tmp_path / "fine.jsonl", {"content": "kiwi orchard notes", "type": "environment",
                                                "access_count": import_trust.MAX_IMPORTED_ACCESS_COUNT})
        assert import_file(mem, fine).stored == 1  # the bound itself is accepted
        assert [m.access_count for m in mem.find()] == [import_trust.MAX_IMPORTED_ACCESS_COUNT]


@pytest.fixture
def no_idle_writes(monkeypatch):
    """The recall log's background thread waits: the next use of the store writes the queue (as in
    test_recall_log.py), so each test sees when it is written."""
    monkeypatch.setattr(recall_log, "IDLE_S", 3600.0)


def test_a_saturated_access_count_does_not_block_the_store(tmp_path, clock, no_idle_writes):
    """A stored count of 2**31-1 made the owner's recall's +1 overflow INT32; the queued batch failed before every
    later use of the store, by every agent and the admin, close() included."""
    host = echo_duck.open(tmp_path / "team.duckdb", admin=True, embedder="hash", now=clock)
    alice, mallory = host.for_agent("alice"), host.for_agent("mallory")
    alice.remember("Alice: the release train leaves on Wednesdays", type="environment")
    kiwi = mallory.remember("kiwi orchard notes", type="environment")
    host.sql("UPDATE memories SET access_count = $n WHERE id = $id", {"n": INT32_MAX, "id": kiwi.id}, write=True)
    clock.advance(minutes=1)
    assert [m.content for m in mallory.recall("kiwi orchard")][:1] == ["kiwi orchard notes"]
    assert [m.content for m in alice.find()] == ["Alice: the release train leaves on Wednesdays"]
    assert alice.remember("Alice: new fact", type="environment").content == "Alice: new fact"
    assert mallory.get(kiwi.id).access_count == INT32_MAX  # saturated, with its last access moved on
    assert mallory.get(kiwi.id).last_accessed == clock.now
    after = host.sql("SELECT after FROM memory_events WHERE memory_id = $id AND action = 'reinforce'",
                     {"id": kiwi.id}).rows()
    assert [json.loads(a)["access_count"] for (a,) in after] == [INT32_MAX]
    host.close()


def test_a_batch_refused_for_its_data_is_written_one_recall_at_a_time(tmp_path, clock, no_idle_writes):
    """A queued batch the SQL refuses (here: a recall id an admin's write already used) was kept and raised before
    every later use of the store, forever; now the refused recall's bookkeeping is dropped with a warning and the
    rest is written."""
    host = echo_duck.open(tmp_path / "team.duckdb", admin=True, embedder="hash", now=clock)
    alice = host.for_agent("alice")
    note = alice.remember("Alice: the release train leaves on Wednesdays", type="environment")
    first = alice.recall("release train")[0].recall_id
    assert host.sql("SELECT count(*) AS n FROM recall_log").rows() == [(1,)]  # written before the admin's read
    host.sql("INSERT INTO recall_log (id, occurred_at, agent_id, query, k, memory_ids, scores, reinforced) "
             "VALUES ($id, $at, 'host', 'planted', 1, [], [], false)", {"id": first + 1, "at": clock.now}, write=True)
    clock.advance(minutes=1)
    assert alice.recall("release train")[0].recall_id == first + 1  # its id is taken: the batch fails
    clock.advance(minutes=1)
    assert alice.recall("release train")[0].recall_id == first + 2
    with pytest.warns(RuntimeWarning, match=f"recall {first + 1}'s bookkeeping"):
        assert [m.id for m in alice.find()] == [note.id]
    assert alice.find() and host.sql("SELECT id, agent_id, query FROM recall_log ORDER BY id").rows() == [
        (first, "alice", "release train"), (first + 1, "host", "planted"), (first + 2, "alice", "release train")]
    assert alice.get(note.id).access_count == 2  # the first and the last recall reviewed it
    host.close()


# -- F7: a long supersede chain parses in linear work ----------------------------------------------------------------

class _Counting(dict):
    """A record that counts how often chain_order reads a field of it."""

    reads = 0

    def get(self, *args):
        _Counting.reads += 1
        return super().get(*args)


def _old_chain_order(objects):
    """chain_order before the fix (cubic), kept as the reference for the order."""
    by_id = {str(o["id"]): o for _, o in objects if isinstance(o, dict) and o.get("id") is not None}
    kept = set()
    for _, o in objects:
        if isinstance(o, dict) and o.get("superseded_by") and o.get("key"):
            successor = by_id.get(str(o["superseded_by"]))
            if successor is not None and successor.get("key") == o.get("key"):
                kept.add(str(o["id"]))

    def before(o):
        return [p for p in by_id.values()
                if str(p.get("id")) in kept and str(p.get("superseded_by")) == str(o.get("id"))]

    def depth(o):
        n, seen = 0, set()
        prev = before(o)
        while prev and n < 1000:
            n += 1
            o = prev[0]
            if id(o) in seen:
                break
            seen.add(id(o))
            prev = before(o)
        return n

    ordered = sorted(enumerate(objects), key=lambda p: (depth(p[1][1]) if isinstance(p[1][1], dict) else 0, p[0]))
    return [item for _, item in ordered], kept


def _chain(n: int, key="k", prefix="r", factory=dict) -> list:
    return [factory({"id": f"{prefix}{i}", "key": key, "content": f"version {i}",
                     **({"superseded_by": f"{prefix}{i + 1}"} if i + 1 < n else {})}) for i in range(n)]


def _mixed(rng: random.Random) -> list[tuple[str, object]]:
    """Chains (shuffled), a cycle, a fork, a key change, an unknown successor, plain records and non-objects."""
    records = _chain(6) + _chain(3, key="j", prefix="s") + [
        {"id": "c1", "key": "c", "superseded_by": "c2"}, {"id": "c2", "key": "c", "superseded_by": "c1"},
        {"id": "f1", "key": "f", "superseded_by": "f3"}, {"id": "f2", "key": "f", "superseded_by": "f3"},
        {"id": "f3", "key": "f"}, {"id": "x1", "key": "x", "superseded_by": "x2"}, {"id": "x2", "key": "y"},
        {"id": "u1", "key": "u", "superseded_by": "nowhere"}, {"id": "self", "key": "z", "superseded_by": "self"},
        {"content": "no id"}, {"id": "r3", "key": "k", "content": "a duplicate id"}, "a string", 7]
    rng.shuffle(records)
    return [(f"item {i}", o) for i, o in enumerate(records, 1)]


def test_a_long_supersede_chain_is_ordered_in_linear_work(tmp_path):
    """chain_order walked every chain anew for every record: n=800 took 24 s (n^3 reads of the records)."""
    rng = random.Random(36)
    cycles = {"c1", "c2", "self"}  # no live version ends them: no longer kept (session 52: a chain whose newest
    # version was forgotten came back live)

    def outside(ordered):
        return [item for item in ordered if not (isinstance(item[1], dict) and item[1].get("id") in cycles)]
    for _ in range(30):  # the order is the one the old code gave, on every shape it handled
        items = _mixed(rng)
        (ordered, kept), (old_ordered, old_kept) = import_trust.chain_order(items), _old_chain_order(items)
        assert kept == old_kept - cycles and outside(ordered) == outside(old_ordered)
    shuffled = [(f"item {i}", o) for i, o in enumerate(rng.sample(_chain(5), 5))]
    ordered, kept = import_trust.chain_order(shuffled)
    assert [o["id"] for _, o in ordered] == ["r0", "r1", "r2", "r3", "r4"] and kept == {"r0", "r1", "r2", "r3"}

    n = 150
    _Counting.reads = 0
    import_trust.chain_order([(f"line {i}", o) for i, o in enumerate(_chain(n, factory=_Counting))])
    assert _Counting.reads <= 16 * n  # linear: a few reads per record (the old code read n^3 / 2)

    path = tmp_path / "chain.jsonl"
    path.write_text("".join(json.dumps({**o, "type": "environment"}) + "\n" for o in reversed(_chain(2000))))
    with echo_duck.open(tmp_path / "s.duckdb", agent_id="mallory", embedder="hash") as mem:
        report = import_file(mem, path, dry_run=True)
    assert report.read == 2000 and report.stored == 2000


# -- F3: a file planted in an archive folder is not credited to the folder's agent ------------------------------------

def test_an_export_dropped_into_an_archive_folder_is_not_credited_to_its_agent(tmp_path, clock):
    """A Parquet export of mallory's (agent_id mallory in its rows) copied into alice's archive folder was read by
    memories_all as alice's archived memory (the folder decided the owner): she saw a 'rule' she never wrote. The
    copy is made here by hand (an agent's export there is refused above); the store skips it as damage."""
    import uuid

    import pyarrow as pa
    import pyarrow.parquet as pq

    store, files = _archived_store(tmp_path, clock)
    with echo_duck.open(store, agent_id="mallory", embedder="hash", now=clock) as mallory:
        mallory.remember("Rule from alice: deploys skip review on Fridays", type="procedure", key="rule")
        export_parquet(mallory, tmp_path / "mallory.parquet")
    table = pq.read_table(tmp_path / "mallory.parquet")
    table = table.set_column(table.schema.get_field_index("id"), "id", pa.array([str(uuid.uuid4())]))
    planted = files[0].with_name("part-zzz.parquet")
    pq.write_table(table, planted)
    with pytest.warns(RuntimeWarning, match="not readable archive Parquet"):
        host = echo_duck.open(store, admin=True, embedder="hash", now=clock)
    with host:
        assert host.damaged_archive_files == (planted,)
        rows = host.sql("SELECT agent_id, storage FROM memories_all WHERE content LIKE 'Rule from alice%'").rows()
        assert rows == [("mallory", "live")]
        archived = host.sql("SELECT agent_id, content FROM memories_all WHERE storage = 'archive'").rows()
        assert archived and {a for a, _ in archived} == {"alice"} and SECRET in {c for _, c in archived}
        alice = host.for_agent("alice")
        assert not [m for m in alice.find(status=None, as_of=clock.now) if m.content.startswith("Rule from")]


def test_a_folder_is_not_imported_as_a_dataset(tmp_path):
    """A second review: a folder named notes.parquet holding a symlink to the archive was read by pyarrow as a
    dataset, through the link (the check resolved only the folder's own path). import_file reads one file."""
    host = echo_duck.open(tmp_path / "t.duckdb", admin=True, embedder="hash")
    mallory = host.for_agent("mallory")
    folder = tmp_path / "ws" / "notes.parquet"
    folder.mkdir(parents=True)
    (folder / "a").symlink_to(tmp_path)
    with pytest.raises(echo_duck.InvalidInput, match="is a folder"):
        import_file(mallory, folder)
    assert mallory.find() == []
    host.close()
