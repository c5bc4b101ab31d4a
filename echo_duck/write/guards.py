"""Who may write what: ownership, the provenance of a request, publish rights for shared scopes, and which
behaviour rules the scanner reads as labels. May import what ``write`` may.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..errors import InvalidInput, PermissionDenied, ProvenanceConflict
from ..models import PROVENANCE, PROVENANCE_NAMES
from ..storage.db import Db
from .scan.normalise import small_capitals, view
from .spec import Caller, NewMemory


def agent_owns(caller: Caller, row: dict[str, Any]) -> bool:
    """An agent handle's own row: its agent id, and not what the host wrote under that id (memories.by_host)."""
    return row["agent_id"] == caller.agent_id and not row.get("by_host")


def require_owner(caller: Caller, row: dict[str, Any], verb: str) -> None:
    """Only a memory's owner (or an admin handle) may change it; what the host wrote itself (memories.by_host), only an
    admin handle: an agent handle may carry the host's own agent id ("default", echo_duck.open(path)). A tool call
    or an import the host runs on its admin handle acts with its rights (what it writes is not by_host)."""
    if not caller.admin and row["agent_id"] != caller.agent_id:
        raise PermissionDenied(f"memory {row['id']} belongs to agent {row['agent_id']!r}; only its owner or an "
                               f"admin handle (echo_duck.open(..., admin=True)) may {verb} it")
    if row.get("by_host") and not caller.admin:
        raise PermissionDenied(f"memory {row['id']} was written by the host (by_host); only an admin handle may {verb} "
                               f"it ({admin_hint(caller)})")


def admin_hint(caller: Caller) -> str:
    """How the caller opens an admin handle: the CLI's flag, else the Python call."""
    return "--admin" if caller.path == "cli" else "echo_duck.open(..., admin=True)"


def check_actor(actor: str, agent_id: str, admin: bool) -> str:
    """The label events record for an agent handle's writes (open(actor=), for_agent(actor=), acting_as) may not read
    as the admin's or another agent's ("admin:…", "agent:<other>"): the log would credit them with this agent's
    changes. Read as the prompt would show it (invisible characters gone, look-alikes, small capitals and full-width
    forms folded), word by word, and also with its separators dropped ("ag ent:alice"); control and format
    characters (a second line, a right-to-left override) are refused. An admin handle labels freely."""
    if admin:
        return actor
    if any(unicodedata.category(c) in ("Cc", "Cf") for c in actor):
        raise PermissionDenied(f"actor {actor!r} holds a control or format character; an event label is plain text")
    words, own = _label_words(actor), _label_words(agent_id)
    mine = ["agent", *own]
    i, names_other = 0, False
    while i < len(words) and not names_other:
        if words[i:i + len(mine)] == mine:
            i += len(mine)
            continue
        names_other = words[i] in ("admin", "agent")
        i += 1
    joined, own_joined = "".join(words), "agent" + "".join(own)
    if names_other or (joined.startswith(("admin", "agent")) and not joined.startswith(own_joined)):
        raise PermissionDenied(f"actor {actor!r} reads as another identity's label; an agent handle records its writes "
                               f"as agent {agent_id!r} (choose a label without 'admin:' or another 'agent:')")
    return actor


def _label_words(text: str) -> list[str]:
    folded = small_capitals(view(text)).casefold()
    return [w for w in re.split(r"[\W_]+", folded) if w]


def check_provenance(caller: Caller, row: dict[str, Any], level: int, verb: str) -> None:
    """An agent's request of lower provenance than the memory must say so (as writes must)."""
    if not caller.admin and level < row["provenance"]:
        raise ProvenanceConflict(
            f"memory {row['id']} is {PROVENANCE_NAMES[row['provenance']]}; a {PROVENANCE_NAMES[level]} request "
            f"cannot {verb} it; ask the user, or pass provenance='{PROVENANCE_NAMES[row['provenance']]}' "
            "if the user asked for it")


def host_writes(caller: Caller) -> bool:
    """The host application writes this itself: an admin handle through the API or the CLI (memories.by_host), or
    restoring what the host wrote (path "restore": a trusted import's record its file marks by_host, a backup of the
    host's own words). An import, consolidation or a tool call is someone else's text, even when the host runs it."""
    return caller.admin and caller.path in ("api", "cli", "restore")


def new_words_by_host(caller: Caller, old: dict, content: str, words_by_host: bool | None = None) -> bool:
    """Whether a new version of ``old`` is the host's word: never from anyone but the host (host_writes); from the host,
    the mark of the row whose words it takes when given (a reversed contradiction takes the claim's), else the old
    version's when the words are unchanged (tags, pins, a compression: a member's text stays the member's), else
    true (the host wrote new words)."""
    if not host_writes(caller):
        return False
    if words_by_host is not None:
        return words_by_host
    return bool(old.get("by_host")) or not same_words(content, old["content"])


