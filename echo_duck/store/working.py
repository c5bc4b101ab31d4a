"""WORKING tier (SPEC M1): a small in-process ring buffer, rendered for the prompt, never persisted."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterator

from ..models import OWN_ROLES
from ..write import validate
from ..write.scan.fences import neutralise

CAPACITY = 20
HEADER = "## Working memory\n"
OUTSIDE_ITEM = "(outside text: a tool's output or a note, not the user's words) "


@dataclass(frozen=True)
class WorkingItem:
    content: str
    importance: float
    role: str
    added_at: datetime


class WorkingMemory:
    """At most ``capacity`` recent items; the oldest falls out when a new one arrives."""

    def __init__(self, capacity: int = CAPACITY):
        self.capacity = validate.positive_int(capacity, "capacity", maximum=CAPACITY)
        self._items: deque[WorkingItem] = deque(maxlen=self.capacity)
        self._lock = threading.Lock()

    def add(self, content: str, *, importance: float = 0.5, role: str = "note") -> WorkingItem:
        item = WorkingItem(
            validate.text(content, "content"),
            validate.unit_interval(importance, "importance"),
            validate.text(role, "role", max_chars=50),
            datetime.now(timezone.utc).replace(tzinfo=None),
        )
        with self._lock:
            self._items.append(item)
        return item

    def items(self) -> list[WorkingItem]:
        with self._lock:
            return list(self._items)

    def drain(self) -> list[WorkingItem]:
        """Hand every item over (to consolidation at session end) and empty the buffer."""
        with self._lock:
            items = list(self._items)
            self._items.clear()
        return items

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def render(self, budget_chars: int = 2000) -> str:
        """Markdown within ``budget_chars``: the least important items are dropped first (text from outside, a tool's
        output or a note, before the user's, the agent's or the host's of equal importance), order kept. Text from
        outside says so on its line (``OUTSIDE_ITEM``), and no item can open or close a prompt fence."""
        budget = validate.positive_int(budget_chars, "budget_chars", maximum=10_000_000)
        items = self.items()
        lines = [f"- {'' if _own(item) else OUTSIDE_ITEM}{_one_line(neutralise(item.content))}\n" for item in items]
        keep = set(range(len(items)))
        # Drop lowest importance first; among equals text from outside (a role not the user's, the agent's or the
        # host's, as consolidation reads it: a ~2,000-character search result pushed out the user's message), then
        # the oldest.
        for index in sorted(keep, key=lambda i: (items[i].importance, _own(items[i]), i)):
            if len(HEADER) + sum(len(lines[i]) for i in keep) <= budget:
                break
            keep.discard(index)
        if not keep:
            return ""
        return HEADER + "".join(lines[i] for i in sorted(keep))

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[WorkingItem]:
        return iter(self.items())


def _own(item: WorkingItem) -> bool:
    return item.role.lower() in OWN_ROLES


def _one_line(text: str) -> str:
    return " ".join(text.split())
