"""Dictionaries parsed once and kept as marshal files beside the user's other caches (jieba's word
frequencies, the bridge's CC-CEDICT tables): the file is named after the source it was built from, so a new
source (size, mtime) or a new parsing format means a new file. Reading checks nothing but that the file
loads; each caller checks the shape it expects. May import: nothing of echo_duck."""

from __future__ import annotations

import hashlib
import marshal
import os
from pathlib import Path
from typing import Any


def path_for(name: str, source: Path, fmt: str) -> Path:
    """The cache file for what ``fmt`` reads from ``source`` (OSError if the source cannot be read)."""
    stat = source.stat()
    key = hashlib.sha256(f"{fmt}|{source}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    return folder() / f"{name}-{key}.marshal"


def folder() -> Path:
    """Where the cache files live: ``$XDG_CACHE_HOME/echo_duck``, else ``~/.cache/echo_duck``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "echo_duck"


def load(path: Path) -> Any:
    """The value stored at ``path``, or None when it is missing or does not load."""
    try:
        return marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None


def save(path: Path, value: Any) -> None:
    """Write ``value`` atomically (a partial file, then a rename); a read-only home keeps nothing."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        partial.write_bytes(marshal.dumps(value))
        os.replace(partial, path)
    except OSError:
        pass