def same_words(content: Any, old: str) -> bool:
    """Whether ``content`` says what ``old`` says: a space or a hidden character is no word."""
    return isinstance(content, str) and view(content) == view(old)


def user_states(caller: Caller, spec: NewMemory) -> bool:
    """The user states this memory through the host (API or CLI, provenance user_stated): the user's say in it is
    theirs to give ("you can pay the phone bill each month, no need to ask"), so the scanner's consent rule does not
    hold it; nor on a trusted restore of what the host wrote (path "restore", admin only). Tools, imports,
    consolidation and any lower provenance get the full scan, and so does what an agent
    handle shares (team, tenant, public): its user_stated is its own claim, which only its own prompt trusts (SPEC
    W5), and a shared memory reaches every member's."""
    shared = spec.scope in ("team", "tenant", "public") and not caller.admin
    return spec.provenance >= PROVENANCE["user_stated"] and caller.path in ("api", "cli", "restore") and not shared


def stated_rule(caller: Caller, spec: NewMemory) -> bool:
    """A behaviour rule the user stated through the host (``user_states``) is an instruction by design: there the
    scanner's model only confirms what a rule layer found, as for labels."""
    return spec.type == "procedure" and user_states(caller, spec)


def check_publish(db: Db, caller: Caller, scope: str, team_id: str | None, tenant_id: str | None) -> None:
    """Writing team, tenant or public scope needs membership (team/tenant) and a publish right an admin
    granted (agent_rights: publish:public, publish:team:<id>, publish:tenant:<id>, '*' for any group)."""
    if scope not in ("team", "tenant", "public"):
        return
    group = team_id if scope == "team" else tenant_id if scope == "tenant" else None
    if caller.admin:
        return
    cli = caller.path == "cli"  # name the fix the caller can type
    if group is not None and not db.scalar("is_member", agent_id=caller.agent_id, kind=scope, group_id=group):
        how = (f"echo-duck grant {caller.agent_id} --{scope} {group} --admin" if cli else
               f"admin.grant({scope}={group!r}, agent_id={caller.agent_id!r})")
        raise PermissionDenied(f"agent {caller.agent_id!r} is not a member of {scope} {group!r}; an admin grants it "
                               f"with {how}")
    if not db.scalar("has_publish_right", agent_id=caller.agent_id, scope=scope, group_id=group):
        target = "public" if group is None else f"{scope} {group!r}"
        hint = (f"echo-duck grant {caller.agent_id} --right publish:public --admin" if cli and group is None else
                f"echo-duck grant {caller.agent_id} --{scope} {group} --publish --admin" if cli else
                f"admin.grant_right({caller.agent_id!r}, 'publish:public')" if group is None else
                f"admin.grant({scope}={group!r}, agent_id={caller.agent_id!r}, publish=True)")
        raise PermissionDenied(f"agent {caller.agent_id!r} may not publish to {target}: writing shared scopes needs a "
                               f"right an admin grants ({hint})")


def check_episode(db: Db, caller: Caller, spec: NewMemory) -> None:
    """``episode_id`` names one of the caller's own episodes (an admin's: any stored one). A memory citing another
    agent's episode, or one that does not exist, said it was summarised from a conversation it was not."""
    if spec.episode_id is None:
        return
    owner = db.scalar("episode_owner", id=spec.episode_id)
    if owner is None or (not caller.admin and owner != caller.agent_id):
        raise InvalidInput(f"episode_id {spec.episode_id} names no episode of agent {caller.agent_id!r}"
                           + (" (an admin handle may cite any stored episode)" if not caller.admin else ""))


def observed_by_now(caller: Caller, spec: NewMemory, now: datetime) -> NewMemory:
    """An agent's ``observed_at`` later than the store's clock is taken as now (an import's future dates are): a fact
    observed in 2099 would be the newest answer to every "current" question for as long as the store lives. The host
    (an admin handle) dates freely."""
    if caller.admin or spec.observed_at is None or spec.observed_at <= now:
        return spec
    return replace(spec, observed_at=now)


def unchanged(spec: NewMemory, old: dict[str, Any]) -> bool:
    """Whether an update's new version would be ``old`` again: every field, the provenance and the tier equal (lists
    in order; times are naive UTC on both sides, validate.timestamp). A doubt reads as changed: a new version."""
    def same(name: str) -> bool:
        new, was = getattr(spec, name), old[name]
        if isinstance(new, tuple):
            return list(new) == list(was or ())
        if name == "episode_id":
            return str(new) == str(was)
        return new == was
    return all(same(name) for name in ("content", "type", "key", "tags", "entities", "scope", "team_id", "tenant_id",
                                       "source_session", "source_refs", "observed_at", "importance", "confidence",
                                       "provenance", "pinned", "sensitivity", "episode_id", "tier"))
