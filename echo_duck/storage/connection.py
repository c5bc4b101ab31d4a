"""Open a DuckDB connection on an echo_duck file, and turn DuckDB errors into echo_duck errors.

DuckDB lets one process hold a file for writing; while it does, other processes cannot open the file
at all. ``connect`` retries a conflicting lock for ``lock_timeout`` seconds, then raises
``DatabaseLocked`` naming the holder. All DuckDB exceptions are translated in ``translate_errors``.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import os
import re
import sys
import time
from pathlib import Path
from typing import Iterator

import duckdb

from ..errors import DatabaseLocked, EchoDuckError, InvalidInput, StorageError
from .extensions import load_extensions, quote_literal, signatures_checked

CATALOG = "mem"
ROW_GROUP_SIZE = 32_768


class _PandasAbsent(importlib.abc.MetaPathFinder):
    """duckdb 1.5.5's client tries ``import pandas`` twice for every bound parameter. Without pandas
    installed, each failed try walks sys.path (~0.16 ms): 5 ms per recall, 8 ms per written row.
    Installed only when pandas is absent, this finder gives the same "not installed" answer at once."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas":
            raise ModuleNotFoundError("No module named 'pandas'", name="pandas")
        return None


if importlib.util.find_spec("pandas") is None and not any(isinstance(f, _PandasAbsent) for f in sys.meta_path):
    sys.meta_path.insert(0, _PandasAbsent())
_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (.*?) \(PID (\d+)\)")


def connect(path: str | Path, *, read_only: bool = False, lock_timeout: float = 0.0, allow_files: bool = False,
            archive: Path | None = None) -> duckdb.DuckDBPyConnection:
    """A connection with vss and fts loaded and the store attached as the default catalog.

    Unless ``allow_files``, the DuckDB instance is then closed off from the filesystem: external access
    off (only the store's own Parquet archive folder ``archive`` stays readable) and Python replacement
    scans off, so no statement can read or write another file. DuckDB refuses to turn external access
    back on, or to widen the allowed folders, while the database runs. (``lock_configuration`` is not
    set: DuckDB 1.5.5 changes an internal option itself during ``ALTER TABLE … ADD COLUMN … DEFAULT``
    in a transaction, which a locked configuration refuses, so migrations would fail.) Nothing
    echo_duck does needs files: what it writes (archive partitions, exports, the purge rewrite) is
    written by pyarrow or by a separate connection."""
    # DuckDB draws its own progress bar on stdout for long queries: a library must not (it would break
    # the CLI's --json output); the CLI draws its own bars on stderr.
    # DuckDB checks an extension's signature on every LOAD (~0.2 s for the two). A locked-down connection skips the
    # check for files that already passed it in this process, unchanged since: it cannot LOAD anything else once
    # external access is off (tests/test_extensions.py). A connection with files allowed always checks.
    skip_check = not allow_files and signatures_checked()
    config = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    if skip_check:
        config["allow_unsigned_extensions"] = True
    con = duckdb.connect(":memory:", config=config)
    try:
        with contextlib.suppress(duckdb.InvalidInputException):  # in Jupyter without ipywidgets DuckDB refuses
            con.execute("SET enable_progress_bar = false")      # the change (and draws no bar there anyway)
        load_extensions(con, checked=not skip_check)
        target = ":memory:" if str(path) == ":memory:" else str(Path(path).expanduser())
        if target != ":memory:":
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        name = _one_name(target)
        _attach_with_retry(con, name, read_only, lock_timeout)
        _remember_name(name)
        con.execute(f"USE {CATALOG}")
        if target != ":memory:":  # DuckDB's spill folder stays readable with external access off: the one a file
            con.execute(f"SET temp_directory = {quote_literal(target + '.tmp')}")  # database has, not <cwd>/.tmp
        if not allow_files:
            lock_down(con, archive)
        return con
    except BaseException:
        con.close()
        raise


_NAMES: dict[tuple[int, int], str] = {}  # (device, inode) -> the name this process first opened the file by


