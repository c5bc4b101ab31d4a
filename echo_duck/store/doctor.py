"""`echo-duck doctor`: check the install and a store, and say exactly how to fix each problem.

Install: duckdb at the pinned version, the vss and fts extension wheels (same version, and their
binaries load), the embedding models (``embed.model_status()``) and the optional reranker. Store (opened
read-only, never written): the file exists and is an echo_duck store, its schema version (newer: upgrade echo-duck;
older: migrated on the next writable open), installed macros and views, the keyword index signature,
the embedding model its vectors need, stale vectors, consolidation jobs not done (waiting: a warning,
failed: a problem), the Parquet archive folder (damaged files in it, exports a crash left half-way),
purges whose file rewrite is still due, the event log's hash chain, and the audit's must-be-zero
counters (stale and leaked recalls).

The store checks are in doctor_store.py; they run in a child process (``python -m echo_duck.store.doctor PATH``):
a damaged file can crash DuckDB itself (a segmentation fault, not an exception), and that crash becomes a clear
"the file is damaged" report instead of killing the doctor.

Each finding is a ``Check`` with status ok, warn (optional, nothing broken) or fail, and for warn
and fail the ``fix``: a command to run. ``DoctorReport.ok`` is False when any check failed.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import duckdb

from ..embed.embedder import model_status
from ..embed.models import locate
from ..recall.cross_encoder import SHIPPED as SHIPPED_RERANKERS
from ..errors import DatabaseLocked, EchoDuckError, ExtensionMissing
from ..storage import sqlfiles
from ..storage.connection import connect
from ..storage.db import Db
from ..storage.extensions import EXTENSIONS, extension_path, quote_literal
from .doctor_report import Check, DoctorReport, first_line
from .doctor_store import store_checks

_BARE = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
_PIN = re.compile(r"^\s*duckdb\s*==\s*([0-9][^\s;,]*)")


def diagnose(db: str | Path | None = None, *, required: bool = True, lock_timeout: float = 0.0) -> DoctorReport:
    """Check the install, then the store at ``db`` if given. A missing file is a failure when
    ``required`` (the user named it), else a warning (the default path, no store yet)."""
    checks = check_install()
    if db is not None:
        checks += check_store(db, required=required, lock_timeout=lock_timeout)
    return DoctorReport(tuple(checks))


# -- install -----------------------------------------------------------------------------------

def pinned_duckdb() -> str | None:
    """The duckdb version echo-duck's metadata pins (None when running from an uninstalled checkout)."""
    try:
        requirements = importlib.metadata.requires("echo-duck") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for requirement in requirements:
        match = _PIN.match(requirement)
        if match and ";" not in requirement:
            return match.group(1)
    return None


def check_install() -> list[Check]:
    pin = pinned_duckdb()
    version = duckdb.__version__
    target = pin or version
    reinstall = "pip install " + " ".join(shlex.quote(f"{p}=={target}") for p in
                                          ("duckdb", *(f"duckdb-extension-{e}" for e in EXTENSIONS)))
    checks = []
    if pin is None:
        checks.append(Check("duckdb", "warn", f"{version}; echo-duck's pin is unknown (not installed as a package)",
                            "pip install -e . (in the echo_duck checkout)"))
    elif version != pin:
        checks.append(Check("duckdb", "fail", f"{version} is installed but echo-duck needs duckdb=={pin} "
                            "(the extension binaries load only into that version)", reinstall))
    else:
        checks.append(Check("duckdb", "ok", f"{version} (pinned)"))
    for name in EXTENSIONS:
        checks.append(_check_extension(name, target, reinstall))
    checks += _check_models()
    return checks


