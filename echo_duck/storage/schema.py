"""Bring a file's schema up to date: numbered migrations once each, then the macro and view files.

Each migration runs inside one explicit transaction together with its schema_version row, because a
failed multi-statement batch in DuckDB does not undo the statements before the failure. A file
written by a newer echo_duck is refused rather than guessed at.
"""

from __future__ import annotations

import warnings

import duckdb

from ..errors import EchoDuckError, SchemaTooNew
from . import catalog, sqlfiles
from .connection import transaction, translate_errors


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
    if installed == sqlfiles.objects_checksum() and catalog.objects_changed(con):
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
    """Also when the catalog's macros and views are not this echo_duck's (catalog.py: replaced in the file, or a
    macro shadowing a DuckDB function), which is dropped."""
    checksum = sqlfiles.objects_checksum()
    _run(con, "create_schema_objects")
    if _scalar(con, "installed_objects_checksum") == checksum and not catalog.objects_changed(con):
        return
    catalog.refuse_squatted(con)
    catalog.drop_shadowing(con)
    for name, text in sqlfiles.object_files():
        with translate_errors(f"running sql/{name}"):
            con.execute(text)
    _run(con, "record_objects_checksum", checksum=checksum)


def _run(con: duckdb.DuckDBPyConnection, query_name: str, /, **params):
    q = sqlfiles.query(query_name)
    return con.execute(q.sql, q.bind(params)) if q.params else con.execute(q.sql)


def _scalar(con: duckdb.DuckDBPyConnection, query_name: str, /, **params):
    row = _run(con, query_name, **params).fetchone()
    return row[0] if row else None
