"""The SQL reference page (sql/REFERENCE.md), rendered from a store's own catalog.

Tables, views and macros come from duckdb_tables(), duckdb_views(), duckdb_columns() and
duckdb_functions() with their COMMENT ON text (sql/migrations for tables, sql/views/90_comments.sql for
the rest), so the page cannot say what the store does not. Public means every table, view and macro
of schema main; a name starting with an underscore marks an internal helper, left out of the page and
exempt from the must-be-documented rule (tests/test_docs.py). Which objects need the fts or vss
extension is read off the catalog too: the functions each extension adds are those a bare connection
gains by loading it, and a macro or view needs the extension when it (or a macro it calls) calls one.
The example queries are the named queries of sql/queries/examples.sql, the question being the comment
line just above each name.

    echo-duck docs sql --out sql/REFERENCE.md      # what tests/test_docs.py compares with the file
    python -m echo_duck.store.docs sql/REFERENCE.md      # the same
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from ..storage import sqlfiles
from ..storage.extensions import EXTENSIONS, extension_path, quote_literal

REFERENCE_NAME = "REFERENCE.md"
_NAME_LINE = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$")
_BARE = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


@dataclass(frozen=True)
class Example:
    """One named example query: the question it answers, an optional explanation, the SQL."""

    name: str
    question: str
    explanation: str
    sql: str


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    comment: str | None


@dataclass(frozen=True)
class Relation:
    """A table or a view."""

    name: str
    comment: str | None
    columns: tuple[Column, ...]
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Macro:
    name: str
    kind: str  # "macro" (scalar) or "table_macro"
    parameters: tuple[str, ...]
    comment: str | None
    needs: tuple[str, ...]

    @property
    def signature(self) -> str:
        return f"{self.name}({', '.join(self.parameters)})"


@dataclass(frozen=True)
class Catalog:
    schema_version: int
    tables: tuple[Relation, ...]
    views: tuple[Relation, ...]
    macros: tuple[Macro, ...]

    def undocumented(self) -> list[str]:
        """'kind name' of every table, view, macro and column without a comment."""
        missing = [f"table {t.name}" for t in self.tables if not t.comment]
        missing += [f"view {v.name}" for v in self.views if not v.comment]
        missing += [f"macro {m.name}" for m in self.macros if not m.comment]
        for relation in self.tables + self.views:
            missing += [f"column {relation.name}.{c.name}" for c in relation.columns if not c.comment]
        return missing


def examples_path() -> Path:
    return sqlfiles.sql_dir() / "queries" / "examples.sql"


@functools.cache
def examples() -> tuple[Example, ...]:
    """The example queries, in file order."""
    lines = examples_path().read_text(encoding="utf-8").splitlines()
    found = []
    for i, line in enumerate(lines):
        match = _NAME_LINE.match(line)
        if not match:
            continue
        comments = []
        j = i - 1
        while j >= 0 and lines[j].startswith("--"):
            comments.insert(0, lines[j][2:].strip())
            j -= 1
        if not comments:
            raise ValueError(f"example {match.group(1)} has no question (a comment line above its name)")
        body = sqlfiles.query(match.group(1)).sql.splitlines()
        while body and (body[-1].startswith("--") or not body[-1].strip()):
            body.pop()  # the next example's question belongs to it, not to this body
        found.append(Example(match.group(1), comments[0], " ".join(comments[1:]), "\n".join(body)))
    return tuple(found)


@functools.cache
def extension_functions() -> dict[str, frozenset[str]]:
    """For vss and fts: the function names a bare connection gains by loading the extension's wheel."""
    with duckdb.connect(":memory:", config=_BARE) as con:
        base = set(_function_names(con))
    added = {}
    for name in EXTENSIONS:
        with duckdb.connect(":memory:", config=_BARE) as con:
            load = sqlfiles.query("load_extension_file").sql
            con.execute(load.replace("{extension_file}", quote_literal(str(extension_path(name)))))
            added[name] = frozenset(set(_function_names(con)) - base)
    return added


def read_catalog(con: duckdb.DuckDBPyConnection) -> Catalog:
    """The store's tables, views and macros with comments, columns and extension needs."""
    columns: dict[str, list[Column]] = {}
    for relation, name, type_, comment in _run(con, "docs_columns").fetchall():
        columns.setdefault(relation, []).append(Column(name, type_, comment))
    macro_rows = _run(con, "docs_macros").fetchall()
    view_rows = _run(con, "docs_views").fetchall()
    definitions = {name: definition or "" for name, _, _, _, definition in macro_rows}
    needs = _needs(definitions, {name: definition or "" for name, _, definition in view_rows})
    tables = tuple(Relation(n, c, tuple(columns.get(n, ()))) for n, c in _run(con, "docs_tables").fetchall())
    views = tuple(Relation(n, c, tuple(columns.get(n, ())), needs.get(n, ())) for n, c, _ in view_rows)
    macros = tuple(Macro(n, kind, tuple(params or ()), comment, needs.get(n, ()))
                   for n, kind, params, comment, _ in macro_rows)
    version = _run(con, "docs_schema_version").fetchone()[0]
    return Catalog(int(version or 0), tables, views, macros)


def fresh_catalog() -> Catalog:
    """The catalog of a new, empty store (in memory): what every store of this version has."""
    from .facade import EchoDuck

    with EchoDuck(":memory:", embedder="none") as mem:
        with mem.db.reading():
            return read_catalog(mem.db.con)


