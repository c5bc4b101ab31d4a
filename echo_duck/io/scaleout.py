"""Scale-out (SPEC "Scale-out"): a shared team memory on DuckLake.

Each agent keeps its own store file; ``publish_to_ducklake`` copies the live team-scoped memories
of one team from a store into a DuckLake catalog (a small DuckDB file) whose data are Parquet files
under ``data_path``; ``read_team_memories`` reads them back from any process. The ducklake extension
is LOADed from the ``duckdb-extension-ducklake`` wheel, offline, like vss and fts.

With a local DuckDB-file catalog, DuckDB's file lock applies: one process publishes at a time, and
readers (read-only, any number of processes) attach when no publisher holds the catalog. Writers on
several machines need a PostgreSQL catalog (``ducklake:postgres:…``), which echo_duck does not ship.

The lake keeps no history, and no trace of what a publish retracted (a memory forgotten, purged or made
sensitive since): DuckLake's time travel, its old Parquet files, its table statistics (min/max of each column, which
only ever widen) and the catalog file's freed blocks would each keep it. So a publish writes the lake's table anew
(the rows it keeps of other publishers, and its own), expires every earlier snapshot, deletes the files nothing
refers to, and rewrites the catalog into a fresh file. What a publish retracts for its team: every row whose id the
store ever held (its event log names every id it made, purged and archived ones too; the rows published under its
old path or from a copy of it as well), unless it publishes that id again; which path or label published a row
(``source``) does not count, so stores at one path in two containers leave each other's rows alone. The catalog must be a DuckLake catalog
(or not exist yet) whose paths are all relative and inside the data folder; the data folder holds no symlink, and
neither it nor the folders DuckLake writes below it are the store's own files.
"""

from __future__ import annotations

import os
import re
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
_HELD = "echo_duck_publish_held"  # every id the store ever held


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
    agent may see; one DuckLake transaction replaces, for that team, every row under an id the store ever
    held (``source``, default the store path, only labels the rows). An admin operation (the lake has no
    per-reader rights); sensitive and unshared personal memories are never published."""
    if not getattr(store, "is_admin", False):
        raise PermissionDenied("publish_to_ducklake writes a catalog any reader of the lake sees: it needs an admin "
                               "handle (echo_duck.open(path, admin=True))")
    catalog_path, data_path = validate.path(catalog_path, "catalog_path"), validate.path(data_path, "data_path")
    refuse_store_file(store, catalog_path, "publish a DuckLake catalog to")  # never over the store's own files
    _refuse_data_folder(store, data_path)
    _refuse_foreign_catalog(catalog_path)
    team = validate.identifier(team_id or store.caller.team_id or "", "team_id", group=True)
    source = validate.text(source or str(Path(store.path).expanduser().resolve()), "source", max_chars=1000)
    with store.db.reading():
        rows = store.db.run("team_memories_to_publish", team_id=team, caller_agent=store.caller.agent_id,
                            caller_session=store.caller.session_id).to_arrow_table()
        held = store.db.run("memory_ids_ever_held").to_arrow_table()
    lake = _lake(catalog_path, data_path)
    try:
        _refuse_paths_outside(lake, catalog_path)
        lake.con.register(_STAGE, rows)
        lake.con.register(_HELD, held)
        lake.run("create_team_memories")
        lake.run("keep_team_memories", team_id=team)  # another publisher's rows, another team's
        with lake.transaction("publishing team memories to DuckLake"):
            for step in ("drop_team_memories", "create_team_memories", "refill_team_memories"):
                lake.run(step)  # a fresh table: no statistics of rows gone
            lake.run("insert_team_memories", source=source, now=store.now())
        older = [int(v) for (v,) in lake.run("team_lake_older_snapshots").fetchall()]
        if older:
            lake.run("expire_team_lake_snapshots", versions=older)
        _clean_up(lake, data_path)
        snapshot = lake.scalar("team_lake_snapshot")
        _rewrite_catalog(lake, catalog_path)
    finally:
        lake.close()
    return PublishReport(team, rows.num_rows, int(snapshot))


def _rewrite_catalog(lake: Db, catalog_path: Path) -> None:
    """Copy the catalog into a fresh file and put it in the old one's place: DuckDB does not overwrite freed blocks,
    so the old file still held the rows' statistics a publish dropped (FACTS.md). The copy is made through the lake's
    own attach of the catalog, so its lock is held until the fresh file has taken the old one's name: no reader or
    publisher comes in between (which is also why a copy an earlier publish left, crashing before its replace, can
    be deleted here)."""
    catalog = catalog_path.expanduser().resolve()
    left = re.compile(re.escape(catalog.name) + r"\.[0-9a-f]{32}\.rewrite(?:\.wal)?")
    for stale in catalog.parent.iterdir():  # an earlier publish's copy, left by a crash before its replace
        if left.fullmatch(stale.name):
            stale.unlink(missing_ok=True)
    fresh = catalog.with_name(f"{catalog.name}.{uuid.uuid4().hex}.rewrite")
    with translate_errors(f"rewriting the DuckLake catalog {catalog}"):
        lake.con.execute(f"ATTACH {quote_literal(str(fresh))} AS echo_duck_fresh_catalog")
        try:
            lake.con.execute(sqlfiles.query("copy_team_lake_catalog").sql)
        finally:
            lake.con.execute("DETACH echo_duck_fresh_catalog")
    Path(f"{fresh}.wal").unlink(missing_ok=True)
    os.replace(fresh, catalog)


_LAKE_FILE = re.compile(r"main/team_memories/ducklake-[0-9a-f-]+(?:-delete)?\.parquet")


def _clean_up(lake: Db, data_path: Path) -> None:
    """Delete the files DuckLake scheduled for deletion (those of the expired snapshots) ourselves, not with
    ducklake_cleanup_old_files: the catalog is shared, so a path in it may be another publisher's doing. Only a file
    named as DuckLake names the table's files is deleted, reached folder by folder without following a symlink (one
    planted after the checks, say); every scheduled row is then dropped."""
    due = lake.con.execute(sqlfiles.query("team_lake_files_due").sql).fetchall()
    for _, path, relative in due:
        if relative and _LAKE_FILE.fullmatch(path):
            _unlink_below(data_path.expanduser().resolve(), path.split("/"))
    if due:
        lake.run("forget_team_lake_files_due", ids=[int(file_id) for file_id, _, _ in due])


def _unlink_below(root: Path, parts: list[str]) -> None:
    """Remove root/parts[0]/…/parts[-1], opening each folder with O_NOFOLLOW (a symlinked folder is not entered)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            try:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:  # gone, a file, or a symlink: nothing of the lake's to delete there
                return
            os.close(fd)
            fd = inner
        try:
            os.unlink(parts[-1], dir_fd=fd)  # a symlink itself is removed, never what it points to
        except FileNotFoundError:
            pass
    finally:
        os.close(fd)


