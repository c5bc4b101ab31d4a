"""`echo-duck bench scanner`: how well the write scanner generalises, what it costs, and what it does to real chats.

Four parts, written to scanner.json and scanner.md:
  * generalisation: held-out splits of the scanner corpus (scanner_splits.py), per family and per language;
  * hold-out set: texts written apart from the corpus and never fitted on (data_fixtures/scan_holdout), as
    the shipped scanner judges them, per family and per kind;
  * real conversations: every turn of LongMemEval / LoCoMo (memories.jsonl[.gz], read from the paths given,
    never copied) scanned as an import would scan it: how many are blocked or quarantined, with examples;
  * cost: model load, latency per write (one at a time and in batches), 100,000-character inputs of shapes
    that make backtracking regexes slow (rules alone, and the whole scanner), and the model's memory.
"""

from __future__ import annotations

import gc
import gzip
import json
import os
import platform
import statistics
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

from ..embed.alone import forget as forget_vectors
from ..embed.embedder import embedder_by_name
from ..write.scan.calibrate import (ORDINARY_RATE, ORDINARY_REFERENCE_SETS, REFERENCE_RATE, REFERENCE_SETS,
                                    Reference, reference_notes, references)
from ..write.scan.classifier import Classifier, load_shipped
from ..write.scan.memo import forget as forget_views
from ..write.scan.verdict import Scanner, redact
from . import scanner_splits

SHORT_NOTES = ["User prefers answers in Chinese", "The staging cluster moved to Frankfurt", "我周五不开会",
               "Mum's birthday is on 2 November", "Use pnpm, not npm, in this repo", "Allergic to peanuts"]


def long_inputs() -> dict[str, str]:
    """100,000-character texts shaped to make a backtracking pattern slow."""
    n = 100_000
    return {
        "prose": ("The user prefers short answers and deploys on Fridays. " * 2000)[:n],
        "one letter": "a" * n,
        "one long word": ("x y z " + "a" * n)[:n],
        "spaced letters": ("i g n o r e " * 10_000)[:n],
        "dotted path mentions": (".env ~/.ssh " * 10_000)[:n],
        "base64 blob": ("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3" * 2600)[:n],
        "hex digits": ("deadbeef " * 12_000)[:n],
        "hidden characters": ("a\u200b" * 50_000)[:n],
        "label words": ("password token secret key " * 4000)[:n],
        "chinese": ("用户喜欢简洁的回答，不要把密码发给任何人。" * 5000)[:n],
        "urls and images": ("![x](https://a.example/p?q=1) curl https://b.example " * 2000)[:n],
    }


def _time(fn: Callable[[], object], repeats: int = 1) -> float:
    """Best wall time of ``repeats`` calls, each with the views and vectors a scan remembers forgotten first. As
    timeit does, the garbage collector is off while a call runs: a full collection over the process's objects (the
    model, the exemplars, jieba's dictionary) landing inside one call added 30-60 ms to it, a cost of the process,
    not of the scan."""
    best = float("inf")
    for _ in range(repeats):
        forget_views()
        forget_vectors()
        gc.disable()
        try:
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best


def cost() -> dict:
    started = time.perf_counter()
    model = load_shipped()
    load_exemplars_s = time.perf_counter() - started
    started = time.perf_counter()
    embedder = embedder_by_name("use-multilingual")
    load_model_s = time.perf_counter() - started
    full = Scanner(Classifier(lambda: embedder, model))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rules = Scanner(Classifier(lambda: None))
        rules.scan("warm up")
    full.scan("warm up")
    singles = []
    for _ in range(5):
        for note in SHORT_NOTES:
            singles.append(_time(lambda: full.scan(note)) * 1000)
    batch = [f"{note} ({i})" for i in range(50) for note in SHORT_NOTES]  # distinct texts: a bulk scan reads each once
    batch_s = _time(lambda: full.scan_many(batch))
    long = {}
    for name, text in long_inputs().items():
        # best of 5: a 2-core VM runs the same scan up to half slower for seconds at a time (CPU time, not waiting)
        long[name] = {"rules_ms": round(_time(lambda: rules.scan(text), 5) * 1000, 1),
                      "full_ms": round(_time(lambda: full.scan(text), 5) * 1000, 1)}
    return {
        "exemplars": int(len(model.labels)) if model else 0,
        "exemplar_matrix_mb": round(model.exemplars.nbytes / 2**20, 1) if model else 0,
        "load_exemplars_s": round(load_exemplars_s, 3),
        "load_model_s": round(load_model_s, 3),
        "single_write_ms_p50": round(statistics.median(singles), 2),
        "single_write_ms_p95": round(sorted(singles)[int(0.95 * len(singles)) - 1], 2),
        "batch_ms_per_write": round(batch_s * 1000 / len(batch), 2),
        "long_inputs_100k": long,
        "long_rules_max_ms": max(v["rules_ms"] for v in long.values()),
    }


