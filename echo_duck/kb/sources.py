"""What an add reads: a file, a folder's files or a raw text, and which files an agent handle may read.

The host (an admin handle) is trusted: it may add any .md/.markdown/.txt file its process can read. An agent
handle is not (store/TRUST.md), so for one ``inputs`` applies ``storage.agent_files``: a path inside the store's
``protected_paths`` or its own files is refused before it is looked up (the same answer whether it exists or
not), a folder is walked without entering such a folder or reading such a file, and a file with a second hard
link is refused (PermissionDenied naming the path given).

In a folder, a symlink whose target lies outside the folder is refused for every handle (InvalidInput).
A file's path is stored and cited with its secrets masked (masking.mask_path).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..storage.agent_files import AgentFiles
from ..write import validate
from .masking import mask_path

SUFFIXES = (".md", ".markdown", ".txt")
MAX_FILE_BYTES = 5_000_000  # a larger file is almost certainly not a hand-written document
_LOOKS_LIKE_PATH = re.compile(r"^[^\s]*(?:[/\\][^\s]*|\.[A-Za-z0-9]{1,10})$")


@dataclass(frozen=True)
class Document:
    """One text to ingest: a file (absolute POSIX path, secrets masked) or a raw text (path None)."""

    path: str | None
    text: str
    markdown: bool

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def inputs(target: Any, source: str | None, agent: AgentFiles | None = None) -> tuple[list[Document], str | None, str]:
    """(documents, folder prefix or None, source) for a path, a folder or a raw text.

    A ``Path`` is a path. A str is a path when it exists, or when it is one word with a slash or a file suffix
    ("docs/deploy.md", "notes.txt"), so a mistyped path is an error, not a tiny document; anything else is raw
    text, which needs ``source``. ``agent``: an agent handle's rules (see above). Default source: the file or
    folder name.
    """
    if source is not None:
        source = validate.text(source, "source", max_chars=200).strip()
    if isinstance(target, os.PathLike) or (isinstance(target, str) and _is_path(target)):
        docs, folder, name = _files(target, agent)
        paths = [d.path for d in docs]
        if len(set(paths)) < len(paths):  # two names alike once their secrets are masked would be one document
            raise InvalidInput(f"two files are both stored as {next(p for p in paths if paths.count(p) > 1)} once the "
                               "secret in their names is masked; rename them (a file name is no place for a secret)")
        return docs, folder, source or mask_path(name)
    raw = validate.text(target, "text", max_chars=MAX_FILE_BYTES)
    if source is None:
        raise InvalidInput("source= is required with raw text: it names the text so it can be replaced or removed "
                           "later")
    return [Document(None, raw, True)], None, source


def _files(target: Any, agent: AgentFiles | None) -> tuple[list[Document], str | None, str]:
    """(documents with masked paths, masked folder prefix or None, the file or folder name) for a path."""
    path = Path(target).expanduser()
    if agent is not None:
        agent.refuse(path, "add")  # before it is looked up: a refused path answers alike, there or not
    if not path.exists():
        raise InvalidInput(f"no such file or folder: {os.fspath(target)!r} "
                           "(to add raw text, pass text with spaces or a newline)")
    path = path.resolve()
    if path.is_dir():
        files = files_in(path, agent)
        for file in files if agent is not None else ():
            agent.check_read(file, "add")
        docs = [d for d in map(read, files) if d.text.strip()]  # an empty file has nothing to find
        prefix = mask_path(path.as_posix().rstrip("/") + "/")
        return [replace(d, path=mask_path(d.path)) for d in docs], prefix, path.name
    given = Path(target).expanduser()
    if given.is_symlink() and not _inside(path, given.absolute().parent.resolve()):
        raise InvalidInput(f"{os.fspath(target)} is a symlink to {path}, outside its own folder; add the target "
                           "itself if it really is a document")
    if agent is not None:
        agent.check_read(path, "add")
    doc = read(path)
    if not doc.text.strip():
        raise InvalidInput(f"{path} is empty: there is nothing to add")
    return [replace(doc, path=mask_path(doc.path))], None, path.name


def files_in(root: Path, agent: AgentFiles | None = None) -> list[Path]:
    """Every .md/.markdown/.txt file under ``root``, sorted; hidden files and folders (.git) skipped, and for
    an agent handle (``agent``) the folders and files it may not read, unread and unnamed. A symlink whose
    target lies outside ``root`` is refused (InvalidInput): it would ingest a file from elsewhere (a
    credentials file, another user's notes) under this folder's name."""
    found = []
    root = root.resolve()
    allowed = (lambda p: True) if agent is None else (lambda p: agent.root_of(p) is None)
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and allowed(Path(folder, d)))
        for n in names:
            if n.startswith(".") or not n.lower().endswith(SUFFIXES) or not allowed(Path(folder, n)):
                continue
            path = Path(folder, n)
            if path.is_symlink() and not _inside(path.resolve(), root):
                raise InvalidInput(f"{path} is a symlink to {path.resolve()}, outside the folder being added ({root}); "
                                   "remove the link or add its target on its own")
            found.append(path)
    return sorted(found)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def read(path: Path) -> Document:
    """A file's text (UTF-8, a BOM dropped); InvalidInput naming the file when it is not text."""
    if path.suffix.lower() not in SUFFIXES:
        raise InvalidInput(f"{path}: unsupported file type {path.suffix or '(none)'!r}; the knowledge base reads "
                           f"{', '.join(SUFFIXES)} files (convert it to markdown or text first)")
    try:  # a link whose target is gone, a file removed or made unreadable since the folder was listed
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InvalidInput(f"{path} is {size:,} bytes; the limit for one document is {MAX_FILE_BYTES:,}; split it")
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InvalidInput(f"{path} is not UTF-8 text (bad byte at {e.start}); convert it to UTF-8 or leave it "
                           "out") from None
    except OSError as e:
        raise InvalidInput(f"{path} cannot be read ({e.strerror or e}); fix or remove it") from None
    if "\x00" in text:
        raise InvalidInput(f"{path} contains NUL bytes: it looks binary, not like a text document")
    return Document(path.as_posix(), text, path.suffix.lower() != ".txt")


def _is_path(value: str) -> bool:
    if "\n" in value or len(value) > 4096 or not value.strip():
        return False
    try:
        return Path(value).expanduser().exists() or bool(_LOOKS_LIKE_PATH.match(value.strip()))
    except OSError:  # e.g. a name too long for the file system: it is text
        return False
