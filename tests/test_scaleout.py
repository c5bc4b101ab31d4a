"""Scale-out (SPEC "Scale-out"): the Parquet archive is readable by another engine (Polars, lazily, with
the partition filter pruning files), and a shared team memory on DuckLake with a local catalog file:
published from a store, read by two processes at once, republished with updates and retractions.

The tour store (echo_duck/bench/tour_fixture.py) has two agents, a decay pass and an archive export, so
its archive has one partition per agent."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest

import echo_duck
from echo_duck import DatabaseLocked, InvalidInput, MemoryNotFound, PermissionDenied
from echo_duck.storage.extensions import extension_path, quote_literal
from echo_duck.io.scaleout import publish_to_ducklake, read_team_memories
from echo_duck.bench.tour_fixture import TEAM, build_tour_store


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    return build_tour_store(tmp_path_factory.mktemp("tour") / "tour.duckdb", embedder="hash")


def archived_rows(tour, agent_id: str) -> dict[str, dict]:
    with echo_duck.open(tour.path, read_only=True, embedder=None, admin=True) as mem:
        rows = mem.sql("SELECT id::VARCHAR AS id, agent_id, key, version, status, content, year(created_at) AS year "
                       "FROM memories_all WHERE storage = 'archive' AND agent_id = ?", [agent_id]).to_dicts()
    return {r.pop("id"): r for r in rows}


# -- the Parquet archive, from Polars ------------------------------------------------------------

def test_polars_scans_the_archive_and_agrees_with_memories_all(tour):
    lazy = pl.scan_parquet(tour.archive_dir / "**" / "*.parquet", hive_partitioning=True)
    assert {"agent_id", "year"} <= set(lazy.collect_schema().names())
    for agent in ("coder", "reviewer"):
        frame = (lazy.filter(pl.col("agent_id") == agent)
                 .select(pl.col("id").cast(pl.String), "agent_id", "key", "version", "status", "content", "year")
                 .collect())
        expected = archived_rows(tour, agent)
        assert expected, f"the tour archive has rows for {agent}"
        got = {r.pop("id"): r for r in frame.to_dicts()}
        assert got == expected
    # Superseded versions are in the archive too, and they are the only non-active rows there.
    statuses = lazy.group_by("status").agg(pl.len()).collect()
    assert set(statuses["status"]) == {"active", "superseded"}


def test_the_agent_partition_filter_prunes_the_other_agents_files(tour, tmp_path):
    """Pushdown proven by behaviour: the reviewer's files are made unreadable, and a scan filtered on
    agent_id = 'coder' still works because it never opens them; an unfiltered scan fails."""
    root = tmp_path / "archive"
    shutil.copytree(tour.archive_dir, root)
    broken = list((root / "agent_id=reviewer").rglob("*.parquet"))
    assert broken
    for f in broken:
        f.write_bytes(b"not a parquet file")
    lazy = pl.scan_parquet(root / "**" / "*.parquet", hive_partitioning=True)
    coder = lazy.filter(pl.col("agent_id") == "coder").select(pl.col("id").cast(pl.String)).collect()
    assert set(coder["id"]) == set(archived_rows(tour, "coder"))
    with pytest.raises(Exception):
        lazy.select(pl.col("id").cast(pl.String)).collect()


# -- DuckLake ------------------------------------------------------------------------------------

def test_the_ducklake_extension_loads_offline_from_its_wheel():
    con = duckdb.connect()
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute(f"LOAD {quote_literal(str(extension_path('ducklake')))}")
    loaded = {r[0] for r in con.execute("SELECT extension_name FROM duckdb_extensions() WHERE loaded").fetchall()}
    assert {"ducklake", "parquet"} <= loaded


# The readers are plain DuckDB processes (no echo_duck import): any DuckDB with the ducklake extension reads the lake.
READER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    import duckdb
    extension, catalog, team, me, other = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4]), Path(sys.argv[5])
    con = duckdb.connect()
    con.execute(f"LOAD '{extension}'")
    con.execute(f"ATTACH 'ducklake:{catalog}' AS lake (READ_ONLY)")   # held until both readers are in
    me.write_text("attached")
    deadline = time.monotonic() + 60
    while not other.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    rows = con.execute("SELECT id, content FROM lake.team_memories WHERE team_id = ? ORDER BY id", [team]).fetchall()
    print(json.dumps({"both_attached": other.exists(), "rows": [list(r) for r in rows]}))
""")


