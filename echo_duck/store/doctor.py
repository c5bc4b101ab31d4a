"""`echo-duck doctor`: check the install and a store, and say exactly how to fix each problem.

Install: duckdb at the pinned version, the vss and fts extension wheels (same version, and their
binaries load), the embedding models (``embed.model_status()``) and the optional reranker. Store (opened
read-only, never written): the file exists and is an echo_duck store, its schema version (newer: upgrade echo-duck;
older: migrated on the next writable open), installed macros and views, the keyword index signature,
the embedding model its vectors need, stale vectors, consolidation jobs not done (waiting: a warning,
failed: a problem), the Parquet archive folder (damaged files in it, exports a crash left half-way),
purges whose file rewrite is still due, the event log's hash chain, and the audit's must-be-zero
counters (stale and leaked recalls).

The store is checked in a child process (``python -m echo_duck.store.doctor PATH``): a damaged file
can crash DuckDB itself (a segmentation fault, not an exception), and that crash becomes a clear
"the file is damaged" report instead of killing the doctor.

Each finding is a ``Check`` with status ok, warn (optional, nothing broken) or fail, and for warn
and fail the ``fix``: a command to run. ``DoctorReport.ok`` is False when any check failed.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Callable

import duckdb

from ..embed.embedder import model_status
from ..embed.models import locate
from ..recall.cross_encoder import SHIPPED as SHIPPED_RERANKERS
from ..errors import DatabaseLocked, EchoDuckError, ExtensionMissing
from ..index.keyword import KeywordIndex
from ..lifecycle.archive import archive_dir, archive_files, view_is_current
from ..storage import sqlfiles
from ..storage.connection import connect
from ..storage.db import Db, uuid_list
from ..storage.catalog import objects_changed, shadowing
from ..storage.event_chain import verify as verify_chain
from ..storage.extensions import EXTENSIONS, extension_path, quote_identifier, quote_literal
from .doctor_report import Check, DoctorReport

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
        return Check(label, "fail", f"{path} does not load into duckdb {duckdb.__version__}: {_first_line(e)}",
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
        return [Check("store", "fail", f"cannot open {path}: {_first_line(e)}",
                      f"check that {shown} is an echo_duck store (echo-duck init --db NEW_FILE creates one)")]
    try:
        return _store_checks(Db(con, read_only=True), path, shown)
    finally:
        con.close()


def _open_read_only(path: Path, lock_timeout: float) -> duckdb.DuckDBPyConnection:
    """echo_duck's read-only connection; without working extensions, a bare one (enough to read tables)."""
    try:
        return connect(path, read_only=True, lock_timeout=lock_timeout)
    except ExtensionMissing:
        return duckdb.connect(str(path), read_only=True, config=_BARE)


def _store_checks(db: Db, path: Path, shown: str) -> list[Check]:
    version_check, current = _schema_check(db, shown)
    checks = [Check("store", "ok", f"{path} ({path.stat().st_size:,} bytes)"), version_check]
    if not current:
        return checks  # views and macros of another version: the other checks would mislead
    checks.append(_objects_check(db, shown))
    steps: list[Callable[[Db, str], Check | None]] = [
        _integrity_check, _keyword_check, _model_check, _stale_check, _jobs_check, functools.partial(_archive_check, path=path),
        _purge_check, _chain_check, _log_check, _audit_check]
    for step in steps:
        try:
            check = step(db, shown)
        except (EchoDuckError, duckdb.Error) as e:
            name = getattr(step, "func", step).__name__.strip("_").replace("_check", "")
            check = Check(name, "fail", f"could not check: {_first_line(e)}",
                          f"echo-duck init --db {shown} (reinstalls macros and views), then run doctor again")
        if check is not None:
            checks.append(check)
    return checks


def _schema_check(db: Db, shown: str) -> tuple[Check, bool]:
    known = sqlfiles.migrations()[-1].version  # the highest number (one reserved by a branch may be missing)
    if not db.scalar("has_schema_version"):
        if db.scalar("user_table_count"):
            return Check("schema", "fail", "this DuckDB file has tables but no schema_version: not an echo_duck store",
                         "open another file, or create a store with: echo-duck init --db NEW_FILE"), False
        return Check("schema", "fail", "empty DuckDB file (no echo_duck schema yet)", f"echo-duck init --db {shown}"), False
    applied = {row[0] for row in db.run("applied_migrations").fetchall()}
    version = max(applied, default=0)
    if version > known:
        return Check("schema", "fail", f"schema version {version} was written by a newer echo-duck; this one knows {known}",
                     "pip install -U echo-duck"), False
    if version < known or {m.version for m in sqlfiles.migrations()} - applied:
        return Check("schema", "fail", f"schema version {version} is older than this echo-duck's {known}: it will be "
                     "migrated on the next writable open (read-only opens refuse it until then)",
                     f"echo-duck init --db {shown}"), False
    return Check("schema", "ok", f"version {version} (current)"), True


