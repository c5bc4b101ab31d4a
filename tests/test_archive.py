"""The Parquet cold archive (SPEC L2, echo_duck/lifecycle/archive.py): Hive-partitioned files next to the store,
rows removed only after a read-back, memories_all over live + archive, crash safety, compaction.

Crashes are simulated two ways: deterministically, by leaving the files and manifest rows each step of
the export state machine (staged → moved → done) would leave, and for real, by SIGKILLing a process
in the middle of archive()."""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from datetime import datetime
from pathlib import Path

import polars as pl
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from conftest import plain_connection

import echo_duck


def open_store(path, clock, **options):
    return echo_duck.open(path, now=clock, embedder="hash", **options, admin=True)


def archive_root(db_path: Path) -> Path:
    return db_path.with_name(f"{db_path.stem}_archive")


def parquet_files(root: Path) -> list[Path]:
    return sorted(root.glob("agent_id=*/year=*/*.parquet"))


def parquet_ids(root: Path) -> list[str]:
    """Every id in the archive's Parquet files (duplicates kept)."""
    ids = []
    for f in parquet_files(root):
        ids += [str(i) for i in pq.read_table(f, columns=["id"]).column("id").to_pylist()]
    return ids


def live_ids(mem) -> set[str]:
    return set(mem.sql("SELECT id::VARCHAR AS id FROM memories")["id"].to_list())


def all_ids(mem) -> list[str]:
    return mem.sql("SELECT id::VARCHAR AS id FROM memories_all")["id"].to_list()


def count(mem, sql: str, params=None) -> int:
    return mem.sql(sql, params)[:, 0][0]


def make_archivable(mem, clock, n: int, *, prefix: str = "fact") -> list[str]:
    """n decayed (archival-tier) memories, past the default 90-day retention when this returns."""
    made = mem.remember_many([dict(content=f"{prefix} {i}: the {['red', 'blue', 'green'][i % 3]} service #{i} is retired",
                                   type="environment", importance=0.1) for i in range(n)])
    clock.advance(days=200)
    assert mem.decay().archived >= n
    clock.advance(days=100)
    return [m.id for m in made]


# -- the export -------------------------------------------------------------------------------

def test_archive_writes_hive_partitioned_parquet_next_to_the_store(db_path, clock):
    root = archive_root(db_path)
    with open_store(db_path, clock) as mem:
        assert mem.archive_dir == root.resolve()
        decayed = make_archivable(mem, clock, 6)
        v1 = mem.remember("The release branch is release/1.x", type="environment", key="branch")
        v2 = mem.update("branch", "The release branch is release/2.x")
        clock.advance(days=91)
        live_before = live_ids(mem)
        exported = set(decayed) | {v1.id}
        stages = []
        report = mem.archive(progress=lambda done, total: stages.append((done, total)))
        assert stages == [(1, 2), (2, 2)]
        assert report.exported == len(exported)
        files = parquet_files(root)
        assert [str(f.relative_to(root)) for f in files] == sorted(report.files)
        assert {f.parent.relative_to(root).as_posix() for f in files} == {"agent_id=default/year=2026"}
        assert parquet_ids(root) and set(parquet_ids(root)) == exported
        assert not list((root / "_staging").glob("**/*.parquet"))
        # Gone from every live table, with an 'export' event each and the manifest done.
        assert live_ids(mem) == live_before - exported
        for table in ("memory_vectors", "bm25_docs"):
            left = set(mem.sql(f"SELECT memory_id::VARCHAR AS id FROM {table}")["id"].to_list())
            assert not left & exported and v2.id in left
        assert count(mem, "SELECT count(*) FROM bm25_postings WHERE memory_id::VARCHAR IN (SELECT unnest(?::VARCHAR[])) "
                          "AND doc NOT IN (SELECT doc FROM bm25_dead)", [sorted(exported)]) == 0
        events = mem.sql("SELECT memory_id::VARCHAR AS id, before FROM memory_events WHERE action = 'export'").to_dicts()
        assert sorted(e["id"] for e in events) == sorted(exported) and all(e["before"] for e in events)
        assert mem.sql("SELECT status, rows FROM archive_exports").to_dicts() == [{"status": "done", "rows": len(exported)}]
        # memories_all still has everything, once each, and says where it lives.
        rows = mem.sql("SELECT id::VARCHAR AS id, storage, content, status FROM memories_all").to_dicts()
        assert Counter(r["id"] for r in rows) == Counter(live_before)
        assert {r["id"] for r in rows if r["storage"] == "archive"} == exported
        assert next(r for r in rows if r["id"] == v1.id)["content"] == "The release branch is release/1.x"
        # The live store keeps working: the current version is recalled.
        assert mem.recall("release branch", arms=["keyword"])[0].id == v2.id
    with open_store(db_path, clock) as mem:  # reopened: the view points at the archive again
        assert sorted(all_ids(mem)) == sorted(live_before)


