"""`echo-duck doctor`'s checks of one store, read through a read-only ``Db`` (store/doctor.py runs them in a child
process): schema version, macros and views, the keyword index signature, the model the vectors need, stale vectors,
consolidation jobs, the Parquet archive, purges due, the event chain, grants against the log, and the audit's counters.

May import storage, index, embed, lifecycle and store/doctor_report; never the facade.
"""

from __future__ import annotations

import functools
import shlex
from pathlib import Path
from typing import Callable

import duckdb

from ..embed.embedder import model_status
from ..errors import EchoDuckError
from ..index.keyword import KeywordIndex
from ..lifecycle.archive import archive_dir, archive_files, legacy_folder, view_is_current
from ..storage import sqlfiles
from ..storage.catalog import objects_changed, shadowing, squatted
from ..storage.db import Db, uuid_list
from ..storage.event_chain import verify as verify_chain
from ..storage.extensions import quote_identifier
from .doctor_report import Check, first_line


def store_checks(db: Db, path: Path, shown: str) -> list[Check]:
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
            check = Check(name, "fail", f"could not check: {first_line(e)}",
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
    taken = squatted(db.con)
    if taken:
        return Check("macros and views", "fail", f"a table holds the name of echo-duck's view {', '.join(taken)}: a "
                     "writable open refuses the store until it is renamed", f"in plain DuckDB on {shown}: ALTER TABLE "
                     f"{taken[0]} RENAME TO {taken[0]}_1; then open the store again")
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
    legacy = legacy_folder(db, folder, path)
    if legacy is not None:
        return Check("archive", "warn", f"{where}; this store's archived memories are in {legacy}, the folder every store "
                     f"named {legacy.name[:-8]}.* used before, and are not read (it may hold another store's rows)",
                     f"if only this store used it: mv {shlex.quote(str(legacy))} {shlex.quote(str(folder))}")
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
            return Check("integrity", "fail", f"table {table} cannot be read: {first_line(e)}: the file is damaged",
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
