"""The quarantine threshold, set on fixed references rather than on the training corpus.

The corpus's benign notes shape the model, so their out-of-fold scores move with every pass of the corpus: a pass
that adds hard benign families made the threshold stricter and a better-ranking model find fewer attacks. So the
threshold is set on notes the model is never fitted on, two kinds of them:

- the risky reference: risky-looking benign notes (the benign notes of data_fixtures/scan_holdout … scan_holdout5,
  1,061 notes), at most REFERENCE_RATE of them quarantined;
- the ordinary reference: everyday text (the ordinary notes of scan_holdout20 … scan_holdout23, 640 notes written
  blind by four writers: work and family chat, long assistant replies, requests), at most ORDINARY_RATE of them
  quarantined. A model that learns attacks written as friendly chat scores friendly chat higher too; held to the risky
  reference alone, such a model held 8 % of ordinary notes where the one before held 6.4 %.

The threshold is the lowest score at which the whole scanner (every layer, as ``verdict.decide`` rules) stays within
both rates. The block threshold stays train.fit's (above every benign training note scored held out by group). Sets
written later say whether this generalises (scan_holdout6 on for the risky reference; scan_holdout24 and 25 for both).
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
# 5 %: at most one everyday note in twenty waits for a person; chosen (2026-12-06) before the sets that judged it
# (scan_holdout24, 25) existed, under the 6.4 % the classifier of 2026-12-05 held of these notes.
ORDINARY_RATE = 0.05
ORDINARY_REFERENCE_SETS = ("scan_holdout20", "scan_holdout21", "scan_holdout22", "scan_holdout23")


def reference_notes(fixtures: Path, sets: Sequence[str] = REFERENCE_SETS, file: str = "benign.jsonl") -> list[str]:
    """The notes of ``file`` in each of ``sets`` (folders under ``fixtures``): by default the risky reference."""
    notes = []
    for name in sets:
        path = fixtures / name / file
        if not path.is_file():
            raise InvalidInput(f"the scanner's reference is missing: {path} (the quarantine threshold is set on "
                               f"{file} of {', '.join(sets)} beside the corpus)")
        with open(path, encoding="utf-8") as f:
            notes += [json.loads(line)["text"] for line in f if line.strip()]
    return notes


def ordinary_notes(fixtures: Path, sets: Sequence[str] = ORDINARY_REFERENCE_SETS) -> list[str]:
    """The ordinary reference: everyday notes the scanner should leave alone."""
    return reference_notes(fixtures, sets, "ordinary.jsonl")


def references(fixtures: Path) -> Reference:
    """Both references beside the corpus, read once."""
    return Reference(reference_notes(fixtures), ordinary=ordinary_notes(fixtures))


class Reference:
    """Benign notes (and, apart, ordinary ones) with what the rules say about them, read once; ``calibrate`` is then
    cheap per model."""

    def __init__(self, notes: Sequence[str], protected: Sequence[str] = (), ordinary: Sequence[str] = ()):
        self.notes = list(notes)
        self.ordinary = list(ordinary)
        self.ruled = RuleReading(self.notes + self.ordinary, protected)

    def calibrate(self, model: Model, embedder, rate: float = REFERENCE_RATE,
                  ordinary_rate: float = ORDINARY_RATE) -> Model:
        """``model`` with its quarantine threshold set here: the lowest score (at most the block threshold) at which
        at most ``rate`` of the risky notes and at most ``ordinary_rate`` of the ordinary ones are quarantined, as the
        scanner decides (rules, classifier, address rule)."""
        texts = self.notes + self.ordinary
        scores = [None] * len(texts)
        for i, s in zip(self.ruled.need, Classifier(lambda: embedder, model).score_many(self.ruled.views)):
            scores[i] = s
        risky = len(self.notes)
        allowed = (rate * risky, ordinary_rate * len(self.ordinary))
        threshold = model.block
        for candidate in sorted({s.value for s in scores if s is not None and s.value <= model.block}, reverse=True):
            held = [0, 0]
            for i, (t, ev, s) in enumerate(zip(texts, self.ruled.evidence, scores)):
                if (f := decide(t, ev, s, model.block, candidate)) is not None and f.outcome == "quarantine":
                    held[i >= risky] += 1
            if held[0] > allowed[0] or held[1] > allowed[1]:
                break
            threshold = candidate
        return replace(model, quarantine=threshold)