def test_archive_keeps_rows_within_retention_live(db_path, clock):
    with open_store(db_path, clock) as mem:
        mem.remember_many([dict(content=f"recently decayed {i}", type="environment", importance=0.1) for i in range(3)])
        clock.advance(days=200)
        mem.decay()
        clock.advance(days=30)  # within the 90-day retention
        assert mem.archive().exported == 0
        assert mem.archive(older_than_days=31).exported == 0
        assert mem.archive(older_than_days=29).exported == 3
        assert count(mem, "SELECT count(*) FROM memories_all WHERE storage = 'archive'") == 3


def test_memories_all_works_with_no_archive_yet(db_path, clock, tmp_path):
    with open_store(db_path, clock) as mem:
        assert all_ids(mem) == []
        m = mem.remember("Only a live row", type="user")
        assert mem.sql("SELECT id::VARCHAR AS id, storage FROM memories_all").to_dicts() == [{"id": m.id, "storage": "live"}]
        assert mem.archive().exported == 0  # nothing to export: still no archive, still a working view
        assert count(mem, "SELECT count(*) FROM memories_all") == 1
        make_archivable(mem, clock, 2)
        assert mem.archive().exported == 2
    shutil.rmtree(archive_root(db_path))  # the archive folder went away while the store was closed
    with open_store(db_path, clock) as mem:
        assert mem.sql("SELECT id::VARCHAR AS id, storage FROM memories_all").to_dicts() == [{"id": m.id, "storage": "live"}]
    with echo_duck.open(":memory:", embedder="hash", admin=True) as mem:
        assert mem.archive_dir is None
        assert count(mem, "SELECT count(*) FROM memories_all") == 0
        with pytest.raises(echo_duck.InvalidInput):
            mem.archive()


def test_a_writable_open_rebuilds_memories_all_only_when_its_definition_changed(db_path, clock, tmp_path):
    """memories_all is rebuilt at a writable open only when what it is built from changed (the archive's file list,
    the schema, the installed macros and views) or it is missing: an open that changes nothing writes nothing."""
    with open_store(db_path, clock) as mem:
        ids = make_archivable(mem, clock, 2)
        assert mem.archive().exported == 2
    with open_store(db_path, clock) as mem:
        assert mem.db.writes == 0  # the view stood: no write transaction at open
        assert sorted(all_ids(mem)) == sorted(ids)
    moved = tmp_path / "elsewhere" / db_path.name  # the store and its archive moved while closed
    moved.parent.mkdir()
    shutil.move(str(db_path), moved)
    shutil.move(str(archive_root(db_path)), archive_root(moved))
    with open_store(moved, clock) as mem:
        assert mem.db.writes == 1  # rebuilt over the archive's new place
        assert count(mem, "SELECT count(*) FROM memories_all WHERE storage = 'archive'") == 2
    for damage in ("DROP VIEW memories_all", "UPDATE store_info SET value = 'stale' WHERE name = 'memories_all_definition'"):
        con = plain_connection(moved)
        con.execute(damage)
        con.close()
        with open_store(moved, clock) as mem:
            assert mem.db.writes == 1, damage
            assert count(mem, "SELECT count(*) FROM memories_all WHERE storage = 'archive'") == 2
        with open_store(moved, clock) as mem:
            assert mem.db.writes == 0


