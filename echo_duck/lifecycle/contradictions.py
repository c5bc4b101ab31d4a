"""Contradictions (SPEC L3, seed 001 "冲突与更新"): find, verify, record with both sources, resolve, reverse.

Candidates (candidates.py): same scope owner and a similar key (Jaro-Winkler >= 0.9), a shared tag, a vector
neighbour above ``contradiction_similarity``, or one of the best keyword (BM25) matches of the new memory's words;
episodes (what happened) are never candidates. A write owes its check (``pending_checks``) until it has run: a crash
between the two is made good by the next writable open (``settle_owed``).
A verifier — any ``(a, b) -> Verdict`` callable, the deterministic heuristic by default, an LLM
through ``verify.llm_verifier`` — decides.

Resolution of a confident verdict (>= contradiction_auto_confidence): the higher provenance wins;
at equal provenance the newer wins ("resolved by recency"). Either way the contradiction row keeps
both sides and both sources (source_a/source_b), the loser is superseded and archived (history,
never deleted), and the snapshot lists a recency decision under Conflicts until someone reviews
it. A less confident verdict stays pending: recall returns both sides marked ``conflicts_with`` and
the snapshot shows them only as a disputed pair. Seed 001 scenario 1: conflicting sources are kept,
never silently merged or randomly picked.

A same-key write (a new version) from a different source is checked against the version it
replaced (``check_versions``): if they contradict, the new one still stands (newest wins, W3) and
a contradiction resolved by recency (or provenance) is recorded with both sources.

``resolve`` is the review: on a pending contradiction it picks the winner (or dismisses it); on one
already resolved it confirms the decision (resolution becomes 'user') or reverses it: the earlier
loser's claim comes back as a new version of the winner's fact (an event ``reverse`` says why).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterable

from ..errors import InvalidInput, MemoryNotFound, PermissionDenied
from ..index.indexing import Indexer
from ..models import PROVENANCE, Memory
from ..storage.db import Db, uuid_list
from ..write import validate
from ..write.guards import agent_owns, check_provenance
from ..write.writer import Caller, require_owner
from . import candidates
from .verify import Verdict, heuristic_verifier

Verifier = Callable[[Any, Any], Verdict]


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
    def __init__(self, db: Db, indexer: Indexer, clock: Callable[[], datetime], verifier: Verifier | None = None,
                 writer: Any = None, recaller: Any = None):
        self.db = db
        self.writer = writer  # write.writer.Writer: a reversal writes the earlier claim as a new version
        self.finder = candidates.CandidateFinder(db, indexer, recaller)  # the pairs the verifier reads
        self.indexer = indexer
        self.clock = clock
        self.verifier = validate.callback(verifier, "verifier") or heuristic_verifier

    def check(self, caller: Caller, memory_ids: Iterable[str], *, apart: bool = False) -> list[Contradiction]:
        """Verify each new memory against its candidates; record and resolve what contradicts. ``apart``: the
        memories were written together (one imported file) and are checked against the rest of the store only."""
        memory_ids = [str(i) for i in memory_ids]
        together = uuid_list(memory_ids) if apart else "[]"
        with self.db.reading():
            rows = {str(r["id"]): r for r in self.db.dicts("memories_by_ids", ids=uuid_list(memory_ids))}
            read_at = self.db.writes_but_reviews
        # Only a new version has a predecessor whose source may differ (check_versions changes no memory row).
        found = self.check_versions(caller, [i for i in memory_ids if i in rows and rows[i]["supersedes"] is not None])
        for memory_id in memory_ids:
            with self.db.reading():
                # the rows read above, unless anything was written since (a contradiction recorded here, or
                # another thread's write on the same store, may have retired this one)
                fresh = read_at is not None and self.db.writes_but_reviews == read_at
                me_row = rows.get(memory_id) if fresh else self.db.dict("memory_by_id", id=memory_id)
                if me_row is None or me_row["status"] != "active":
                    continue
                settings = {n: self.db.setting(n) for n in
                            ("contradiction_similarity", "contradiction_min_confidence", "contradiction_auto_confidence")}
                candidates = self.finder.candidates(me_row, settings["contradiction_similarity"], together)
            found += self._against(caller, Memory.from_row(me_row), candidates, settings)
        self._paid(memory_ids)
        return found

    def after_bulk(self, caller: Caller, stored: list[Memory], *, full: bool) -> set[str]:
        """A bulk write's checks: the full one when asked for (a query per record); else new versions from another
        source (check_versions) and the records below a live fact of higher provenance (check_below), a query each
        for the batch. The ids of the memories a contradiction recorded here touches."""
        live = [m for m in stored if m.status != "quarantined"]
        if full:
            found = self.check(caller, [m.id for m in live])
        else:
            found = self.check_versions(caller, [m.id for m in stored if m.supersedes])
            with self.db.reading():  # nothing above the batch (an equal-trust bulk load): no pairs to read
                top = self.db.scalar("highest_live_provenance") if live else None
            if top is not None and any(m.provenance < top for m in live):
                found += self.check_below(caller, [m.id for m in live if m.provenance < top])
        self._paid([m.id for m in stored])
        return {side for c in found for side in (c.memory_a, c.memory_b)}

    def settle_owed(self) -> int:
        """Run the checks a crash between a write and its check left owed (pending_checks, migration 0013), each as
        its write was to get it (``kind``: full, apart, bulk), per author; then forget them (a held row's stays until
        it is approved). A writable open calls it; it writes nothing when nothing is owed."""
        with self.db.reading():
            if not self.db.scalar("any_owed_checks"):
                return 0
            owed = {r["id"]: r["kind"] for r in self.db.dicts("owed_checks")}
            groups: dict[tuple[str, bool, str], list[Memory]] = {}
            for row in self.db.dicts("memories_by_ids", ids=uuid_list(list(owed))) if owed else ():
                key = (row["agent_id"], bool(row["by_host"]), owed[str(row["id"])])
                groups.setdefault(key, []).append(Memory.from_row(row))
        for (agent, host, kind), memories in groups.items():
            caller = Caller(agent_id=agent, admin=host)
            if kind == "bulk":
                self.after_bulk(caller, memories, full=False)
            else:
                self.check(caller, [m.id for m in memories], apart=kind == "apart")
        with self.db.transaction("owed checks"):
            self.db.run("forget_owed_checks")
        return len(owed)

    def _paid(self, memory_ids: Iterable[Any]) -> None:
        ids = [str(i) for i in memory_ids]
        if ids:
            with self.db.transaction("checks paid"):
                self.db.run("checks_paid", ids=uuid_list(ids))

    def check_below(self, caller: Caller, memory_ids: Iterable[str]) -> list[Contradiction]:
        """A bulk write's side of the check, whether or not it was asked for: each new memory against the live facts
        of higher provenance it may contradict (``higher_trust_candidates``, one query for the batch), so a
        lower-trust claim never sits beside a higher-trust fact undisputed (after_bulk skips it when no live fact
        outranks the batch: an equal-trust bulk load reads one max())."""
        memory_ids = [str(i) for i in memory_ids]
        if not memory_ids:
            return []
        index = self.indexer.vectors
        with self.db.reading():
            settings = {n: self.db.setting(n) for n in
                        ("contradiction_similarity", "contradiction_min_confidence", "contradiction_auto_confidence")}
            rows = self.db.dicts("higher_trust_candidates", ids=uuid_list(memory_ids), limit=candidates.CANDIDATE_LIMIT,
                                 model_id=None if index is None else index.model_id,
                                 threshold=settings["contradiction_similarity"])
            if not rows:
                return []
            new = {str(r["id"]): Memory.from_row(r) for r in self.db.dicts("memories_by_ids", ids=uuid_list(
                list({str(r["new_id"]) for r in rows})))}
        by_new: dict[str, list[dict]] = {}
        for row in rows:
            by_new.setdefault(str(row.pop("new_id")), []).append(row)
        found = []
        for memory_id in (i for i in memory_ids if i in by_new and i in new):  # in the batch's order
            found += self._against(caller, new[memory_id], by_new[memory_id], settings)
        return found

    def _against(self, caller: Caller, me: Memory, candidates: list[dict], settings: dict) -> list[Contradiction]:
        """Verify ``me`` against each candidate row; record (and settle) what contradicts it."""
        found = []
        for row in candidates:
            other = Memory.from_row(row)
            verdict = self._verify(other, me)
            if not verdict.contradicts or verdict.confidence < settings["contradiction_min_confidence"]:
                continue
            recorded = self._record(caller, other, me, verdict, settings["contradiction_auto_confidence"])
            if recorded is not None:
                found.append(recorded)
        return found

    def check_versions(self, caller: Caller, memory_ids: Iterable[str]) -> list[Contradiction]:
        """New versions whose predecessor came from another source: a contradiction between them is
        recorded as resolved (the new version already replaced the old one), with both sources."""
        ids = [str(i) for i in memory_ids]
        if not ids:
            return []
        with self.db.reading():
            pairs = self.db.dicts("replaced_from_another_source", ids="[" + ",".join(ids) + "]")
            min_confidence = self.db.setting("contradiction_min_confidence")
        found = []
        for pair in pairs:
            old = Memory.from_row({k[4:]: v for k, v in pair.items() if k.startswith("old_")})
            new = Memory.from_row({k[4:]: v for k, v in pair.items() if k.startswith("new_")})
            verdict = self._verify(old, new)
            if not verdict.contradicts or verdict.confidence < min_confidence:
                continue
            resolution = "higher_provenance" if new.provenance > old.provenance else "newer"
            with self.db.transaction("recording a replaced claim"):
                found.append(self._insert(old, new, verdict, "resolved", resolution, new))
        return found

    def resolve(self, caller: Caller, contradiction_id: Any, winner: Any, level: int = PROVENANCE["model_inferred"]
                ) -> Contradiction:
        """A user's decision: ``winner`` is one side's memory id, or None to dismiss (not a contradiction).
        On a contradiction already resolved (by provenance or recency) the same winner confirms the
        decision and the other one reverses it. ``level``: the provenance the request carries; like forget(), a
        request may not supersede (or reverse) a memory of higher provenance than its own, nor dismiss a dispute
        with one (the other side would stand beside it, undisputed)."""
        with self.db.reading():
            row = self.db.dict("contradiction_by_id", id=_uuid(contradiction_id, "contradiction_id"))
        if row is not None and row["status"] == "resolved":
            return self._review(caller, row, winner, level)
        with self.db.transaction("resolve"):
            row = self.db.dict("contradiction_by_id", id=_uuid(contradiction_id, "contradiction_id"))
            if row is None:
                raise MemoryNotFound(f"no contradiction with id {contradiction_id}")
            if row["status"] != "pending":
                raise InvalidInput(f"contradiction {contradiction_id} was resolved meanwhile ({row['resolution']})")
            self._may_decide(caller, row)
            if winner is None:  # dismissing ends each side's standing in the dispute: as high a request as both
                for side in ("memory_a", "memory_b"):
                    memory = self.db.dict("memory_by_id", id=row[side])
                    if memory is not None:
                        # the provenance an agent claims is its own word: it may not clear another agent's standing
                        # in the dispute, nor the host's (by_host), whatever agent id it carries
                        if not caller.admin and not agent_owns(caller, memory):
                            raise PermissionDenied(f"contradiction {row['id']} is with another agent's memory: only "
                                                   "an admin handle dismisses it; to give in, resolve it with the "
                                                   "other side as the winner")
                        check_provenance(caller, memory, level, "dismiss a dispute with")
                self.db.run("resolve_contradiction", id=row["id"], resolution="dismissed", winner=None, now=self.clock())
            else:
                win = _uuid(winner, "winner")
                if win not in (row["memory_a"], row["memory_b"]):
                    raise InvalidInput(f"winner must be {row['memory_a']} or {row['memory_b']} (or None to dismiss)")
                lose = row["memory_b"] if win == row["memory_a"] else row["memory_a"]
                loser = self.db.dict("memory_by_id", id=lose)
                require_owner(caller, loser, "supersede")  # the loser is changed
                check_provenance(caller, loser, level, "supersede")
                if self.db.dict("memory_by_id", id=win)["status"] == "pending":  # a claim held for review wins
                    before = self.db.scalar("memory_json", id=win)
                    self.db.run("activate_pending", id=win, now=self.clock())
                    self.db.run("log_event", now=self.clock(), actor=caller.who, action="activate", memory_id=win,
                                reason=f"won contradiction {row['id']} (decided by the user)", before=before)
                self._supersede(caller, lose, win, f"lost contradiction {row['id']} (decided by the user)")
                self.db.run("resolve_contradiction", id=row["id"], resolution="user", winner=win, now=self.clock())
            return Contradiction.from_row(self.db.dict("contradiction_by_id", id=row["id"]))

    def _verify(self, a: Memory, b: Memory) -> Verdict:
        try:
            return self.verifier(a, b)
        except Exception:  # a broken verifier must not break the write that triggered it
            return heuristic_verifier(a, b)

    def _may_decide(self, caller: Caller, row: dict) -> None:
        """One of the two owners, or an admin, decides a contradiction (what the host wrote itself is the host's side,
        not an agent handle's carrying its agent id)."""
        sides = [self.db.dict("memory_by_id", id=row[s]) for s in ("memory_a", "memory_b")]
        if not caller.admin and not any(m is not None and agent_owns(caller, m) for m in sides):
            raise PermissionDenied(f"contradiction {row['id']} is between other agents' memories; "
                                   "one of their owners or an admin decides it")

    def _review(self, caller: Caller, row: dict, winner: Any, level: int) -> Contradiction:
        """Confirm (same winner) or reverse (the other side) a contradiction already resolved."""
        with self.db.reading():
            self._may_decide(caller, row)
        if winner is None:
            raise InvalidInput(f"contradiction {row['id']} is resolved ({row['resolution']}); name the side that is "
                               "right to confirm or reverse it")
        win = _uuid(winner, "winner")
        if win not in (row["memory_a"], row["memory_b"]):
            raise InvalidInput(f"winner must be {row['memory_a']} or {row['memory_b']}")
        if row["resolution"] in ("user", "dismissed") and win == row["winner"]:
            return Contradiction.from_row(row)
        if win != row["winner"]:  # reverse: the earlier loser's claim becomes the fact's new version
            with self.db.reading():
                loser = self.db.dict("memory_by_id", id=win)
                head = self.db.dict("live_head_of", id=row["winner"])
            if loser is None or head is None:
                raise InvalidInput(f"contradiction {row['id']} cannot be reversed: the fact was forgotten or archived "
                                   "since; write the claim you want instead")
            check_provenance(caller, head, level, "reverse a contradiction over")
            refs = list(dict.fromkeys([*loser["source_refs"], f"memory:{loser['id']}"]))
            # the claim keeps its own provenance, or the request's when that is higher (the user confirmed it)
            self.writer.update(caller, str(head["id"]),
                               {"content": loser["content"], "source_session": loser["source_session"],
                                "source_refs": refs, "type": loser["type"]},
                               provenance=max(loser["provenance"], level),
                               reason=f"reversed contradiction {row['id']}: the earlier claim was right",
                               words_by_host=bool(loser.get("by_host")))
        with self.db.transaction("reviewing a contradiction"):
            self.db.run("resolve_contradiction", id=row["id"], resolution="user", winner=win, now=self.clock())
            if win != row["winner"]:
                self.db.run("log_partial_event", now=self.clock(), actor=caller.who, action="reverse", memory_id=win,
                            reason=f"contradiction {row['id']} reversed by review ({row['resolution']} -> user)",
                            before=None, after=None)
            return Contradiction.from_row(self.db.dict("contradiction_by_id", id=row["id"]))

    def _record(self, caller: Caller, older: Memory, newer: Memory, verdict: Verdict,
                auto: float) -> Contradiction | None:
        """Provenance first, then recency, for a confident verdict; pending otherwise. Both sources kept.
        None when either side is no longer active, or the pair was recorded meanwhile (the
        verifier runs outside the store lock: another thread may have written a new version of either)."""
        status, resolution, winner, loser = "pending", None, None, None
        # Only one owner's memories in one scope are resolved automatically: another agent's claim never retires
        # its own, and a private note never retires what its owner published (nor the reverse): a person decides. What
        # the host wrote itself is the host's, not that of an agent handle carrying its agent id (memories.by_host).
        if (verdict.confidence >= auto and older.agent_id == newer.agent_id and older.scope == newer.scope
                and bool(older.by_host) == bool(newer.by_host)):
            if older.provenance != newer.provenance:
                winner, loser = (older, newer) if older.provenance > newer.provenance else (newer, older)
                resolution = "higher_provenance"
            else:
                winner, loser, resolution = newer, older, "newer"
            status = "resolved"
        with self.db.transaction("recording a contradiction"):
            if not self.db.scalar("contradiction_still_open", a=older.id, b=newer.id):
                return None
            contradiction = self._insert(older, newer, verdict, status, resolution, winner)
            if loser is not None:
                self._supersede(caller, uuid.UUID(loser.id), uuid.UUID(winner.id),
                                f"lost contradiction {contradiction.id} ({resolution})")
            return contradiction

    def _insert(self, a: Memory, b: Memory, verdict: Verdict, status: str, resolution: str | None,
                winner: Memory | None) -> Contradiction:
        contradiction_id = uuid.uuid4()
        self.db.run("insert_contradiction", id=contradiction_id, memory_a=a.id, memory_b=b.id,
                    description=verdict.description, confidence=verdict.confidence, detected_by=_name(self.verifier),
                    now=self.clock(), status=status, resolution=resolution, winner=winner.id if winner else None,
                    source_a=source_of(a), source_b=source_of(b))
        return Contradiction.from_row(self.db.dict("contradiction_by_id", id=contradiction_id))

    def _supersede(self, caller: Caller, loser, winner, reason: str) -> None:
        before = self.db.scalar("memory_json", id=loser)
        self.db.run("supersede_by_winner", loser=loser, winner=winner, now=self.clock())
        self.db.run("log_event", now=self.clock(), actor=caller.who, action="supersede", memory_id=loser,
                    reason=reason, before=before)


def source_of(m: Memory) -> str:
    """Where a memory came from, as the contradiction row keeps it (memory_source() in SQL, plus the
    provenance): its session, else its first source ref, else its agent."""
    where = m.source_session or (m.source_refs[0] if m.source_refs else f"agent {m.agent_id}")
    return f"{where}, {m.provenance_name}"


def _uuid(value: Any, name: str) -> uuid.UUID:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except ValueError:
        raise InvalidInput(f"{name} must be an id (uuid), got {value!r}") from None


def _name(verifier: Any) -> str:
    return getattr(verifier, "__name__", type(verifier).__name__)
