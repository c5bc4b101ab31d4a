"""Which stored memory a caller's target names: a Memory, an id, a key (the caller's own first) or the short id
prefix tables print, among the rows the caller may see (an admin: any row, by id). The writer's update, forget and
restore, and every verb that takes a target, resolve it here."""

from __future__ import annotations

from typing import Any

from ..errors import AmbiguousMatch, InvalidInput, MemoryNotFound
from ..storage.db import Db
from . import validate
from .spec import Caller


def resolve(db: Db, caller: Caller, target: Any, *, live_only: bool, any_agent: bool = False) -> dict[str, Any]:
    """The one row ``target`` (a memory, id or key) names among those the caller can see
    (``any_agent``: any row, by id; keys still resolve among the caller's visible rows)."""
    who = dict(caller_agent=caller.agent_id, caller_session=caller.session_id)
    if not isinstance(target, str) or validate.looks_like_uuid(target):
        memory_id = validate.memory_id(target)
        row = (db.dict("memory_by_id", id=memory_id) if any_agent
               else db.dict("visible_memory_by_id", id=memory_id, **who))
        if row is None:
            raise MemoryNotFound(f"no memory with id {target} is visible to agent {caller.agent_id!r}")
        if live_only and row["status"] != "active":
            raise InvalidInput(f"memory {target} is {row['status']}; only active memories can be updated")
        return row
    key = validate.key(target)
    rows = db.dicts("visible_live_by_key", key=key, **who)
    if not rows and not live_only:  # history of a fact that is no longer active
        rows = db.dicts("visible_latest_by_key", key=key, **who)
    if not rows and validate.id_prefix(target):
        row = by_id_prefix(db, caller, target)
        if live_only and row["status"] != "active":
            raise InvalidInput(f"memory {row['id']} is {row['status']}; only active memories can be updated")
        return row
    if not rows:
        raise MemoryNotFound(f"no active memory with key {key!r} is visible to agent {caller.agent_id!r}")
    mine = [r for r in rows if r["agent_id"] == caller.agent_id]
    if len(mine) > 1:  # the host's and an agent handle's under one agent id: the caller's own kind
        mine = [r for r in mine if bool(r.get("by_host")) == caller.admin]
    if len(rows) > 1 and len(mine) == 1:
        return mine[0]  # the caller's own fact: another agent's row of that key (key_rows) is its own
    if len(rows) > 1:
        ids = ", ".join(str(r["id"]) for r in rows)
        raise AmbiguousMatch(f"key {key!r} matches {len(rows)} active memories ({ids}); pass one id instead")
    return rows[0]

def by_id_prefix(db: Db, caller: Caller, prefix: str, *, archived: bool = False) -> dict[str, Any]:
    """The one memory visible to the caller whose id starts with ``prefix`` (the short ids tables print); with
    ``archived``, also the rows exported to the Parquet archive (get() reads them, writes do not)."""
    who = dict(prefix=validate.id_prefix(prefix), caller_agent=caller.agent_id, caller_session=caller.session_id)
    rows = db.dicts("visible_by_id_prefix", **who)
    if archived:
        live = {str(r["id"]) for r in rows}
        rows += [r for r in db.dicts("archived_by_id_prefix", **who) if str(r["id"]) not in live]
    return only_match(rows, prefix, "memories",
                      f"no memory with key or id prefix {prefix!r} is visible to agent {caller.agent_id!r}")


def only_match(found: list, prefix: str, what: str, missing: str) -> Any:
    """The one of ``found`` (rows or records, the matches of a short id ``prefix``): MemoryNotFound(``missing``) when
    there is none, AmbiguousMatch naming every id when there are several ``what`` (a plural: "memories")."""
    if not found:
        raise MemoryNotFound(missing)
    if len(found) > 1:
        ids = ", ".join(str(r["id"] if isinstance(r, dict) else r.id) for r in found)
        raise AmbiguousMatch(f"id prefix {prefix!r} matches several {what} ({ids}); give more characters")
    return found[0]
