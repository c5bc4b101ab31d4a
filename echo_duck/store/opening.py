"""What a writable open does after the schema is current, in order.

1. Delete a half-written copy left by a purge rewrite that was killed before its rename (erasure.py); warn when a
   store not named *.duckdb has its archive in the folder every store of its stem used before (archive.legacy_folder).
2. Finish or undo an archive export a crash interrupted (archive.recover).
3. Rebuild ``memories_all`` over the readable archive files; a damaged file is skipped and reported.
4. Rebuild the BM25 postings if their signature moved on (segmenter, stop words, hash(), index text).
   A new file is now an empty store like any other: the process keeps it as the template its later new
   files start from (storage/template.py).
5. Record the embedding model, so stale_vectors is right at once.
6. Finish purges whose file rewrite was still due (pending_purges): archive files, then the store file.
7. Run the contradiction checks a crash between a write and its check left owed (pending_checks).

Also what every handle of one open store shares (``SharedState``, ``SHARED_STATE``) and its clock.
"""

from __future__ import annotations

import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from ..index.indexing import Indexer
from ..lifecycle import archive, erasure, returning
from ..storage.db import Db
from ..storage.template import keep_template
from ..write import validate


def open_writable(db: Db, indexer: Indexer, archive_dir: Path | None, now: datetime, new_file: bool = False,
                  checker: Any = None) -> tuple[Path, ...]:
    """Run the steps above; returns the damaged archive files that were skipped. ``new_file``: this open
    created the file (its schema statement by statement)."""
    erasure.discard_leftovers(db.path)
    _warn_legacy_folder(db, archive_dir)
    archive.recover(db, archive_dir, now)
    damaged = archive.refresh_view(db, archive_dir)
    returning.finish(db, archive_dir)  # a restore from the archive a crash interrupted
    indexer.keyword.ensure_ready()
    if new_file and db.path is not None and (archive_dir is None or not archive_dir.exists()):
        with db.lock:  # no archive: its view reads no file, so every new file may start from this one
            keep_template(db.con, db.path)
    _ = indexer.vectors  # records the store's current model
    erasure.finish_pending(db, archive_dir)
    if checker is not None:
        checker.settle_owed()
    return damaged


def open_read_only(db: Db, archive_dir: Path | None) -> tuple[Path, ...]:
    """A read-only open writes nothing: a stale ``memories_all`` (a store moved with its archive folder) is shadowed
    by a TEMP view over this store's archive files (archive.refresh_view). Returns the damaged archive files."""
    _warn_legacy_folder(db, archive_dir)
    return archive.refresh_view(db, archive_dir, read_only=True)


def _warn_legacy_folder(db: Db, archive_dir: Path | None) -> None:
    legacy = archive.legacy_folder(db, archive_dir)
    if legacy is not None:
        warnings.warn(f"echo_duck: this store's archived memories are in {legacy}, a folder every store named "
                      f"{legacy.name[:-8]}.* used before (not read now: it may hold another store's rows); if only "
                      f"this store used it, move it: mv {legacy} {archive_dir}", RuntimeWarning, stacklevel=5)


class SharedState:
    """State every handle of one open store shares (the admin handle and its for_agent() handles)."""

    def __init__(self, extractor: Any, summarizer: Any):
        self.extractor = validate.callback(extractor, "extractor")  # not at the first consolidation, an hour later
        self.summarizer = validate.callback(summarizer, "summarizer")
        self.kb: Any = None


# What for_agent() handles share with the handle that opened the store (everything but identity).
SHARED_STATE = ("path", "read_only", "allow_files", "_clock", "archive_dir", "db", "schema_version", "indexer",
                "writer", "recaller", "travel", "checker", "compressor", "_shared", "damaged_archive_files")


def clock_of(now: datetime | Callable[[], datetime] | None) -> Callable[[], datetime]:
    if now is None:
        return lambda: datetime.now(timezone.utc).replace(tzinfo=None)
    if callable(now):
        return lambda: validate.timestamp(now(), "now")
    fixed = validate.timestamp(now, "now")
    return lambda: fixed
