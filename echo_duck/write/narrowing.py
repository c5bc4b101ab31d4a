"""Narrowing a fact's history: when a new version is shown to fewer agents (a higher sensitivity, or a personal
memory no longer shared), every row superseded into it — earlier versions, folded near-duplicates, live or in
the Parquet archive — is narrowed the same way, each with a 'narrow' event (sql/queries/memories.sql:
earlier_versions_to_narrow, narrow_version; time travel reads the events back). Called by the writer and review.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Sequence

from ..models import SENSITIVITIES, SHARE_TAG
from .spec import Caller

if TYPE_CHECKING:
    from .writer import Writer


def narrow_history(writer: Writer, caller: Caller, old: dict, sensitivity: str, tags: Sequence[str]) -> None:
    """After ``old`` was superseded by a version of this sensitivity and these tags: when the new version is
    shown to fewer agents (a higher sensitivity, or no longer shared), so are the earlier ones: they are the same
    fact. Each narrowed version gets a 'narrow' event (time travel reads it back: memories_as_of)."""
    raised = SENSITIVITIES.index(sensitivity) > SENSITIVITIES.index(old["sensitivity"])
    unshared = SHARE_TAG in old["tags"] and SHARE_TAG not in tags
    if not (raised or unshared):
        return
    changes = dict(sensitivity=sensitivity, unshare=unshared)
    reason = f"a later version is {sensitivity}" + (", no longer shared" if unshared else "")
    for row in writer.db.dicts("earlier_versions_to_narrow", id=old["id"], **changes):
        if row["archived"]:  # in the Parquet archive: the event alone narrows it (for time travel)
            was = {"sensitivity": row["sensitivity"], "tags": list(row["tags"])}
            now = {"sensitivity": max(row["sensitivity"], sensitivity, key=SENSITIVITIES.index),
                   "tags": [t for t in row["tags"] if not (unshared and t == SHARE_TAG)]}
            writer.db.run("log_partial_event", now=writer._now(), actor=caller.who, action="narrow",
                          memory_id=row["id"], reason=reason, before=json.dumps(was), after=json.dumps(now))
            continue
        before = writer.db.scalar("memory_json", id=row["id"])
        writer.db.run("narrow_version", id=row["id"], **changes)
        writer._event(caller, "narrow", row["id"], reason, before)
