"""The only code that knows where the sql/ folder lives and how its files are read.

In a wheel the folder is packaged as ``echo_duck/sql``; in an editable checkout it is the repo's
top-level ``sql/``. Named queries (``-- name: foo`` blocks in ``sql/queries/*.sql``) are parsed once.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent
_NAME_LINE = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)
_PARAM = re.compile(r"\$([a-z_][a-z0-9_]*)")
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


def sql_dir() -> Path:
    """The sql/ folder: packaged copy first, repo checkout second."""
    for candidate in (_PACKAGE_DIR / "sql", _PACKAGE_DIR.parent / "sql"):
        if (candidate / "migrations").is_dir():
            return candidate
    raise FileNotFoundError(f"echo_duck's sql/ folder is missing (looked in {_PACKAGE_DIR / 'sql'} and {_PACKAGE_DIR.parent / 'sql'}); reinstall echo-duck")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


@dataclass(frozen=True)
class Query:
    """One named query; ``params`` are the ``$names`` it binds, in order of first use."""

    name: str
    sql: str
    params: tuple[str, ...]

    def bind(self, values: dict) -> dict:
        """Pick exactly the parameters this query uses; a missing one is a programming error."""
        missing = [p for p in self.params if p not in values]
        if missing:
            raise TypeError(f"query {self.name!r} needs parameters {missing}")
        return {p: values[p] for p in self.params}


@functools.cache
def migrations() -> tuple[Migration, ...]:
    found = []
    for path in sorted((sql_dir() / "migrations").glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if not match:
            raise ValueError(f"migration file name must look like 0001_name.sql: {path.name}")
        found.append(Migration(int(match.group(1)), match.group(2), path.read_text(encoding="utf-8")))
    versions = [m.version for m in found]
    # Numbers are unique and increasing; a number may be missing while the branch that reserved it
    # is not merged yet (each store records which ones it applied, so a late one still runs).
    if len(set(versions)) != len(versions) or (versions and versions[0] < 1):
        raise ValueError(f"migrations must have unique numbers from 1 up, found {versions}")
    return tuple(found)


@functools.cache
def object_files() -> tuple[tuple[str, str], ...]:
    """(relative name, text) of every macro then view file, in load order (number prefix)."""
    root = sql_dir()
    files = []
    for folder in ("macros", "views"):
        for path in sorted((root / folder).glob("*.sql")):
            files.append((f"{folder}/{path.name}", path.read_text(encoding="utf-8")))
    return tuple(files)


def macro_statement(name: str) -> str:
    """The CREATE statement of one macro of sql/macros (up to the semicolon that ends its line), to define it on a
    bare connection (a benchmark of that macro alone)."""
    head = f"CREATE OR REPLACE MACRO {name}("
    for file_name, text in object_files():
        start = text.find(head)
        if start >= 0 and file_name.startswith("macros/"):
            return text[start:text.index(";\n", start) + 1]
    raise KeyError(f"no macro {name} in sql/macros")


def objects_checksum() -> str:
    digest = hashlib.sha256()
    for name, text in object_files():
        digest.update(name.encode())
        digest.update(text.encode())
    return digest.hexdigest()


@functools.cache
def queries() -> dict[str, Query]:
    found: dict[str, Query] = {}
    for path in sorted((sql_dir() / "queries").glob("*.sql")):
        text = path.read_text(encoding="utf-8")
        marks = list(_NAME_LINE.finditer(text))
        for i, mark in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            body = text[mark.end():end].strip()
            name = mark.group(1)
            if name in found:
                raise ValueError(f"query {name!r} is defined twice (second time in {path.name})")
            params = tuple(dict.fromkeys(_PARAM.findall(_strip_comments(body))))
            found[name] = Query(name, body, params)
    return found


def query(name: str) -> Query:
    return queries()[name]


def _strip_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*", "", sql)
