"""Export the memories a caller can see to JSONL or Parquet (SPEC I5).

An agent handle's export reads the documented ``visible_memories(agent, session)`` macro, so it never contains a
memory the agent may not see (nor another agent's sensitive or unshared personal memory). An admin handle's is the
host's backup: every agent's memories, whatever their scope or sensitivity, and with ``include_history`` the
versions moved to the Parquet archive too (``memories_all``); ``import_file(..., trusted=True)`` restores it,
each record under its owner (it was agent "default"'s view, and a restore lost every other agent's private and
group memories). One row per memory with every column of ``memories``
(provenance by name in JSONL); vectors are not exported (they belong to one model and are rebuilt on
import). ``include_history=True`` adds superseded, pending, flagged and forgotten rows; otherwise only
active ones. Rows held for review (quarantined) are never exported. Files are written next to their target (a new
file, readable by its owner only: an export holds memories) and renamed into place (an agent handle's linked in
only where nothing is), so a failed export never leaves a half-written file under the requested name. No
handle, admin included, may export onto the store's own files (the store file, its .wal, anything in its Parquet
archive folder; ``store_files.py``); an agent handle writes nothing inside the store's ``protected_paths`` and
never over an existing file (``storage/agent_files.py``): ``PermissionDenied``, nothing written.
``echo_duck.io.importers.import_file`` reads both back.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import InvalidInput, PermissionDenied
from ..models import PROVENANCE_NAMES, Memory
from ..storage.agent_files import HOST_BACKUP
from ..write import validate
from .store_files import refuse_store_file


@dataclass(frozen=True)
class ExportReport:
    path: str
    format: str
    rows: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def export_jsonl(mem: Any, path: str | Path, *, include_history: bool = False) -> ExportReport:
    """One JSON object per line, oldest first, timestamps in ISO format, UTF-8 (Chinese kept as is)."""
    target = _replacing(mem, path)  # checks the path first
    _named_for(path, "jsonl")
    frame = _rows(mem, include_history)
    mark = {HOST_BACKUP: True} if mem.caller.admin else {}  # an agent handle may not read it (agent_files)
    with target as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            for row in frame.iter_rows(named=True):
                record = Memory.from_row(row).to_dict()
                record["provenance"] = PROVENANCE_NAMES[record["provenance"]]
                f.write(json.dumps({**record, **mark}, ensure_ascii=False) + "\n")
    return ExportReport(str(path), "jsonl", frame.height)


def export_parquet(mem: Any, path: str | Path, *, include_history: bool = False) -> ExportReport:
    """One Parquet file (zstd) with the columns of ``memories``; ids as text, tags as lists."""
    import pyarrow.parquet as pq

    target = _replacing(mem, path)  # checks the path first
    _named_for(path, "parquet")
    table = _rows(mem, include_history).to_arrow()
    if mem.caller.admin:  # marked: an agent handle may not read it (agent_files)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), HOST_BACKUP.encode(): b"true"})
    with target as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return ExportReport(str(path), "parquet", table.num_rows)


def _named_for(path: str | Path, fmt: str) -> None:
    """Refuse a file name whose extension says the other format: import reads a file by its extension, so a backup
    written as Parquet under a .jsonl name (or the reverse) would not come back."""
    name = str(path).lower()
    if name.endswith((".md", ".markdown", ".json")):  # import reads these as MEMORY.md or a JSON document: nothing back
        raise InvalidInput(f"{path} is named as a file import reads as Markdown or JSON, not {fmt}: name it *.{fmt}")
    other = "parquet" if name.endswith(".parquet") else "jsonl" if name.endswith((".jsonl", ".ndjson")) else fmt
    if other != fmt:
        raise InvalidInput(f"{path} is named as a {other} file but the export writes {fmt}: name it *.{fmt}, or ask "
                           f"for {other}")


def _rows(mem: Any, include_history: bool) -> pl.DataFrame:
    history = validate.flag(include_history, "include_history")
    with mem.db.reading():
        if mem.caller.admin:  # the host's backup: every agent's rows (sql/queries/memories.sql)
            table = mem.db.arrow("export_everything", history=history)
        else:
            table = mem.db.arrow("export_visible", agent=mem.caller.agent_id, session=mem.caller.session_id,
                                 history=history)
    return pl.from_arrow(table)


class _replacing:
    """Write to a new temporary file beside ``path`` (created exclusively: never an existing file or a link),
    then rename it over ``path``; the temporary file is removed on failure. ``path`` may not be one of the
    store's own files, and on an agent handle may not be inside ``protected_paths`` nor exist already
    (``storage/agent_files.py``); all checked before anything is written."""

    def __init__(self, mem: Any, path: str | Path):
        self.path = validate.path(path)
        rules = mem._agent_files() if hasattr(mem, "_agent_files") else None
        self.new_only = rules is not None
        if rules is not None:  # before the path is looked up
            rules.check_write(self.path)
        if self.path.is_dir():
            raise InvalidInput(f"{self.path} is a directory; give a file name to export to")
        if not self.path.parent.exists():
            raise InvalidInput(f"the folder {self.path.parent} does not exist; create it first")
        refuse_store_file(mem, self.path, "export to")
        self.tmp: Path | None = None

    def __enter__(self) -> Path:
        try:
            fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        except OSError as e:  # a folder that holds no files of ours (/proc, read-only, full)
            raise InvalidInput(f"cannot write a file in {self.path.parent} ({e.strerror or e}); export elsewhere") from None
        os.close(fd)
        self.tmp = Path(name)
        return self.tmp

    def __exit__(self, exc_type, *_: Any) -> None:
        assert self.tmp is not None
        if exc_type is not None:
            self.tmp.unlink(missing_ok=True)
        elif self.new_only:  # an agent's: linked in only where nothing is (a file that came since is never replaced)
            try:
                _link_new(self.tmp, self.path)
            finally:
                self.tmp.unlink(missing_ok=True)
        else:
            os.replace(self.tmp, self.path)


def _link_new(tmp: Path, path: Path) -> None:
    """Put ``tmp`` at ``path`` only if nothing is there: a hard link (atomic), or where the file system has none, a
    name claimed exclusively and then replaced (a file that came since the check is never replaced)."""
    try:
        os.link(tmp, path)
        return
    except FileExistsError:
        pass
    except OSError:  # no hard links here
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            pass
        else:
            os.replace(tmp, path)
            return
    raise PermissionDenied(f"{path} appeared while exporting: an agent handle writes only new files, never over one "
                           "that is there; pick a new name")
