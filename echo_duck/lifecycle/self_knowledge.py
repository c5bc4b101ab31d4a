"""Outcome feedback (SPEC R13) and earned self-knowledge (seed 001, "自我记忆的特殊风险").

A helpful or unhelpful mark on a recalled memory is recorded in ``memory_feedback`` (with the caller's
session) and as a ``feedback`` event whose before/after hold the counts and the confidence, so the
past can be rebuilt. Counts steer ranking (``unhelpful_penalty``). Confidence moves differently by type:

- USER / ENVIRONMENT / PROCEDURE: a helpful mark raises confidence by a tenth of the distance to 1;
  an unhelpful one leaves it (ranking already falls with the net unhelpful count). An unhelpful mark
  carries a provenance (default model_inferred) and may not demote a memory of higher provenance. A procedure
  gains from the first helpful mark of each session only (marks without a session: the first of each UTC day): a
  rule repeated successfully in one conversation is one success, not a stable one.
- Any type: marking the same hit of one recall (its ``recall_id``) again with the same outcome is recorded and
  changes nothing (no count, no confidence): one outcome is one outcome however often it is told. A mark that
  names no recall (a memory or an id rather than a Hit) cannot be told apart from a new outcome: it counts.
- SELF (the agent's capabilities and failure modes), which seed 001 says needs stronger evidence:
  "模型自述不能单独证明能力; 一次成功不能证明稳定熟练; 一次失败不能永久定义能力上限".
  * A SELF memory starts at most at ``self_confidence_cap`` (0.5) whatever its writer claims (the
    insert statements in sql/ apply it, on every write path): a self-report is a coin flip, no more.
  * A helpful outcome adds ``self_helpful_step`` (0.05), but only the first helpful mark from each
    session counts (marks without a session count as one session), and no memory gains more than
    ``self_daily_gain`` (0.1) in one UTC day: repeating a success in one conversation, or many
    successes in one day, cannot make a capability look stable.
  * An unhelpful outcome takes ``self_unhelpful_step`` (0.1) off, at once: one failure costs two
    successes, but the memory stays and can earn its way back (one failure is no permanent limit).
  * It enters the prompt snapshot only at ``self_snapshot_threshold`` (0.7) or above: at least four
    helpful outcomes in four sessions over two days, net of failures.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from ..errors import InvalidInput
from ..models import PROVENANCE, Memory
from ..storage.db import Db
from ..write.guards import check_provenance
from ..write.writer import Caller, Writer

SELF_SETTINGS = ("self_confidence_cap", "self_snapshot_threshold", "self_helpful_step", "self_daily_gain",
                 "self_unhelpful_step")


def mark(db: Db, writer: Writer, caller: Caller, target: Any, helpful: bool, recall_id: int | None,
         now: datetime, level: int = PROVENANCE["model_inferred"]) -> Memory:
    """Record one outcome for the memory ``target`` names and apply it, in one transaction (its owner's
    or an admin's: another agent's marks must not move a memory's rank or confidence). An unhelpful mark
    carries ``level``'s provenance: it may not demote a memory of higher provenance (as forget may not)."""
    with db.transaction("mark"):
        row = writer.resolve_owned(caller, target, live_only=False, verb="mark")
        if recall_id is not None and not caller.admin and db.scalar("recall_log_agent", id=recall_id) not in (
                None, caller.agent_id):
            raise InvalidInput(f"recall_id {recall_id} is not one of this agent's recalls")
        if not helpful:
            check_provenance(caller, row, level, "demote")
        before = {k: row[k] for k in ("helpful_count", "unhelpful_count", "confidence")}
        counted, why = True, "this session already counted, or the day's gain is used up"
        repeated = recall_id is not None and db.scalar("marked_in_recall", id=row["id"], recall_id=recall_id,
                                                       helpful=helpful)
        if repeated:  # the same outcome of the same recall, told again: one outcome, counted once
            confidence, counted, why = row["confidence"], False, "this recall's hit was already marked so"
        elif row["type"] == "self":
            confidence, counted = self_confidence(db, row, caller.session_id, helpful, now)
        elif helpful and row["type"] == "procedure" and _procedure_counted(db, row["id"], caller.session_id, now):
            confidence, counted, why = row["confidence"], False, "this session (or day, without one) already counted"
        elif helpful:
            confidence = min(row["confidence"] + (1 - row["confidence"]) * 0.1, 1.0)
        else:
            confidence = row["confidence"]
        db.run("insert_feedback", now=now, agent_id=caller.agent_id, id=row["id"], recall_id=recall_id,
               helpful=helpful, session_id=caller.session_id, counted=counted)
        after = dict(before)
        if not repeated:
            db.run("apply_feedback", id=row["id"], helpful=helpful, confidence=confidence)
            count = "helpful_count" if helpful else "unhelpful_count"
            after.update(confidence=confidence, **{count: before[count] + 1})
        reason = f"{'helpful' if helpful else 'unhelpful'} outcome" + ("" if counted else f" (not counted: {why})")
        db.run("log_partial_event", now=now, actor=caller.who, action="feedback", memory_id=row["id"], reason=reason,
               before=json.dumps(before), after=json.dumps(after))
        return Memory.from_row(db.dict("memory_by_id", id=row["id"]))


def _procedure_counted(db: Db, memory_id: Any, session_id: str | None, now: datetime) -> bool:
    """Has a helpful mark of this session already counted for the procedure? Without a session (the default open),
    of this UTC day: every run of a script without sessions would otherwise be one session, ever."""
    if session_id is not None:
        return bool(db.scalar("helpful_from_session", id=memory_id, session_id=session_id))
    day = _utc_day(now)
    return bool(db.scalar("helpful_sessionless_between", id=memory_id, start=day, end=day + timedelta(days=1)))


def _utc_day(now: datetime) -> datetime:
    """The start of ``now``'s day (the store's clock is naive UTC)."""
    return datetime(now.year, now.month, now.day)


def self_confidence(db: Db, row: dict, session_id: str | None, helpful: bool, now: datetime) -> tuple[float, bool]:
    """The new confidence of a SELF memory after one outcome, and whether the outcome counted."""
    s = {name: db.setting(name) for name in SELF_SETTINGS}
    confidence = row["confidence"]
    if not helpful:
        return round(max(confidence - s["self_unhelpful_step"], 0.0), 6), True
    if db.scalar("helpful_from_session", id=row["id"], session_id=session_id):
        return confidence, False
    day = _utc_day(now)
    gained = db.scalar("confidence_gained_between", id=row["id"], start=day, end=day + timedelta(days=1)) or 0.0
    step = min(s["self_helpful_step"], s["self_daily_gain"] - gained, 1.0 - confidence)
    if step <= 1e-9:
        return confidence, False
    return round(confidence + step, 6), True
