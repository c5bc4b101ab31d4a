"""Contradictions (SPEC L3): find candidates for a new or changed memory, verify, record, resolve.

Candidates (SQL): same scope owner and a similar key (Jaro-Winkler >= 0.9), a shared tag, or a
vector neighbour above ``contradiction_similarity``. A verifier — any ``(a, b) -> Verdict`` callable,
the deterministic heuristic by default, an LLM through ``verify.llm_verifier`` — decides.

Resolution of a confident verdict (>= contradiction_auto_confidence) between two memories whose
keys say they fill the same slot (similar keys): higher provenance wins; same provenance from the
same source session: the newer wins; same provenance from different sources: it stays pending, and
recall returns both with a conflict mark (seed 001 scenario 1: conflicting sources are kept, never
randomly picked). Anything else stays pending: a heuristic verdict about two keyless memories
("fact 0" vs "fact 1") is too weak a reason to take one out of recall. The loser of a resolution is
superseded by the winner and archived.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterable

from ..errors import InvalidInput, MemoryNotFound, PermissionDenied
from ..index.indexing import Indexer
from ..models import Memory
from ..storage.db import Db
from ..write.writer import Caller, require_owner
from .verify import Verdict, heuristic_verifier

Verifier = Callable[[Any, Any], Verdict]
CANDIDATE_LIMIT = 20


@dataclass(frozen=True)
class Contradiction:
    id: str
    memory_a: str
    memory_b: str
    description: str
    confidence: float
    status: str
    resolution: str | None
    winner: str | None

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_row(cls, row: dict) -> "Contradiction":
        return cls(str(row["id"]), str(row["memory_a"]), str(row["memory_b"]), row["description"], row["confidence"],
                   row["status"], row["resolution"], None if row["winner"] is None else str(row["winner"]))


class ContradictionChecker:
    def __init__(self, db: Db, indexer: Indexer, clock: Callable[[], datetime], verifier: Verifier | None = None):
        self.db = db
        self.indexer = indexer
        self.clock = clock
        self.verifier = verifier or heuristic_verifier

    def check(self, caller: Caller, memory_ids: Iterable[str]) -> list[Contradiction]:
        """Verify each new memory against its candidates; record and resolve what contradicts."""
        found = []
        for memory_id in memory_ids:
            with self.db.reading():
                me_row = self.db.dict("memory_by_id", id=memory_id)
                if me_row is None or me_row["status"] != "active":
                    continue
                settings = {n: self.db.scalar("setting_value", name=n) for n in
                            ("contradiction_similarity", "contradiction_min_confidence", "contradiction_auto_confidence")}
                neighbours = self._neighbours(memory_id, settings["contradiction_similarity"])
                candidates = self.db.dicts("contradiction_candidates", id=memory_id, neighbours=neighbours,
                                           limit=CANDIDATE_LIMIT)
            me = Memory.from_row(me_row)
            for row in candidates:
                other = Memory.from_row(row)
                verdict = self._verify(other, me)
                if not verdict.contradicts or verdict.confidence < settings["contradiction_min_confidence"]:
                    continue
                found.append(self._record(caller, other, me, verdict, settings["contradiction_auto_confidence"]))
        return found

    def resolve(self, caller: Caller, contradiction_id: Any, winner: Any) -> Contradiction:
        """A user's decision: ``winner`` is one side's memory id, or None to dismiss (not a contradiction)."""
        with self.db.transaction("resolve"):
            row = self.db.dict("contradiction_by_id", id=_uuid(contradiction_id, "contradiction_id"))
            if row is None:
                raise MemoryNotFound(f"no contradiction with id {contradiction_id}")
            if row["status"] != "pending":
                raise InvalidInput(f"contradiction {contradiction_id} is already resolved ({row['resolution']})")
            sides = [self.db.dict("memory_by_id", id=row[s]) for s in ("memory_a", "memory_b")]
            if not caller.admin and all(m is None or m["agent_id"] != caller.agent_id for m in sides):
                raise PermissionDenied(f"contradiction {contradiction_id} is between other agents' memories; "
                                       "one of their owners or an admin decides it")
            if winner is None:
                self.db.run("resolve_contradiction", id=row["id"], resolution="dismissed", winner=None, now=self.clock())
            else:
                win = _uuid(winner, "winner")
                if win not in (row["memory_a"], row["memory_b"]):
                    raise InvalidInput(f"winner must be {row['memory_a']} or {row['memory_b']} (or None to dismiss)")
                lose = row["memory_b"] if win == row["memory_a"] else row["memory_a"]
                require_owner(caller, self.db.dict("memory_by_id", id=lose), "supersede")  # the loser is changed
                self._supersede(caller, lose, win, f"lost contradiction {row['id']} (decided by the user)")
                self.db.run("resolve_contradiction", id=row["id"], resolution="user", winner=win, now=self.clock())
            return Contradiction.from_row(self.db.dict("contradiction_by_id", id=row["id"]))

    def _verify(self, a: Memory, b: Memory) -> Verdict:
        try:
            return self.verifier(a, b)
        except Exception:  # a broken verifier must not break the write that triggered it
            return heuristic_verifier(a, b)

    def _neighbours(self, memory_id: str, threshold: float) -> str | None:
        index = self.indexer.vectors
        if index is None:
            return None
        vector = self.db.scalar("vector_of", id=memory_id, model_id=index.model_id)
        if vector is None:
            return None
        import numpy as np

        ids, sims = index.search(np.asarray(vector, dtype=np.float32), CANDIDATE_LIMIT + 1)
        close = [i for i, s in zip(ids, sims) if s >= threshold and i != str(memory_id)]
        return "[" + ",".join(close) + "]"

    def _record(self, caller: Caller, older: Memory, newer: Memory, verdict: Verdict, auto: float) -> Contradiction:
        status, resolution, winner, loser = "pending", None, None, None
        # Only one owner's memories are resolved automatically: another agent's claim never retires its own.
        if verdict.confidence >= auto and _same_slot(older, newer) and older.agent_id == newer.agent_id:
            if older.provenance != newer.provenance:
                winner, loser = (older, newer) if older.provenance > newer.provenance else (newer, older)
                resolution = "higher_provenance"
            elif older.source_session == newer.source_session:
                winner, loser, resolution = newer, older, "newer"
        if winner is not None:
            status = "resolved"
        contradiction_id = uuid.uuid4()
        with self.db.transaction("recording a contradiction"):
            if loser is not None:
                self._supersede(caller, uuid.UUID(loser.id), uuid.UUID(winner.id),
                                f"lost contradiction {contradiction_id} ({resolution})")
            self.db.run("insert_contradiction", id=contradiction_id, memory_a=older.id, memory_b=newer.id,
                        description=verdict.description, confidence=verdict.confidence, detected_by=_name(self.verifier),
                        now=self.clock(), status=status, resolution=resolution, winner=winner.id if winner else None)
            return Contradiction.from_row(self.db.dict("contradiction_by_id", id=contradiction_id))

    def _supersede(self, caller: Caller, loser, winner, reason: str) -> None:
        before = self.db.scalar("memory_json", id=loser)
        self.db.run("supersede_by_winner", loser=loser, winner=winner, now=self.clock())
        self.db.run("log_event", now=self.clock(), actor=caller.who, action="supersede", memory_id=loser,
                    reason=reason, before=before)


def _same_slot(a: Memory, b: Memory) -> bool:
    """Both keyed, and the keys match or one extends the other (preference:pm vs preference:pm:node)."""
    if not a.key or not b.key:
        return False
    return a.key == b.key or a.key.startswith(b.key) or b.key.startswith(a.key) or _jaro_close(a.key, b.key)


def _jaro_close(a: str, b: str) -> bool:
    import difflib

    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.9


def _uuid(value: Any, name: str) -> uuid.UUID:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except ValueError:
        raise InvalidInput(f"{name} must be an id (uuid), got {value!r}") from None


def _name(verifier: Any) -> str:
    return getattr(verifier, "__name__", type(verifier).__name__)