def _refuse_paths_outside(lake: Db, catalog_path: Path) -> None:
    """Every path the catalog records (schemas, tables, data and delete files, files due for deletion) is relative to
    its data folder and climbs no '..': one that is not would have the publish write, or its clean-up delete, files
    elsewhere (the store's archive folder, say)."""
    outside = lake.con.execute(sqlfiles.query("team_lake_paths_outside").sql).fetchall()
    if outside:
        raise PermissionDenied(f"cannot publish to the DuckLake catalog {catalog_path}: it names paths outside its "
                               f"data folder ({', '.join(str(p) for (p,) in outside[:3])})")


def _refuse_data_folder(store: Any, data_path: Path) -> None:
    """The data folder, and the folders DuckLake writes into below it, are real folders (or do not exist yet) and
    none of the store's own files: a symlink there would send the lake's files (and its clean-up) elsewhere."""
    table = data_path / "main" / "team_memories"
    root = os.path.realpath(data_path.expanduser())
    for own in (store.path, f"{store.path}.wal", getattr(store, "archive_dir", None)):
        if own and own != ":memory:" and os.path.realpath(own).startswith(root.rstrip(os.sep) + os.sep):
            raise PermissionDenied(f"cannot publish DuckLake data files to {data_path}: it holds the store's own files "
                                   f"({own}); give the lake a folder of its own")
    for folder in (data_path, data_path / "main", table):
        refuse_store_file(store, folder, "publish DuckLake data files to")
        if folder.is_symlink():
            raise PermissionDenied(f"cannot publish DuckLake data files to {data_path}: {folder} is a symlink")
        if folder.exists() and not folder.is_dir():
            raise InvalidInput(f"data_path: {folder} exists and is not a folder")
    for parent, folders, files in os.walk(data_path):  # the catalog names files below it, which clean-up deletes
        for name in [*folders, *files]:
            if os.path.islink(os.path.join(parent, name)):
                raise PermissionDenied(f"cannot publish DuckLake data files to {data_path}: "
                                       f"{os.path.join(parent, name)} is a symlink")


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
    others = sorted(t for t in tables if not t.startswith("ducklake_"))
    if others or (tables and "ducklake_metadata" not in tables):
        raise PermissionDenied(f"cannot publish a DuckLake catalog to {catalog}: it is a DuckDB file of other tables "
                               f"({', '.join((others or sorted(tables))[:5])}…), not a DuckLake catalog")


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
