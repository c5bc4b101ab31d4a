"""Scale-out (SPEC "Scale-out"): a shared team memory on DuckLake.

Each agent keeps its own store file; ``publish_to_ducklake`` copies the live team-scoped memories
of one team from a store into a DuckLake catalog (a small DuckDB file) whose data are Parquet files
under ``data_path``; ``read_team_memories`` reads them back from any process. The ducklake extension
is LOADed from the ``duckdb-extension-ducklake`` wheel, offline, like vss and fts.

With a local DuckDB-file catalog, DuckDB's file lock applies: one process publishes at a time, and
readers (read-only, any number of processes) attach when no publisher holds the catalog. Writers on
several machines need a PostgreSQL catalog (``ducklake:postgres:…``), which echo_duck does not ship.

The lake keeps no history: DuckLake's time travel would keep what a publish retracted (a memory forgotten,
purged or made sensitive since) readable, and its bytes in the old Parquet files. Each publish rewrites the
files its retraction touched, expires every earlier snapshot and deletes the files nothing refers to any more.
A publisher is known by the store's id (``store_info.store_id``, made on its first publish), not its path, so a
moved store still retracts what it published; a publish also retracts every id the store holds for the team
that it no longer publishes. The catalog must be a DuckLake catalog (or not exist yet), and the data folder and
the folders DuckLake writes below it no symlink and none of the store's own files.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from ..errors import DatabaseLocked, InvalidInput, MemoryNotFound, PermissionDenied
from ..storage import sqlfiles
from ..storage.connection import translate_errors
from ..storage.db import Db
from ..storage.extensions import extension_path, quote_literal
from ..write import validate
from .store_files import refuse_store_file

_STAGE = "echo_duck_publish_stage"
_HELD = "echo_duck_publish_held"  # every id the store holds for the team


@dataclass(frozen=True)
class PublishReport:
    team_id: str
    published: int
    snapshot_id: int  # the lake's snapshot after this publish (the only one it keeps)

    def to_dict(self) -> dict:
        return {"team_id": self.team_id, "published": self.published, "snapshot_id": self.snapshot_id}


def publish_to_ducklake(store: Any, catalog_path: str | Path, data_path: str | Path, *,
                        team_id: str | None = None, source: str | None = None) -> PublishReport:
    """Publish the live ``team`` memories of ``team_id`` (default: the store's team) that the store's
    agent may see; one DuckLake transaction replaces what ``source`` (default: the store path)
    published for that team before. An admin operation (the lake has no per-reader rights); sensitive
    and unshared personal memories are never published."""
    if not getattr(store, "is_admin", False):
        raise PermissionDenied("publish_to_ducklake writes a catalog any reader of the lake sees: it needs an admin "
                               "handle (echo_duck.open(path, admin=True))")
    catalog_path, data_path = validate.path(catalog_path, "catalog_path"), validate.path(data_path, "data_path")
    refuse_store_file(store, catalog_path, "publish a DuckLake catalog to")  # never over the store's own files
    _refuse_data_folder(store, data_path)
    _refuse_foreign_catalog(catalog_path)
    team = validate.identifier(team_id or store.caller.team_id or "", "team_id", group=True)
    by_path = str(Path(store.path).expanduser().resolve())  # how a publish before store ids named its source
    source = validate.text(source or _store_id(store) or by_path, "source", max_chars=1000)
    with store.db.reading():
        rows = store.db.run("team_memories_to_publish", team_id=team, caller_agent=store.caller.agent_id,
                            caller_session=store.caller.session_id).to_arrow_table()
        held = store.db.run("team_memory_ids", team_id=team).to_arrow_table()
    lake = _lake(catalog_path, data_path)
    try:
        lake.run("create_team_memories")
        lake.con.register(_STAGE, rows)
        lake.con.register(_HELD, held)
        with lake.transaction("publishing team memories to DuckLake"):
            lake.run("retract_team_memories", team_id=team, source=source, by_path=by_path)
            lake.run("insert_team_memories", source=source, now=store.now())
        lake.run("rewrite_team_lake_files")  # what the retraction removed leaves the lake: no snapshot or file keeps it
        older = [int(v) for (v,) in lake.run("team_lake_older_snapshots").fetchall()]
        if older:
            lake.run("expire_team_lake_snapshots", versions=older)
        lake.run("clean_up_team_lake_files")
        snapshot = lake.scalar("team_lake_snapshot")
    finally:
        lake.close()
    return PublishReport(team, rows.num_rows, int(snapshot))


def _store_id(store: Any) -> str | None:
    """The store's id as a lake source (``store:<uuid>``), made on its first publish; None on a read-only handle
    of a store that never published (its path names it, as before store ids)."""
    known = store.db.scalar("store_info_value", name="store_id")
    if known is None and not store.read_only:
        with store.db.transaction("naming the store for DuckLake"):
            known = store.db.scalar("store_info_value", name="store_id")
            if known is None:
                known = f"store:{uuid.uuid4()}"
                store.db.run("set_store_info", name="store_id", value=known)
    return known


def _refuse_data_folder(store: Any, data_path: Path) -> None:
    """The data folder, and the folders DuckLake writes into below it, are real folders (or do not exist yet) and
    none of the store's own files: a symlink there would send the lake's files (and its clean-up) elsewhere."""
    table = data_path / "main" / "team_memories"
    for folder in (data_path, data_path / "main", table):
        refuse_store_file(store, folder, "publish DuckLake data files to")
        if folder.is_symlink():
            raise PermissionDenied(f"cannot publish DuckLake data files to {data_path}: {folder} is a symlink")
        if folder.exists() and not folder.is_dir():
            raise InvalidInput(f"data_path: {folder} exists and is not a folder")


def _refuse_foreign_catalog(catalog_path: Path) -> None:
    """An existing catalog file must be a DuckLake catalog: attaching DuckLake to another DuckDB file (another
    echo_duck store, say) would add its ducklake_* tables, and the published rows, to that file."""
    catalog = catalog_path.expanduser()
    if not catalog.is_file():
        return
    try:
        con = duckdb.connect(str(catalog), read_only=True)
    except duckdb.Error as e:
        if "lock" in str(e).lower():
            raise DatabaseLocked(f"the DuckLake catalog {catalog} is held by another process: {e}") from e
        raise InvalidInput(f"catalog_path: {catalog} is not a DuckLake catalog (not a DuckDB file: {e})") from e
    try:
        tables = {name for (name,) in con.execute(sqlfiles.query("catalog_table_names").sql).fetchall()}
    finally:
        con.close()
    if tables and "ducklake_metadata" not in tables:
        raise PermissionDenied(f"cannot publish a DuckLake catalog to {catalog}: it is a DuckDB file of other tables "
                               f"({', '.join(sorted(tables)[:5])}…), not a DuckLake catalog")


def read_team_memories(catalog_path: str | Path, team_id: str) -> pl.DataFrame:
    """A team's published memories, read through a read-only attach of the catalog."""
    team = validate.identifier(team_id, "team_id", group=True)
    lake = _lake(validate.path(catalog_path, "catalog_path"), None)
    try:
        with lake.reading():
            return lake.run("read_team_memories", team_id=team).pl()
    finally:
        lake.close()


def _lake(catalog_path: str | Path, data_path: str | Path | None) -> Db:
    catalog_file = Path(catalog_path).expanduser().resolve()
    if data_path is None and not catalog_file.is_file():
        raise MemoryNotFound(f"no DuckLake catalog at {catalog_file}; publish to it first")
    path = extension_path("ducklake")
    # Offline like every echo_duck connection: nothing may be installed or autoloaded from the network.
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        with translate_errors(f"attaching the DuckLake catalog {catalog_file}"):
            # LOAD and ATTACH take no bound parameters: the paths are quoted literals.
            con.execute(f"LOAD {quote_literal(str(path))}")
            catalog = quote_literal(f"ducklake:{catalog_file}")
            if data_path is None:
                attach = sqlfiles.query("attach_team_lake_read_only").sql.replace("{catalog}", catalog)
            else:
                data = quote_literal(str(Path(data_path).expanduser().resolve()) + "/")
                attach = sqlfiles.query("attach_team_lake").sql.replace("{catalog}", catalog).replace("{data_path}", data)
            try:
                con.execute(attach)
            except duckdb.IOException as e:
                if "lock" in str(e).lower():
                    raise DatabaseLocked(f"the DuckLake catalog {catalog_file} is held by another process "
                                         f"(one publisher, or any number of readers, at a time): {e}") from e
                raise
    except BaseException:
        con.close()
        raise
    return Db(con, read_only=data_path is None)