def test_memories_all_has_the_types_of_memories(db_path, clock):
    with open_store(db_path, clock, agent_id="007") as mem:
        session = mem.start_session()
        mem.add_message(session, "user", "We had a long call about the archive.")
        episode = mem.consolidate(session)[0].episode_id  # a memory's episode_id names one of its writer's episodes
        mem.remember("tagged", type="environment", tags=["a", "b"], entities=["Acme"], importance=0.1,
                     source_refs=["message:1"], episode_id=episode)
        make_archivable(mem, clock, 1)
        mem.archive()
        live = mem.remember("still live", type="environment", tags=["c"])
        schema = {r["column_name"]: r["column_type"] for r in mem.sql("DESCRIBE memories_all").to_dicts()}
        table = {r["column_name"]: r["column_type"] for r in mem.sql("DESCRIBE memories").to_dicts()}
        assert schema == {**table, "storage": "VARCHAR"}
        assert schema["id"] == "UUID" and schema["tags"] == "VARCHAR[]" and schema["episode_id"] == "UUID"
        assert "year" not in schema
        rows = {r["storage"] + ":" + r["content"][:7]: r for r in
                mem.sql("SELECT * FROM memories_all ORDER BY content").to_dicts()}
        archived = rows["archive:tagged"]
        assert archived["agent_id"] == "007"  # a partition value that looks like a number stays text
        assert archived["tags"] == ["a", "b"] and archived["entities"] == ["Acme"]
        assert archived["source_refs"] == ["message:1"] and archived["provenance"] == 1
        assert isinstance(archived["created_at"], datetime)
        assert str(rows["live:still l"]["id"]) == live.id
        typed = mem.sql("SELECT DISTINCT typeof(id) AS t_id, typeof(tags) AS t_tags, typeof(agent_id) AS t_agent, "
                        "typeof(created_at) AS t_created FROM memories_all").to_dicts()
        assert typed == [{"t_id": "UUID", "t_tags": "VARCHAR[]", "t_agent": "VARCHAR", "t_created": "TIMESTAMP"}]
        # A join on id works across live and archived rows.
        archived_rows = count(mem, "SELECT count(*) FROM memories_all WHERE storage = 'archive'")
        assert archived_rows == 3  # tagged, fact 0 and the episode's summary
        assert count(mem, "SELECT count(*) FROM memories_all a JOIN memory_events e ON e.memory_id = a.id "
                          "WHERE a.storage = 'archive' AND e.action = 'export'") == archived_rows


def test_polars_scans_the_archive_folder_lazily(db_path, clock):
    root = archive_root(db_path)
    with open_store(db_path, clock) as mem:
        ids = make_archivable(mem, clock, 5)
        mem.archive()
    lazy = pl.scan_parquet(str(root / "**" / "*.parquet"), hive_partitioning=True)
    assert isinstance(lazy, pl.LazyFrame)
    frame = lazy.filter(pl.col("agent_id") == "default").select("id", "agent_id", "year", "content").collect()
    assert frame.height == 5
    assert sorted(str(i) for i in frame["id"].to_list()) == sorted(ids)
    assert set(frame["year"].to_list()) == {2026} and set(frame["agent_id"].to_list()) == {"default"}


def test_a_failed_export_removes_nothing(db_path, clock):
    root = archive_root(db_path)
    with open_store(db_path, clock) as mem:
        ids = make_archivable(mem, clock, 4)
        before = sorted(all_ids(mem))
        root.mkdir(exist_ok=True)
        (root / "_staging").write_text("a file where the staging folder should be")  # the write must fail
        with pytest.raises(Exception):
            mem.archive()
        assert set(ids) <= live_ids(mem)
        assert sorted(all_ids(mem)) == before
        assert count(mem, "SELECT count(*) FROM memory_vectors") == len(before)
        assert mem.sql("SELECT status FROM archive_exports")["status"].to_list() == ["staged"]
        (root / "_staging").unlink()
    with open_store(db_path, clock) as mem:  # the interrupted export is undone on open, then a new one works
        assert mem.sql("SELECT status FROM archive_exports")["status"].to_list() == ["abandoned"]
        assert mem.archive().exported == 4
        assert sorted(all_ids(mem)) == before and sorted(parquet_ids(root)) == sorted(ids)


# -- crash safety: the state machine driven step by step ------------------------------------------

