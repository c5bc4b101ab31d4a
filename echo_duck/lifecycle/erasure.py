"""Erasure that leaves no byte (SPEC T5): after a purge, rewrite every file that may still hold the text.

DuckDB does not overwrite freed blocks: after a DELETE and a checkpoint the deleted text is still in
the ``.duckdb`` file. So a purge (privacy.py) records its ids in ``pending_purges`` in the same
transaction that deletes the rows, and ``finish_pending`` then:

1. rewrites each Parquet archive partition that holds a purged row without it (written under a
   temporary name, counted, renamed over; idempotent);
2. copies the whole database into a fresh file next to it (a private DuckDB instance attaches the
   store READ_ONLY and runs ``COPY FROM DATABASE``), deletes the ``pending_purges`` rows in the copy,
   checkpoints and closes it, fsyncs it, and renames it over the store (fsync of the folder too);
3. reconnects the handle to the new file.

A kill at any point leaves either the old file, whose ``pending_purges`` rows make the next writable
open (``resume``) do it all again, or the new file, which holds neither the text nor the marker. A
leftover ``<store>.purge-rewrite-<pid>`` file from a killed rewrite is deleted first (not one a running process
is writing). Between closing the
old file and reopening the new one the store is briefly not held: another process that opens it in
that instant wins, and this handle then raises ``DatabaseLocked`` on its next use.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import os
import time
import uuid
import weakref
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from ..errors import DatabaseLocked, EchoDuckError, StorageError
from ..storage.db import Db
from ..storage.extensions import load_extensions, quote_literal
from . import archive

REWRITE_SUFFIX = ".purge-rewrite"


def pending(db: Db) -> list[str]:
    with db.reading():
        return [r[0] for r in db.run("pending_purge_ids").fetchall()]


# An agent's purges may hold the store for the file rewrite at most this share of the time: a rewrite takes 3-6 s at
# 10k memories and 12-20 s at 100k, and an agent looping remember + purge held the store most of the time.
AGENT_REWRITE_SHARE = 0.1
_AGENT_REWRITE_AFTER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Db -> time.monotonic()


def after_purge(db: Db, archive_root: Path | None, report: Any, *, by_host: bool) -> Any:
    """Finish the purge just recorded (finish_pending) and return its report. The host's purge is finished at once;
    an agent's too, unless the last rewrite it could run ended so recently that another now would hold the store
    more than AGENT_REWRITE_SHARE of the time since: then the report says ``rewrite_pending`` and the text, gone
    from every read already, stays in freed blocks of the file until the next purge that may rewrite, the host's
    gc(), the store's close or its next writable open."""
    if not by_host and time.monotonic() < _AGENT_REWRITE_AFTER.get(db, 0.0):
        return dataclasses.replace(report, rewrite_pending=True)
    start = time.monotonic()
    finish_pending(db, archive_root)
    took = time.monotonic() - start
    _AGENT_REWRITE_AFTER[db] = time.monotonic() + took * (1 / AGENT_REWRITE_SHARE - 1)
    return report


def finish_deferred(db: Db, archive_root: Path | None) -> None:
    """At a writable store's close: the rewrites agents' purges left pending (after_purge). One a process or
    the lock stops stays pending for the next writable open."""
    if db.read_only or db.closed:
        return
    with contextlib.suppress(EchoDuckError):
        finish_pending(db, archive_root)


def finish_pending(db: Db, archive_root: Path | None) -> int:
    """Rewrite the archive and the store file if purges are pending; how many archive files were rewritten."""
    with db.lock:  # as returning.finish: no archive() in between; the view refreshed whatever happens
        ids = pending(db)
        if not ids:
            return 0
        try:
            rewritten = rewrite_archive(archive_root, set(ids))
        finally:
            archive.refresh_view(db, archive_root)
        if db.path is not None:
            rewrite_store(db)
        else:  # an in-memory store has no file to rewrite
            with db.transaction("finishing purges"):
                db.run("clear_pending_purges")
        return rewritten