def published_team_rows(tour) -> list[list[str]]:
    with echo_duck.open(tour.path, agent_id="coder", read_only=True, embedder=None, admin=True) as mem:
        rows = mem.sql("SELECT id::VARCHAR AS id, content FROM memories WHERE scope = 'team' AND team_id = ? "
                       "AND status = 'active' ORDER BY id", [TEAM]).rows()
    return [list(r) for r in rows]


def test_a_team_memory_published_to_ducklake_is_read_by_two_processes_at_once(tour, tmp_path):
    catalog, data = tmp_path / "team.ducklake", tmp_path / "lake_data"
    with echo_duck.open(tour.path, agent_id="coder", team_id=TEAM, now=tour.now, embedder="hash", admin=True) as mem:
        private = mem.sql("SELECT count(*) AS n FROM memories WHERE scope = 'private' AND status = 'active'")["n"][0]
        report = publish_to_ducklake(mem, catalog, data)
    expected = published_team_rows(tour)
    assert report.published == len(expected) >= 3 and private > 0  # team memories only, not private ones
    assert list(data.rglob("*.parquet"))  # the lake's data are Parquet files under DATA_PATH

    procs = [subprocess.Popen([sys.executable, "-c", READER, str(extension_path("ducklake")), str(catalog), TEAM, str(tmp_path / f"r{i}"),
                               str(tmp_path / f"r{1 - i}")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in (0, 1)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    assert all(r["both_attached"] for r in results)  # they held the catalog at the same time
    assert sorted(results[0]["rows"]) == sorted(results[1]["rows"]) == expected


@pytest.mark.slow
def test_republishing_replaces_updates_and_retractions_and_keeps_no_history(tmp_path):
    catalog, data = tmp_path / "team.ducklake", tmp_path / "lake_data"
    with echo_duck.open(tmp_path / "a.duckdb", agent_id="ana", team_id="web", embedder="hash", admin=True) as mem:
        mem.grant(team="web")
        mem.remember("Deploys go out on Tuesdays", type="environment", key="deploy:day", scope="team", team_id="web")
        old = mem.remember("The staging DB is PostgreSQL 14", type="environment", key="staging_db", scope="team", team_id="web")
        mem.remember("I draft replies too long", type="self", key="habit")  # private: never published
        first = publish_to_ducklake(mem, catalog, data)
        mem.update("staging_db", "The staging DB is PostgreSQL 16", provenance="user_stated")
        gone = mem.remember("A temporary fact", type="environment", scope="team", team_id="web")
        assert publish_to_ducklake(mem, catalog, data).published == 3
        mem.forget(gone.id, reason="not true after all")
        last = publish_to_ducklake(mem, catalog, data)
    assert (first.published, last.published) == (2, 2) and last.snapshot_id > first.snapshot_id
    now = read_team_memories(catalog, "web")
    assert sorted(now["content"]) == ["Deploys go out on Tuesdays", "The staging DB is PostgreSQL 16"]
    assert set(now["author"]) == {"ana"} and set(now["team_id"]) == {"web"}
    assert old.id not in set(now["id"])  # the new version replaced the old one
    # reviewer AM (session 57): what a publish retracts leaves the lake: no earlier snapshot to read by version
    # (DuckLake's time travel), no Parquet file holding its text
    con = duckdb.connect()
    con.execute(f"LOAD {quote_literal(str(extension_path('ducklake')))}")
    con.execute(f"ATTACH {quote_literal(f'ducklake:{catalog}')} AS lake (READ_ONLY)")
    with pytest.raises(duckdb.Error, match="snapshot"):
        con.execute(f"SELECT content FROM lake.team_memories AT (VERSION => {first.snapshot_id})").fetchall()
    con.close()
    files = [f.read_bytes() for f in [*data.rglob("*"), catalog] if f.is_file()]  # reviewer AN: the catalog's
    assert files and not any(b"PostgreSQL 14" in f or b"A temporary fact" in f for f in files)  # statistics too
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("team.ducklake")) == ["team.ducklake"]
    assert read_team_memories(catalog, "other-team").height == 0


def test_a_catalog_copy_left_by_a_crash_is_deleted_by_the_next_publish(tmp_path):
    # a crash between the catalog's copy and its replace left `team.ducklake.<hex>.rewrite`: the catalog as it was,
    # statistics of rows the next publish retracts included, beside the catalog for good
    catalog, data = tmp_path / "team.ducklake", tmp_path / "lake_data"
    with echo_duck.open(tmp_path / "a.duckdb", agent_id="ana", team_id="web", embedder="hash", admin=True) as mem:
        mem.grant(team="web")
        gone = mem.remember("The staging DB is PostgreSQL 14", type="environment", scope="team")
        publish_to_ducklake(mem, catalog, data)
        left = tmp_path / f"team.ducklake.{'ab12' * 8}.rewrite"
        shutil.copy(catalog, left)
        (tmp_path / f"{left.name}.wal").write_bytes(b"")
        other = tmp_path / "team.ducklake.notes.rewrite"  # not a name a publish gives its copy: kept
        other.write_text("someone's file")
        mem.forget(gone.id, reason="not true")
        publish_to_ducklake(mem, catalog, data)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("team.ducklake")) == [
        "team.ducklake", "team.ducklake.notes.rewrite"]


@pytest.mark.slow
def test_a_moved_store_still_retracts_what_it_published(tmp_path):
    # reviewer AM: the lake knew a publisher by its path; once the store moved, a memory forgotten in it stayed
    catalog, data = tmp_path / "team.ducklake", tmp_path / "lake_data"
    with echo_duck.open(tmp_path / "a.duckdb", agent_id="ana", team_id="web", embedder="hash", admin=True) as mem:
        mem.grant(team="web")
        mem.remember("Deploys go out on Tuesdays", type="environment", scope="team")
        wrong = mem.remember("The staging DB password rotates on Fridays", type="environment", scope="team")
        purged = [mem.remember(f"Standups start at {h}", type="environment", scope="team") for h in ("nine", "ten")]
        publish_to_ducklake(mem, catalog, data, source=str((tmp_path / "a.duckdb").resolve()))  # as before store ids
        mem.forget(purged[0].id, purge=True, reason="the user asked")  # gone from the store: its source says whose
        assert publish_to_ducklake(mem, catalog, data).published == 3  # the store's id now, the old path retracted
    (tmp_path / "a.duckdb").rename(tmp_path / "moved.duckdb")
    with echo_duck.open(tmp_path / "moved.duckdb", agent_id="ana", team_id="web", embedder="hash", admin=True) as mem:
        mem.forget(wrong.id, reason="not true")
        mem.forget(purged[1].id, purge=True, reason="the user asked")
        assert publish_to_ducklake(mem, catalog, data).published == 1
    now = read_team_memories(catalog, "web")
    assert list(now["content"]) == ["Deploys go out on Tuesdays"]
    assert now["source"][0] == str((tmp_path / "moved.duckdb").resolve())


@pytest.mark.slow
def test_a_copy_of_a_store_leaves_what_the_original_publishes_after_the_copy(tmp_path):
    # reviewer AN: a store id that travelled with a copy made each copy's publish retract the other's rows
    catalog, data = tmp_path / "team.ducklake", tmp_path / "lake_data"
    with echo_duck.open(tmp_path / "a.duckdb", agent_id="ana", team_id="web", embedder="hash", admin=True) as mem:
        mem.grant(team="web")
        mem.remember("Deploys go out on Tuesdays", type="environment", scope="team")
        publish_to_ducklake(mem, catalog, data)
    shutil.copy(tmp_path / "a.duckdb", tmp_path / "b.duckdb")
    with echo_duck.open(tmp_path / "a.duckdb", agent_id="ana", team_id="web", embedder="hash", admin=True) as mem:
        mem.remember("Standups start at nine", type="environment", scope="team")
        publish_to_ducklake(mem, catalog, data)
    with echo_duck.open(tmp_path / "b.duckdb", agent_id="ana", team_id="web", embedder="hash", admin=True) as mem:
        mem.remember("Releases are tagged on Fridays", type="environment", scope="team")
        publish_to_ducklake(mem, catalog, data, source=str((tmp_path / "a.duckdb").resolve()))  # reviewer AP: stores
        # at one path in two containers name one source; which source published a row does not decide a retraction
    assert sorted(read_team_memories(catalog, "web")["content"]) == [
        "Deploys go out on Tuesdays", "Releases are tagged on Fridays", "Standups start at nine"]


@pytest.mark.slow
def test_a_publish_deletes_only_the_lake_files_it_expired(tmp_path):
    # reviewer AQ: ducklake_cleanup_old_files deleted whatever a row of the shared catalog named
    catalog, data = tmp_path / "team.ducklake", tmp_path / "lake_data"
    with echo_duck.open(tmp_path / "a.duckdb", agent_id="ana", team_id="web", embedder="hash", admin=True) as mem:
        mem.grant(team="web")
        gone = mem.remember("Deploys go out on Tuesdays", type="environment", scope="team")
        publish_to_ducklake(mem, catalog, data)
        first = sorted(p.name for p in (data / "main" / "team_memories").iterdir())
        victim = data / "main" / "team_memories" / "notes.txt"
        victim.write_text("not the lake's")
        con = duckdb.connect(str(catalog))  # another publisher's row
        con.execute("INSERT INTO ducklake_files_scheduled_for_deletion VALUES (999, 'main/team_memories/notes.txt', "
                    "true, now())")
        con.close()
        mem.forget(gone.id, reason="not true")
        mem.remember("Standups start at nine", type="environment", scope="team")
        publish_to_ducklake(mem, catalog, data)
    assert victim.exists()
    now = sorted(p.name for p in (data / "main" / "team_memories").iterdir())
    assert first and not set(first) & set(now)  # the expired snapshot's file is gone
    assert [c for c in read_team_memories(catalog, "web")["content"]] == ["Standups start at nine"]


def test_the_lake_paths_are_checked_before_anything_is_written(tmp_path):
    # reviewer AM: a symlink below the data folder sent the lake's files into the store's archive (the store then did
    # not open); a catalog path naming another store added DuckLake's tables to it; bad paths raised bare errors
    store = tmp_path / "a.duckdb"
    with echo_duck.open(tmp_path / "zed.duckdb", agent_id="zed", embedder="hash"):
        pass
    with echo_duck.open(store, agent_id="ana", team_id="web", embedder="hash", admin=True) as mem:
        mem.grant(team="web")
        mem.remember("Deploys go out on Tuesdays", type="environment", scope="team")
        partition = Path(mem.archive_dir) / "agent_id=ana" / "year=2025"
        partition.mkdir(parents=True)
        (tmp_path / "lake_data" / "main").mkdir(parents=True)
        (tmp_path / "lake_data" / "main" / "team_memories").symlink_to(partition)
        with pytest.raises(PermissionDenied, match="archive folder"):
            publish_to_ducklake(mem, tmp_path / "team.ducklake", tmp_path / "lake_data")
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (tmp_path / "other_data").mkdir()
        (tmp_path / "other_data" / "main").symlink_to(elsewhere)
        with pytest.raises(PermissionDenied, match="symlink"):
            publish_to_ducklake(mem, tmp_path / "team.ducklake", tmp_path / "other_data")
        deep = tmp_path / "deep_data" / "main" / "team_memories"  # reviewer AP: the catalog may name a file below a
        deep.mkdir(parents=True)  # symlink deep in the folder, which the clean-up would delete
        (deep / "cache").symlink_to(tmp_path)
        with pytest.raises(PermissionDenied, match="symlink"):
            publish_to_ducklake(mem, tmp_path / "team.ducklake", tmp_path / "deep_data")
        with pytest.raises(PermissionDenied, match="not a DuckLake catalog"):
            publish_to_ducklake(mem, tmp_path / "zed.duckdb", tmp_path / "data")
        lake = duckdb.connect()  # reviewer AN: a catalog whose table lies elsewhere (another publisher made it so)
        lake.execute(f"LOAD {quote_literal(str(extension_path('ducklake')))}")
        data = (tmp_path / "data3").resolve()
        lake.execute(f"ATTACH {quote_literal(f'ducklake:{tmp_path}/c3.ducklake')} AS l (DATA_PATH {quote_literal(f'{data}/')})")
        lake.execute("CREATE TABLE l.team_memories (id VARCHAR)")
        lake.close()
        lake = duckdb.connect(str(tmp_path / "c3.ducklake"))
        lake.execute("UPDATE ducklake_table SET path = ?, path_is_relative = false", [f"{partition}/"])
        lake.close()
        with pytest.raises(PermissionDenied, match="outside its data folder"):
            publish_to_ducklake(mem, tmp_path / "c3.ducklake", data)
        with pytest.raises(PermissionDenied, match="holds the store's own files"):  # reviewer AQ
            publish_to_ducklake(mem, tmp_path / "c4.ducklake", tmp_path)
        (tmp_path / "a_file").write_text("x")
        with pytest.raises(InvalidInput, match="not a folder"):
            publish_to_ducklake(mem, tmp_path / "c2.ducklake", tmp_path / "a_file")
        for bad in ("c\x00.ducklake", ""):
            with pytest.raises(InvalidInput, match="catalog_path"):
                publish_to_ducklake(mem, bad, tmp_path / "data")
            with pytest.raises(InvalidInput, match="catalog_path"):
                read_team_memories(bad, "web")
    assert not list(partition.iterdir()) and not any(elsewhere.iterdir())
    assert not (tmp_path / "team.ducklake").exists() and not (tmp_path / "c2.ducklake").exists()
    with echo_duck.open(store, agent_id="ana", embedder="hash", admin=True) as mem:
        assert mem.find(status="active")
    con = duckdb.connect(str(tmp_path / "zed.duckdb"), read_only=True)
    assert not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'ducklake%'").fetchone()[0]
    con.close()


HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import duckdb
    con = duckdb.connect()
    con.execute(f"LOAD '{sys.argv[1]}'")
    con.execute(f"ATTACH 'ducklake:{sys.argv[2]}' AS lake")   # a writer holding the catalog
    Path(sys.argv[3]).write_text("holding")
    time.sleep(30)
""")


def test_a_reader_is_told_when_a_publisher_holds_the_catalog(tmp_path):
    catalog, data = tmp_path / "team.ducklake", tmp_path / "lake_data"
    with echo_duck.open(tmp_path / "a.duckdb", agent_id="ana", team_id="web", embedder="hash", admin=True) as mem:
        mem.grant(team="web")
        mem.remember("Deploys go out on Tuesdays", type="environment", scope="team", team_id="web")
        publish_to_ducklake(mem, catalog, data)
    flag = tmp_path / "holding"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(extension_path("ducklake")), str(catalog), str(flag)])
    try:
        for _ in range(600):
            if flag.exists() or holder.poll() is not None:
                break
            time.sleep(0.05)
        assert flag.exists()
        with pytest.raises(DatabaseLocked, match="held by another process"):
            read_team_memories(catalog, "web")
    finally:
        holder.kill()
        holder.wait()
    assert read_team_memories(catalog, "web").height == 1  # free again once the publisher is gone


def test_bad_input_is_refused(tmp_path):
    with echo_duck.open(tmp_path / "a.duckdb", agent_id="ana", embedder="hash", admin=True) as mem:  # no team
        with pytest.raises(InvalidInput, match="team_id"):
            publish_to_ducklake(mem, tmp_path / "team.ducklake", tmp_path / "data")
    assert not (tmp_path / "team.ducklake").exists()
    with pytest.raises(MemoryNotFound):
        read_team_memories(tmp_path / "missing.ducklake", "web")
    with pytest.raises(InvalidInput):
        read_team_memories(tmp_path / "missing.ducklake", "")
