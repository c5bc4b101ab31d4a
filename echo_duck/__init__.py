"""echo_duck: embedded, SQL-native long-term memory for AI agents, on DuckDB.

    with echo_duck.open("agent.duckdb") as mem:
        mem.remember("User prefers answers in Chinese", type="user", key="reply_language")
"""

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
from .store import EchoDuck, open
from .working import WorkingItem, WorkingMemory

__version__ = "0.1.0"

__all__ = [
    "open", "EchoDuck",
    "Memory", "Event", "History", "Session", "Message", "SessionMatch", "WorkingItem", "WorkingMemory",
    "EchoDuckError", "InvalidInput", "RejectedWrite", "ProvenanceConflict", "AmbiguousMatch", "MemoryNotFound",
    "PermissionDenied", "SchemaTooNew", "DatabaseLocked", "ExtensionMissing", "StorageError",
]
