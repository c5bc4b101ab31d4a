"""What ``recall_eligible`` (sql/queries/recall.sql) returns for one eligible candidate, from the in-process copy's
columns (eligibility.py): effective_importance (sql/macros/20_ranking.sql), the archived and feedback weights, and
what the time terms, session_credit and update_credit read (active, at_us, owner, source session, created_us,
states_time, states_change, provenance, mostly_asks). The same libm
calls on the same doubles, in the same order, so both agree to the last bit (tests/test_eligibility.py).

Computed only for the candidates fusion reads (those that make an arm's pool), when first read (``EligibleRows``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Callable, Iterator, Sequence

import numpy as np

_EPOCH, _ONE_MICROSECOND = datetime(1970, 1, 1), timedelta(microseconds=1)

INT32_MAX = 2_147_483_647  # memories.access_count is INTEGER: a count saturates there


def decay_terms(cols: Any, texts: Sequence[str], now: datetime, settings: dict[str, float],
                reviews: dict[str, tuple[int, datetime]], *, active: int,
                null: int) -> Callable[[str, int], dict[str, Any]]:
    """The terms of one copy row, by (memory id, row). ``cols``: the copy's GrowingColumns, ``texts``: its text
    codes' values (owner and session ids), ``active``: the status code of an active row, ``null``: the code of a
    NULL text; ``reviews``: the recalls still queued (recall_log.py), counted as if written."""
    # each column read once per recall, not once per candidate (a GrowingColumns attribute is a fresh view)
    importance_of, exempt_of, touch_of, count_of = cols.importance, cols.exempt, cols.last_touch_us, cols.access_count
    archival_of, unhelpful_of, status_of, at_of = cols.archival, cols.net_unhelpful, cols.status, cols.at_us
    agent_of, session_of, created_of, states_time_of = cols.agent, cols.session, cols.created_us, cols.states_time
    states_change_of, provenance_of, asks_of, host_of = cols.states_change, cols.provenance, cols.mostly_asks, cols.by_host
    now_s = epoch_seconds(micros(now))
    base_days = max(float(settings["importance_decay_days"]), 1.0)
    archived_weight = float(settings["archived_weight"])
    kept_share = 1 - float(settings["unhelpful_penalty"])

    def terms(memory_id: str, row: int) -> dict[str, Any]:
        importance = float(importance_of[row])
        queued, at = reviews.get(memory_id, (0, None))
        if exempt_of[row]:
            effective = importance
        else:
            touched = epoch_seconds(micros(at) if at is not None else int(touch_of[row]))
            days = max(now_s - touched, 0) / 86400.0
            count = min(int(count_of[row]) + queued, INT32_MAX)  # recall_eligible's least(…, 2147483647)
            effective = importance * math.pow(0.5, days / (base_days * (1 + math.log2(1 + count))))
        session = session_of[row]
        return {"memory_id": memory_id, "effective_importance": effective,
                "tier_weight": archived_weight if archival_of[row] else 1.0,
                "feedback_weight": math.pow(kept_share, max(int(unhelpful_of[row]), 0)),
                "active": bool(status_of[row] == active), "at_us": int(at_of[row]),
                "agent": texts[agent_of[row]], "session": None if session == null else texts[session],
                "created_us": int(created_of[row]), "states_time": bool(states_time_of[row]),
                "states_change": bool(states_change_of[row]), "provenance": int(provenance_of[row]),
                "mostly_asks": bool(asks_of[row]), "by_host": bool(host_of[row])}
    # fusion's pools: who wrote each of these copy rows (owner id, the host's mark), no decay terms computed
    terms.owners = lambda rows: [(texts[a], bool(h)) for a, h in zip(agent_of[rows].tolist(), host_of[rows].tolist())]
    terms.one_owner = lambda rows: bool((agent_of[rows] == agent_of[rows[0]]).all()
                                        and (host_of[rows] == host_of[rows[0]]).all())
    return terms


class EligibleRows(Mapping):
    """Eligible candidate id -> its recall_eligible row; the decay terms are computed when first read."""

    def __init__(self, rows: dict[str, int], terms: Callable[[str, int], dict[str, Any]]):
        self._rows, self._terms, self._done = rows, terms, {}

    def __getitem__(self, memory_id: str) -> dict[str, Any]:
        done = self._done.get(memory_id)
        if done is None:
            done = self._done[memory_id] = self._terms(memory_id, self._rows[memory_id])
        return done

    def owners(self, memory_ids: Sequence[str]) -> list[tuple[str, bool]] | None:
        """Who wrote each candidate (its owner's id, the host's mark), without computing its decay terms; None when
        one author wrote them all (a store of one agent: fusion's pools are then the best of all)."""
        rows = np.fromiter((self._rows[i] for i in memory_ids), np.int64, len(memory_ids))
        return None if self._terms.one_owner(rows) else self._terms.owners(rows)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def micros(at: datetime) -> int:
    return (at - _EPOCH) // _ONE_MICROSECOND


def epoch_seconds(micros: int) -> int:
    """Whole seconds since 1970, rounded down (also before 1970): date_diff('second', a, b) counts the
    second boundaries crossed, the difference of two of these."""
    return micros // 1_000_000
