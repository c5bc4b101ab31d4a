"""New store files from an empty store this process already created.

Creating a store's schema runs about 400 statements (the migrations, the macros, the views and their
comments: ~150 ms); opening a file that has it takes ~30 ms. So the first new file a process creates
is kept, right after its schema was committed and before anything else is written to it, as a private
template (a copy in a temporary folder of this process, removed at exit), and each later new file
starts as a copy of it. The template is keyed by the checksums of every migration and of the macro and
view files, so a process whose sql/ differs never uses a stale one; the migrations' and objects'
``applied_at`` are stamped again after the copy (storage/schema.py). A copy is made under a temporary
name and linked into place, so it never replaces a file that appeared meanwhile and never leaves half a
file under the store's name; anything unusual (no template yet, a leftover ``.wal``, a filesystem
without hard links, a system other than POSIX) falls back to creating the schema statement by statement.
The first file is copied by a child process (``cp``): DuckDB holds a POSIX lock on it, and any descriptor
of it this process opened and closed would release that lock.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from pathlib import Path

import duckdb

from . import sqlfiles

_CP = shutil.which("cp")
_COPY = [_CP] if _CP else [sys.executable, "-c", "import shutil, sys; shutil.copyfile(*sys.argv[1:])"]
_LOCK = threading.Lock()
_TEMPLATES: dict[str, Path] = {}
_FOLDER: Path | None = None


def _key() -> str:
    migrations = ",".join(f"{m.version}:{m.checksum}" for m in sqlfiles.migrations())
    return f"{duckdb.__version__}|{migrations}|{sqlfiles.objects_checksum()}"


def is_new_file(path: str) -> bool:
    """Would opening ``path`` create a new store file (nothing there, no write-ahead log either)?"""
    if path == ":memory:":
        return False
    target = Path(path).expanduser()
    return not target.exists() and not Path(f"{target}.wal").exists()


def place_template(path: str) -> bool:
    """Start the new file ``path`` as a copy of this process's template; False when there is none (or
    the file appeared meanwhile), and the caller creates the schema itself."""
    with _LOCK:
        template = _TEMPLATES.get(_key())
    if template is None or not is_new_file(path):
        return False
    target = Path(path).expanduser()
    partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.new")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template, partial)
        os.link(partial, target)  # fails if the name exists: a file that appeared meanwhile stays as it is
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()


def keep_template(con: duckdb.DuckDBPyConnection, path: str) -> None:
    """After ``path`` was created with a fresh schema (and nothing else yet), keep it as the template."""
    if os.name != "posix":
        return  # elsewhere a file DuckDB holds may not be readable by another process at all
    key = _key()
    with _LOCK:
        if key in _TEMPLATES:
            return
        global _FOLDER
        try:
            con.execute("CHECKPOINT")  # the schema into the file itself, not its write-ahead log
            if _FOLDER is None:
                _remove_orphans()
                _FOLDER = Path(tempfile.mkdtemp(prefix=f"echo_duck-templates-{os.getpid()}-"))
                atexit.register(_remove_folder, _FOLDER, os.getpid())
            copy = _FOLDER / f"{uuid.uuid4().hex}.duckdb"
            # Copied by another process: DuckDB holds a POSIX (fcntl) lock on the file, and closing any
            # descriptor of it in this process would drop that lock (another process could then open it).
            subprocess.run(_COPY + [str(Path(path).expanduser()), str(copy)], check=True, capture_output=True,
                           timeout=60)
        except (OSError, subprocess.SubprocessError, duckdb.Error):
            return  # no template: later new files create their schema themselves
        _TEMPLATES[key] = copy


def _remove_orphans() -> None:
    """Folders of processes that ended without their exit handlers (killed): a few MB each."""
    for folder in Path(tempfile.gettempdir()).glob("echo_duck-templates-*-*"):
        try:
            os.kill(int(folder.name.split("-")[2]), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except (ValueError, OSError):
            continue  # not ours to judge (another user's process, or not a pid)


def _remove_folder(folder: Path, owner_pid: int) -> None:
    if os.getpid() == owner_pid:  # a forked child exits with the parent's handlers: leave its folder alone
        shutil.rmtree(folder, ignore_errors=True)
