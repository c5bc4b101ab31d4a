"""What an import keeps beyond the text (issue 20 item 8): the writer's standing (provenance), how often a
memory was used (access counts), the versions of a fact, and echo-agent's HISTORY.md.

- Provenance: with ``provenance="keep"`` a record's ``provenance`` (a name or 0-3), else its ``source``
  mapped to one: user_stated / user / explicit -> user_stated; consolidated / consolidator / extracted ->
  consolidated; model_inferred / inferred / agent / agent_proactive -> model_inferred; legacy -> legacy.
  (Ethan's memory_write marks facts the agent wrote itself ``agent_proactive``: the agent's inference.)
- Usage: ``access_count`` and ``last_accessed`` are applied after the write, with a ``reinforce`` event
  (before/after), so decay and time travel see them. A record's count must lie in 0..``MAX_IMPORTED_ACCESS_COUNT``
  (one million): a larger one is a crafted file and refuses the whole file (``InvalidInput`` naming the record)
  before anything is written. An import never raises a stored count above ``ACCESS_COUNT_CEILING`` (10^9): the
  rest of the INTEGER column is headroom for recalls' reinforcement, which saturates (sql/queries/recall.sql).
- Versions: a record whose ``superseded_by`` names another record of the file with the same key is
  written before it, and the newer one becomes its next version (the writer's same-key rule), so the
  chain and its history survive. A superseded record whose successor is not in the file, or has another
  key, is still skipped (reason "superseded").
- HISTORY.md (format ``echo-history``): each heading that starts with a date (``## 2026-03-08 10:02 …``)
  is one episode of that day; its text (list items and paragraphs) becomes one episodic memory observed
  then, tagged ``history``; the rest of the heading after the date, if it looks like a session id, is its
  source session. Text under a heading without a date is reported, not stored.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import InvalidInput

SOURCE_PROVENANCE = {
    "user_stated": "user_stated", "user": "user_stated", "explicit": "user_stated", "user_explicit": "user_stated",
    "consolidated": "consolidated", "consolidator": "consolidated", "extracted": "consolidated",
    "model_inferred": "model_inferred", "inferred": "model_inferred", "agent": "model_inferred",
    "agent_proactive": "model_inferred", "legacy": "legacy",
}
MAX_IMPORTED_ACCESS_COUNT = 1_000_000  # per record: far above any real use, far below the INTEGER column's limit
ACCESS_COUNT_CEILING = 1_000_000_000  # no import raises a stored access_count above this
_CHAIN_CAP = 1000  # chain_order counts at most this many earlier versions (a longer chain keeps the file's order)
_DATE_HEADING = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[ T](\d{1,2}:\d{2}(?::\d{2})?))?\s*(?:[—–:-]+\s*(.*))?$")
_SESSION_LIKE = re.compile(r"^[\w.:-]{3,200}$")


def provenance_of(obj: dict[str, Any]) -> Any:
    """The record's own provenance, from ``provenance`` or its ``source``; None if it names none."""
    if obj.get("provenance") is not None:
        return obj["provenance"]
    source = obj.get("source")
    return SOURCE_PROVENANCE.get(source.strip().lower()) if isinstance(source, str) else None


def usage_of(obj: dict[str, Any], when: Any) -> tuple[int, datetime | None] | None:
    """(access_count, last_accessed) if the record carries a count; ``when`` parses the timestamp.
    A count above MAX_IMPORTED_ACCESS_COUNT raises InvalidInput (the caller names the file and record)."""
    count = obj.get("access_count")
    if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        return None
    if count > MAX_IMPORTED_ACCESS_COUNT:
        raise InvalidInput(f"access_count {count} is out of range: an imported record's access_count must lie "
                           f"between 0 and {MAX_IMPORTED_ACCESS_COUNT:,}")
    last = obj.get("last_accessed")
    try:
        return count, (when(last, "last_accessed") if last is not None else None)
    except Exception:  # an unreadable timestamp: keep the count, not the time
        return count, None


