"""The store's own files, which no import may read on an agent handle and no export may write over.

The store's own files are the ``.duckdb`` file, its ``.wal`` and everything inside its Parquet archive folder
(``<stem>_archive/``, every agent's archived rows, sensitive ones included). A path is one of them when, after
resolving symlinks (``os.path.realpath``), it is one of those paths or lies inside the folder, or when it is
the same file on disk (device and inode: a hard link) as the store file, its write-ahead log or a file in
the archive folder. The check runs before anything is read or written (TRUST.md, *Imports*).

An admin handle may import from the archive folder, never the store file or its log: on Linux, closing any
descriptor of a file drops every lock the process holds on it, so reading the open store file through another
descriptor let a second process open the store while this one still held it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import PermissionDenied


def store_file_reason(mem: Any, path: str | Path, *, archive: bool = True) -> str | None:
    """Why ``path`` is one of ``mem``'s own files ("is the store file", ...), or None if it is not; without
    ``archive``, the files of the Parquet archive folder do not count (the host may read them)."""
    store = getattr(mem, "path", ":memory:")
    if store == ":memory:":
        return None
    db = os.path.realpath(os.path.expanduser(store))
    wal = db + ".wal"
    archive_dir = getattr(mem, "archive_dir", None) if archive else None
    folder = os.path.realpath(archive_dir) if archive_dir is not None else None
    try:
        real = os.path.realpath(os.path.expanduser(str(path)))
    except (ValueError, UnicodeError):  # a NUL or a lone surrogate: no file on disk has that name
        return None
    named = {db: "is the store file", wal: "is the store's write-ahead log (.wal)"}
    if real in named:
        return named[real]
    if folder is not None and (real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)):
        return f"is inside the store's Parquet archive folder {folder}, which holds every agent's archived memories"
    try:
        target = os.stat(real)
    except OSError:  # nothing there (yet): no file it could be the same as
        return None
    same = (target.st_dev, target.st_ino)
    for candidate, why in named.items():
        if _inode(candidate) == same:
            return f"is the same file on disk as the store ({why.removeprefix('is ')}: a hard link)"
    if folder is not None and os.path.isdir(folder):
        for parent, _, names in os.walk(folder):
            for name in names:
                if _inode(os.path.join(parent, name)) == same:
                    return (f"is the same file on disk (a hard link) as {os.path.join(parent, name)} in the store's "
                            "Parquet archive folder, which holds every agent's archived memories")
    return None


def refuse_store_file(mem: Any, path: str | Path, doing: str, *, archive: bool = True) -> None:
    """Raise PermissionDenied if ``path`` is one of the store's own files; ``doing`` is e.g. "import"."""
    why = store_file_reason(mem, path, archive=archive)
    if why is not None:
        raise PermissionDenied(f"cannot {doing} {path}: it {why}")


def _inode(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