def leave_interrupted_export(db_path: Path, status: str, *, staging_files: bool, archive_files: bool) -> list[str]:
    """Leave what an export interrupted after its `status` step leaves (the store must be closed)."""
    root = archive_root(db_path)
    export_id = uuid.uuid4()
    con = plain_connection(db_path)
    try:
        batch = con.execute("SELECT * FROM memories WHERE status = 'active' AND tier = 'archival' "
                            "ORDER BY agent_id, created_at, id").to_arrow_table()
        ids = [str(i) for i in batch.column("id").to_pylist()]
        year = batch.column("created_at")[0].as_py().year
        relative = f"agent_id=default/year={year}/part-{export_id}-0.parquet"
        con.execute("BEGIN")
        con.execute("INSERT INTO archive_exports (id, created_at, status, rows, files) VALUES (?, ?, ?, ?, ?)",
                    [export_id, datetime(2026, 12, 1), status, len(ids), [relative] if status == "moved" else []])
        con.execute("INSERT INTO archive_export_rows SELECT ?::UUID, unnest(?::VARCHAR[])::UUID", [export_id, ids])
        con.execute("COMMIT")
    finally:
        con.close()
    table = batch.drop_columns(["agent_id"])
    targets = ([root / "_staging" / str(export_id) / relative] if staging_files else []) + \
              ([root / relative] if archive_files else [])
    for target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, target)
    return ids


def test_recover_undoes_a_staged_export(db_path, clock):
    root = archive_root(db_path)
    with open_store(db_path, clock) as mem:
        make_archivable(mem, clock, 3)
        assert mem.archive().exported == 3  # a finished export, so the view reads Parquet too
        more = make_archivable(mem, clock, 4, prefix="second")
        everything = sorted(all_ids(mem))
    # Crash while moving: the staged files are half in _staging, half already in the archive.
    assert leave_interrupted_export(db_path, "staged", staging_files=True, archive_files=True) == more
    with open_store(db_path, clock) as mem:
        assert mem.sql("SELECT status FROM archive_exports ORDER BY created_at")["status"].to_list() == ["done", "abandoned"]
        assert not list((root / "_staging").glob("**/*.parquet"))
        assert len(parquet_files(root)) == 1 and not set(parquet_ids(root)) & set(more)
        assert set(more) <= live_ids(mem)  # nothing lost: still live
        ids = all_ids(mem)
        assert sorted(ids) == everything and len(ids) == len(set(ids))
        # and the next export carries them properly
        assert mem.archive().exported == 4
        assert sorted(all_ids(mem)) == everything
        assert Counter(parquet_ids(root)) == Counter({i: 1 for i in everything})


def test_recover_finishes_a_moved_export(db_path, clock):
    root = archive_root(db_path)
    with open_store(db_path, clock) as mem:
        make_archivable(mem, clock, 3)
        mem.archive(compact=False)
        more = make_archivable(mem, clock, 4, prefix="second")
        everything = sorted(all_ids(mem))
    # Crash after the files were moved into the archive, before the rows left the live table.
    leave_interrupted_export(db_path, "moved", staging_files=False, archive_files=True)
    assert set(more) <= set(parquet_ids(root))
    with echo_duck.open(db_path, embedder="hash", read_only=True, admin=True) as ro:  # a reader meanwhile: each row once
        ids = all_ids(ro)
        assert sorted(ids) == everything and len(ids) == len(set(ids))
        assert set(more) <= set(ro.sql("SELECT id::VARCHAR AS id FROM memories_all WHERE storage = 'live'")["id"].to_list())
    with open_store(db_path, clock) as mem:
        assert mem.sql("SELECT status FROM archive_exports")["status"].to_list() == ["done", "done"]
        assert not set(more) & live_ids(mem)
        for table in ("memory_vectors", "bm25_docs"):
            assert count(mem, f"SELECT count(*) FROM {table} WHERE memory_id::VARCHAR IN (SELECT unnest(?::VARCHAR[]))",
                         [more]) == 0
        actors = mem.sql("SELECT DISTINCT actor FROM memory_events WHERE action = 'export' AND memory_id::VARCHAR "
                         "IN (SELECT unnest(?::VARCHAR[]))", [more])["actor"].to_list()
        assert actors == ["archive-recovery"]
        ids = all_ids(mem)
        assert sorted(ids) == everything and len(ids) == len(set(ids))
        assert set(mem.sql("SELECT id::VARCHAR AS id FROM memories_all WHERE storage = 'archive'")["id"].to_list()) >= set(more)


