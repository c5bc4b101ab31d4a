"""echo_duck: embedded, SQL-native long-term memory for AI agents, on DuckDB.

    with echo_duck.open("agent.duckdb", agent_id="coder") as mem:
        mem.remember("User prefers answers in Chinese", type="user", key="reply_language")
        hits = mem.recall("which language should I answer in?")

This module holds ``open``, the public dataclasses and the errors, and nothing else. Importing it is
light: the store (DuckDB, Polars, numpy) loads on first use of ``open`` or ``EchoDuck``.

The package, from the top down (each subpackage's ``__init__`` says what it may import):
``store/`` the facade and its verbs; ``cli/`` and ``bench/`` on top of it; ``recall/``,
``lifecycle/``, ``kb/`` and ``io/`` beside each other; ``write/`` the one write path; ``index/`` the
search indexes; ``storage/``, ``embed/`` and ``text/`` at the bottom, with ``errors`` and ``models``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import (
    AmbiguousMatch,
    DatabaseLocked,
    EchoDuckError,
    ExtensionMissing,
    InvalidInput,
    MemoryNotFound,
    PermissionDenied,
    ProvenanceConflict,
    RejectedWrite,
    SchemaTooNew,
    StorageError,
)
from .models import Event, History, Memory, Message, Session, SessionMatch

if TYPE_CHECKING:
    from .store.facade import EchoDuck, open
    from .store.working import WorkingItem, WorkingMemory

__version__ = "0.1.0"

__all__ = [
    "open", "EchoDuck",
    "Memory", "Event", "History", "Session", "Message", "SessionMatch", "WorkingItem", "WorkingMemory",
    "EchoDuckError", "InvalidInput", "RejectedWrite", "ProvenanceConflict", "AmbiguousMatch", "MemoryNotFound",
    "PermissionDenied", "SchemaTooNew", "DatabaseLocked", "ExtensionMissing", "StorageError",
]

_LAZY = {"open": "store.facade", "EchoDuck": "store.facade",
         "WorkingItem": "store.working", "WorkingMemory": "store.working"}
_LAZY_MODULES = {"tools": "store.tools"}  # ``from echo_duck import tools``: the agent tools


def __getattr__(name: str) -> Any:
    """Load the store on first use, so that ``import echo_duck`` stays light."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in _LAZY_MODULES:
        import importlib

        module = importlib.import_module(f".{_LAZY_MODULES[name]}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'echo_duck' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_MODULES))
