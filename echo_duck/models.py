"""The plain frozen dataclasses echo_duck returns, and the vocabularies they use."""

from __future__ import annotations

import functools
import hashlib
import json
import uuid
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

TYPES = ("user", "environment", "procedure", "self")
PERSISTED_TIERS = ("episodic", "semantic", "archival")
SCOPES = ("private", "session", "team", "tenant", "public")
# Message and working-memory roles of the user, the agent and the host; any other role (a tool, a fetched page, a
# note) is text from outside (consolidation, working memory's render).
OWN_ROLES = ("user", "human", "assistant", "system")
SENSITIVITIES = ("normal", "personal", "sensitive")
SHARE_TAG = "share:personal"  # the owner's consent to show a personal memory; another_agent_may_see (10_scope.sql)
STATUSES = ("active", "pending", "superseded", "forgotten", "flagged", "quarantined")
ROLES = ("user", "assistant", "system", "tool")
# Higher provenance is more trusted; a write never replaces a memory of higher provenance.
PROVENANCE = {"legacy": 0, "model_inferred": 1, "consolidated": 2, "user_stated": 3}
PROVENANCE_NAMES = {v: k for k, v in PROVENANCE.items()}


def memory_author(agent_id: str, by_host: bool | None) -> str:
    """Who wrote a memory, as disputes and the shared block count authors (sql macro memory_author): its agent, or
    the host for what the host wrote itself (memories.by_host: an agent handle may carry the host's agent id)."""
    return f"{agent_id}\x00host" if by_host else agent_id


def shown_agent(agent_id: str) -> str:
    """An agent id as the prompt's labels show it ("[agent <id>, team]"): on one line, no brackets or unprintable
    characters, and past 60 characters (or when anything was replaced) its start and a digest of the whole, so two ids
    never show as one author."""
    shown = "".join(c if c.isprintable() and c not in "[]" else "?" for c in " ".join(str(agent_id).split()))
    if len(shown) <= 60 and shown == str(agent_id):
        return shown  # a stored id from before ids were checked (brackets, controls) is shown marked, with its digest
    return f"{shown[:48]}…#{hashlib.sha256(str(agent_id).encode()).hexdigest()[:8]}"


def _plain(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, list):
        return tuple(_plain(v) for v in value)
    return value


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


class Record:
    """Shared behaviour of the returned dataclasses: built from a query row, dumped as JSON-ready dict."""

    @classmethod
    def from_row(cls, row: dict[str, Any]):
        names = _field_names(cls)  # a recall builds ten of these from rows of ~60 columns
        return cls(**{k: _plain(row[k]) for k in names if k in row})

    def to_dict(self) -> dict[str, Any]:
        """Timestamps as ISO strings, tuples as lists."""
        return {f.name: _jsonable(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True)
class Memory(Record):
    id: str
    agent_id: str
    type: str
    tier: str
    key: str | None
    content: str
    tags: tuple[str, ...]
    entities: tuple[str, ...]
    scope: str
    team_id: str | None
    tenant_id: str | None
    source_session: str | None
    source_refs: tuple[str, ...]
    created_at: datetime
    updated_at: datetime
    observed_at: datetime | None
    importance: float
    confidence: float
    access_count: int
    last_accessed: datetime | None
    helpful_count: int
    unhelpful_count: int
    episode_id: str | None
    version: int
    supersedes: str | None
    superseded_by: str | None
    provenance: int
    pinned: bool
    sensitivity: str
    status: str
    by_host: bool = False  # the host application wrote this version itself (memories.by_host)

    @property
    def provenance_name(self) -> str:
        return PROVENANCE_NAMES[self.provenance]


@dataclass(frozen=True)
class Event(Record):
    event_id: int
    occurred_at: datetime
    actor: str
    action: str
    memory_id: str | None
    reason: str | None
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> "Event":
        row = dict(row)
        for side in ("before", "after"):
            row[side] = json.loads(row[side]) if row.get(side) else None
        return super().from_row(row)



@dataclass(frozen=True)
class History(Record):
    """Every version of one fact (oldest first) and every event on those versions."""

    versions: tuple[Memory, ...]
    events: tuple[Event, ...]

    @property
    def current(self) -> Memory:
        return self.versions[-1]

    def to_dict(self) -> dict[str, Any]:
        return {"versions": [v.to_dict() for v in self.versions], "events": [e.to_dict() for e in self.events]}


@dataclass(frozen=True)
class Session(Record):
    id: str
    agent_id: str
    title: str | None
    started_at: datetime
    last_message_at: datetime
    ended_at: datetime | None
    consolidated_at: datetime | None
    message_count: int = 0
    consolidated_seq: int | None = None  # the last message a finished consolidation read




@dataclass(frozen=True)
class Message(Record):
    id: str
    session_id: str
    seq: int
    role: str
    content: str
    created_at: datetime




@dataclass(frozen=True)
class SessionMatch(Record):
    """A session whose messages contain the searched text."""

    id: str
    title: str | None
    started_at: datetime
    last_message_at: datetime
    matches: int
    first_match: str




def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value