def test_crash_after_compaction_wrote_its_merged_file_leaves_no_duplicates(db_path, clock):
    root = archive_root(db_path)
    with open_store(db_path, clock) as mem:
        make_archivable(mem, clock, 3)
        mem.archive(compact=False)
        make_archivable(mem, clock, 3, prefix="second")
        mem.archive(compact=False)
        everything = sorted(all_ids(mem))
    parts = parquet_files(root)
    assert len(parts) == 2
    # The merged file is written; the crash comes before the old files are deleted.
    merged = ds.dataset(parts, format="parquet").to_table()
    pq.write_table(merged, parts[0].parent / f"part-compact-{uuid.uuid4()}.parquet")
    with open_store(db_path, clock) as mem:
        ids = all_ids(mem)
        assert sorted(ids) == everything and len(ids) == len(set(ids))
        mem.archive()  # compacts
        assert len(parquet_files(root)) == 1
        assert sorted(all_ids(mem)) == everything


def test_crash_while_compaction_writes_its_merged_file_breaks_nothing(db_path, clock):
    """A process killed while pq.write_table is writing the merged file leaves a truncated file (under
    the .parquet.tmp name the writer uses until the file is complete); the store must still open,
    memories_all must still read the archive, and the next compaction must work."""
    root = archive_root(db_path)
    with open_store(db_path, clock) as mem:
        make_archivable(mem, clock, 3)
        mem.archive(compact=False)
        make_archivable(mem, clock, 3, prefix="second")
        mem.archive(compact=False)
        everything = sorted(all_ids(mem))
    parts = parquet_files(root)
    merged = ds.dataset(parts, format="parquet").to_table()
    target = parts[0].parent / f"part-compact-{uuid.uuid4()}.parquet.tmp"
    pq.write_table(merged, target)
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2])  # killed half-way through the write
    with open_store(db_path, clock) as mem:
        ids = all_ids(mem)
        assert sorted(ids) == everything and len(ids) == len(set(ids))
        mem.archive()
        assert sorted(all_ids(mem)) == everything


# -- crash safety: a real SIGKILL -------------------------------------------------------------------

CHILD = """
import sys, time
from datetime import datetime
import echo_duck
with echo_duck.open(sys.argv[1], embedder="hash", now=datetime(2027, 6, 1), admin=True) as mem:
    print("ready", flush=True)
    started = time.perf_counter()
    report = mem.archive(older_than_days=0)
    print("done", report.exported, time.perf_counter() - started, flush=True)
"""


def check_every_memory_in_exactly_one_place(db_path: Path, expected: set[str]) -> None:
    root = archive_root(db_path)
    with echo_duck.open(db_path, embedder="hash", now=datetime(2027, 6, 2), admin=True) as mem:
        live = live_ids(mem)
        archived = parquet_ids(root)
        assert not live & set(archived), f"{len(live & set(archived))} memories are both live and in Parquet"
        assert live | set(archived) == expected, "memories were lost"
        ids = all_ids(mem)
        assert len(ids) == len(expected) and set(ids) == expected
        assert mem.sql("SELECT count(*) AS n FROM archive_exports WHERE status IN ('staged', 'moved')")["n"][0] == 0
        assert not list((root / "_staging").glob("**/*.parquet"))
        # The live rows' indexes are intact; exported rows left no index entries behind.
        docs = set(mem.sql("SELECT memory_id::VARCHAR AS id FROM bm25_docs")["id"].to_list())
        vectors = set(mem.sql("SELECT memory_id::VARCHAR AS id FROM memory_vectors")["id"].to_list())
        assert docs == live and vectors == live
        # and a finishing run moves what is left, once.
        mem.archive(older_than_days=0)
        assert Counter(all_ids(mem)) == Counter({i: 1 for i in expected})
        assert set(parquet_ids(root)) == expected - live_ids(mem)


