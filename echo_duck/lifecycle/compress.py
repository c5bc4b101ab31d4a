"""Compression (SPEC L7, seed 001 "摘要压缩：将大量相似情景合并为保留来源的模式"): near-duplicate memories
fold into one that keeps every source.

Two live, keyless, semantic memories of one agent, type and scope are restatements of each other when
- their vectors are close (cosine >= ``compress_similarity``, 0.9), and
- their content words overlap (Jaccard over the verifier's tokens — stemmed, synonyms and spelling
  folded, predicates and fillers aside — >= ``compress_term_overlap``, 1.0: the same words), and
- nothing tells them apart: the same numbers, polarity and time, the same words in the same roles
  (subject before the predicate; "X is Y" may swap), and the contradiction verifier does not flag them.
Cross-language restatements share too few words to pass and stay apart (measured, see the bench).

``compress()`` groups restatements around a representative (highest provenance, then confidence, then
the most reviewed, then the oldest) and writes a new version of it whose source_refs hold every
member's sources and a ``memory:<id>`` for each folded memory; the folded ones are superseded by it,
each with a ``merge`` event. ``fold_restatement()`` does the same at write time for one new memory: a
restatement of a live one reinforces that one (access_count + 1, its sources merged in, a ``restate``
event) and the new row is kept only as superseded history.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterable

import numpy as np

from ..index.indexing import Indexer
from ..models import SHARE_TAG, Memory
from ..storage.db import Db, uuid_list
from ..write.validate import MAX_TAGS
from ..write.writer import Caller
from . import verify_lexicon as lex
from .verify import _neutral, analyse, heuristic_verifier

_NUMBERS = re.compile(r"\d+(?:[.:]\d+)*")
NEIGHBOURS = 20


@dataclass(frozen=True)
class CompressReport:
    groups: int
    folded: int
    kept: tuple[str, ...] = ()  # the new versions that hold each group
    dry_run: bool = False
    clusters: tuple[tuple[str, ...], ...] = ()  # the member ids of each group (representative first)

    def to_dict(self) -> dict:
        return {"groups": self.groups, "folded": self.folded, "kept": list(self.kept), "dry_run": self.dry_run,
                "clusters": [list(c) for c in self.clusters]}


def restatement(a: Memory, b: Memory, similarity: float, min_similarity: float, min_overlap: float) -> bool:
    """Are ``a`` and ``b`` the same fact in other words? (The module docstring gives the rule.)"""
    if similarity < min_similarity or a.type != b.type:
        return False
    if _numbers(a.content) != _numbers(b.content) or _markers(a.content) != _markers(b.content):
        return False
    sa, sb = analyse(a.content), analyse(b.content)
    if sa.negated != sb.negated or sa.past != sb.past or sa.ceased != sb.ceased:
        return False
    wa, wb = _words(sa.tokens), _words(sb.tokens)
    if not wa or not wb or not _same_words(sa.tokens, sb.tokens, min_overlap):
        return False
    if not _same_roles(sa, sb):
        return False
    verdict = heuristic_verifier(a, b)
    return not (verdict.contradicts and verdict.confidence >= 0.5)


def _numbers(text: str) -> list[str]:
    """Numbers as values: "two" = "2", "02:00" = "2:00"."""
    words = [str(int(v)) for w in re.findall(r"[a-z]+", text.lower())
             if (v := lex.EN_NUMBERS.get(w)) is not None and w not in ("a", "an", "half") and v == int(v)]
    return sorted([re.sub(r"(?<![\d.])0+(?=\d)", "", n) for n in _NUMBERS.findall(text)] + words)


# Small words that turn a statement into another one ("moved out of", "former", "不想" vs "不会").
_MARKERS = re.compile(r"\b(?:out|off|away|except|without|former|ex|least|no|not|never|only|can|could|cannot|want|wants|"
                      r"must|should|may|might|will|would)\b|不|没|想|会|能|要|曾|前|除了|只")


def _markers(text: str) -> list[str]:
    return sorted(_MARKERS.findall(text.lower().replace("n't", " not")))


def _words(tokens: list[str]) -> set[str]:
    return {t for t in tokens if not _neutral(t) and not _NUMBERS.fullmatch(t) and t not in lex.EN_NUMBERS}


def _close(x: str, y: str) -> bool:
    """One typo apart, in a word long enough to have one ("vegeterian")."""
    if min(len(x), len(y)) < 6 or abs(len(x) - len(y)) > 1:
        return False
    import difflib

    return difflib.SequenceMatcher(None, x, y).ratio() >= 0.9


def _same_words(ta: list[str], tb: list[str], share: float) -> bool:
    """The same content words (typos aside); or the longer side adds at most two, at its end, as trailing
    detail ("Lisbon, Portugal"; not "former cofounder", "moved out of Austin"). ``share`` (compress_term_overlap)
    is the part of the words the shorter side must find in the longer."""
    wa, wb = _words(ta), _words(tb)
    only_a = {x for x in wa - wb if not any(_close(x, y) for y in wb - wa)}
    only_b = {y for y in wb - wa if not any(_close(x, y) for x in wa - wb)}
    if only_a and only_b:
        return False
    short, long_ = (wa, tb) if only_b else (wb, ta)
    extra = only_a or only_b
    if len(short & _words(long_)) < share * len(short) - 1e-9 and not _close_sets(short, _words(long_)):
        return False
    if not extra:
        return True
    tail = [t for t in long_ if t in _words(long_)][-len(extra):]
    return len(extra) <= 2 and set(tail) == extra


def _close_sets(a: set[str], b: set[str]) -> bool:
    return all(x in b or any(_close(x, y) for y in b) for x in a)


def _same_roles(sa, sb) -> bool:
    """The same words in the same roles. For two "X is Y" statements, what comes before the predicate (the
    subject) matches or is swapped with the value ("Priya is the user's manager"); "Priya's manager is the
    user" moves a word into the subject and is another fact. A verb predicate keeps its roles in its words."""
    if "=" not in sa.tokens or "=" not in sb.tokens:
        return True
    pre_a, post_a = _words(sa.tokens[: sa.predicate]), _words(sa.tokens[sa.predicate:])
    pre_b, post_b = _words(sb.tokens[: sb.predicate]), _words(sb.tokens[sb.predicate:])
    return pre_a == pre_b or (bool(pre_a) and bool(post_a) and pre_a == post_b and post_a == pre_b)


