"""Sleep-time consolidation (SPEC L4): session messages → episode → facts → contradictions → decay.

Without an LLM the deterministic extractor (explicit statements in EN and ZH) and an extractive
summary do the work; with one, any ``complete(prompt) -> str`` plugs in through
``extract_llm.llm_extractor``. Every fact still goes through the write path: scanner, provenance guard
(a consolidated fact never replaces a user-stated one; the conflict is recorded as pending). A fact's
provenance follows the message it came from: the user's words are consolidated, the assistant's
model_inferred, a tool's output legacy (``Consolidator._provenance``).

Jobs are durable rows in ``consolidation_jobs``: one per session (repeat requests are the same
job), claimed with a lease so a crashed worker's job is picked up again, retried with backoff on
failure, never dropped. ``Worker`` runs them in a background thread; the agent's own writes wait at
most for one short write transaction of the worker (the LLM call, if any, runs outside the lock).
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Callable, Sequence

from ..errors import EchoDuckError, ProvenanceConflict, RejectedWrite
from ..models import OWN_ROLES, Message
from ..storage.db import Db
from ..write.scan import redact, scan_many
from ..write.sessions import Sessions, auto_title
from ..write.writer import Caller, Writer, prepare
from . import decay as lifecycle
from . import extract
from . import summary as summaries
from .contradictions import ContradictionChecker


Extractor = Callable[[Sequence[tuple[str, str]]], list]


@dataclass(frozen=True)
class ConsolidationReport:
    session_id: str
    episode_id: str | None
    facts_stored: int = 0
    facts_pending: int = 0
    facts_rejected: int = 0
    contradictions: int = 0
    archived_by_decay: int = 0
    skipped: str | None = None  # why nothing was done (no messages, already consolidated)
    rejections: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}


class Consolidator:
    def __init__(self, db: Db, writer: Writer, sessions: Sessions, checker: ContradictionChecker, caller: Caller,
                 clock: Callable[[], datetime], extractor: Extractor | None = None,
                 summarizer: Callable[[Sequence[tuple[str, str]]], str] | None = None):
        self.db = db
        self.writer = writer
        self.sessions = sessions
        self.checker = checker
        self.caller = caller.acting_as("consolidation", "consolidation")
        self.clock = clock
        self.extractor = extractor or extract.extract_facts
        self.summarizer = summarizer or summaries.episode_summary
        self._working: dict[str, list[tuple[str, str]]] = {}  # session -> working memory handed over at its end
        self._lock = threading.Lock()
        self._session_locks: dict[str, tuple[threading.Lock, int]] = {}  # session -> (lock, runs using it)

    def hand_over(self, session_id: str, items: list[tuple[str, str]]) -> None:
        """Working memory (role, content) given to this session's next consolidation, in this process only
        (SPEC M1: never persisted). Items the user said ("user") are read for facts; the rest ("note",
        "assistant" …) only inform the episode."""
        if items:
            self._working.setdefault(session_id, []).extend(items)

    def consolidate(self, session: str) -> ConsolidationReport:
        session_id = self.sessions.resolve(session)
        with self._lock:
            lock, users = self._session_locks.get(session_id, (threading.Lock(), 0))
            self._session_locks[session_id] = (lock, users + 1)
        try:
            with lock:  # one run of a session at a time (the worker's and a direct call): each reads where the last ended
                return self._consolidate(session_id)
        finally:
            with self._lock:  # the last run out drops the lock: a long-lived process keeps none per session ever seen
                lock, users = self._session_locks[session_id]
                if users > 1:
                    self._session_locks[session_id] = (lock, users - 1)
                else:
                    del self._session_locks[session_id]

    def _consolidate(self, session_id: str) -> ConsolidationReport:
        messages = self.sessions.messages(session_id)
        if not messages:
            return ConsolidationReport(session_id, None, skipped="session has no messages")
        info = self.sessions.get(session_id)
        # Done only when the whole run finished (consolidated_seq is set last); a run that failed after
        # storing its episode is redone, reusing that episode, and its facts are idempotent by key.
        with self.db.reading():
            previous = self.db.dict("episode_of_session", agent_id=self.caller.agent_id, session_id=session_id)
        # working memory handed over at the session's end is taken only once the run has finished (a failed run's
        # retry reads it again), and a session consolidated before its end still reads it
        working = list(self._working.get(session_id, []))
        read = info.consolidated_seq or 0  # the last message a finished run read
        if messages[-1].seq <= read and not working:
            return ConsolidationReport(session_id, previous and str(previous["id"]), skipped="already consolidated")
        pairs = [(m.role, m.content) for m in messages]
        # the user's notes and the agent's own; a tool's output or a fetched page keeps its role (from outside)
        noted = [(r if r == "user" or r not in OWN_ROLES else "assistant", text)
                 for r, text in ((str(role).lower(), text) for role, text in working)]
        # A message the scanner blocks (an injection, a secret) yields no fact; one it is unsure about yields only
        # quarantined facts. Neither goes into the summary (nor its title), nor does a working-memory note the
        # scanner flags, and a note's facts take the note's own verdict.
        verdicts = scan_many([text for _, text in pairs] + [text for _, text in noted])
        # facts only from the messages since the last run that finished: an earlier message's facts were stored then
        # (and perhaps forgotten, or replaced by a newer session's since), so reading it again would bring them back
        start = next((i for i, m in enumerate(messages) if m.seq > read), len(messages))
        candidates = self._candidates(pairs, noted, verdicts, start)  # may call an LLM: outside any transaction
        with self.db.reading():  # a message whose fact was forgotten or rejected stays out of a summary made again
            withdrawn = {r[0] for r in self.db.run("session_messages_withdrawn", agent_id=self.caller.agent_id,
                                                   session_id=session_id).fetchall()}
        flagged = {i for i, f in enumerate(verdicts[:len(pairs)]) if f is not None or messages[i].id in withdrawn}
        summarized = ([pair for i, pair in enumerate(pairs) if i not in flagged]
                      + [p for p, f in zip(noted, verdicts[len(pairs):]) if f is None])
        summary = self.summarizer(summarized)
        title_from_flagged = any(info.title == auto_title(pairs[i][1]) for i in flagged)
        if info.title and summary and not title_from_flagged and not summary.startswith(info.title.rstrip("…")):
            summary = f"{info.title} — {summary}"  # the session's title leads, unless the summary starts with it
        if previous is not None and previous["last_seq"] == messages[-1].seq:
            episode_id = previous["id"]
        else:
            episode_id = self._store_episode(session_id, messages, summary, previous,
                                             [m for i, m in enumerate(messages) if i not in flagged],
                                             self._summary_provenance(summarized))
        stored, pending, rejections = [], 0, []
        outside = any(role.lower() not in OWN_ROLES for role, _ in (*pairs, *noted))  # tool output, fetched pages …
        for candidate, index, finding in candidates:
            if finding is not None and finding.blocked:
                self.writer.quarantine(self.caller, "source message", finding.reason,
                                       f"fact from a refused message: {finding.detail}", finding.excerpt)
                rejections.append(f"{finding.reason}: source message refused by the scanner")
                continue
            refs = [f"message:{messages[index].id}"] if index is not None else []  # a note is not stored
            try:
                spec = prepare(self.caller, candidate.content, type=candidate.type, key=candidate.key,
                               tags=candidate.tags, importance=candidate.importance, confidence=candidate.confidence,
                               provenance=self._provenance(pairs[index][0] if index is not None else "user", outside),
                               source_session=session_id, episode_id=episode_id,
                               source_refs=[*refs, f"episode:{episode_id}"])
                if finding is not None:  # held for its source; its own words are scanned too (a block is refused)
                    own = self.writer.screen(self.caller, [spec], atomic=True).get(0)
                    memory = self.writer.remember_many(self.caller, [spec], on_lower_provenance="record", atomic=True,
                                                       screened={0: own or finding}, owe="full")[0]
                else:
                    memory = self.writer.remember(self.caller, spec, on_lower_provenance="record", owe="full")
            except RejectedWrite as e:
                rejections.append(f"{e.reason}: {redact(candidate.content, 60)}")  # a secret stays masked
                continue
            except (ProvenanceConflict, EchoDuckError) as e:
                rejections.append(f"{type(e).__name__}: {e}")
                continue
            if memory.status in ("pending", "quarantined"):  # both wait for a person
                pending += 1
            else:
                stored.append(memory.id)
        found = self.checker.check(self.caller, stored)
        # Decay is a store-wide job (admin only, as decay() is): an agent's consolidation must not archive other
        # agents' memories, least of all by a clock of its own.
        decayed = lifecycle.decay(self.db, self.caller, self.clock()).archived if self.caller.admin else 0
        with self.db.transaction("marking the session consolidated"):
            self.db.run("mark_session_consolidated", agent_id=self.caller.agent_id, session_id=session_id,
                        now=self.clock(), seq=messages[-1].seq)
        rest = self._working.pop(session_id, [])[len(working):]  # what was handed over while this run read
        if rest:
            self._working[session_id] = rest
        return ConsolidationReport(session_id, str(episode_id), len(stored), pending, len(rejections), len(found),
                                   decayed, rejections=tuple(rejections))

    def _provenance(self, role: str, outside: bool) -> str:
        """What a fact from a message of ``role`` may claim: what the user said, consolidated; the assistant's
        words, model_inferred (the agent's own claim); a tool's output or any other text from outside, legacy
        (it must never replace the agent's own fact, T1). A pluggable extractor (an LLM that read the outside text
        too) names its facts' sources itself, so in a session holding text from outside every fact it reports is
        legacy: it may add to what the agent knows, never replace it."""
        role = role.lower()
        if outside and self.extractor is not extract.extract_facts:
            return "legacy"
        if role in ("user", "human"):
            return "consolidated"
        return "model_inferred" if role in OWN_ROLES else "legacy"

    def _candidates(self, pairs: list[tuple[str, str]], noted: list[tuple[str, str]],
                    verdicts: Sequence[Any], start: int = 0) -> list[tuple[Any, int | None, Any]]:
        """(fact, the message it came from or None for a working-memory note, the scanner's finding on its
        source). The built-in extractor names each fact's source exactly; a pluggable one (an LLM reads every
        message, an injected one too, and says itself where a fact came from) is not trusted to: when any message
        or note was flagged, each of its facts takes the worst finding (a blocked source's facts are quarantined,
        not dropped, since which message it was is not known)."""
        out = []
        for c in self.extractor(pairs[start:]) if start < len(pairs) else ():  # messages from ``start`` on
            index = start + min(max(c.source_index, 0), len(pairs) - start - 1)
            out.append((c, index, verdicts[index]))
        users = [k for k, (role, _) in enumerate(noted) if role == "user"]
        if users:  # working memory: facts only from what the user said; everything informs the episode
            for c in self.extractor([noted[k] for k in users]):
                k = users[min(max(c.source_index, 0), len(users) - 1)]
                out.append((c, None, verdicts[len(pairs) + k]))
        if self.extractor is not extract.extract_facts and any(f is not None for f in verdicts):
            worst = next((f for f in verdicts if f is not None and f.blocked), None) or next(
                f for f in verdicts if f is not None)
            held = replace(worst, outcome="quarantine")
            out = [(c, index, finding if finding is not None and finding.blocked else held)
                   for c, index, finding in out]
        return out

    def _summary_provenance(self, summarized: list[tuple[str, str]]) -> str:
        """What an episode summary made of ``summarized`` may claim: the least trusted words it may quote. Only the
        user's messages, consolidated; the assistant's words too (the default summary takes its sentences),
        model_inferred; a pluggable summarizer writes its own words, model_inferred, and legacy when it also read
        text from outside (a tool's output), as the facts of ``_provenance``."""
        roles = {role.lower() for role, _ in summarized}
        if self.summarizer is not summaries.episode_summary:
            return "model_inferred" if roles <= set(OWN_ROLES) else "legacy"
        return "consolidated" if not roles & {"assistant"} else "model_inferred"  # it reads user, human, assistant

    def _store_episode(self, session_id: str, messages: list[Message], summary: str, previous: dict | None,
                       clean: list[Message], provenance: str) -> uuid.UUID:
        """The episode row, plus an episodic memory of its summary so recall finds it by meaning, with
        ``provenance`` (``_summary_provenance``). Its entities are read from the ``clean`` messages only (not those
        the scanner flagged)."""
        text = " ".join(m.content for m in clean)
        names = summaries.entities(text)
        episode_id = uuid.uuid4()
        importance = min(1.0, 0.3 + 0.05 * len(messages) ** 0.5 + 0.05 * len(names))
        with self.db.transaction("storing an episode"):
            if previous is not None:
                self.db.run("retire_episode", id=previous["id"])
            self.db.run("insert_episode", id=episode_id, agent_id=self.caller.agent_id, session_id=session_id,
                        session_key=session_id, summary=summary or "(no summary)", first_seq=messages[0].seq,
                        last_seq=messages[-1].seq, entities=names, importance=importance,
                        started_at=messages[0].created_at, ended_at=messages[-1].created_at, now=self.clock())
        if summary:
            try:
                spec = prepare(self.caller, summary, type="environment", tier="episodic", key=f"episode:{session_id}",
                               entities=names[:64], importance=importance, provenance=provenance,
                               source_session=session_id, episode_id=episode_id,
                               source_refs=[f"episode:{episode_id}"] + [f"message:{m.id}" for m in messages[:50]])
                self.writer.remember(self.caller, spec, on_lower_provenance="record")
            except (RejectedWrite, EchoDuckError):
                pass  # the episode row stays; a summary the scanner refuses is not remembered
        return episode_id


class JobQueue:
    """The durable consolidation queue of one agent."""

    def __init__(self, db: Db, consolidator: Consolidator, agent_id: str, clock: Callable[[], datetime]):
        self.db = db
        self.consolidator = consolidator
        self.agent_id = agent_id
        self.clock = clock

    def request(self, session_id: str) -> None:
        with self.db.transaction("requesting consolidation"):
            self.db.run("request_job", session_id=session_id, agent_id=self.agent_id, now=self.clock())

    def request_idle(self, limit: int = 100) -> int:
        with self.db.reading():
            idle = [r[0] for r in self.db.run("idle_sessions", agent_id=self.agent_id, now=self.clock(), limit=limit).fetchall()]
        for session_id in idle:
            self.request(session_id)
        return len(idle)

    def run_due(self, limit: int = 10) -> list[ConsolidationReport | dict]:
        with self.db.reading():
            due = [r[0] for r in self.db.run("due_jobs", agent_id=self.agent_id, now=self.clock(), limit=limit).fetchall()]
        results = []
        for session_id in due:
            with self.db.transaction("claiming a consolidation job"):
                self.db.run("claim_job", agent_id=self.agent_id, session_id=session_id, now=self.clock())
            try:
                report = self.consolidator.consolidate(session_id)
            except Exception as e:  # retried later with backoff, never dropped
                with self.db.transaction("recording a failed consolidation"):
                    self.db.run("fail_job", agent_id=self.agent_id, session_id=session_id,
                                error=f"{type(e).__name__}: {e}"[:2000], now=self.clock())
                results.append({"session_id": session_id, "error": f"{type(e).__name__}: {e}"})
                continue
            with self.db.transaction("finishing a consolidation job"):
                self.db.run("finish_job", agent_id=self.agent_id, session_id=session_id,
                            result=json.dumps(report.to_dict()), now=self.clock())
            results.append(report)
        return results

    def jobs(self) -> list[dict[str, Any]]:
        with self.db.reading():
            return self.db.dicts("jobs", agent_id=self.agent_id)


class Worker:
    """Background thread: every ``poll_seconds`` enqueue idle sessions and run due jobs."""

    def __init__(self, queue: JobQueue, poll_seconds: float = 5.0):
        self.queue = queue
        self.poll_seconds = poll_seconds
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="echo-duck-consolidation", daemon=True)

    def start(self) -> "Worker":
        self._thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.queue.request_idle()
                self.queue.run_due()
            except EchoDuckError as e:  # e.g. the store was closed under us: stop quietly
                self.errors.append(str(e))
                if "closed" in str(e):
                    return
            self._stop.wait(self.poll_seconds)
