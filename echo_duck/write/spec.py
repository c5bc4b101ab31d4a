"""What a write is: who writes (``Caller``), what (``NewMemory``, built and validated by ``prepare``), and
what a bulk write returns (``WriteBatch``). No database here. May import what ``write`` may.
"""

from __future__ import annotations

import inspect
import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ..errors import InvalidInput
from ..models import SENSITIVITIES, TYPES, Memory
from . import validate

WRITE_PATHS = ("api", "cli", "import", "consolidation", "tool")


@dataclass(frozen=True)
class Caller:
    """Who is asking: identity for scope checks, and the actor recorded in events."""

    agent_id: str
    session_id: str | None = None
    team_id: str | None = None
    tenant_id: str | None = None
    actor: str = ""
    path: str = "api"
    admin: bool = False  # an admin handle (echo_duck.open(..., admin=True)): may act on every agent's rows

    def acting_as(self, actor: str, path: str) -> "Caller":
        return replace(self, actor=actor, path=path)

    @property
    def who(self) -> str:
        return self.actor or f"{'admin' if self.admin else 'agent'}:{self.agent_id}"


class WriteBatch(list):
    """The memories a bulk write stored (quarantined ones included), in input order; ``blocked`` lists
    (position in the input, Finding) for each write the scanner refused, ``quarantined`` the held ones."""

    def __init__(self, stored: list[Memory], blocked: list[tuple[int, Any]], quarantined: list[Memory]):
        super().__init__(stored)
        self.blocked = blocked
        self.quarantined = quarantined


@dataclass(frozen=True)
class NewMemory:
    """A validated memory to write (every field checked by ``prepare``)."""

    content: str
    type: str
    key: str | None
    tags: tuple[str, ...]
    entities: tuple[str, ...]
    scope: str
    team_id: str | None
    tenant_id: str | None
    source_session: str | None
    source_refs: tuple[str, ...]
    observed_at: datetime | None
    importance: float
    confidence: float
    provenance: int
    pinned: bool
    sensitivity: str
    episode_id: uuid.UUID | None
    tier: str = "semantic"


DEFAULT_IMPORTANCE = 0.5  # a write that names none; an untrusted import may lower a record's, never raise it


def prepare(caller: Caller, content: Any, *, type: Any, key: Any = None, tags: Any = (), entities: Any = (),
            scope: Any = "private", team_id: Any = None, tenant_id: Any = None, source_session: Any = None,
            source_refs: Any = (), observed_at: Any = None, importance: Any = DEFAULT_IMPORTANCE, confidence: Any = 0.8,
            provenance: Any = "model_inferred", pinned: Any = False, sensitivity: Any = "normal",
            episode_id: Any = None, tier: Any = "semantic") -> NewMemory:
    """Validate the arguments of a write; raises InvalidInput naming the first bad one."""
    scope, team_id, tenant_id = validate.owner(scope, team_id, tenant_id, default_team=caller.team_id,
                                               default_tenant=caller.tenant_id)
    return NewMemory(
        content=validate.text(content, "content"),
        type=validate.choice(type, "type", TYPES),
        key=validate.key(key),
        tags=tuple(validate.labels(tags, "tags")),
        entities=tuple(validate.labels(entities, "entities")),
        scope=scope,
        team_id=team_id,
        tenant_id=tenant_id,
        source_session=validate.optional_text(source_session, "source_session", max_chars=200) or caller.session_id,
        source_refs=tuple(validate.refs(source_refs)),
        observed_at=validate.timestamp(observed_at, "observed_at"),
        importance=validate.unit_interval(importance, "importance"),
        confidence=validate.unit_interval(confidence, "confidence"),
        provenance=validate.provenance(provenance),
        pinned=validate.flag(pinned, "pinned"),
        sensitivity=validate.choice(sensitivity, "sensitivity", SENSITIVITIES),
        episode_id=None if episode_id is None else validate.memory_id(episode_id, "episode_id"),
        tier=validate.choice(tier, "tier", ("episodic", "semantic")),
    )


RECORD_FIELDS = ("content", *tuple(inspect.signature(prepare).parameters)[2:])  # remember()'s arguments


def prepare_records(caller: Caller, records: Any) -> list[NewMemory]:
    """A bulk write's records, each validated as prepare_record does; an InvalidInput names the record's position."""
    if isinstance(records, str):
        raise InvalidInput("records must be a list of dicts, got str")
    specs = []
    for i, record in enumerate(validate._iterable(records, "records")):
        try:
            specs.append(prepare_record(caller, record))
        except InvalidInput as e:
            raise InvalidInput(f"record {i}: {e}") from None
    return specs


def prepare_record(caller: Caller, record: Any) -> NewMemory:
    """One record of a bulk write (a dict of remember()'s arguments), validated as remember() validates them; a
    missing or unknown field is an InvalidInput that names it."""
    if not isinstance(record, dict):
        raise InvalidInput(f"must be a dict of remember()'s arguments, got {type(record).__name__}")
    missing = [name for name in ("content", "type") if name not in record]
    if missing:
        hint = f" (type is one of {', '.join(TYPES)})" if "type" in missing else ""
        raise InvalidInput(f"missing {' and '.join(map(repr, missing))}{hint}")
    unknown = sorted(map(repr, set(record) - set(RECORD_FIELDS)))
    if unknown:
        raise InvalidInput(f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                           f"a record takes {', '.join(RECORD_FIELDS)}")
    fields = dict(record)
    return prepare(caller, fields.pop("content"), **fields)