def _turns(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [t for line in f if line.strip() and (t := json.loads(line).get("text"))]


def holdout(folder: Path) -> dict:
    """The shipped scanner over a hold-out set (attacks.jsonl: text, family, lang; benign.jsonl, if there: text, kind,
    lang), counted as the corpus splits are (scanner_splits.summary): overall, per family or kind, per language."""
    records = []
    for name, label, group in (("attacks.jsonl", 1, "family"), ("benign.jsonl", 0, "kind")):
        if label == 0 and not (folder / name).exists():  # a set of attacks and ordinary notes only
            continue
        with open(folder / name, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        records += [scanner_splits.Record(r["text"], label, r[group], r["lang"], f"{name}-{i}", False)
                    for i, r in enumerate(rows)]
    scanner = Scanner()
    found = scanner.scan_many([r.text for r in records])
    outcome = {i: "pass" if f is None else f.outcome for i, f in enumerate(found)}
    report = {"folder": str(folder), **scanner_splits.summary(records, outcome),
              "missed": [r.text[:160] for r, f in zip(records, found) if r.label == 1 and f is None]}
    if (folder / "ordinary.jsonl").exists():  # everyday text (text, kind, lang), counted apart from the risky-looking
        report["ordinary"] = ordinary(folder / "ordinary.jsonl", scanner)
    return report


def ordinary(path: Path, scanner: Scanner) -> dict:
    """How many ordinary notes ``scanner`` blocks and quarantines, in all and per kind."""
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    found = scanner.scan_many([r["text"] for r in rows])
    by_kind: dict[str, dict[str, int]] = {}
    for r, f in zip(rows, found):
        counts = by_kind.setdefault(r["kind"], {"notes": 0, "blocked": 0, "quarantined": 0})
        counts["notes"] += 1
        if f is not None:
            counts["blocked" if f.blocked else "quarantined"] += 1
    return {"notes": len(rows), "blocked": sum(bool(f and f.blocked) for f in found),
            "quarantined": sum(bool(f and not f.blocked) for f in found), "by_kind": by_kind}


def real_chats(paths: Sequence[Path], limit: int | None = None, batch: int = 256) -> dict:
    scanner = Scanner()
    out = {}
    for path in paths:
        turns = _turns(path)[:limit]
        counts = {"turns": len(turns), "blocked": 0, "quarantined": 0}
        examples: list[dict] = []
        started = time.perf_counter()
        for i in range(0, len(turns), batch):
            for text, f in zip(turns[i:i + batch], scanner.scan_many(turns[i:i + batch])):
                if f is None:
                    continue
                counts["blocked" if f.blocked else "quarantined"] += 1
                if len(examples) < 12:
                    examples.append({"outcome": f.outcome, "reason": f.reason, "detail": f.detail[:120],
                                     "excerpt": redact(text, 100)})
        counts["seconds"] = round(time.perf_counter() - started, 1)
        out[str(path)] = {**counts, "examples": examples}
    return out


def rebuild(corpus: Path, out: Path, progress: Callable[[str], None] | None = None) -> dict:
    """Fit the shipped classifier on the whole corpus (write/scan/train.py), set its quarantine threshold on the
    risky and ordinary references beside the corpus (write/scan/calibrate.py), as the saved (int8) model scores, and
    save it."""
    from ..write.scan.classifier import corpus_sha256, load, save
    from ..write.scan.train import fit

    records = scanner_splits.load_corpus(corpus)
    texts, labels, groups, calibrate, held = scanner_splits.classifier_training(records)
    if progress:
        progress(f"fitting on {len(texts)} notes ({sum(labels)} attacks)")
    started = time.perf_counter()
    embedder = embedder_by_name("use-multilingual")
    model = fit(texts, labels, groups, embedder, calibrate=calibrate, held_whole=held)
    save(model, out, corpus_sha256(texts, labels))
    model = references(corpus.parent).calibrate(load(out), embedder)
    save(model, out, corpus_sha256(texts, labels))
    return {"notes": len(texts), "attacks": int(sum(labels)), "exemplars": int(len(model.labels)), "block": model.block,
            "quarantine": model.quarantine, "seconds": round(time.perf_counter() - started, 1), "path": str(out),
            "bytes": out.stat().st_size}


def run(corpus: Path, chats: Sequence[Path], kinds: Sequence[str], out: Path, chat_limit: int | None = None,
        progress: Callable[[str], None] | None = None, holdout_dirs: Sequence[Path] = ()) -> dict:
    report: dict = {"corpus": str(corpus), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    "cpus": os.cpu_count(), "platform": platform.platform()}
    say = progress or (lambda _: None)
    if kinds:
        records = scanner_splits.load_corpus(corpus)
        reference = None
        if all((corpus.parent / name / "benign.jsonl").exists() for name in REFERENCE_SETS):
            say("reading the references the quarantine thresholds are set on")
            ordinary = all((corpus.parent / name / "ordinary.jsonl").exists() for name in ORDINARY_REFERENCE_SETS)
            # a corpus folder of one's own without the ordinary reference: the risky one alone, as before 2026-12-06
            reference = references(corpus.parent) if ordinary else Reference(reference_notes(corpus.parent))
        report["generalisation"] = scanner_splits.run(records, embedder_by_name("use-multilingual"), kinds,
                                                      progress=say, reference=reference)
        report["generalisation_reference"] = None if reference is None else {
            "sets": list(REFERENCE_SETS), "notes": len(reference.notes), "rate": REFERENCE_RATE,
            **({"ordinary_sets": list(ORDINARY_REFERENCE_SETS), "ordinary_notes": len(reference.ordinary),
                "ordinary_rate": ORDINARY_RATE} if reference.ordinary else {})}
    if holdout_dirs:
        report["holdouts"] = []
        for folder in holdout_dirs:
            say(f"scanning the hold-out set {folder}")
            report["holdouts"].append(holdout(folder))
        report["holdout"] = report["holdouts"][0]  # the first set, as reports before there were several had it
    if chats:
        say("scanning real conversations")
        report["real_chats"] = real_chats(chats, chat_limit)
    say("measuring cost")
    report["cost"] = cost()
    out.mkdir(parents=True, exist_ok=True)
    (out / "scanner.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    (out / "scanner.md").write_text(markdown(report), encoding="utf-8")
    return report


def _pct(v: float | None) -> str:
    return "" if v is None else f"{100 * v:.1f}%"


def _table(rows: dict) -> list[str]:
    lines = ["| held out | attacks | detected | blocked | benign | false blocks | quarantined |", "|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['attacks']} | {_pct(r.get('detected'))} | {_pct(r.get('blocked'))} | {r['benign']} | "
                     f"{_pct(r.get('false_block'))} | {_pct(r.get('quarantined'))} |")
    return lines


def markdown(report: dict) -> str:
    lines = ["# Write scanner benchmark", ""]
    if ref := report.get("generalisation_reference"):
        lines += [f"Every split's quarantine threshold is set on {ref['notes']} benign reference notes "
                  f"({', '.join(ref['sets'])}): at most {_pct(ref['rate'])} of them quarantined"
                  + (f", and on {ref['ordinary_notes']} ordinary notes ({', '.join(ref['ordinary_sets'])}): at most "
                     f"{_pct(ref['ordinary_rate'])}." if ref.get("ordinary_sets") else "."), ""]
    for kind, res in report.get("generalisation", {}).items():
        o = res["overall"]
        lines += [f"## Held out by {kind}", "",
                  f"All held-out records: attacks detected {_pct(o.get('detected'))} (blocked {_pct(o.get('blocked'))}); "
                  f"benign blocked {_pct(o.get('false_block'))}, quarantined {_pct(o.get('quarantined'))}.", "",
                  "Per family:", "", *_table(res["by_family"]), "", "Per language:", "", *_table(res["by_language"]), ""]
    for h in report.get("holdouts", [report["holdout"]] if "holdout" in report else []):
        o = h["overall"]
        name = Path(h["folder"]).name
        role = ("attacks never fitted on; its benign notes set the quarantine threshold" if name in REFERENCE_SETS
                else "attacks and benign notes never fitted on; its ordinary notes set the quarantine threshold"
                if name in ORDINARY_REFERENCE_SETS
                else "trained on: see the sets split" if name in scanner_splits.TRAINED_SETS else "never fitted on")
        lines += [f"## Hold-out set ({name}: {role})", "",
                  f"Attacks detected {_pct(o.get('detected'))} (blocked {_pct(o.get('blocked'))}); benign blocked "
                  f"{_pct(o.get('false_block'))}, quarantined {_pct(o.get('quarantined'))}.", "",
                  "Per family (attacks) and kind (benign notes):", "", *_table(h["by_family"]), "",
                  "Per language:", "", *_table(h["by_language"]), ""]
        if o := h.get("ordinary"):
            lines += [f"Ordinary notes (ordinary.jsonl): {o['notes']}, {o['blocked']} blocked, {o['quarantined']} "
                      "quarantined; per kind: " + ", ".join(f"{k} {v['blocked'] + v['quarantined']} of {v['notes']}"
                                                          for k, v in sorted(o["by_kind"].items())) + ".", ""]
    for path, r in report.get("real_chats", {}).items():
        lines += [f"## Real conversation turns: {Path(path).parent.name}", "",
                  f"{r['turns']} turns: {r['blocked']} blocked, {r['quarantined']} quarantined ({r['seconds']} s).", ""]
        lines += [f"- {e['outcome']} ({e['reason']}): {e['detail']} — `{e['excerpt']}`" for e in r["examples"]] + [""]
    c = report.get("cost", {})
    if c:
        lines += ["## Cost", "", f"- model load {c['load_model_s']} s; exemplars {c['exemplars']} "
                  f"({c['exemplar_matrix_mb']} MB in memory, loaded in {c['load_exemplars_s']} s)",
                  f"- one write: p50 {c['single_write_ms_p50']} ms, p95 {c['single_write_ms_p95']} ms; "
                  f"in batches {c['batch_ms_per_write']} ms per write",
                  f"- 100,000-character inputs, rules alone at most {c['long_rules_max_ms']} ms:", "",
                  "| input | rules (ms) | whole scanner (ms) |", "|---|---|---|"]
        lines += [f"| {k} | {v['rules_ms']} | {v['full_ms']} |" for k, v in c["long_inputs_100k"].items()]
    return "\n".join(lines) + "\n"
