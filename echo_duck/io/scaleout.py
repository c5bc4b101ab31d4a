"""Scale-out (SPEC "Scale-out"): a shared team memory on DuckLake.

Each agent keeps its own store file; ``publish_to_ducklake`` copies the live team-scoped memories
of one team from a store into a DuckLake catalog (a small DuckDB file) whose data are Parquet files
under ``data_path``; ``read_team_memories`` reads them back from any process. The ducklake extension
is LOADed from the ``duckdb-extension-ducklake`` wheel, offline, like vss and fts.

With a local DuckDB-file catalog, DuckDB's file lock applies: one process publishes at a time, and
readers (read-only, any number of processes) attach when no publisher holds the catalog. Writers on
several machines need a PostgreSQL catalog (``ducklake:postgres:…``), which echo_duck does not ship.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from ..errors import DatabaseLocked, MemoryNotFound, PermissionDenied
from ..storage import sqlfiles
from ..storage.connection import translate_errors
from ..storage.db import Db
from ..storage.extensions import extension_path, quote_literal
from ..write import validate
from .store_files import refuse_store_file

_STAGE = "echo_duck_publish_stage"


@dataclass(frozen=True)
class PublishReport:
    team_id: str
    published: int
    snapshot_id: int  # the DuckLake snapshot this publish created

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
    refuse_store_file(store, catalog_path, "publish a DuckLake catalog to")  # never over the store's own files
    refuse_store_file(store, data_path, "publish DuckLake data files to")
    team = validate.identifier(team_id or store.caller.team_id or "", "team_id", group=True)
    source = validate.text(source or str(Path(store.path).expanduser().resolve()), "source", max_chars=1000)
    with store.db.reading():
        rows = store.db.run("team_memories_to_publish", team_id=team, caller_agent=store.caller.agent_id,
                            caller_session=store.caller.session_id).to_arrow_table()
    lake = _lake(catalog_path, data_path)
    try:
        lake.run("create_team_memories")
        lake.con.register(_STAGE, rows)
        with lake.transaction("publishing team memories to DuckLake"):
            lake.run("retract_team_memories", team_id=team, source=source)
            lake.run("insert_team_memories", source=source, now=store.now())
        snapshot = lake.scalar("team_lake_snapshot")
    finally:
        lake.close()
    return PublishReport(team, rows.num_rows, int(snapshot))


def read_team_memories(catalog_path: str | Path, team_id: str) -> pl.DataFrame:
    """A team's published memories, read through a read-only attach of the catalog."""
    team = validate.identifier(team_id, "team_id", group=True)
    lake = _lake(catalog_path, None)
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