class Compressor:
    def __init__(self, db: Db, indexer: Indexer, writer: Any, clock: Callable[[], datetime]):
        self.db = db
        self.indexer = indexer
        self.writer = writer
        self.clock = clock

    def settings(self) -> tuple[float, float]:
        with self.db.reading():
            return (self.db.setting("compress_similarity"),
                    self.db.setting("compress_term_overlap"))

    def groups(self, memory_ids: Iterable[str] | None = None) -> list[list[Memory]]:
        """Restatement groups among the live keyless semantic memories (all of them, or the groups of
        ``memory_ids`` and their neighbours), representative first; every member restates the representative."""
        index = self.indexer.vectors
        if index is None:
            return []
        min_similarity, min_overlap = self.settings()
        with self.db.reading():
            if memory_ids is None:
                rows = {str(r["id"]): Memory.from_row(r) for r in self.db.dicts("compressible_memories")}
                seeds = list(rows)
            else:
                seeds = [str(i) for i in memory_ids]
                rows = {str(r["id"]): Memory.from_row(r) for r in
                        self.db.dicts("compressible_by_ids", ids=uuid_list(seeds))}
            vectors = {str(k): np.asarray(v, dtype=np.float32) for k, v in
                       self.db.run("vectors_for", ids=uuid_list([i for i in seeds if i in rows]),
                                   model_id=index.model_id).fetchall()}
        neighbours: dict[str, list[tuple[str, float]]] = {}
        for memory_id in seeds:
            if memory_id in vectors:
                ids, sims = index.search(vectors[memory_id], NEIGHBOURS + 1)
                neighbours[memory_id] = [(i, float(s)) for i, s in zip(ids, sims) if s >= min_similarity and i != memory_id]
        missing = {i for found in neighbours.values() for i, _ in found} - set(rows)
        if missing:
            with self.db.reading():
                rows.update({str(r["id"]): Memory.from_row(r) for r in
                             self.db.dicts("compressible_by_ids", ids=uuid_list(sorted(missing)))})
        edges: dict[str, set[str]] = {}
        for memory_id, found in neighbours.items():
            me = rows[memory_id]
            for other_id, sim in found:
                other = rows.get(other_id)
                if other is None or not _same_owner(me, other):
                    continue
                if restatement(me, other, sim, min_similarity, min_overlap):
                    edges.setdefault(me.id, set()).add(other.id)
                    edges.setdefault(other.id, set()).add(me.id)
        placed: set[str] = set()
        out = []
        for rep_id in sorted(edges, key=lambda i: _priority(rows[i])):
            if rep_id in placed:
                continue
            members = sorted(edges[rep_id] - placed, key=lambda i: _priority(rows[i]))
            if members:
                placed |= {rep_id, *members}
                out.append([rows[rep_id], *(rows[m] for m in members)])
        return out

    def compress(self, caller: Caller, *, dry_run: bool = False) -> CompressReport:
        groups = self.groups()
        if not caller.admin:  # an agent folds its own memories: another's are neither shown (ids) nor touched
            groups = [mine for g in groups if g[0].agent_id == caller.agent_id  # its representative first, as groups()
                      and len(mine := [m for m in g if m.agent_id == caller.agent_id]) > 1]
        clusters = tuple(tuple(m.id for m in g) for g in groups)
        if dry_run:
            return CompressReport(len(groups), sum(len(g) - 1 for g in groups), (), True, clusters)
        kept = [self._merge(caller, group) for group in groups]
        return CompressReport(len(groups), sum(len(g) - 1 for g in groups), tuple(kept), False, clusters)

    def fold_restatement(self, caller: Caller, memory: Memory) -> Memory:
        """At write time: if ``memory`` (just written, keyless) restates a live memory, that one is reinforced
        and gains its sources, and ``memory`` becomes superseded history. Returns the memory that stands. When
        ``memory`` has the higher provenance (the user restating what a tool or an import wrote), it stands and the
        other is folded into it: a restatement never lowers the trust of what was said."""
        if memory.key is not None or memory.tier != "semantic" or memory.status != "active":
            return memory
        groups = [g for g in self.groups([memory.id]) if memory.id in {m.id for m in g}]
        if not groups:
            return memory
        group = groups[0]
        there = next(m for m in group if m.id != memory.id)
        # the one already there stands, unless the restatement is said with higher provenance
        keep, folded = (memory, there) if memory.provenance > there.provenance else (there, memory)
        with self.db.transaction("folding a restatement"):
            before = self.db.scalar("memory_json", id=keep.id)
            refs = _refs([keep, folded], folded=[folded])
            self.db.run("restate_memory", id=keep.id, refs=refs, now=self.clock(),
                        importance=max(keep.importance, folded.importance), pinned=keep.pinned or folded.pinned)
            self.db.run("log_event", now=self.clock(), actor=caller.who, action="restate", memory_id=keep.id,
                        reason=f"restated by {folded.id}: reinforced, its sources merged", before=before)
            self._fold(caller, folded, keep.id, f"a restatement of {keep.id}")
            kept = Memory.from_row(self.db.dict("memory_by_id", id=keep.id))
        self.indexer.keyword_search.invalidate()
        return kept

    def _merge(self, caller: Caller, group: list[Memory]) -> str:
        rep, others = group[0], group[1:]
        refs = _refs(group, folded=others)
        # the representative's words, so its provenance (the group's highest): neither relabelled nor refused
        new = self.writer.update(caller, rep.id, {"source_refs": refs, "importance": max(m.importance for m in group),
                                                  "pinned": any(m.pinned for m in group),
                                                  "tags": _tags(rep, others)},
                                 reason=f"compressed {len(group)} restatements into one", provenance=rep.provenance)
        with self.db.transaction("folding restatements"):
            for m in others:
                self._fold(caller, m, new.id, f"compressed into {new.id} with {rep.id}")
        return new.id

    def _fold(self, caller: Caller, folded: Memory, into: Any, reason: str) -> None:
        before = self.db.scalar("memory_json", id=folded.id)
        self.db.run("supersede_by_winner", loser=folded.id, winner=into, now=self.clock())
        self.db.run("log_event", now=self.clock(), actor=caller.who, action="merge", memory_id=folded.id,
                    reason=reason, before=before)