def chain_order(objects: list[tuple[str, Any]]) -> tuple[list[tuple[str, Any]], set[str]]:
    """The items with every kept version chain in order (older first), and the ids of the superseded
    records that are kept because their successor (same key) is in the file."""
    by_id = {str(o["id"]): o for _, o in objects if isinstance(o, dict) and o.get("id") is not None}
    kept: set[str] = set()
    for _, o in objects:
        # a version, superseded (a forgotten one stays forgotten: it came back on a restore, found by recall)
        if isinstance(o, dict) and o.get("superseded_by") and o.get("key") \
                and str(o.get("status") or "superseded").lower() in ("superseded", "active"):
            successor = by_id.get(str(o["superseded_by"]))
            if successor is not None and successor.get("key") == o.get("key"):
                kept.add(str(o["id"]))
    kept = _ending_live(kept, by_id)

    # Each record's predecessor: the first kept record (in by_id's order) that it supersedes. Each record's depth
    # (how many kept versions come before it, at most _CHAIN_CAP; a cycle of L records counts L + 1) is computed
    # once per id along the chain and memoised: linear in the file, where walking every chain anew was cubic.
    pred: dict[str, str] = {}
    for p in by_id.values():
        if str(p.get("id")) in kept:
            pred.setdefault(str(p.get("superseded_by")), str(p.get("id")))
    memo: dict[str, int] = {}

    def depth(o: dict) -> int:
        start = str(o.get("id"))
        path: list[str] = []  # ids from start backwards whose depth is not known yet
        index: dict[str, int] = {}
        cur = start
        while cur not in memo and cur in pred and cur not in index:
            index[cur] = len(path)
            path.append(cur)
            cur = pred[cur]
        if cur in index:  # a cycle: every record on it counts its L records and the first one again
            cycle = path[index[cur]:]
            base = min(_CHAIN_CAP, len(cycle) + 1)
            for k in cycle:
                memo[k] = base
            path = path[:index[cur]]
        else:
            base = memo.setdefault(cur, 0)  # a record without a kept predecessor is a chain's oldest
        for k in reversed(path):
            base = min(_CHAIN_CAP, base + 1)
            memo[k] = base
        return memo[start]

    roots_of: dict[str, str] = {}  # memoised as depth() is: one walk per chain, not one per record

    def root(o: dict) -> str:  # the oldest kept version of the record's chain
        cur, path, on_path = str(o.get("id")), [], set()
        while cur not in roots_of and cur in pred and cur not in on_path:
            path.append(cur)
            on_path.add(cur)
            cur = pred[cur]
        found = roots_of.get(cur, cur)
        roots_of.update(dict.fromkeys(path, found))
        return found

    # A key whose fact was exported and written again later is two chains in a backup: the older chain must be
    # written first, or its active head supersedes the newer fact on a restore (reviewer AJ, session 56). Records of a
    # key held by several chains are ordered by their chain's oldest created_at; every other record keeps its place.
    roots: dict[tuple, set[str]] = {}
    groups: dict[int, tuple[tuple, str]] = {}  # id() of a keyed record -> ((agent, key), its chain's root)
    for o in by_id.values():
        key, owner = o.get("key"), o.get("agent_id")
        if isinstance(key, str) and (owner is None or isinstance(owner, str)):  # others: refused by name later
            group, first = (owner, key), root(o)
            groups[id(o)] = (group, first)
            roots.setdefault(group, set()).add(first)

    def rank(o: Any) -> str:
        entry = groups.get(id(o))
        if entry is None or len(roots[entry[0]]) < 2:
            return ""
        first = by_id[entry[1]].get("created_at") if entry[1] in by_id else None
        return "" if first is None else "~" + str(first)  # after the records that keep their place

    ordered = sorted(enumerate(objects), key=lambda p: (rank(p[1][1]), depth(p[1][1]) if isinstance(p[1][1], dict)
                                                        else 0, p[0]))
    return [item for _, item in ordered], kept


def _ending_live(kept: set[str], by_id: dict[str, Any]) -> set[str]:
    """The kept versions whose chain ends in a record the import writes (a live one): a chain whose newest version
    was forgotten is not restored (its older version came back live, nothing left to supersede it)."""
    memo: dict[str, bool] = {}
    for start in kept:
        path: list[str] = []
        on_path: set[str] = set()  # a list's `in` made one long chain quadratic
        cur = start
        while cur in kept and cur not in memo and cur not in on_path and by_id[cur].get("superseded_by") \
                and by_id[cur].get("active") is not False:
            path.append(cur)
            on_path.add(cur)
            cur = str(by_id[cur].get("superseded_by"))
        if cur in memo:
            ends = memo[cur]
        elif cur in on_path:  # a cycle: nothing live ends it
            ends = False
        else:
            o = by_id.get(cur)
            ends = o is not None and not o.get("superseded_by") and o.get("active") is not False \
                and str(o.get("status") or "active").lower() == "active"
        for k in path:
            memo[k] = ends
        memo.setdefault(start, ends)  # a kept id whose record (of two with that id) names no successor: the end
    return {k for k in kept if memo[k]}


def parse_history(path: Path, text: str) -> list[tuple[str, dict[str, Any] | None, tuple[str, str] | None]]:
    """HISTORY.md as import records: (where, remember() arguments or None, (reason, detail) or None)."""
    out: list = []
    entry: dict[str, Any] | None = None
    orphan_line = -1
    for n, line in enumerate(text.splitlines(), 1):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            if entry is not None:
                out.append(_history_record(entry))
            m = _DATE_HEADING.match(heading.group(1).strip())
            entry = None
            if m:
                entry = {"line": n, "date": m.group(1), "time": m.group(2), "label": (m.group(3) or "").strip(),
                         "lines": []}
            continue
        body = line.strip().lstrip("-*+").strip() if line.strip() else ""
        if not body or body.startswith("```"):
            continue
        if entry is None:
            if orphan_line != n - 1:
                out.append((f"line {n}", None, ("prose", "not under a dated heading")))
            orphan_line = n
            continue
        entry["lines"].append(body)
    if entry is not None:
        out.append(_history_record(entry))
    return [r for r in out if r is not None]


def _history_record(entry: dict[str, Any]):
    where = f"line {entry['line']} (history {entry['date']})"
    if not entry["lines"]:
        return where, None, ("empty", "the dated entry has no text")
    try:  # the heading's pattern takes 1-digit hours; the calendar decides the rest (2026-02-30, 25:00: skipped)
        clock = [int(part) for part in (entry["time"] or "0:00").split(":")]
        observed = datetime.fromisoformat(entry["date"]).replace(hour=clock[0], minute=clock[1],
                                                                  second=clock[2] if len(clock) > 2 else 0)
    except ValueError:
        when = f"{entry['date']} {entry['time'] or ''}".strip()
        return where, None, ("invalid", f"{when} is not a date and time of the calendar")
    label = entry["label"]
    fields: dict[str, Any] = {"content": " ".join(entry["lines"]), "type": "environment", "tier": "episodic",
                              "key": None, "tags": ["history"], "observed_at": observed}
    if label and _SESSION_LIKE.match(label):
        fields["source_session"] = label
    return where, fields, None


def dumps_usage(usage: tuple[int, datetime | None]) -> str:
    return json.dumps({"access_count": usage[0], "last_accessed": usage[1].isoformat(sep=" ") if usage[1] else None})
