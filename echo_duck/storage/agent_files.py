"""The files an agent handle may read (kb_add, import_file) and write (export_jsonl, export_parquet).

The host (an admin handle) is trusted with its process's files. An agent handle is not (store/TRUST.md):

- it reads and writes nothing inside ``refused`` (the store's ``protected_paths`` option and the store's own
  files: the .duckdb, its .wal, its archive folder), compared after every symlink is resolved and *before*
  anything is looked up, so a refused path answers the same whether or not it exists (no oracle of which agents
  have archived rows, or of what a protected folder holds); a folder an agent adds is walked without entering a
  refused folder or reading a refused file;
- it reads no file with more than one hard link: a second name for a file that may live anywhere (a credentials
  file, another user's notes), which nothing in the folder shows;
- it writes only a new file: an export never replaces a file that is there (another store, the host's backup, a
  config file the host process may write), nor writes through a symlink;
- it reads no host's backup: an admin handle's export holds every agent's memories and says so (``HOST_BACKUP``,
  io/exporters.py), wherever it was written (the store's own folder is not refused: a project keeps its
  documents there).

Every refusal is ``PermissionDenied`` naming the path the caller gave.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import PermissionDenied

_HOST = "the host (an admin handle)"
HOST_BACKUP = "host_backup"  # an admin export's mark: a key of each JSONL record, of a Parquet file's metadata


@dataclass(frozen=True)
class AgentFiles:
    """An agent handle's file rules: nothing below any of ``refused`` (resolved folders or files)."""

    refused: tuple[str, ...] = ()

    def root_of(self, path: str | os.PathLike[str]) -> str | None:
        """The refused folder or file ``path`` lies in (after resolving symlinks), or None."""
        real = Path(os.path.realpath(os.path.expanduser(os.fspath(path))))
        return next((root for root in self.refused if _inside(real, Path(root))), None)

    def refuse(self, path: str | os.PathLike[str], doing: str) -> None:
        """PermissionDenied when ``path`` lies in a refused folder; nothing on disk is looked at but symlinks."""
        root = self.root_of(path)
        if root is not None:
            raise PermissionDenied(f"{os.fspath(path)}: an agent handle may not {doing} anything inside the store's "
                                   f"protected path {root}; {_HOST} can, if it should")

    def check_read(self, path: str | os.PathLike[str], doing: str = "read") -> None:
        """``refuse``, then PermissionDenied for a file with a second hard link."""
        self.refuse(path, doing)
        try:
            st = os.stat(path)
        except OSError:
            return  # nothing there: the caller's own "no such file" error follows
        if not os.path.isdir(path) and st.st_nlink > 1:
            raise PermissionDenied(f"{os.fspath(path)} has {st.st_nlink} hard links: an agent handle may not {doing} "
                                   f"a file that is also reachable under another name; copy it, or {_HOST} does it")
        if not os.path.isdir(path) and is_host_backup(path):
            raise PermissionDenied(f"{os.fspath(path)} is the host's backup (an admin export: every agent's "
                                   f"memories): an agent handle may not {doing} it; {_HOST} restores it "
                                   "(import --trusted --admin)")

    def check_write(self, path: str | os.PathLike[str]) -> None:
        """``refuse``, then PermissionDenied for a path that exists (or is a symlink, dangling or not)."""
        self.refuse(path, "write")
        if os.path.lexists(path):
            raise PermissionDenied(f"{os.fspath(path)} exists: an agent handle writes only new files, never over one "
                                   f"that is there; remove it first, pick a new name, or {_HOST} exports")


def is_host_backup(path: str | os.PathLike[str]) -> bool:
    """Whether the file is marked an admin export (``HOST_BACKUP``): its Parquet metadata, or its first JSON line,
    read whole (a record made longer than a fixed prefix read as no backup). A file that cannot be read or parsed is
    not (its reader's own error follows)."""
    try:
        with open(path, "rb") as f:
            if f.read(4) == b"PAR1":
                import pyarrow.parquet as pq

                return HOST_BACKUP.encode() in (pq.read_schema(path).metadata or {})
            f.seek(0)
            line = b""
            while not line.strip(b" \t\r\n\xef\xbb\xbf"):  # the first line with anything on it (a BOM aside)
                line = f.readline()
                if not line:
                    return False
            first = json.loads(line.decode("utf-8-sig"))
    except Exception:  # noqa: BLE001 - not a backup we can read: the import or kb reader reports what is wrong
        return False
    return isinstance(first, dict) and first.get(HOST_BACKUP) is True


def agent_files(refused: Sequence[str]) -> AgentFiles:
    """AgentFiles refusing ``refused`` (folders or files), each resolved."""
    return AgentFiles(tuple(dict.fromkeys(os.path.realpath(os.path.expanduser(p)) for p in refused)))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
