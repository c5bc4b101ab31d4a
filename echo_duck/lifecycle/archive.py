"""Cold archive (SPEC L2): archived and superseded rows past retention go to Hive-partitioned Parquet
next to the database (``<stem>_archive/agent_id=…/year=…/``, archive_dir), then leave the live table.

DuckDB cannot roll back a file it wrote, so an export is a small state machine recorded in
``archive_exports`` (staged → moved → done), each step committed before the next:
  1. the rows' ids are recorded (staged); the Parquet files are written to ``_staging/<export id>/``
     and read back: same ids, same count, or the export is abandoned;
  2. the files are moved into the archive (moved);
  3. the rows, their vectors and postings leave the live tables, with an event each (done).
A crash at any point is finished or undone by ``recover`` on the next writable open: a staged
export's files are deleted (its rows are still live), a moved export's rows are deleted. The
``memories_all`` view prefers the live row while both exist, so no row is ever seen twice or lost.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import pyarrow as pa

from ..storage import catalog, sqlfiles
from ..storage.db import Db
from ..storage.extensions import quote_literal
from ..write.writer import Caller

_STAGE = "echo_duck_archive_stage"
VIEW_STAMP = "memories_all_definition"  # store_info: sha256 of what memories_all was last built from
LEGACY_FOLDER = "legacy_archive_folder"  # store_info: the <stem>_archive folder a store not named *.duckdb read
# pyarrow.compute, .dataset and .parquet (~0.2 s to import) load in the functions that write or read Parquet, not
# when a store is opened.


def _partitioning():
    import pyarrow.dataset as ds

    return ds.partitioning(pa.schema([("agent_id", pa.string()), ("year", pa.int32())]), flavor="hive")


@dataclass(frozen=True)
class ArchiveReport:
    exported: int
    files: tuple[str, ...] = ()
    recovered: tuple[str, ...] = field(default=())  # what recover() finished or undid first
    compacted_partitions: int = 0

    def to_dict(self) -> dict:
        return {"exported": self.exported, "files": list(self.files), "recovered": list(self.recovered),
                "compacted_partitions": self.compacted_partitions}


def archive_dir(db_path: str) -> Path | None:
    """The store's Parquet folder beside it: ``<stem>_archive`` for ``x.duckdb``, else ``<name>.archive``. Named by the
    stem alone, ``team.db``, ``team.bak`` and ``team`` shared ``team.duckdb``'s folder and read each other's archived
    rows (reviewer AH, session 56); ``legacy_folder`` finds the folder such a store used before."""
    if db_path == ":memory:":
        return None
    path = Path(db_path).expanduser().resolve()
    return path.with_name(f"{path.stem}_archive" if path.suffix == ".duckdb" else f"{path.name}.archive")


def legacy_folder(db: Db, root: Path | None, store: str | Path | None = None) -> Path | None:
    """The ``<stem>_archive`` folder a store not named ``*.duckdb`` kept its archive in before its own name
    (archive_dir), while that folder exists and ``root`` does not: found when the file's ``memories_all`` names files
    there (recorded in store_info, as the view is then rebuilt over ``root``). Never moved here: the folder may be
    another store's too (``team.duckdb``'s, a copy's), so a person moves it (the open's warning and doctor say how)."""
    store = Path(store or db.path or ":memory:")
    if root is None or root.exists() or store.suffix == ".duckdb" or not store.is_file():
        return None
    legacy = store.with_name(f"{store.stem}_archive")
    if not legacy.is_dir():
        return None
    with db.reading():
        recorded, view = db.scalar("store_info_value", name=LEGACY_FOLDER), db.scalar("memories_all_definition")
    if recorded == str(legacy):
        return legacy
    if not (view and quote_literal(f"{legacy}{os.sep}")[1:-1] in view):
        return None
    if not db.read_only:
        with db.transaction("recording the old archive folder"):
            db.run("set_store_info", name=LEGACY_FOLDER, value=str(legacy))
    return legacy


def export(db: Db, caller: Caller, root: Path, now: datetime, older_than_days: float) -> ArchiveReport:
    recovered = recover(db, root, now)
    cutoff = now - timedelta(days=older_than_days)
    with db.reading():
        batch = db.arrow("archive_candidates", cutoff=cutoff)
    if batch.num_rows == 0:
        refresh_view(db, root)
        return ArchiveReport(0, recovered=recovered)
    export_id = uuid.uuid4()
    ids = pa.table({"memory_id": batch.column("id").cast(pa.string())})
    with db.transaction("recording an archive export"):
        db.run("insert_archive_export", id=export_id, now=now, rows=batch.num_rows)
        _with_stage(db, ids, "insert_archive_export_rows", id=export_id)

    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    staging = root / "_staging" / str(export_id)
    partitioning = _partitioning()
    table = batch.append_column("year", pc.year(batch.column("created_at")).cast(pa.int32()))
    ds.write_dataset(table, staging, format="parquet", partitioning=partitioning,
                     basename_template=f"part-{export_id}-{{i}}.parquet", existing_data_behavior="error")
    written = ds.dataset(staging, format="parquet", partitioning=partitioning).to_table(columns=["id"])
    expected = pc.unique(batch.column("id").cast(pa.string()))
    if written.num_rows != batch.num_rows or not pc.all(pc.is_in(expected, value_set=written.column("id").cast(pa.string()))).as_py():
        _abandon(db, root, export_id)
        raise OSError(f"archive export {export_id}: the Parquet files read back {written.num_rows} rows, "
                      f"expected {batch.num_rows}; nothing was removed from the live table")

    files = []
    for source in sorted(staging.rglob("*.parquet")):
        target = root / source.relative_to(staging)
        target.parent.mkdir(parents=True, exist_ok=True)
        source.replace(target)  # same filesystem: an atomic rename per file
        files.append(str(target.relative_to(root)))
    shutil.rmtree(staging, ignore_errors=True)
    with db.transaction("archive export moved"):
        db.run("mark_archive_export_moved", id=export_id, files=files)
    _finish(db, caller, export_id, now)
    refresh_view(db, root)
    return ArchiveReport(batch.num_rows, tuple(files), recovered)


def recover(db: Db, root: Path | None, now: datetime) -> tuple[str, ...]:
    """Finish (moved) or undo (staged) exports a crash interrupted."""
    if root is None:
        return ()
    with db.reading():
        pending = db.dicts("unfinished_archive_exports")
    done = []
    for row in pending:
        if row["status"] == "staged":
            _abandon(db, root, row["id"])
            done.append(f"abandoned staged export {row['id']}")
        else:
            _finish(db, Caller(agent_id="echo_duck", actor="archive-recovery"), row["id"], now)
            done.append(f"finished moved export {row['id']}")
    return tuple(done)


def refresh_view(db: Db, root: Path | None, *, read_only: bool = False) -> tuple[Path, ...]:
    """(Re)create memories_all: live rows, plus the archive's Parquet files once there are any.
    Returns the archive files it left out because they are not readable archive Parquet (damage):
    they are reported (warning, doctor), never read, so a stray file cannot stop the store opening.

    The archive's file list is a literal in the view (DDL cannot bind parameters), so a copied or moved
    store points at its own archive once the view is rebuilt. The view is rebuilt when its definition (that
    list included), the schema or the installed macros and views changed since it was last built (a stamp in
    store_info), or when it is missing; otherwise a writable open leaves it as it is (no write transaction).
    ``read_only``: a read-only open cannot rebuild it; when it is stale (a store moved or copied with its folder
    names the old folder's files, which the instance may not read, or reads another store's archive), a TEMP view
    of the same name over this store's archive shadows it on this connection (and on the cursors sql() reads
    through: ``db.session_sql``). Plain DuckDB reads the file's own view: the files of its last writable open.
    """
    definition, stamp, bad = _view_definition(root)
    if bad:
        warnings.warn(f"echo_duck: {len(bad)} file(s) in the archive folder are not readable archive Parquet and "
                      f"were skipped, first {bad[0]}; move them out of {root} (echo-duck doctor lists them)",
                      RuntimeWarning, stacklevel=3)
    if view_is_current(db, stamp):
        return tuple(bad)
    if read_only:
        temporary = definition.split("COMMENT ON VIEW")[0].replace("CREATE OR REPLACE VIEW memories_all",
                                                                   "CREATE OR REPLACE TEMP VIEW memories_all", 1)
        with db.lock:
            db.con.execute(temporary)
            db.session_sql.append(temporary)
        return tuple(bad)
    with db.lock:
        catalog.refuse_squatted(db.con)
    with db.transaction("refreshing memories_all"):
        db.con.execute(definition)
        db.run("set_store_info", name=VIEW_STAMP, value=stamp)
    return tuple(bad)


def _view_definition(root: Path | None) -> tuple[str, str, list[Path]]:
    """memories_all's definition over ``root``'s readable files, its stamp, and the damaged files left out."""
    good, bad = archive_files(root) if root is not None else ([], [])
    if good:
        files = "[" + ", ".join(quote_literal(str(p)) for p in good) + "]"
        definition = sqlfiles.query("create_memories_all_with_archive").sql.replace("{archive_glob}", files)
    else:
        definition = sqlfiles.query("create_memories_all_live_only").sql
    stamp = hashlib.sha256("\0".join([definition, sqlfiles.objects_checksum(),
                                       str(sqlfiles.migrations()[-1].version)]).encode()).hexdigest()
    return definition, stamp, bad


def view_is_current(db: Db, stamp: str | None = None, root: Path | None = None) -> bool:
    """Was memories_all, as the file holds it, built over ``root``'s archive files as they are now (or to
    ``stamp``)? Not after the store was moved or copied with its folder, until a writable open."""
    if stamp is None:
        stamp = _view_definition(root)[1]
    with db.reading():
        return db.scalar("store_info_value", name=VIEW_STAMP) == stamp and bool(db.scalar("memories_all_exists"))


def archive_files(root: Path | None) -> tuple[list[Path], list[Path]]:
    """(readable archive Parquet files, damaged ones): a file counts as readable when its footer
    parses and it has the id, content and updated_at columns of an archived memory (agent_id and year
    are the partition folders). The archive never writes an agent_id column into its files; a file that
    holds one (an export dropped into the folder) counts only if every row names the folder's agent:
    the folder would otherwise credit another agent's rows to the folder's agent."""
    if root is None or not root.exists():
        return [], []
    import pyarrow.parquet as pq

    good, bad = [], []
    for path in sorted(root.glob("agent_id=*/year=*/*.parquet")):
        try:
            names = set(pq.read_schema(path).names)
            if "agent_id" in names and not _owned_by_folder(pq.read_table(path, columns=["agent_id"]), path):
                names = set()
        except (OSError, ValueError):  # pyarrow raises ArrowInvalid (a ValueError) or OSError
            names = set()
        (good if {"id", "content", "updated_at"} <= names else bad).append(path)
    return good, bad


def _owned_by_folder(table: pa.Table, path: Path) -> bool:
    """Does every row's own agent_id name the agent of the file's agent_id=… folder?"""
    from urllib.parse import unquote

    folder = unquote(path.parent.parent.name.partition("=")[2])
    return set(table.column("agent_id").cast(pa.string()).to_pylist()) <= {folder}


def compact(db: Db, root: Path | None) -> int:
    """Merge the small files each export adds into one file per partition; returns partitions merged.

    The merged file is written and counted before the old ones are deleted; a crash in between
    leaves duplicates that memories_all already removes (one row per id)."""
    if root is None or not root.exists():
        return 0
    merged = 0
    readable = set(archive_files(root)[0])
    for partition in sorted(p for p in root.glob("agent_id=*/year=*") if p.is_dir()):
        parts = sorted(p for p in partition.glob("*.parquet") if p in readable)
        if len(parts) < 2:
            continue
        import pyarrow.dataset as ds

        table = ds.dataset(parts, format="parquet").to_table()
        write_parquet_atomically(table, partition / f"part-compact-{uuid.uuid4()}.parquet")
        for part in parts:
            part.unlink()
        merged += 1
    refresh_view(db, root)
    return merged


def write_parquet_atomically(table: pa.Table, target: Path) -> Path:
    """Write under a name no reader globs (*.parquet.tmp), check the row count, then rename: a crash
    mid-write leaves a stray .tmp file, never a truncated .parquet that would break memories_all."""
    import pyarrow.parquet as pq

    partial = target.with_name(target.name + ".tmp")
    pq.write_table(table, partial)
    if pq.read_metadata(partial).num_rows != table.num_rows:
        partial.unlink()
        raise OSError(f"writing {target}: the file read back the wrong row count; nothing replaced")
    partial.replace(target)
    return target


def _finish(db: Db, caller: Caller, export_id, now: datetime) -> None:
    with db.transaction("removing exported rows"):
        db.run("log_archive_export_events", id=export_id, now=now, actor=caller.who)
        db.run("mark_exported_keyword_docs_dead", id=export_id)
        db.run("delete_exported_keyword_docs", id=export_id)
        db.run("delete_exported_vectors", id=export_id)
        db.run("delete_exported_memories", id=export_id)
        db.run("mark_archive_export_done", id=export_id, now=now)


def _abandon(db: Db, root: Path, export_id) -> None:
    shutil.rmtree(root / "_staging" / str(export_id), ignore_errors=True)
    for stray in root.glob(f"agent_id=*/year=*/part-{export_id}-*.parquet"):
        stray.unlink()
    with db.transaction("abandoning an archive export"):
        db.run("mark_archive_export_abandoned", id=export_id)


def _with_stage(db: Db, table: pa.Table, query: str, **params) -> None:
    db.con.register(_STAGE, table)
    try:
        db.run(query, **params)
    finally:
        db.con.unregister(_STAGE)
