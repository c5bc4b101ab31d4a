"""``echo-duck bench time``: how well the time a question names is read (text/when.py time_window), on the
hand-written sets in data_fixtures/time_sets (a development set and a held-out one, English and Chinese).

A past question is *found* when the window covers at least 80% of the period it means, and *tight* when the window
is also at most twice the period's length plus eight days; a future question, or one naming no period, is right when
no window is read (nothing observed then, or nothing to narrow to).
"""

from __future__ import annotations

import collections
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..text.when import time_window

SETS = Path(__file__).resolve().parent.parent.parent / "data_fixtures" / "time_sets"


def judge(item: dict) -> tuple[bool, bool, tuple[datetime, datetime] | None]:
    """(found, tight, window) for one question."""
    window = time_window(item["question"], datetime.fromisoformat(item["asked_at"]))
    if item["direction"] != "past" or not item.get("start"):
        return window is None, window is None, window
    if window is None:
        return False, False, None
    start = datetime.fromisoformat(item["start"])
    end = datetime.fromisoformat(item["end"]) + timedelta(days=1)
    overlap = max(timedelta(0), min(end, window[1]) - max(start, window[0]))
    found = overlap >= 0.8 * (end - start)
    return found, found and window[1] - window[0] <= 2 * (end - start) + timedelta(days=8), window


def run(folder: Path | None = None) -> dict[str, Any]:
    folder = folder or SETS
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise InvalidInput(f"no *.jsonl time sets in {folder}")
    groups: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    misses = []
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            found, tight, window = judge(item)
            for group in (path.stem, f"{path.stem} {item['direction']}"):
                groups[group].update(n=1, found=found, tight=tight)
            if not found:
                misses.append(dict(set=path.stem, id=item["id"], question=item["question"], asked_at=item["asked_at"],
                                   want=[item.get("start"), item.get("end")],
                                   got=window and [window[0].isoformat(), window[1].isoformat()]))
    return {"groups": {g: dict(c) for g, c in groups.items()}, "misses": misses}


def markdown(report: dict[str, Any]) -> str:
    lines = ["| set | questions | found | tight |", "|---|---|---|---|"]
    for group, c in report["groups"].items():
        lines.append(f"| {group} | {c['n']} | {c.get('found', 0) / c['n']:.3f} | {c.get('tight', 0) / c['n']:.3f} |")
    return "\n".join(lines)