def _objects_check(db: Db, shown: str) -> Check:
    if db.scalar("installed_objects_checksum") != sqlfiles.objects_checksum():
        return Check("macros and views", "fail", "installed by another echo-duck version (reinstalled on the next writable open)",
                     f"echo-duck init --db {shown}")
    if objects_changed(db.con):
        shadows = ", ".join(name for name, _ in shadowing(db.con))
        return Check("macros and views", "fail", "changed in the file outside echo-duck (a CREATE OR REPLACE MACRO or "
                     "VIEW, a view dropped" + (f", a macro named like a DuckDB function: {shadows}" if shadows else "")
                     + "); the next writable open reinstalls them", f"echo-duck init --db {shown}")
    return Check("macros and views", "ok", "match this echo-duck's sql/ files")


def _keyword_check(db: Db, shown: str) -> Check:
    stored = db.scalar("store_info_value", name="keyword_index_signature")
    if stored != KeywordIndex(db)._signature():
        return Check("keyword index", "fail", "built with other stop words, segmentation or DuckDB hash (rebuilt on the "
                     "next writable open)", f"echo-duck init --db {shown}")
    return Check("keyword index", "ok", f"signature {stored}")


def _model_check(db: Db, shown: str) -> Check | None:
    model_id = db.scalar("store_info_value", name="embedding_model")
    if model_id is None:
        return Check("store model", "ok", "no embedding model recorded yet (keyword-only so far)")
    for name, status in model_status().items():
        if status["model_id"] == model_id or (name == "hash" and model_id.startswith("hash-")):
            if status["available"]:
                return Check("store model", "ok", f"{model_id} (installed)")
            return Check("store model", "fail", f"the store's vectors come from {model_id}, which is not installed "
                         "here (recall would run on keywords only)", status["fix"])
    if model_id.startswith("onnx-"):
        return Check("store model", "warn", f"the store's vectors come from {model_id}, a model folder of your own "
                     "(recall without it runs on keywords only)",
                     "open the store with echo_duck.open(..., embedder=\"<the model's folder>\")")
    return Check("store model", "warn", f"the store's vectors come from {model_id}, a custom embedder echo-duck "
                 "cannot load by name", "pass the same embedder object to echo_duck.open(..., embedder=...)")


def _stale_check(db: Db, shown: str) -> Check:
    memories, chunks = db.run("doctor_stale_vectors").fetchone()
    if not memories and not chunks:
        return Check("stale vectors", "ok", "every vector is from the store's current model")
    model_id = db.scalar("store_info_value", name="embedding_model")
    fixes = []
    if memories:
        fixes.append(f"echo-duck reembed --admin --db {shown}" + _model_option(model_id))
    if chunks:
        fixes.append(f"echo-duck kb reembed --admin --db {shown}")
    return Check("stale vectors", "fail", f"{memories} memories and {chunks} knowledge-base chunks have no vector from "
                 f"{model_id}: vector search leaves them out", " && ".join(fixes))


def _model_option(model_id: str | None) -> str:
    """--model for `echo-duck reembed`, unless the store's model is the default one."""
    for name, status in model_status().items():
        if status["model_id"] == model_id:
            return "" if status["default"] else f" --model {name}"
    return f" --model {shlex.quote(model_id)}" if model_id else ""


def _jobs_check(db: Db, shown: str) -> Check:
    waiting, failed, running, last_error = db.run("doctor_jobs").fetchone()
    if not (waiting or failed or running):
        return Check("consolidation jobs", "ok", "none waiting")
    detail = f"{waiting} waiting, {failed} failed (retried with backoff), {running} running"
    if last_error:
        detail += f"; last error: {last_error[:200]}"
    # queued work is normal (the worker runs it); a job that keeps failing is a problem
    return Check("consolidation jobs", "fail" if failed else "warn", detail, f"echo-duck consolidate --pending --db {shown}")


def _archive_check(db: Db, shown: str, *, path: Path) -> Check:
    """The Parquet archive folder next to the store: damaged files, and exports a crash left half-way."""
    folder = archive_dir(str(path))
    files, damaged = archive_files(folder)
    where = f"{len(files)} Parquet files in {folder}" if folder.is_dir() else f"no archive folder yet ({folder})"
    if damaged:
        moves = " && ".join(f"mv {shlex.quote(str(f))} {shlex.quote(str(folder.parent))}/" for f in damaged[:5])
        return Check("archive", "fail", f"{where}; {len(damaged)} more are not readable archive Parquet and are skipped "
                     f"(memories_all leaves them out): {', '.join(str(f.relative_to(folder)) for f in damaged[:5])}",
                     f"move them out of the archive folder, e.g. {moves}; if one was a real archive file, restore it "
                     "from a backup")
    staged, moved = db.run("doctor_unfinished_exports").fetchone()
    unknown, first = db.run("doctor_archive_rows_unknown", ids=uuid_list(_archived_ids(files))).fetchone() \
        if files else (0, None)
    if unknown:
        return Check("archive", "fail", f"{where}; {unknown} archived rows were never exported by this store (first: "
                     f"{first}): the store file is older than its archive folder (restored from a copy?), and reads "
                     "show versions it never had", "restore the archive folder from the same backup as the store file "
                     f"(a backup copies both: {path.name} and {folder.name}/), or move the Parquet files holding them "
                     "out of the folder")
    if not (staged or moved) and not view_is_current(db, root=folder):
        return Check("archive", "warn", f"{where}; memories_all as the file holds it reads other archive files (those of "
                     "its last writable open: the store was moved or copied?), which plain DuckDB then reads; echo-duck "
                     "reads this folder's; a writable open rebuilds it", f"echo-duck init --db {shown}")
    if not (staged or moved):
        return Check("archive", "ok", f"{where}; no unfinished exports")
    return Check("archive", "fail", f"{where}; {staged} staged and {moved} moved exports were interrupted: a "
                 "writable open undoes staged ones and finishes moved ones", f"echo-duck init --db {shown}")


