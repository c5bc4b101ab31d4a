"""Review of quarantined writes: a person approves (the memory goes live) or rejects (it is forgotten).

The scanner quarantines a write it is unsure about (write/scan/verdict.py): the row is stored with status
'quarantined' and every read path leaves it out. Each decision is an event on the memory ("approve" or
"reject", with the row as it was before). Agents acting through tools have no verb for this.
"""

from __future__ import annotations

from typing import Any

from ..errors import AmbiguousMatch, InvalidInput, MemoryNotFound, PermissionDenied, ProvenanceConflict
from ..models import PROVENANCE_NAMES, Memory
from . import validate
from .guards import require_owner
from .narrowing import narrow_history
from .targets import only_match
from .writer import Caller, Writer


def approve(writer: Writer, caller: Caller, target: Any, *, reason: str | None = None) -> Memory:
    """A person accepts a quarantined memory: it goes live, as the next version of the live memory with
    its key in its scope if there is one (provenance still guards it)."""
    with writer._indexed_transaction("approve"):
        row = _quarantined(writer, caller, target)
        owner = dict(scope=row["scope"], agent_id=row["agent_id"], source_session=row["source_session"],
                     team_id=row["team_id"], tenant_id=row["tenant_id"])
        author = Caller(agent_id=row["agent_id"], session_id=row["source_session"])  # as its author's write met it
        live = writer.db.dicts("live_by_key_in_scope", key=row["key"], **owner) if row["key"] else []
        live = writer.key_rows(author, live)
        if len(live) > 1:
            raise AmbiguousMatch(f"key {row['key']!r} has {len(live)} active memories in this scope; forget the extra ones first")
        old = live[0] if live else None
        # as the write itself would have been refused: another agent's key, or the host's (by_host) under the same id
        if old is not None and (old["agent_id"] != author.agent_id or bool(old.get("by_host")) > bool(row.get("by_host"))):
            raise PermissionDenied(f"memory {row['id']} is agent {author.agent_id!r}'s write of key {row['key']!r}, "
                                   f"which memory {old['id']} of agent {old['agent_id']!r} holds in this scope; "
                                   "a shared key is its writer's fact: reject the quarantined write instead")
        if old is not None and row["provenance"] < old["provenance"]:
            raise ProvenanceConflict(f"memory {old['id']} (key {row['key']!r}) is {PROVENANCE_NAMES[old['provenance']]}; "
                                     f"the quarantined {PROVENANCE_NAMES[row['provenance']]} write cannot replace it")
        before = writer.db.scalar("memory_json", id=row["id"])
        writer.db.run("approve_quarantined", id=row["id"], version=old["version"] + 1 if old else 1,
                    supersedes=old["id"] if old else None, now=writer._now())
        if old is not None:
            writer.db.run("supersede_memory", id=old["id"], new_id=row["id"], now=writer._now())
            narrow_history(writer, caller, old, row["sensitivity"], row["tags"])
        writer._event(caller, "approve", row["id"], reason or "approved after quarantine", before)
    return writer._memory(row["id"])


def reject(writer: Writer, caller: Caller, target: Any, *, reason: str | None = None) -> Memory:
    """A person refuses a quarantined memory: it is forgotten (the row stays for the audit)."""
    with writer.db.transaction("reject"):
        row = _quarantined(writer, caller, target)
        require_owner(caller, row, "reject")  # rejecting forgets it: what forget() asks (a team member may see it)
        before = writer.db.scalar("memory_json", id=row["id"])
        writer.db.run("set_memory_status", id=row["id"], status="forgotten", now=writer.clock())
        writer._event(caller, "reject", row["id"], reason or "rejected after quarantine", before)
        return writer._memory(row["id"])


def _quarantined(writer: Writer, caller: Caller, target: Any) -> dict[str, Any]:
    """The quarantined memory ``target``: any agent's for an admin handle (a person reviews them all), else the
    caller's own (visible_memories shows an agent no other agent's quarantined rows)."""
    prefix = validate.id_prefix(target)
    if prefix is not None:  # the short id `echo-duck list` prints
        rows = writer.db.dicts("quarantined_by_id_prefix", prefix=prefix, caller_agent=caller.agent_id,
                               any_agent=caller.admin)
        target = only_match(rows, prefix, "quarantined memories", f"no quarantined memory with id prefix {prefix!r} "
                            f"is visible to agent {caller.agent_id!r}")["id"]
    if caller.admin:
        row = writer.db.dict("memory_by_id", id=validate.memory_id(target))
    else:
        row = writer.db.dict("visible_memory_by_id", id=validate.memory_id(target), caller_agent=caller.agent_id,
                             caller_session=caller.session_id)
    if row is None:
        raise MemoryNotFound(f"no memory with id {target} is visible to agent {caller.agent_id!r}")
    if row["status"] != "quarantined":
        raise InvalidInput(f"memory {target} is {row['status']}, not quarantined; only quarantined memories are approved or rejected")
    return row