def rewrite_archive(root: Path | None, ids: set[str], below: dict[str, int] | None = None) -> int:
    """Rewrite each archive file that holds a purged row without it (written and counted first); with ``below``, only
    the copies of an id whose row_version is below the one given (returning.py: a copy exported again since stays)."""
    if root is None or not ids or not root.exists():
        return 0
    import pyarrow.parquet as pq  # not at import: opening a store never needs it

    good, _ = archive.archive_files(root)
    rewritten = 0
    for path in good:
        table = pq.read_table(path)
        found = table.column("id").cast(pa.string()).to_pylist()
        versions = (table.column("row_version").to_pylist() if below is not None and "row_version" in table.column_names
                    else [None] * len(found))
        keep = pa.array([i not in ids or (below is not None and v is not None and below.get(i) is not None
                                          and v >= below[i]) for i, v in zip(found, versions)])
        if keep.true_count == table.num_rows:
            continue
        kept = table.filter(keep)
        if kept.num_rows:
            archive.write_parquet_atomically(kept, path.with_name(f"part-purged-{uuid.uuid4()}.parquet"))
        path.unlink()
        rewritten += 1
    _fsync_dir(root)
    return rewritten


def rewrite_store(db: Db) -> None:
    """Copy the database into a fresh file and swap it in (see the module docstring)."""
    target = Path(db.path)
    fresh = target.with_name(f"{target.name}{REWRITE_SUFFIX}-{os.getpid()}")  # this process's: see discard_leftovers
    with db.lock:
        db.catch_up()  # queued recall bookkeeping goes into the old file first, so the copy has it
        db.con.execute("CHECKPOINT")
        db.detach()
        try:
            _remove(fresh)
            before = _stamp(target)
            _copy(target, fresh, db.row_group_size)
            _fsync(fresh)
            if Path(str(target) + ".wal").exists():
                raise StorageError(f"{target}.wal still exists after a checkpoint and close; the purge rewrite stops "
                                   "here (the purge stays pending and is retried on the next open)")
            # another process may have opened the store while this handle let go: it holds it now, or it wrote and
            # closed (the file changed), and either way the copy would replace what it wrote
            _not_taken(target)
            if _stamp(target) != before:
                raise DatabaseLocked(f"another process wrote to {target} while a purge rewrote it; the purge stays "
                                     "pending and is retried on the next writable open")
            os.replace(fresh, target)
            _fsync_dir(target.parent)
        except OSError as e:
            raise StorageError(f"rewriting {target} after a purge failed ({e}); the purge stays pending and is "
                               "retried on the next writable open") from e
        finally:
            _remove(fresh)
            db.reattach()


def discard_leftovers(path: str | None) -> None:
    """A rewrite killed before its rename leaves its half-written copy (``<store>.purge-rewrite-<pid>``): garbage,
    unless the process that writes it is still running (another process's open in the instant a rewrite leaves
    the store unheld deleted the copy under it)."""
    if path is None:
        return
    target = Path(path)
    for leftover in target.parent.glob(f"{glob.escape(target.name)}{REWRITE_SUFFIX}*"):
        if leftover.name.endswith(".wal"):
            continue  # removed with its copy
        pid = leftover.name[len(target.name) + len(REWRITE_SUFFIX):].lstrip("-")
        if not (pid.isdigit() and int(pid) != os.getpid() and _running(int(pid))):
            _remove(leftover)


def _stamp(path: Path) -> tuple[int, int, int]:
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # running, as another user
    return True


def _not_taken(target: Path) -> None:
    """Raise DatabaseLocked if another process holds ``target`` (it opened the store while this handle had let go)."""
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        con.execute(f"ATTACH {quote_literal(str(target))} AS probe (READ_ONLY)")
    except duckdb.IOException as e:
        raise DatabaseLocked(f"another process opened {target} while a purge rewrote it; the purge stays pending "
                             "and is retried on the next writable open") from e
    finally:
        con.close()


def _copy(source: Path, fresh: Path, row_group_size: int) -> None:
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        load_extensions(con)  # objects of the fts extension (an analyst's fts index) copy only with it loaded
        con.execute(f"ATTACH {quote_literal(str(source))} AS old_store (READ_ONLY)")
        con.execute(f"ATTACH {quote_literal(str(fresh))} AS fresh_store (ROW_GROUP_SIZE {int(row_group_size)})")
        con.execute("COPY FROM DATABASE old_store TO fresh_store")
        con.execute("DELETE FROM fresh_store.main.pending_purges")
        con.execute("CHECKPOINT fresh_store")
        con.execute("DETACH old_store")
        con.execute("DETACH fresh_store")
    except duckdb.Error as e:
        raise StorageError(f"rewriting {source} after a purge failed ({e}); the purge stays pending and is "
                           "retried on the next writable open") from e
    finally:
        con.close()
    if Path(str(fresh) + ".wal").exists():
        raise StorageError(f"the rewritten copy {fresh} kept a WAL file; the purge stays pending")


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems cannot fsync a directory
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    for p in (path, Path(str(path) + ".wal")):
        p.unlink(missing_ok=True)