def _archived_ids(files: list[Path]) -> list[str]:
    """The memory ids the archive's readable files hold (read from the files: a read-only store's memories_all is
    the view its last writable open built, which may predate the folder)."""
    import pyarrow.parquet as pq

    return sorted({str(i) for f in files for i in pq.read_table(f, columns=["id"]).column("id").to_pylist()})


def _integrity_check(db: Db, shown: str) -> Check:
    """Read every row of every table, so that a damaged block shows here (as DuckDB's checksum error,
    or as a crash of this child process that check_store reports) rather than in an agent's recall."""
    tables = [r[0] for r in db.run("doctor_tables").fetchall()]
    rows = 0
    for table in tables:
        try:
            statement = sqlfiles.query("doctor_read_table").sql.replace("{table}", quote_identifier(table))
            reader = db.con.execute(statement).fetch_record_batch(65_536)
            rows += sum(batch.num_rows for batch in reader)
        except duckdb.Error as e:
            return Check("integrity", "fail", f"table {table} cannot be read: {_first_line(e)}: the file is damaged",
                         "restore the store from a backup copy (one taken while no process had it open)")
    return Check("integrity", "ok", f"every row of {len(tables)} tables reads ({rows:,} rows)")


def _purge_check(db: Db, shown: str) -> Check:
    pending = db.scalar("doctor_pending_purges")
    if pending:
        return Check("purges", "fail", f"{pending} purged memories still await the rewrite of the store file (a crash "
                     "interrupted it, or an agent's purge soon after another left it for later): their text may remain "
                     "in freed blocks of the file", f"echo-duck init --db {shown}")
    return Check("purges", "ok", "no purge awaits a file rewrite")


def _chain_check(db: Db, shown: str) -> Check:
    report = verify_chain(db.con)
    if not report.ok:
        return Check("event chain", "fail", report.problem or "broken",
                     f"echo-duck audit verify --admin --db {shown} shows it; the events from there on were edited "
                     "outside echo_duck: compare with a backup")
    return Check("event chain", "ok", f"{report.events} events, every link verified ({report.redacted} redacted by purges)")


def _log_check(db: Db, shown: str) -> Check:
    """The live rows against the event log: the chain seals the log, and this shows a row changed beside it."""
    rows, first = db.run("doctor_rows_off_log").fetchone()
    if rows:
        return Check("rows vs log", "fail", f"{rows} memories differ from the event log in owner, scope, sensitivity, "
                     f"sharing or text (first: {first}): edited outside echo_duck, and every read trusts them",
                     f"echo-duck history {first} --admin --db {shown} shows what the log holds; compare with a backup")
    access, grant = db.run("doctor_access_off_log").fetchone()
    if access:
        return Check("rows vs log", "fail", f"{access} memberships or publishing rights in force have no grant in the "
                     f"event log (first: {grant}): added outside echo_duck, and every read trusts them",
                     "revoke it with echo-duck revoke, and grant it again with echo-duck grant if it is wanted")
    return Check("rows vs log", "ok", "every memory's owner, scope, sensitivity and text, and every membership and "
                 "publishing right, is what the event log says")


def _audit_check(db: Db, shown: str) -> Check:
    live, stale, leaked = db.run("doctor_audit").fetchone()
    if stale or leaked:
        return Check("audit", "fail", f"{stale} stale and {leaked} leaked recalls (both must be 0): a recall returned "
                     "a superseded memory or one outside the caller's visibility; please report it as a bug",
                     f"echo-duck sql --admin \"SELECT * FROM leaked_recalls\" --db {shown}  (and stale_recalls) to see them")
    return Check("audit", "ok", f"{live} live memories; 0 stale and 0 leaked recalls")


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


if __name__ == "__main__":  # the child process of check_store: print the checks as JSON
    _path, _timeout, _shown = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    print(json.dumps([c.to_dict() for c in _check_store_here(_path, shown=shlex.quote(_shown), lock_timeout=_timeout)]))
