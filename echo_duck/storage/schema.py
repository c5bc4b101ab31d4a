"""Bring a file's schema up to date: numbered migrations once each, then the macro and view files.

Each migration runs inside one explicit transaction together with its schema_version row, because a
failed multi-statement batch in DuckDB does not undo the statements before the failure. A file
written by a newer echo_duck is refused rather than guessed at.
"""

from __future__ import annotations

import hashlib
import re
import warnings

import duckdb

from ..errors import EchoDuckError, SchemaTooNew
from . import sqlfiles
from .connection import transaction, translate_errors

CATALOG_DIGEST = "objects_catalog"  # store_info: objects_digest() right after the last install


class NotAStore(EchoDuckError):
    """The file is a DuckDB database but not an echo_duck store."""


def current_version() -> int:
    """The highest migration number this code knows (numbers may skip one reserved by another branch)."""
    known = sqlfiles.migrations()
    return known[-1].version if known else 0


def ensure_schema(con: duckdb.DuckDBPyConnection, *, read_only: bool = False, copied: bool = False) -> int:
    """Migrate (unless read-only) and return the file's schema version. ``copied``: the file was just
    made from this process's empty-store template (template.py), so its schema is dated now."""
    with translate_errors("reading the schema version"):
        has_version_table = _scalar(con, "has_schema_version") > 0
        if not has_version_table and _scalar(con, "user_table_count") > 0:
            raise NotAStore("this DuckDB file has tables but no echo_duck schema_version table; it is not an echo_duck store")
        applied = _run(con, "applied_migrations").fetchall() if has_version_table else []
    known = sqlfiles.migrations()
    file_version = max((row[0] for row in applied), default=0)
    done = {row[0] for row in applied}
    if file_version > current_version() or done - {m.version for m in known}:
        raise SchemaTooNew(
            f"this file has schema version {file_version} but this echo_duck knows only {current_version()}; "
            "upgrade echo_duck (pip install -U echo-duck) to open it"
        )
    missing = [m for m in known if m.version not in done]
    if copied and not missing:
        with transaction(con, "dating the new store's schema"):
            _run(con, "date_new_schema")
    if read_only:
        if missing:
            raise EchoDuckError(
                f"this file has schema version {file_version} and needs migrating to {current_version()}; "
                "open it once without read_only to migrate it"
            )
        _warn_if_objects_stale(con)
        return file_version
    if not has_version_table:
        # A new file: every migration and the macros and views in one transaction (one commit instead of
        # one per migration; a crash while creating leaves an empty file, not half a schema).
        with transaction(con, "creating the schema"):
            _run(con, "create_schema_version")
            for migration in missing:
                with translate_errors(f"applying migration {migration.version:04d}_{migration.name}"):
                    con.execute(migration.sql)
                _run(con, "record_migration", version=migration.version, name=migration.name,
                     checksum=migration.checksum)
            _install_objects_in_transaction(con)
        return current_version()
    for migration in missing:
        with transaction(con, f"applying migration {migration.version:04d}_{migration.name}"):
            con.execute(migration.sql)
            _run(con, "record_migration", version=migration.version, name=migration.name, checksum=migration.checksum)
    _install_objects(con)
    return current_version()


def _warn_if_objects_stale(con: duckdb.DuckDBPyConnection) -> None:
    """A read-only open cannot reinstall the macros and views; queries against older ones can fail to bind."""
    try:
        installed = _scalar(con, "installed_objects_checksum")
    except duckdb.CatalogException:  # a file older than the schema_objects table
        installed = None
    if installed == sqlfiles.objects_checksum() and objects_changed(con):
        warnings.warn("this store's SQL macros or views were changed in the file after echo-duck installed them, and "
                      "a read-only open cannot reinstall them; open it once without read_only (or run: echo-duck init "
                      "--db PATH) to restore them", RuntimeWarning, stacklevel=4)
    elif installed != sqlfiles.objects_checksum():
        warnings.warn("this store's SQL macros and views were installed by another echo-duck version and a "
                      "read-only open cannot update them, so recall may fail; open it once without read_only "
                      "(or run: echo-duck init --db PATH) to update them", RuntimeWarning, stacklevel=4)


def _install_objects(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create macros and views when their files changed since the last install."""
    with transaction(con, "installing macros and views"):
        _install_objects_in_transaction(con)


def _install_objects_in_transaction(con: duckdb.DuckDBPyConnection) -> None:
    """Also when the catalog's macros and views are no longer what echo_duck installed (objects_changed), and once
    for a store installed before that was recorded."""
    checksum = sqlfiles.objects_checksum()
    _run(con, "create_schema_objects")
    if _scalar(con, "installed_objects_checksum") == checksum and not objects_changed(con, unrecorded=True):
        return
    for name, text in sqlfiles.object_files():
        with translate_errors(f"running sql/{name}"):
            con.execute(text)
    _run(con, "record_objects_checksum", checksum=checksum)
    _run(con, "set_store_info", name=CATALOG_DIGEST, value=objects_digest(con))


def objects_changed(con: duckdb.DuckDBPyConnection, *, unrecorded: bool = False) -> bool:
    """Were the store's macros or views replaced (or views dropped, macros added) since echo_duck installed them?
    An analyst's read-write session can ``CREATE OR REPLACE MACRO half_life_days(...)``: it persists in the file,
    and every decay, recall and view would use it. ``unrecorded``: what a store installed before the digest was
    recorded answers."""
    recorded = _scalar(con, "store_info_value", name=CATALOG_DIGEST)
    return unrecorded if recorded is None else recorded != objects_digest(con)


# DuckDB prints a definition read back from the file differently from the one just created, and an EXCLUDE list in
# an order that changes between loads: the digest reads each definition through these before hashing.
_EXCLUDED = re.compile(r"EXCLUDE \(([^()]*)\)")


def objects_digest(con: duckdb.DuckDBPyConnection) -> str:
    """A digest of the store's macros and views as the catalog holds them (objects_catalog)."""
    def canonical(text: str) -> str:
        text = text.replace('"', "").replace(" AS MATERIALIZED (", " AS (").replace(" CROSS JOIN ", " , ")
        return _EXCLUDED.sub(lambda m: "EXCLUDE (" + ", ".join(sorted(p.strip() for p in m[1].split(","))) + ")", text)

    rows = sorted(canonical(row[0]) for row in _run(con, "objects_catalog").fetchall())
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def _run(con: duckdb.DuckDBPyConnection, query_name: str, /, **params):
    q = sqlfiles.query(query_name)
    return con.execute(q.sql, q.bind(params)) if q.params else con.execute(q.sql)


def _scalar(con: duckdb.DuckDBPyConnection, query_name: str, /, **params):
    row = _run(con, query_name, **params).fetchone()
    return row[0] if row else None