def _check_extension(name: str, target: str, reinstall: str) -> Check:
    package = f"duckdb-extension-{name}"
    label = f"extension {name}"
    try:
        path = extension_path(name)
    except ExtensionMissing as e:
        detail = str(e).split("; fix:")[0]
        return Check(label, "fail", detail, reinstall if "is missing" not in detail else
                     f"pip install --force-reinstall {shlex.quote(f'{package}=={target}')}")
    try:
        with duckdb.connect(":memory:", config=_BARE) as con:
            con.execute(sqlfiles.query("load_extension_file").sql.replace("{extension_file}", quote_literal(str(path))))
    except duckdb.Error as e:
        return Check(label, "fail", f"{path} does not load into duckdb {duckdb.__version__}: {first_line(e)}",
                     f"pip install --force-reinstall {shlex.quote(f'{package}=={target}')}")
    return Check(label, "ok", f"{package} {importlib.metadata.version(package)}, loads from {path.parent}")


def _check_models() -> list[Check]:
    checks = []
    for name, status in model_status().items():
        if name == "hash":
            continue
        label = f"model {name}"
        if status["available"]:
            checks.append(Check(label, "ok", f"{status['model_id']} ({status['dim']}-d) at {status['path']}"))
        elif status["default"]:
            checks.append(Check(label, "fail", f"the default embedding model is not installed ({status['problem']}); "
                                "recall runs on keywords only", status["fix"]))
        else:
            checks.append(Check(label, "warn", f"optional model not installed ({status['problem']})", status["fix"]))
    for name, model in SHIPPED_RERANKERS.items():  # open(reranker=name): optional, English only
        path, problem = locate(model)
        checks.append(Check(f"reranker {name}", "ok", f"at {path}") if path is not None else
                      Check(f"reranker {name}", "warn", f"optional reranker not installed ({problem})", model.install))
    return checks


# -- store ---------------------------------------------------------------------------------------

def check_store(db: str | Path, *, required: bool = True, lock_timeout: float = 0.0) -> list[Check]:
    """The store checks, run in a child process so that a crash inside DuckDB is reported, not suffered."""
    path = Path(db).expanduser()
    shown = shlex.quote(str(db))
    if not path.exists():
        status = "fail" if required else "warn"
        return [Check("store", status, f"no store at {path}", f"echo-duck init --db {shown}")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # the same echo_duck
    child = subprocess.run([sys.executable, "-m", "echo_duck.store.doctor", str(path), repr(float(lock_timeout)),
                            str(db)], capture_output=True, text=True, env=env, timeout=600 + lock_timeout)
    if child.returncode < 0:
        name = signal.Signals(-child.returncode).name if -child.returncode in signal.valid_signals() else child.returncode
        return [Check("store", "fail", f"DuckDB crashed ({name}) while reading {path}: the file is damaged",
                      "restore the store from a backup copy (one taken while no process had it open); the damaged "
                      "file cannot be read safely")]
    try:
        return [Check(**c) for c in json.loads(child.stdout)]
    except (ValueError, TypeError):
        last = (child.stderr.strip().splitlines() or ["no output"])[-1]
        return [Check("store", "fail", f"checking {path} failed: {last}", "run echo-duck doctor again; report it if it repeats")]


def _check_store_here(db: str | Path, *, shown: str, lock_timeout: float) -> list[Check]:
    path = Path(db).expanduser()
    try:
        con = _open_read_only(path, lock_timeout)
    except DatabaseLocked as e:
        return [Check("store", "fail", str(e).split(";")[0],
                      "stop the process that holds the file (DuckDB lets one process write), then run doctor again")]
    except (EchoDuckError, duckdb.Error) as e:
        return [Check("store", "fail", f"cannot open {path}: {first_line(e)}",
                      f"check that {shown} is an echo_duck store (echo-duck init --db NEW_FILE creates one)")]
    try:
        return store_checks(Db(con, read_only=True), path, shown)
    finally:
        con.close()


def _open_read_only(path: Path, lock_timeout: float) -> duckdb.DuckDBPyConnection:
    """echo_duck's read-only connection; without working extensions, a bare one (enough to read tables)."""
    try:
        return connect(path, read_only=True, lock_timeout=lock_timeout)
    except ExtensionMissing:
        return duckdb.connect(str(path), read_only=True, config=_BARE)


if __name__ == "__main__":  # the child process of check_store: print the checks as JSON
    _path, _timeout, _shown = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    print(json.dumps([c.to_dict() for c in _check_store_here(_path, shown=shlex.quote(_shown), lock_timeout=_timeout)]))