def state_after_crash(db_path: Path) -> str:
    """What the killed process left: export statuses and live row count (read before any recovery)."""
    con = plain_connection(db_path, read_only=True)
    try:
        statuses = [r[0] for r in con.execute("SELECT status FROM archive_exports").fetchall()]
        live = con.execute("SELECT count(*) FROM memories").fetchone()[0]
    finally:
        con.close()
    return f"exports={statuses or 'none'} live={live} parquet={len(parquet_ids(archive_root(db_path)))}"


@pytest.mark.slow
def test_sigkill_during_archive_never_loses_or_duplicates_a_memory(tmp_path):
    base = tmp_path / "base.duckdb"
    clock_now = [datetime(2026, 1, 1)]
    with echo_duck.open(base, embedder="hash", now=lambda: clock_now[0], admin=True) as mem:
        made = mem.remember_many([dict(content=f"retired service number {i} in rack {i % 40}", type="environment",
                                       importance=0.1) for i in range(2500)])
        mem.remember_many([dict(content=f"live fact {i}", type="user") for i in range(20)])
        clock_now[0] = datetime(2027, 1, 1)
        archived = sum(m.status == "active" for m in made)  # the scanner may hold one for review: never archived
        assert archived >= 2490 and mem.decay().archived == archived
        expected = live_ids(mem)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    rng = random.Random(1234)
    duration = None
    outcomes = []
    for attempt in range(5):
        db = tmp_path / f"run{attempt}" / "mem.duckdb"
        db.parent.mkdir()
        shutil.copy(base, db)
        child = subprocess.Popen([sys.executable, str(script), str(db)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            assert child.stdout.readline().strip() == "ready", child.stderr.read()
            if duration is None:  # the first run completes and calibrates the others
                line = child.stdout.readline().split()
                assert line[:2] == ["done", str(archived)], child.stderr.read()
                duration = float(line[2])
                outcomes.append("completed")
            else:
                time.sleep(rng.uniform(0.0, duration * 1.2))
                child.send_signal(signal.SIGKILL)
        finally:
            child.wait(timeout=60)
            child.stdout.close()
            child.stderr.close()
        if attempt:
            outcomes.append(("killed" if child.returncode == -signal.SIGKILL else f"exit {child.returncode}")
                            + f" in state {state_after_crash(db)}")
        check_every_memory_in_exactly_one_place(db, expected)
    print(f"archive of {archived} rows took {duration:.3f}s; runs: {outcomes}")


# -- compaction --------------------------------------------------------------------------------------

@pytest.mark.slow
def test_compaction_merges_small_files_into_one_per_partition(db_path, clock):
    root = archive_root(db_path)
    clock.now = datetime(2025, 2, 1)
    exported = []
    with open_store(db_path, clock) as mem:
        for group in range(4):  # created in 2025-02, 2025-08, 2026-03, 2026-09
            made = [mem.remember(f"group {group} setting {i} is v1", type="environment", key=f"g{group}:s{i}")
                    for i in range(3)]
            for i in range(3):
                mem.update(f"g{group}:s{i}", f"group {group} setting {i} is v2")
            clock.advance(days=200)
            report = mem.archive(compact=False)
            assert report.exported == 3 and report.compacted_partitions == 0
            exported += [m.id for m in made]
        files = parquet_files(root)
        by_partition = Counter(f.parent.name for f in files)
        assert by_partition == {"year=2025": 2, "year=2026": 2}
        everything = sorted(all_ids(mem))
        report = mem.archive()  # nothing new to export, but small files are compacted
        assert report.exported == 0 and report.compacted_partitions == 2
        files = parquet_files(root)
        assert Counter(f.parent.name for f in files) == {"year=2025": 1, "year=2026": 1}
        assert all(f.name.startswith("part-compact-") for f in files)
        assert Counter(parquet_ids(root)) == Counter({i: 1 for i in exported})
        assert sorted(all_ids(mem)) == everything
        assert mem.archive().compacted_partitions == 0  # already one file each
        history = mem.history(mem.find(key="g0:s0")[0].id)
        # v1 lives in Parquet now, and history still shows it (version_chain reads memories_all)
        assert [v.content for v in history.versions] == ["group 0 setting 0 is v1", "group 0 setting 0 is v2"]
        assert mem.sql("SELECT content FROM memories_all WHERE key = 'g0:s0' ORDER BY version")["content"].to_list() == \
            ["group 0 setting 0 is v1", "group 0 setting 0 is v2"]
