"""LoCoMo retrieval benchmark (turn level): each conversation in a fresh store, every question recalled.

The data (CC BY-NC 4.0) is never shipped with echo_duck: point ``--data`` at a folder holding
memories.jsonl and queries.jsonl in the converted format of ../shared/bench/locomo.
Each dialog turn becomes one memory: "Speaker: text [shared a photo: caption]", key = the turn id,
source_session = the LoCoMo session, observed_at = its timestamp, tier episodic.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Iterable

from ..errors import InvalidInput
from ..store.facade import EchoDuck


def stored_pairs(batch: list, items: list) -> list[tuple[Any, Any]]:
    """(memory, item) for each item a ``remember_many`` batch stored. A write the scanner blocked is left
    out of the batch (``batch.blocked`` holds its position), so zipping the batch with the input would
    give every later memory the next item's name."""
    blocked = {position for position, _ in getattr(batch, "blocked", ())}
    return list(zip(batch, [item for i, item in enumerate(items) if i not in blocked]))


KS = (1, 5, 10)
VARIANTS = {
    # name: (recall arms, apply decay by ingesting each session at its own time)
    "bm25": (("keyword",), False),
    "vector": (("vector",), False),
    "hybrid": (("keyword", "vector"), False),
    "hybrid+decay": (("keyword", "vector"), True),
}


def turn_content(m: dict) -> str:
    text = f"{m['speaker']}: {m['text']}"
    if m.get("image_caption"):
        text += f" [shared a photo: {m['image_caption']}]"
    return text


def load(data: Path) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
    memories: dict[str, list[dict]] = defaultdict(list)
    queries: dict[str, list[dict]] = defaultdict(list)
    for line in (data / "memories.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            m = json.loads(line)
            memories[m["conv_id"]].append(m)
    for line in (data / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            queries[q["conv_id"]].append(q)
    return memories, queries


class ConversationStore:
    """One conversation's turns in a fresh in-memory store."""

    def __init__(self, turns: list[dict], *, embedder: Any = "default", timed: bool = False):
        self.clock_now = datetime(2000, 1, 1)
        self.store = EchoDuck(":memory:", agent_id="locomo", now=lambda: self.clock_now, embedder=embedder, admin=True)
        self.by_id: dict[str, str] = {}
        sessions: dict[str, list[dict]] = defaultdict(list)
        for turn in turns:
            sessions[turn["session"]].append(turn)
        batches = sessions.values() if timed else [turns]
        for batch in batches:
            stamps = [datetime.fromisoformat(t["timestamp"]) for t in batch if t.get("timestamp")]
            if timed and stamps:
                self.clock_now = min(stamps)  # the session is remembered when it happened
            records = [dict(content=turn_content(t), type="environment", tier="episodic",
                            source_session=t["session"], observed_at=t.get("timestamp"), importance=0.5)
                       for t in batch]  # no key=: keys are indexed, a turn id would add its words
            for memory, turn in stored_pairs(self.store.remember_many(records), batch):
                self.by_id[memory.id] = turn["mem_id"]
        stamps = [datetime.fromisoformat(t["timestamp"]) for t in turns if t.get("timestamp")]
        self.clock_now = (max(stamps) if stamps else self.clock_now) + timedelta(days=1)

    def retrieve(self, question: str, k: int, arms: Iterable[str]) -> list[str]:
        hits = self.store.recall(question, k, arms=tuple(arms), reinforce=False)
        return [self.by_id[h.id] for h in hits]

    def close(self) -> None:
        self.store.close()


@dataclass
class Scores:
    n: int = 0
    recall: dict[int, float] = field(default_factory=lambda: {k: 0.0 for k in KS})
    mrr: float = 0.0

    def add(self, ranked: list[str], evidence: set[str]) -> None:
        self.n += 1
        for k in KS:
            self.recall[k] += len(evidence & set(ranked[:k])) / len(evidence)
        self.mrr += next((1 / (i + 1) for i, m in enumerate(ranked) if m in evidence), 0.0)

    def row(self) -> dict[str, float]:
        n = max(self.n, 1)
        return {**{f"R@{k}": round(self.recall[k] / n, 3) for k in KS}, "MRR": round(self.mrr / n, 3), "n": self.n}


def run(data: Path, variants: Iterable[str] = tuple(VARIANTS), *, embedder: Any = "default",
        limit_conversations: int | None = None, progress: Callable[[str], None] | None = None) -> dict:
    """{variant: {category: {R@1, R@5, R@10, MRR, n}}} plus timings."""
    variants = tuple(variants)
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise InvalidInput(f"unknown LoCoMo variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    memories, queries = load(Path(data))
    conversations = sorted(memories)[:limit_conversations]
    results: dict[str, dict[str, Scores]] = {v: defaultdict(Scores) for v in variants}
    timings: dict[str, float] = defaultdict(float)
    for conv in conversations:
        for timed in sorted({VARIANTS[v][1] for v in variants}):
            started = time.perf_counter()
            store = ConversationStore(memories[conv], embedder=embedder, timed=timed)
            timings["ingest_s"] += time.perf_counter() - started
            try:
                for variant in (v for v in variants if VARIANTS[v][1] == timed):
                    started = time.perf_counter()
                    for q in queries[conv]:
                        evidence = set(q["evidence"])
                        if not evidence:
                            continue
                        ranked = store.retrieve(q["question"], max(KS), VARIANTS[variant][0])
                        results[variant][q["category"]].add(ranked, evidence)
                        results[variant]["all"].add(ranked, evidence)
                    timings[f"{variant}_s"] += time.perf_counter() - started
            finally:
                store.close()
        if progress:
            progress(conv)
    return {"results": {v: {c: s.row() for c, s in sorted(cats.items())} for v, cats in results.items()},
            "timings": {k: round(v, 1) for k, v in timings.items()},
            "conversations": len(conversations)}


def markdown(report: dict) -> str:
    lines = ["| variant | category | R@1 | R@5 | R@10 | MRR | n |", "|---|---|---|---|---|---|---|"]
    for variant, cats in report["results"].items():
        for cat in ["all"] + [c for c in cats if c != "all"]:
            r = cats[cat]
            lines.append(f"| {variant} | {cat} | {r['R@1']:.3f} | {r['R@5']:.3f} | {r['R@10']:.3f} | {r['MRR']:.3f} | {r['n']} |")
    return "\n".join(lines)
