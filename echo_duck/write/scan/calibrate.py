"""The quarantine threshold, set on a fixed benign reference rather than on the training corpus.

The corpus's benign notes shape the model, so their out-of-fold scores move with every pass of the corpus: a pass
that adds hard benign families made the threshold stricter and a better-ranking model find fewer attacks. The
reference is a fixed set of risky-looking benign notes the model is never fitted on (the benign notes of
data_fixtures/scan_holdout … scan_holdout5, 1,061 notes); the threshold is the lowest score at which the whole
scanner (every layer, as ``verdict.decide`` rules) quarantines at most REFERENCE_RATE of them. The block threshold
stays train.fit's (above every benign training note scored held out by group). A set written later (scan_holdout6)
is what says whether this generalises.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ...errors import InvalidInput
from .classifier import Classifier, Model
from .verdict import RuleReading, decide

# 8 %: two points under the bar for risky benign notes (10 %), for the spread between sets (about 5-9.5 % per set at
# 8 % pooled on the five reference sets). Chosen before the sixth set was read.
REFERENCE_RATE = 0.08
REFERENCE_SETS = ("scan_holdout", "scan_holdout2", "scan_holdout3", "scan_holdout4", "scan_holdout5")


def reference_notes(fixtures: Path, sets: Sequence[str] = REFERENCE_SETS) -> list[str]:
    """The benign notes of ``sets`` (folders under ``fixtures``, each with benign.jsonl)."""
    notes = []
    for name in sets:
        path = fixtures / name / "benign.jsonl"
        if not path.is_file():
            raise InvalidInput(f"the scanner's benign reference is missing: {path} (the quarantine threshold is set on "
                               f"{', '.join(sets)} beside the corpus)")
        with open(path, encoding="utf-8") as f:
            notes += [json.loads(line)["text"] for line in f if line.strip()]
    return notes


class Reference:
    """Benign notes with what the rules say about them, read once; ``calibrate`` is then cheap per model."""

    def __init__(self, notes: Sequence[str], protected: Sequence[str] = ()):
        self.notes = list(notes)
        self.ruled = RuleReading(self.notes, protected)

    def calibrate(self, model: Model, embedder, rate: float = REFERENCE_RATE) -> Model:
        """``model`` with its quarantine threshold set here: the lowest score (at most the block threshold) at which
        at most ``rate`` of the notes are quarantined, as the scanner decides (rules, classifier, address rule)."""
        scores = [None] * len(self.notes)
        for i, s in zip(self.ruled.need, Classifier(lambda: embedder, model).score_many(self.ruled.views)):
            scores[i] = s
        allowed = rate * len(self.notes)
        threshold = model.block
        for candidate in sorted({s.value for s in scores if s is not None and s.value <= model.block}, reverse=True):
            held = sum(1 for t, ev, s in zip(self.notes, self.ruled.evidence, scores)
                       if (f := decide(t, ev, s, model.block, candidate)) is not None and f.outcome == "quarantine")
            if held > allowed:
                break
            threshold = candidate
        return replace(model, quarantine=threshold)
