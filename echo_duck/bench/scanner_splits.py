"""Generalisation of the write scanner: held-out splits of the scanner corpus, scanned end to end.

Every split fits the classifier (write/scan/train.py) on the training part only, thresholds included
(from out-of-fold scores inside the training part), then runs the whole scanner (rules + classifier) on
the held-out part. Splits: "group" (5 folds of whole groups: an idea and its translations are never on
both sides), "family" (one family held out: an attack family the classifier never saw, or a benign family
whose false refusals it was never shown), "language" (one language held out) and "sets" (each half of the hold-out
sets trained on, TRAINED_SETS: seven writers the model never saw). The fixture corpus (attacks.jsonl, benign.jsonl),
the ordinary chat lines (chatterbot-corpus, data_fixtures/scan_chat) and the trained hold-out sets are always training
data in the first three; their numbers are reported on the train_* files only.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from ..write.scan.classifier import MIN_WORDS, Classifier, words
from ..write.scan.calibrate import Reference
from ..write.scan.train import fit, folds_by_group
from ..write.scan.verdict import Scanner

SPLITS = ("group", "family", "language", "sets")
# Hold-out sets read before and trained on (beside the corpus, under data_fixtures): 6-13 since 2026-12-05 (eight
# writers' own words beat one more corpus pass), 26-35 since 2026-12-06 (ten blind sets, read as judges first; their
# ordinary notes shape the model as the everyday chat does, setting no threshold). Always training data in the corpus
# splits; the "sets" split holds out each half of them (TRAINED_HALVES) in turn, so how they generalise to a writer
# never trained on is still measured.
TRAINED_SETS = tuple(f"scan_holdout{n}" for n in (*range(6, 14), *range(26, 36)))
TRAINED_HALVES = (TRAINED_SETS[0::2], TRAINED_SETS[1::2])
_FIXTURE_FAMILY = {"prompt_injection": "injection", "invisible_unicode": "invisible", "exfiltration": "exfiltration",
                   "secret": "secret", "benign": "benign"}
# Secrets are the secrets layer's job: as classifier exemplars they make any note with a token look hostile.
NOT_CLASSIFIER_TRAINING = {"secret"}


@dataclass(frozen=True)
class Record:
    text: str
    label: int  # 1 attack, 0 benign
    family: str
    lang: str
    group: str
    fixture: bool  # from the older fixture corpus: always training data


def load_corpus(folder: Path) -> list[Record]:
    out = []
    for name, label in (("train_attacks", 1), ("train_benign", 0), ("train_ordinary", 0)):
        for line in (folder / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                out.append(Record(r["text"], label, r["family"], r["lang"], r["group"], False))
    for name, label in (("attacks", 1), ("benign", 0)):
        for i, line in enumerate((folder / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()):
            if line.strip():
                r = json.loads(line)
                out.append(Record(r["text"], label, _FIXTURE_FAMILY[r["category"]], r["lang"], f"fixture-{name}-{i}", True))
    return out + ordinary_chat() + own_chat(folder.parent) + own_attacks(folder.parent) + trained_sets(folder.parent)


# Text written for the scanner by helpers that read nothing of echo_duck (data_fixtures/scan_chat): everyday text and
# risky-looking benign notes that shape the model but set no threshold (as the chatterbot lines), and attacks written
# in those same everyday styles, without which a model taught that friendly chat is harmless waves through orders
# dressed as friendly chat (SCANNER.md).
OWN_BENIGN = ("ordinary.jsonl", "ordinary_work.jsonl", "risky_benign.jsonl", "ordinary_more.jsonl",
              "risky_benign_more.jsonl")  # text, kind, lang
OWN_ATTACKS = ("attacks_in_style.jsonl", "attacks_in_style_work.jsonl",
               "attacks_in_style_more.jsonl")  # text, style, payload, lang


def own_chat(fixtures: Path) -> list[Record]:
    """The benign text written for the scanner (OWN_BENIGN under data_fixtures/scan_chat): pep talk, an assistant's
    long replies, users' one-off requests, coworkers' chat, work traffic, risky-looking but harmless notes. Benign
    training notes that shape the model but set no threshold; each its own group. Files that are missing are skipped."""
    out = []
    for name in OWN_BENIGN:
        stem = name.removesuffix(".jsonl").replace("_", "-")
        out += [Record(r["text"], 0, ORDINARY_FAMILY, r["lang"], f"own-{stem}-{r['kind']}-{i}", True)
                for i, r in enumerate(_rows(fixtures / "scan_chat" / name))]
    return out


def own_attacks(fixtures: Path) -> list[Record]:
    """The attacks written in everyday styles (OWN_ATTACKS under data_fixtures/scan_chat): family "in_style:<style>",
    each its own group."""
    out = []
    for name in OWN_ATTACKS:
        stem = name.removesuffix(".jsonl").replace("_", "-")
        out += [Record(r["text"], 1, f"in_style:{r['style']}", r["lang"], f"own-{stem}-{i}", True)
                for i, r in enumerate(_rows(fixtures / "scan_chat" / name))]
    return out


def _rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def trained_sets(fixtures: Path, names: Sequence[str] = TRAINED_SETS) -> list[Record]:
    """The notes of the hold-out sets trained on (attacks.jsonl: text, family, lang; benign.jsonl and, where a set has
    one, ordinary.jsonl: text, kind, lang): each note its own group, its family or kind named with its set
    ("scan_holdout6:quoted_attacks"), so a benign kind is held out whole, set by set, when thresholds are set out of
    fold; ordinary notes are everyday text (ORDINARY_FAMILY), as scan_chat's."""
    out = []
    for name in names:
        for part, label, key in (("attacks", 1, "family"), ("benign", 0, "kind")):
            for i, line in enumerate((fixtures / name / f"{part}.jsonl").read_text(encoding="utf-8").splitlines()):
                if line.strip():
                    r = json.loads(line)
                    out.append(Record(r["text"], label, f"{name}:{r[key]}", r["lang"], f"{name}-{part}-{i}", True))
        out += [Record(r["text"], 0, ORDINARY_FAMILY, r["lang"], f"{name}-ordinary-{i}", True)
                for i, r in enumerate(_rows(fixtures / name / "ordinary.jsonl"))]
    return out


