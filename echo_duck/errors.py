"""The typed errors echo_duck raises. Every public call fails with one of these, never a raw DuckDB error."""

from __future__ import annotations


class EchoDuckError(Exception):
    """Base class of every error echo_duck raises on purpose."""


class InvalidInput(EchoDuckError, ValueError):
    """A value passed to a public call is wrong; the message names it and says what is allowed."""


class RejectedWrite(EchoDuckError):
    """The write scanner refused content; nothing was stored (the attempt is quarantined)."""

    def __init__(self, reason: str, detail: str = "", field: str = "content"):
        self.reason = reason
        self.detail = detail
        self.field = field
        super().__init__(f"write rejected ({reason}) in {field}: {detail}" if detail else f"write rejected ({reason}) in {field}")


class ProvenanceConflict(EchoDuckError):
    """A lower-provenance write tried to replace a memory of higher provenance."""


class AmbiguousMatch(EchoDuckError):
    """A key matched several live memories; echo_duck refuses to guess which one to change."""


class MemoryNotFound(EchoDuckError, KeyError):
    """No memory (or session, or contradiction) with that id, key or suffix."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else "not found"


class PermissionDenied(EchoDuckError):
    """The caller may not write to that scope (not a member of the team or tenant)."""


class SchemaTooNew(EchoDuckError):
    """The file was written by a newer echo_duck; upgrade before opening it."""


class DatabaseLocked(EchoDuckError):
    """Another process holds the DuckDB file; DuckDB allows one writer process per file."""


class ExtensionMissing(EchoDuckError):
    """A DuckDB extension wheel (vss or fts) is missing or of the wrong version."""


class StorageError(EchoDuckError):
    """DuckDB failed underneath echo_duck (I/O, corruption); the cause is chained."""