def _priority(m: Memory) -> tuple:
    """Representative first: higher provenance, confidence, reviews; then the oldest."""
    return (-m.provenance, -m.confidence, -m.access_count, m.created_at, m.id)


def _same_owner(a: Memory, b: Memory) -> bool:
    """One owner, scope and type, and shown to the same agents: folding a sensitive (or unshared personal) note into
    a normal one would hand its sources to everyone who reads the normal one. The host's own rows (by_host) are not
    an agent handle's carrying the same id: a near-copy claiming more provenance superseded the host's rule."""
    return (a.agent_id, a.scope, a.team_id, a.tenant_id, a.type, bool(a.by_host)) \
        == (b.agent_id, b.scope, b.team_id, b.tenant_id, b.type, bool(b.by_host)) \
        and (a.scope != "session" or a.source_session == b.source_session) \
        and (a.sensitivity, SHARE_TAG in a.tags) == (b.sensitivity, SHARE_TAG in b.tags)


def _refs(group: list[Memory], folded: list[Memory]) -> list[str]:
    refs: list[str] = []
    for m in group:
        refs += list(m.source_refs)
        if m.source_session:
            refs.append(f"session:{m.source_session}")
    refs += [f"memory:{m.id}" for m in folded]
    return list(dict.fromkeys(refs))[:200]


def new_id() -> uuid.UUID:
    return uuid.uuid4()


def _tags(rep: Memory, others: list[Memory]) -> list[str]:
    """The folded group's tags, sorted: the representative's, then the others' while there is room (MAX_TAGS)."""
    others_tags = sorted({t for m in others for t in m.tags})
    return sorted(list(dict.fromkeys([*rep.tags, *others_tags]))[:MAX_TAGS])
