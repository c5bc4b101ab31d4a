"""Load the vss and fts extensions from their pinned PyPI wheels, offline.

DuckDB's own INSTALL would reach for the network, and pointing ``extension_directory`` at the wheels
fails (their layout lacks the platform level), so each binary is LOADed by file path. vss never
autoloads: it is loaded on every connection before the database file is attached, so that WAL replay
of any vss object can succeed.
"""

from __future__ import annotations

import importlib.metadata
import threading
from pathlib import Path

import duckdb

from ..errors import ExtensionMissing

EXTENSIONS = ("vss", "fts")


def extension_path(name: str) -> Path:
    """Path of the extension binary shipped by ``duckdb-extension-<name>`` for this duckdb."""
    package = f"duckdb-extension-{name}"
    fix = f"pip install '{package}=={duckdb.__version__}'"
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        raise ExtensionMissing(f"the DuckDB '{name}' extension is not installed; fix: {fix}") from None
    if dist.version != duckdb.__version__:
        raise ExtensionMissing(
            f"{package} {dist.version} does not match duckdb {duckdb.__version__}; fix: {fix}"
        )
    path = Path(dist.locate_file(f"duckdb_extension_{name}/extensions/v{duckdb.__version__}/{name}.duckdb_extension"))
    if not path.is_file():
        raise ExtensionMissing(f"{package} is installed but {path} is missing; fix: pip install --force-reinstall '{package}=={duckdb.__version__}'")
    return path


# (path, size, mtime_ns) of each extension file whose signature DuckDB checked in this process. Checking costs
# ~0.2 s per connection (a SHA-256 over 44 MB of binaries); once a file passed, later connections of a locked-down
# store load the same unchanged file without the check (see connection.connect). A changed file is checked again.
_VERIFIED: set[tuple[str, int, int]] = set()
_VERIFIED_LOCK = threading.Lock()


def _file_key(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return str(path), stat.st_size, stat.st_mtime_ns


def signatures_checked() -> bool:
    """True when every extension file, as it is on disk now, already passed DuckDB's signature check here."""
    try:
        keys = {_file_key(extension_path(name)) for name in EXTENSIONS}
    except (ExtensionMissing, OSError):
        return False
    with _VERIFIED_LOCK:
        return keys <= _VERIFIED


def load_extensions(con: duckdb.DuckDBPyConnection, *, checked: bool = True) -> None:
    """LOAD vss and fts by file path. ``checked``: the connection verifies signatures (the default); each file that
    loads on such a connection is remembered as verified."""
    for name in EXTENSIONS:
        path = extension_path(name)
        try:
            # LOAD takes no bound parameters; the path comes from the installed wheel, quoted safely.
            key = _file_key(path)
            con.execute(f"LOAD {quote_literal(str(path))}")
        except (duckdb.Error, OSError) as e:
            raise ExtensionMissing(f"could not load the DuckDB '{name}' extension from {path}: {e}") from e
        if checked:
            with _VERIFIED_LOCK:
                _VERIFIED.add(key)


def quote_literal(text: str) -> str:
    """A SQL string literal, for the few statements (LOAD, ATTACH) that cannot bind parameters."""
    return "'" + text.replace("'", "''") + "'"


def quote_identifier(name: str) -> str:
    """A SQL identifier in double quotes, for the few statements that name a table from the catalog."""
    return '"' + name.replace('"', '""') + '"'