ORDINARY_CAP = 2000
ORDINARY_FAMILY = "ordinary_chat"  # everyday text: shapes the model, sets no threshold (classifier_training)


def ordinary_chat(cap: int = ORDINARY_CAP) -> list[Record]:
    """Ordinary conversation lines in 28 languages from the chatterbot-corpus package (BSD; read as data, never
    imported): benign training notes that look like nothing, so the classifier is calibrated on everyday text too.
    Lines of four words or more, one group per conversation, every k-th line up to ``cap``. Empty without it."""
    import importlib.metadata

    import yaml

    try:
        dist = importlib.metadata.distribution("chatterbot-corpus")
    except importlib.metadata.PackageNotFoundError:
        return []
    found = []
    for f in sorted(dist.files or [], key=str):
        if not str(f).endswith(".yml"):
            continue
        data = yaml.safe_load(Path(str(dist.locate_file(f))).read_text(encoding="utf-8")) or {}
        lang = Path(str(f)).parent.name
        for k, conversation in enumerate(data.get("conversations") or []):
            for line in conversation or []:
                if isinstance(line, str) and words(line) >= MIN_WORDS:
                    found.append(Record(" ".join(line.split()), 0, ORDINARY_FAMILY, lang, f"chat-{lang}-{Path(str(f)).stem}-{k}",
                                        True))
    found = list({r.text: r for r in found}.values())
    step = max(1, len(found) // cap)
    return found[::step][:cap]


def classifier_training(records: Sequence[Record]) -> tuple[list[str], list[int], list[str], list[bool], list[str]]:
    """Texts, labels, groups, which notes calibrate the thresholds (not the everyday chat), and what each note is held
    out with when scored out of fold (train.fit's ``held_whole``): a risky benign note with its whole family, anything
    else with its group."""
    kept = [r for r in records if r.family not in NOT_CLASSIFIER_TRAINING]
    held = [f"family:{r.family}" if r.label == 0 and r.family != ORDINARY_FAMILY else f"group:{r.group}" for r in kept]
    return ([r.text for r in kept], [r.label for r in kept], [r.group for r in kept],
            [r.family != ORDINARY_FAMILY for r in kept], held)


class MemoEmbedder:
    """The real embedder with a cache by text (every split re-reads the same texts); each text embedded alone, as
    the scanner embeds it (classifier.embed_alone), so a cached vector never depends on the call that first asked."""

    def __init__(self, embedder):
        self.embedder = embedder
        self.model_id, self.dim = embedder.model_id, embedder.dim
        self.cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update((t, self.embedder.embed([t])[0]) for t in missing)
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


def splits(records: Sequence[Record], kinds: Sequence[str]) -> Iterator[tuple[str, str, list[int], list[int]]]:
    """(kind, what is held out, training indices, test indices)."""
    new = [i for i, r in enumerate(records) if not r.fixture]
    if "group" in kinds:  # the everyday chat is held out by conversation too: how often ordinary text is refused
        held = [i for i, r in enumerate(records) if not r.fixture or r.family == ORDINARY_FAMILY]
        folds = folds_by_group([records[i].group for i in held])
        for f in range(int(folds.max()) + 1):
            test = {i for i, fold in zip(held, folds) if fold == f}
            yield "group", f"fold {f + 1}", [i for i in range(len(records)) if i not in test], sorted(test)
    for kind, key in (("family", "family"), ("language", "lang")):
        if kind in kinds:
            for value in sorted({getattr(records[i], key) for i in new}):
                test = {i for i in new if getattr(records[i], key) == value}
                yield kind, value, [i for i in range(len(records)) if i not in test], sorted(test)
    if "sets" in kinds:  # each half of the trained hold-out sets, scanned by a model fitted without it
        for half in TRAINED_HALVES:
            test = {i for i, r in enumerate(records) if r.group.split("-")[0] in half}
            if test:
                yield "sets", ", ".join(half), [i for i in range(len(records)) if i not in test], sorted(test)


def run(records: Sequence[Record], embedder, kinds: Sequence[str] = SPLITS,
        protected: Sequence[str] = ("/home/u/.echo_duck", "/data/mem"),
        progress: Callable[[str], None] | None = None, reference: Reference | None = None) -> dict:
    """Outcome ("block", "quarantine", "pass") of every held-out record in every split, and the summaries.
    ``reference``: each split's quarantine threshold is set on it, as the shipped model's is (calibrate.py)."""
    memo = MemoEmbedder(embedder)
    results: dict[str, dict] = {}
    for kind, held_out, train, test in splits(records, kinds):
        texts, labels, groups, calibrate, held = classifier_training([records[i] for i in train])
        model = fit(texts, labels, groups, memo, calibrate=calibrate, held_whole=held)
        if reference is not None:
            model = reference.calibrate(model, memo)
        scanner = Scanner(Classifier(lambda: memo, model))
        verdicts = scanner.scan_many([records[i].text for i in test], protected)
        outcomes = results.setdefault(kind, {"held_out": {}, "outcome": {}})
        outcomes["held_out"][held_out] = {"block": model.block, "quarantine": model.quarantine, "n": len(test)}
        for i, v in zip(test, verdicts):
            outcomes["outcome"][i] = "pass" if v is None else v.outcome
        if progress:
            progress(f"{kind} {held_out}: {len(test)} held out, thresholds {model.quarantine:.2f}/{model.block:.2f}")
    return {kind: {"thresholds": r["held_out"], **summary(records, r["outcome"])} for kind, r in results.items()}


def _rates(rows: list[tuple[Record, str]]) -> dict:
    attacks = [o for r, o in rows if r.label == 1]
    benign = [o for r, o in rows if r.label == 0]
    out: dict = {"attacks": len(attacks), "benign": len(benign)}
    if attacks:
        c = Counter(attacks)
        out["detected"] = round((c["block"] + c["quarantine"]) / len(attacks), 4)
        out["blocked"] = round(c["block"] / len(attacks), 4)
    if benign:
        c = Counter(benign)
        out["false_block"] = round(c["block"] / len(benign), 4)
        out["quarantined"] = round(c["quarantine"] / len(benign), 4)
    return out


def summary(records: Sequence[Record], outcome: dict[int, str]) -> dict:
    rows = [(records[i], o) for i, o in outcome.items()]
    by_family, by_lang = defaultdict(list), defaultdict(list)
    for r, o in rows:
        by_family[r.family].append((r, o))
        by_lang[r.lang].append((r, o))
    return {"overall": _rates(rows), "by_family": {k: _rates(v) for k, v in sorted(by_family.items())},
            "by_language": {k: _rates(v) for k, v in sorted(by_lang.items())}}