def _one_name(target: str) -> str:
    """The name this process opened the file by before, when ``target`` is another name of it (a hard link).
    DuckDB refuses a second handle on a file in one process by comparing names: two handles through two names
    both wrote, and the first one's writes were lost when they closed."""
    if target == ":memory:":
        return target
    try:
        st = os.stat(target)
    except OSError:
        return target  # a new store
    first = _NAMES.get((st.st_dev, st.st_ino))
    if first is not None and first != target:
        with contextlib.suppress(OSError):
            again = os.stat(first)
            if (again.st_dev, again.st_ino) == (st.st_dev, st.st_ino):
                return first
    return target


def _remember_name(name: str) -> None:
    if name != ":memory:":
        with contextlib.suppress(OSError):
            st = os.stat(name)
            _NAMES[(st.st_dev, st.st_ino)] = name


def lock_down(con: duckdb.DuckDBPyConnection, archive: Path | None) -> None:
    """No filesystem access beyond the attached store (and its archive folder), no Python replacement scans."""
    if archive is not None:
        con.execute(f"SET allowed_directories = [{quote_literal(str(archive).rstrip('/') + '/')}]")
    con.execute("SET python_enable_replacements = false")
    con.execute("SET enable_external_access = false")


def _attach_with_retry(con: duckdb.DuckDBPyConnection, target: str, read_only: bool, lock_timeout: float) -> None:
    # Row groups of 32,768 rows instead of DuckDB's 122,880: a checkpoint rewrites every row group a
    # write touched, and with one big group holding 100k vectors each checkpoint after a single
    # append took ~2.4 s (0.06 s with this size) and left the file twice as large.
    mode = " (READ_ONLY)" if read_only else f" (ROW_GROUP_SIZE {ROW_GROUP_SIZE})"
    # ATTACH cannot bind parameters; the path is quoted as a literal.
    statement = f"ATTACH {quote_literal(target)} AS {CATALOG}{mode}"
    deadline = time.monotonic() + max(lock_timeout, 0.0)
    delay = 0.02
    while True:
        try:
            con.execute(statement)
            return
        except duckdb.IOException as e:
            holder = _LOCK_HOLDER.search(str(e))
            if holder is None:
                raise _storage_error(target, e) from e
            if time.monotonic() >= deadline:
                raise DatabaseLocked(
                    f"{target} is in use by another process ({holder.group(1)}, PID {holder.group(2)}); "
                    "DuckDB allows one process per file while it writes: close that process, "
                    "or pass a longer lock timeout (--lock-timeout / lock_timeout=)"
                ) from e
            time.sleep(delay)
            delay = min(delay * 2, 0.25)
        except duckdb.BinderException as e:
            # Another handle of this same process has the file attached: DuckDB refuses at once, without
            # a file lock. It is the same situation as a lock held by another process: wait, then refuse.
            if "Unique file handle conflict" not in str(e):
                raise _storage_error(target, e) from e
            if time.monotonic() >= deadline:
                raise DatabaseLocked(
                    f"{target} is already open in this process (PID {os.getpid()}) by another echo_duck handle; "
                    "share that handle between threads, close it first, or pass a lock timeout (lock_timeout=)"
                ) from e
            time.sleep(delay)
            delay = min(delay * 2, 0.25)
        except duckdb.Error as e:
            raise _storage_error(target, e) from e


def _storage_error(target: str, e: Exception) -> StorageError:
    return StorageError(f"cannot open {target} as a DuckDB database: {e}")


@contextlib.contextmanager
def translate_errors(what: str) -> Iterator[None]:
    """Map DuckDB exceptions raised while doing ``what`` to typed echo_duck errors, keeping the cause."""
    try:
        yield
    except EchoDuckError:
        raise
    except duckdb.ConstraintException as e:
        raise InvalidInput(f"{what}: a value breaks a constraint of the store: {_first_line(e)}") from e
    except (duckdb.ConversionException, duckdb.InvalidInputException, duckdb.OutOfRangeException) as e:
        raise InvalidInput(f"{what}: {_first_line(e)}") from e
    except duckdb.Error as e:
        raise StorageError(f"{what} failed in DuckDB: {_first_line(e)}") from e


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection, what: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN … COMMIT, rolled back on any error so a failed call changes nothing."""
    with translate_errors(what):
        con.execute("BEGIN TRANSACTION")
        try:
            yield con
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")


def _first_line(e: Exception) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
