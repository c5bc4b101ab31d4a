"""`echo-duck bench contradictions`: precision and recall of a contradiction verifier on labelled pairs.

The fixture (data_fixtures/contradictions/pairs.jsonl) holds EN, ZH and mixed pairs of memories, each
labelled ``contradiction`` or ``compatible`` with a kind (value_change, negation, antonym, units,
time_bounded, preference_scope, different_subject, paraphrase, elaboration, unrelated_same_topic)
and a group (pairs built from the same facts share one). The groups are split once, by a hash of
their name, into a tuning part (about 70%) and a held-out part (about 30%): the heuristic was tuned
on the first only, so the second is the honest number. A pair counts as flagged when the verifier
says it contradicts with confidence >= ``contradiction_min_confidence`` (0.5, as the store records it).

A third part, ``fresh`` (data_fixtures/contradictions/fresh.jsonl), was written later from scratch with
other subjects and phrasings (and three more kinds: preference_change, list, partial_overlap) and scored
before the verifier was changed again: pairs.jsonl's held-out part had been looked at, so it alone no
longer showed how the verifier does on wording it was not built from.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from ..errors import InvalidInput

PARTS = ("tuning", "heldout", "fresh")
SPLIT_PARTS = ("tuning", "heldout")  # the two halves of pairs.jsonl (or of any --data file)
MIN_CONFIDENCE = 0.5
HELDOUT_SHARE = 3  # of 10 hash buckets


@dataclass(frozen=True)
class Side:
    """What a verifier reads of a memory."""

    content: str
    key: str | None = None
    type: str = "environment"


def part_of(group: str) -> str:
    """tuning or heldout, fixed by the group's name (so related pairs never straddle the split)."""
    bucket = int(hashlib.sha256(group.encode("utf-8")).hexdigest(), 16) % 10
    return "heldout" if bucket < HELDOUT_SHARE else "tuning"


def default_fixture(name: str = "pairs.jsonl") -> Path:
    here = Path(__file__).resolve()
    for root in (here.parent.parent / "data_fixtures", here.parent.parent.parent / "data_fixtures"):
        if (root / "contradictions" / name).is_file():
            return root / "contradictions" / name
    raise FileNotFoundError(f"data_fixtures/contradictions/{name} is missing; pass --data")


def load(path: Path, part: str | None = None) -> list[dict[str, Any]]:
    """The pairs of a fixture, each with its part: ``part`` for all of them, else tuning/heldout by group."""
    pairs = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            pair = json.loads(line)
            missing = {"a", "b", "label", "kind", "lang", "group"} - set(pair)
            if missing:
                raise ValueError(f"{path}, line {n}: missing {', '.join(sorted(missing))}")
            pairs.append({**pair, "part": part or part_of(pair["group"])})
    return pairs


def run(path: Path | None = None, verifier: Callable | None = None, parts: Iterable[str] | None = None,
        ) -> dict[str, Any]:
    """Verdicts on every pair of the chosen parts, and the scores per part, kind and language.

    Without ``path``: tuning and heldout from pairs.jsonl, fresh from fresh.jsonl (all three by default).
    With ``path``: that file split into tuning and heldout by group (``fresh`` is then not available)."""
    from ..lifecycle.verify import heuristic_verifier

    verifier = verifier or heuristic_verifier
    parts = tuple(parts or (SPLIT_PARTS if path else PARTS))
    if path and "fresh" in parts:
        raise InvalidInput("part 'fresh' is its own file (fresh.jsonl): score it without data, or pass that file as data")
    pairs = [p for p in load(path or default_fixture()) if p["part"] in parts] if set(parts) & set(SPLIT_PARTS) else []
    if "fresh" in parts:
        pairs += load(default_fixture("fresh.jsonl"), part="fresh")
    started = time.perf_counter()
    for p in pairs:
        verdict = verifier(Side(p["a"]), Side(p["b"]))
        p["flagged"] = bool(verdict.contradicts and verdict.confidence >= MIN_CONFIDENCE)
        p["confidence"] = verdict.confidence
        p["description"] = verdict.description
    elapsed = time.perf_counter() - started
    fixtures = [str(path or default_fixture())] if set(parts) & set(SPLIT_PARTS) else []
    fixtures += [str(default_fixture("fresh.jsonl"))] if "fresh" in parts else []
    report: dict[str, Any] = {"fixture": ", ".join(fixtures), "verifier": getattr(verifier, "__name__", "verifier"),
                              "min_confidence": MIN_CONFIDENCE, "pairs": len(pairs),
                              "ms_per_pair": round(1000 * elapsed / max(len(pairs), 1), 3), "parts": {}}
    for name in parts:
        chosen = [p for p in pairs if p["part"] == name]
        report["parts"][name] = {
            "overall": _score(chosen),
            "by_kind": {k: _score(v) for k, v in sorted(_by(chosen, "kind").items())},
            "by_lang": {k: _score(v) for k, v in sorted(_by(chosen, "lang").items())},
            "errors": [{k: p[k] for k in ("a", "b", "label", "kind", "lang", "confidence", "description")}
                       for p in chosen if p["flagged"] != (p["label"] == "contradiction")],
        }
    return report


def _by(pairs: list[dict], field: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for p in pairs:
        out[p[field]].append(p)
    return out


def _score(pairs: list[dict]) -> dict[str, Any]:
    tp = sum(p["flagged"] and p["label"] == "contradiction" for p in pairs)
    fp = sum(p["flagged"] and p["label"] != "contradiction" for p in pairs)
    fn = sum(not p["flagged"] and p["label"] == "contradiction" for p in pairs)
    positives = tp + fn
    return {"pairs": len(pairs), "contradictions": positives, "flagged": tp + fp, "tp": tp, "fp": fp, "fn": fn,
            "precision": None if tp + fp == 0 else round(tp / (tp + fp), 3),
            "recall": None if positives == 0 else round(tp / positives, 3),
            "false_positive_rate": None if len(pairs) == positives else round(fp / (len(pairs) - positives), 3)}


def markdown(report: dict[str, Any], *, errors: bool = False) -> str:
    def cell(v):
        return "–" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    lines = [f"# Contradiction verifier: {report['verifier']}", "",
             f"{report['pairs']} pairs from {report['fixture']}; flagged = contradicts with confidence >= "
             f"{report['min_confidence']}; {report['ms_per_pair']} ms per pair.", ""]
    for name, part in report["parts"].items():
        o = part["overall"]
        lines += [f"## {name} part: precision {cell(o['precision'])}, recall {cell(o['recall'])} "
                  f"({o['pairs']} pairs, {o['contradictions']} contradictions, {o['fp']} false alarms)", "",
                  "| slice | pairs | contradictions | flagged | precision | recall | false-positive rate |",
                  "|---|---|---|---|---|---|---|"]
        for label, group in (("kind", part["by_kind"]), ("lang", part["by_lang"])):
            for k, s in group.items():
                lines.append(f"| {label}: {k} | {s['pairs']} | {s['contradictions']} | {s['flagged']} | "
                             f"{cell(s['precision'])} | {cell(s['recall'])} | {cell(s['false_positive_rate'])} |")
        lines.append("")
        if errors:
            lines += [f"### {name}: errors", ""]
            lines += [f"- [{e['kind']}/{e['lang']}] label {e['label']}: {e['a']!r} vs {e['b']!r} -> "
                      f"{e['confidence']} {e['description']}" for e in part["errors"]]
            lines.append("")
    return "\n".join(lines)