def reference(catalog: Catalog | None = None) -> str:
    """The markdown reference page for ``catalog`` (default: a fresh store's)."""
    catalog = catalog or fresh_catalog()
    needing = sorted(m.name for m in catalog.macros if "fts" in m.needs)
    out = [
        "# echo_duck SQL reference",
        "",
        f"Generated by `echo-duck docs sql` from the catalog of a fresh store (schema version "
        f"{catalog.schema_version}): every table, view and macro with its `COMMENT ON` text. Do not edit "
        "by hand; `tests/test_docs.py` fails when this page and the catalog differ.",
        "",
        "Open a store from plain DuckDB read-only, after loading the extensions from their wheels "
        "(never `INSTALL`: everything is offline); see the README, *Analyst access*:",
        "",
        "```sql",
        f"LOAD '<site-packages>/duckdb_extension_fts/extensions/v{duckdb.__version__}/fts.duckdb_extension';",
        f"LOAD '<site-packages>/duckdb_extension_vss/extensions/v{duckdb.__version__}/vss.duckdb_extension';",
        "ATTACH 'agent.duckdb' AS mem (READ_ONLY);",
        "USE mem;",
        "```",
        "",
        "Extensions: the macros " + ", ".join(f"`{n}`" for n in needing)
        + " call `stem()` from **fts** (directly or through another macro); nothing in the schema calls a "
          "**vss** function, but echo_duck loads vss before attaching so that a store holding an HNSW "
          "index replays its WAL. Times are naive UTC (`utc_now()`).",
        "",
        "## Contents",
        "",
        f"- [Tables](#tables) ({len(catalog.tables)}): " + ", ".join(_link(t.name) for t in catalog.tables),
        f"- [Views](#views) ({len(catalog.views)}): " + ", ".join(_link(v.name) for v in catalog.views),
        f"- [Macros](#macros) ({len(catalog.macros)}): " + ", ".join(_link(m.name) for m in catalog.macros),
        f"- [Example queries](#example-queries) ({len(examples())})",
        "",
        "## Tables",
        "",
    ]
    for table in catalog.tables:
        out += _relation(table)
    out += ["## Views", ""]
    for view in catalog.views:
        out += _relation(view)
    out += ["## Macros", ""]
    for macro in catalog.macros:
        kind = "table macro" if macro.kind == "table_macro" else "scalar macro"
        out += [f"### {macro.name}", "", f"`{macro.signature}` — {kind}", "", _text(macro.comment), ""]
        if macro.needs:
            out += [_needs_line(macro.needs), ""]
    out += ["## Example queries", "",
            "From `sql/queries/examples.sql`; each runs as it is (the tests execute every one).", ""]
    for example in examples():
        out += [f"### {example.question}", ""]
        if example.explanation:
            out += [example.explanation, ""]
        out += [f"`{example.name}`", "", "```sql", example.sql, "```", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def write_reference(path: str | Path) -> Path:
    path = Path(path)
    path.write_text(reference(), encoding="utf-8")
    return path


def reference_path() -> Path:
    """Where the committed page lives: sql/REFERENCE.md (packaged as echo_duck/sql/REFERENCE.md)."""
    return sqlfiles.sql_dir() / REFERENCE_NAME


# -- helpers -----------------------------------------------------------------------------------

def _relation(relation: Relation) -> list[str]:
    lines = [f"### {relation.name}", "", _text(relation.comment), ""]
    if relation.needs:
        lines += [_needs_line(relation.needs), ""]
    lines += ["| column | type | description |", "|---|---|---|"]
    lines += [f"| `{c.name}` | {c.type} | {_cell(c.comment)} |" for c in relation.columns]
    return lines + [""]


def _needs(macros: dict[str, str], views: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Extensions each macro and view needs: called directly, or through the macros it calls."""
    functions = extension_functions()
    direct = {name: {ext for ext, fns in functions.items() if any(_calls(body, fn) for fn in fns)}
              for name, body in {**macros, **views}.items()}
    calls = {name: {m for m in macros if m != name and _calls(body, m)} for name, body in {**macros, **views}.items()}

    def closure(name: str, seen: frozenset = frozenset()) -> set[str]:
        found = set(direct.get(name, ()))
        for callee in calls.get(name, ()):
            if callee not in seen:
                found |= closure(callee, seen | {name})
        return found

    return {name: tuple(sorted(closure(name))) for name in direct if closure(name)}


def _calls(body: str, function: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(function)}\s*\(", body) is not None


def _needs_line(needs: tuple[str, ...]) -> str:
    return "Needs the " + " and ".join(f"**{n}**" for n in needs) + " extension" + ("s" if len(needs) > 1 else "") + " loaded."


def _text(comment: str | None) -> str:
    return comment or "*(undocumented)*"


def _cell(comment: str | None) -> str:
    return (comment or "").replace("|", "\\|")


def _link(name: str) -> str:
    return f"[{name}](#{name})"


def _function_names(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [row[0] for row in _run(con, "docs_function_names").fetchall()]


def _run(con: duckdb.DuckDBPyConnection, name: str) -> Any:
    return con.execute(sqlfiles.query(name).sql)


if __name__ == "__main__":  # python -m echo_duck.store.docs [OUT]: the same page as `echo-duck docs sql --out OUT`
    import sys

    print(write_reference(sys.argv[1] if len(sys.argv) > 1 else reference_path()))
