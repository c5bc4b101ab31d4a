"""Are the store's macros and views what this echo_duck installs? (storage/schema.py reinstalls them when not.)

Anyone who writes the file with plain DuckDB can ``CREATE OR REPLACE MACRO half_life_days(...)``, drop a view, or
add a macro named like a DuckDB function (``pow``, ``read_parquet``), which the store's own macros then call instead
of the function. Such a change persists, and every recall, decay and view would use it. So the catalog's definitions
of echo_duck's own objects are compared with those of an empty store this echo_duck builds in memory (once per
machine and version: the digest is kept beside the user's other caches, as text/marshal_cache.py keeps jieba's), and
a macro of the store that shadows a DuckDB function is reported and dropped. The reference is not read from the file:
what the file says about itself is what the writer could also have edited.

DuckDB prints a definition read back from a file differently from one just created (quoted type names, CROSS JOIN
as a comma, MATERIALIZED dropped) and prints an EXCLUDE list in an order that changes between loads; the digest
reads each definition through those rewrites. Objects the store holds besides echo_duck's (an analyst's own views
and macros under other names) are left alone.
"""

from __future__ import annotations

import hashlib
import re

import duckdb

from ..errors import StorageError
from ..text import marshal_cache
from . import sqlfiles

_EXCLUDED = re.compile(r"EXCLUDE \(([^()]*)\)")
_FORMAT = 2  # bump when canonical() or the objects_catalog query changes
_EXPECTED: dict[str, tuple[str, frozenset]] = {}
_SYSTEM: dict[str, frozenset] = {}


def objects_changed(con: duckdb.DuckDBPyConnection) -> bool:
    """Do the store's own macros and views differ from this echo_duck's, or does a macro of the store shadow a
    DuckDB function?"""
    digest, names = expected()
    rows = _rows(con)
    return _hash([r for r in rows if (r[0], r[1]) in names]) != digest or bool(_shadowing(con, rows, names))


def shadowing(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(name, macro | table_macro) of the store's macros that are not echo_duck's and share a DuckDB function's name
    (built in or an extension's): a call of that name in any query runs the macro."""
    return _shadowing(con, _rows(con), expected()[1])


def drop_shadowing(con: duckdb.DuckDBPyConnection) -> None:
    for name, kind in shadowing(con):
        quoted = name.replace('"', '""')
        con.execute(f'DROP MACRO {"TABLE " if kind == "table_macro" else ""}main."{quoted}"')


def _shadowing(con: duckdb.DuckDBPyConnection, rows: list, names: frozenset) -> list[tuple[str, str]]:
    if _SYSTEM.get(duckdb.__version__) is None:  # the functions of this process's DuckDB and extensions
        _SYSTEM[duckdb.__version__] = frozenset(n for (n,) in con.execute(_run_sql("catalog_system_functions")).fetchall())
    system = _SYSTEM[duckdb.__version__]
    return sorted({(name, text.split(":", 1)[0]) for kind, name, text in rows  # names are case-blind in DuckDB
                   if kind == "f" and name.lower() in system and (kind, name) not in names})


def squatted(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Names of echo_duck's views (``memories_all`` too) that a table of the store's main schema holds: DuckDB cannot
    replace a table with a view, so the view cannot be installed until the table is renamed or dropped."""
    views = {name.lower() for kind, name in expected()[1] if kind == "v"} | {"memories_all"}
    return sorted(views & {n for (n,) in con.execute(_run_sql("catalog_main_tables")).fetchall()})


def refuse_squatted(con: duckdb.DuckDBPyConnection) -> None:
    """StorageError naming the tables that hold names of echo_duck's views, before anything is changed."""
    taken = squatted(con)
    if taken:
        names = ", ".join(taken)
        raise StorageError(
            f"the store holds a table named {names}, where echo-duck keeps a view of that name, so its views cannot "
            f"be installed; nothing was changed. Rename the table with plain DuckDB (ALTER TABLE {taken[0]} RENAME TO "
            f"{taken[0]}_1) and open the store again")


def expected() -> tuple[str, frozenset]:
    """(digest, {(kind, name)}) of the macros and views an empty store of this echo_duck and DuckDB holds."""
    key = hashlib.sha256("|".join([duckdb.__version__, sqlfiles.objects_checksum(), str(_FORMAT)] + [
        f"{m.version}:{m.checksum}" for m in sqlfiles.migrations()]).encode()).hexdigest()[:16]
    if key not in _EXPECTED:
        cache = marshal_cache.folder() / f"catalog-{key}.marshal"
        try:
            digest, names = marshal_cache.load(cache)
            value = (str(digest), frozenset(tuple(n) for n in names))
        except (ValueError, TypeError):  # missing (None) or not this shape
            value = _build()
            marshal_cache.save(cache, (value[0], sorted(value[1])))
        _EXPECTED[key] = value
    return _EXPECTED[key]


def _build() -> tuple[str, frozenset]:
    from .connection import connect

    con = connect(":memory:")
    try:
        con.execute(_run_sql("create_schema_version"))
        con.execute(_run_sql("create_schema_objects"))
        for migration in sqlfiles.migrations():
            con.execute(migration.sql)
        for _, text in sqlfiles.object_files():
            con.execute(text)
        rows = _rows(con)
        return _hash(rows), frozenset((kind, name) for kind, name, _ in rows)
    finally:
        con.close()


def _rows(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str]]:
    return [(kind, name, _canonical(text)) for kind, name, text in con.execute(_run_sql("objects_catalog")).fetchall()]


def _hash(rows: list[tuple[str, str, str]]) -> str:
    return hashlib.sha256("\n".join(sorted(f"{k}:{n}:{t}" for k, n, t in rows)).encode()).hexdigest()


def _canonical(text: str) -> str:
    text = text.replace('"', "").replace(" AS MATERIALIZED (", " AS (").replace(" CROSS JOIN ", " , ")
    return _EXCLUDED.sub(lambda m: "EXCLUDE (" + ", ".join(sorted(p.strip() for p in m[1].split(","))) + ")", text)


def _run_sql(name: str) -> str:
    return sqlfiles.query(name).sql
