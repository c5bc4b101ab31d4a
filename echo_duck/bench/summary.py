"""``echo-duck bench summary``: one short table from perf.json, recall.json and scanner.json, written between
``<!-- bench-summary:start -->`` and ``<!-- bench-summary:end -->`` in README.md and RESULTS.md.

Rows only for what the inputs hold: per perf size, hybrid recall p50 (query vector given) beside
LanceDB and sqlite-vec + FTS5, the filtered recall against the unfiltered one, and ingest with the
model in the loop (short and ~500-character texts); per recall set, hybrid R@10 / MRR on the
held-out questions beside plain BM25 and a plain vector scan; the write scanner on its hold-out set beside its
corpus held out by family and by language, on ordinary notes and chat turns (``--chats``), and its cost per write.
Ratios are echo_duck ÷ peer from the same run; every number is the input's, rounded for display only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..write.scan.calibrate import ORDINARY_REFERENCE_SETS, REFERENCE_SETS
from .recall_quality import OWN_SET_NAMES, summarise
from .scanner_splits import TRAINED_SETS
from .report import LABELS, _fmt, _p, _size

START, END = "<!-- bench-summary:start -->", "<!-- bench-summary:end -->"
PEERS = ("lancedb", "sqlite")
BASELINES = {"plain_bm25": "plain BM25", "plain_vector": "plain vector"}
SET_LABELS = {"locomo": "LoCoMo", "longmemeval": "LongMemEval_S", "bilingual": "bilingual (own set)",
              "zh_daily": "zh_daily (own set)", "bilingual_holdout": "bilingual_holdout (own set, never fitted on)",
              "chat_holdout": "chat_holdout (own set, never fitted on)", "zh_fit": "zh_fit (own set)",
              "zh_holdout": "zh_holdout (own set, written blind)"}
BLIND_ZH = ("zh_holdout", "zh_natural")  # Chinese sets written blind, one row
DEFAULT_SYSTEMS = ["echo_duck", "lancedb", "sqlite", "numpy"]


def load(path: str | Path, name: str, required: tuple[str, ...]) -> dict:
    """The JSON at ``path`` (a file, or a folder holding ``name``), with the keys a bench run writes."""
    path = Path(path)
    if path.is_dir():
        path = path / name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidInput(f"{path} does not exist (expected the {name} a bench run writes)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InvalidInput(f"{path} is not readable JSON: {e}") from None
    if not isinstance(data, dict) or any(key not in data for key in required):
        raise InvalidInput(f"{path} is not a {name}: it needs the keys {', '.join(required)}")
    return data


def _div(a: float | None, b: float | None) -> float | None:
    """echo_duck ÷ peer, unrounded (perf.json's ``ratios`` hold the same, rounded to 3 places)."""
    return a / b if a is not None and b else None


def perf_rows(perf: dict) -> list[dict]:
    rows: list[dict] = []
    for size, result in perf["results"].items():
        ours = result.get("echo_duck") or {}
        if "variants" not in ours:
            continue
        peers = {p: result[p] for p in PEERS if "variants" in (result.get(p) or {})}
        at = f"at {_size(size)} memories"
        hybrid = _p(ours, "hybrid", "excluded")
        rows.append({"measure": f"recall p50 {at} (query vector given)", "unit": "ms", "echo_duck": hybrid,
                     "peers": [{"peer": p, "value": _p(e, "hybrid", "excluded"),
                                "ratio": _div(hybrid, _p(e, "hybrid", "excluded"))} for p, e in peers.items()]})
        filtered = _p(ours, "filtered", "excluded")
        if filtered is not None:
            rows.append({"measure": f"filtered recall p50 {at} (types=[user, environment])", "unit": "ms",
                         "echo_duck": filtered, "of_unfiltered": _div(filtered, hybrid), "peers": []})
        short = ours.get("ingest_with_embedding_rows_per_s")
        if short is not None:
            long = ours.get("ingest_long_with_embedding_rows_per_s")
            texts = "" if long is None else ", short / ~500-character texts"
            rows.append({"measure": f"ingest with the embedding model {at}{texts}", "unit": "rows/s", "echo_duck": short,
                         "long": long, "peers": [
                             {"peer": p, "value": e.get("ingest_with_embedding_rows_per_s"),
                              "ratio": _div(short, e.get("ingest_with_embedding_rows_per_s")),
                              "long": e.get("ingest_long_with_embedding_rows_per_s"),
                              "long_ratio": _div(long, e.get("ingest_long_with_embedding_rows_per_s"))}
                             for p, e in peers.items()]})
    return rows


def recall_rows(recall: dict) -> list[dict]:
    """A row per set, its held-out questions' means; the later blind sets of one kind (bilingual_holdout2, 3, …;
    zh_holdout, zh_natural) share one row, their questions pooled."""
    rows = []
    sets = dict(recall["sets"])
    pooled: dict[str, list[str]] = {}  # the first set of a pool -> the pool
    for pool in (sorted(n for n in sets if n.startswith("bilingual_holdout") and n != "bilingual_holdout"),
                 [n for n in BLIND_ZH if n in sets]):
        if len(pool) > 1:
            sets[pool[0]] = {"rows": [r for n in pool for r in sets.pop(n).get("rows", ())]}
        if pool:
            pooled[pool[0]] = pool
    for name, result in sets.items():
        held = [r for r in result.get("rows", ()) if r.get("split") == "held"]
        means = summarise(held, ["hybrid", *BASELINES])["all"] if held else {}
        if "hybrid" not in means:
            continue
        label = SET_LABELS.get(name, name)
        if len(pooled.get(name, ())) > 1:
            label = f"{', '.join(pooled[name])} (own, written blind, pooled)"
        rows.append({"measure": f"{label}: R@10 / MRR on {len(held):,} held-out questions",
                     "unit": "R@10 / MRR", "echo_duck": [means["hybrid"]["R@10"], means["hybrid"]["MRR"]],
                     "peers": [{"peer": column, "value": [means[column]["R@10"], means[column]["MRR"]]}
                               for column in BASELINES if column in means]})
    return rows


def scanner_rows(scanner: dict) -> list[dict]:
    """The hold-out set (never fitted on) beside the corpus held out by family and by language, and the cost."""
    rows = []
    splits = scanner.get("generalisation") or {}
    beside = [{"peer": f"corpus {label} held out", "value": _scanner_value(splits[kind]["overall"])}
              for kind, label in (("family", "families"), ("language", "languages")) if "overall" in (splits.get(kind) or {})]
    sets = [r for r in scanner.get("holdouts") or ([scanner["holdout"]] if scanner.get("holdout") else [])
            if "detected" in (r.get("overall") or {})]
    reference = [r for r in sets if Path(r["folder"]).name in REFERENCE_SETS]
    fresh = [r for r in sets if r not in reference and Path(r["folder"]).name not in TRAINED_SETS]
    if fresh:  # the first says what is measured; the later ones share a row, a value per set
        held, name = fresh[0]["overall"], Path(fresh[0]["folder"]).name
        rows.append({"measure": f"write scanner on `{name}`: {held['attacks']} attacks and {held['benign']} risky-looking "
                                "benign notes written blind: attacks detected / benign blocked / benign quarantined",
                     "unit": "scanner", "echo_duck": _scanner_value(held), "peers": beside})
    if later := fresh[1:]:
        names = [Path(r["folder"]).name for r in later]
        attacks, benign = {r["overall"]["attacks"] for r in later}, sorted({r["overall"]["benign"] for r in later})
        sizes = (f"{attacks.pop()} attacks, {'-'.join(map(str, benign[::max(1, len(benign) - 1)]))} benign notes each"
                 if len(attacks) == 1 else
                 "attacks / benign notes: " + _runs([f"{r['overall']['attacks']} / {r['overall']['benign']}" for r in later]))
        named = " · ".join(f"`{n}`" for n in names) if len(names) <= 2 else _named_sets(names)
        rows.append({"measure": f"the same on {named} ({sizes})", "unit": "scanner per set",
                     "echo_duck": [list(v) for v in zip(*(_scanner_value(r["overall"]) for r in later))], "peers": []})
    if "overall" in (splits.get("sets") or {}):  # the hold-out sets trained on, each half held out in turn
        held = splits["sets"]["overall"]
        rows.append({"measure": f"the same on {_spans(TRAINED_SETS)}, trained on: each half held out in "
                                f"turn ({held['attacks']} attacks, {held['benign']} benign notes)",
                     "unit": "scanner", "echo_duck": _scanner_value(held), "peers": []})
    if reference:  # one row: their attacks were never fitted on, their benign notes set the quarantine threshold
        names = [Path(r["folder"]).name for r in reference]
        benign = sum(r["overall"]["benign"] for r in reference)
        pooled = [sum(r["overall"][m] * r["overall"]["benign"] for r in reference) / benign for m in ("false_block", "quarantined")]
        rows.append({"measure": f"the same on `{names[0]}`…`{names[-1]}` (their {benign} benign notes set the quarantine "
                                "threshold): detected per set / blocked / quarantined",
                     "unit": "scanner sets", "echo_duck": [[r["overall"]["detected"] for r in reference], *pooled],
                     "peers": beside if not rows else []})
    # the ordinary notes of ORDINARY_REFERENCE_SETS set the threshold: not written blind for it
    if plain := [r for r in fresh if (r.get("ordinary") or {}).get("notes")
                 and Path(r["folder"]).name not in ORDINARY_REFERENCE_SETS]:
        names = [Path(r["folder"]).name for r in plain]
        named = " · ".join(f"`{n}`" for n in names) if len(names) <= 2 else _named_sets(names)
        sizes = _runs([str(r["ordinary"]["notes"]) for r in plain])
        rows.append({"measure": f"its ordinary notes in {named}, written blind ({sizes}): blocked / quarantined",
                     "unit": "held rates", "peers": [],
                     "echo_duck": [[r["ordinary"][m] / r["ordinary"]["notes"] for r in plain]
                                   for m in ("blocked", "quarantined")]})
    chats = {Path(path).parent.name or path: r for path, r in (scanner.get("real_chats") or {}).items()
             if r.get("turns")}
    if chats:
        sizes = " · ".join(f"{name} {r['turns']:,}" for name, r in chats.items())
        rows.append({"measure": f"its chat turns held ({sizes}): blocked / quarantined", "unit": "held rates",
                     "peers": [],
                     "echo_duck": [[r[m] / r["turns"] for r in chats.values()] for m in ("blocked", "quarantined")]})
    cost = scanner.get("cost") or {}
    if "single_write_ms_p50" in cost:
        rows.append({"measure": "write scanner CPU per write (model included): one write p50 / in a bulk write",
                     "unit": "ms", "echo_duck": cost["single_write_ms_p50"], "long": cost.get("batch_ms_per_write"),
                     "peers": []})
    return rows


def _named_sets(names: list[str]) -> str:
    """`scan_holdout15`, `16`, `17`, `24`: the first name whole, the others by what follows the common stem."""
    stem = names[0].rstrip("0123456789")
    if not all(n.startswith(stem) for n in names):
        return " · ".join(f"`{n}`" for n in names)
    return ", ".join([f"`{names[0]}`", *(f"`{n[len(stem):]}`" for n in names[1:])])


def _spans(names) -> str:
    """`scan_holdout6`…`13`, `26`…`33`: runs of consecutive numbers of one stem, each by its ends."""
    stem = names[0].rstrip("0123456789")
    numbers = [int(n[len(stem):]) for n in names]
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [f"`{r[0]}`" if len(r) == 1 else f"`{r[0]}`…`{r[-1]}`" for r in runs]
    return f"`{stem}" + parts[0][1:] + "".join(f", {p}" for p in parts[1:])


def _runs(sizes: list[str]) -> str:
    """200 / 300 (×3) · 160 / 80 (×6): equal sizes of neighbouring sets said once."""
    runs: list[list] = []
    for size in sizes:
        if runs and runs[-1][0] == size:
            runs[-1][1] += 1
        else:
            runs.append([size, 1])
    return " · ".join(size if n == 1 else f"{size} (×{n})" for size, n in runs)


def _scanner_value(rates: dict) -> list[float | None]:
    return [rates.get("detected"), rates.get("false_block"), rates.get("quarantined")]


def _value(row: dict, value: Any, long: Any = None) -> str:
    if row["unit"] == "scanner":
        return " / ".join("—" if v is None else f"{100 * v:.1f}%" for v in value)
    if row["unit"] == "scanner per set":
        return " / ".join(" · ".join("—" if v is None else f"{100 * v:.1f}" for v in values) + "%" for values in value)
    if row["unit"] == "scanner sets":
        return " · ".join(f"{100 * v:.1f}" for v in value[0]) + "% / " + " / ".join(f"{100 * v:.1f}%" for v in value[1:])
    if row["unit"] == "held rates":
        return " / ".join(" · ".join(f"{100 * v:.1f}" for v in values) + "%" for values in value)
    if row["unit"] == "R@10 / MRR":
        return " / ".join(f"{v:.3f}" for v in value)
    return f"{_fmt(value, 1)}{'' if long is None else ' / ' + _fmt(long, 1)} {row['unit']}"


def _times(ratio: float | None) -> str:
    return f"{_fmt(ratio, 2)}×" if ratio is not None else "—"


def _peer_cell(row: dict) -> str:
    cells = []
    for peer in row["peers"]:
        label = LABELS.get(peer["peer"]) or BASELINES.get(peer["peer"], peer["peer"])
        long = peer.get("long") if row.get("long") is not None else None
        cell = f"{label} {_value(row, peer['value'], long)}"
        if "ratio" in peer:
            cell += f" ({_times(peer['ratio'])}" + ("" if long is None else f" / {_times(peer['long_ratio'])}") + ")"
        cells.append(cell)
    return " · ".join(cells) or "—"


def caption(perf: dict | None, recall: dict | None, scanner: dict | None = None) -> str:
    runs = []
    host = None
    if perf:
        m = perf["meta"]
        systems = "" if m.get("systems") == DEFAULT_SYSTEMS else f" --systems {','.join(m.get('systems') or [])}"
        runs.append(f"`echo-duck bench perf --sizes {','.join(_size(s) for s in perf['results'])}{systems} "
                    f"--repeats {m.get('repeats')}` ({_when(m.get('date'))})")
        host = (m.get("cpus"), m.get("platform"))
    if recall:
        limit = f" --limit {recall['limit']}" if recall.get("limit") else ""
        names = list(recall["sets"])
        own = [n for n in names if n in OWN_SET_NAMES]
        sets = ",".join(names)
        if set(own) == set(OWN_SET_NAMES):  # the default, all of them: LoCoMo and LongMemEval need their folders
            sets = "all" + "".join(f" --{n} DIR" for n in ("locomo", "longmemeval") if n in names)
        runs.append(f"`echo-duck bench recall --sets {sets}{limit}` ({_when(recall.get('date'))}, "
                    f"model {recall.get('model_id')})")
        host = host or (recall.get("cpus"), recall.get("platform"))
    if scanner:
        runs.append(f"`echo-duck bench scanner` ({_when(scanner.get('date'))})")
        host = host or (scanner.get("cpus"), scanner.get("platform"))
    cpus, plat = host or (None, None)
    where = f"on a {cpus}-core {str(plat).split('-')[0]} host" if cpus and plat else "host not recorded"
    notes = (["× = echo_duck ÷ peer in the same run (faster: below 1 for latency, above 1 for ingest)"]
             if perf else []) + (["R@10 / MRR on the questions no ranking constant was fitted on"] if recall else []) + (
        ["the scanner's corpus rows refit its classifier without the part held out"] if scanner else [])
    listed = runs[0] if len(runs) == 1 else ", ".join(runs[:-1]) + " and " + runs[-1]
    said = "; ".join(notes)
    return f"Measured {where}: {listed}. {said[:1].upper()}{said[1:]}."


def _when(date: str | None) -> str:
    return date[:16].replace("T", " ") + " UTC" if date else "date not recorded"


def table(rows: list[dict]) -> str:
    lines = ["| measure | echo_duck | peers |", "|---|--:|---|"]
    for row in rows:
        ours = _value(row, row["echo_duck"], row.get("long"))
        if "of_unfiltered" in row:
            ours += f" ({_times(row['of_unfiltered'])} unfiltered)"
        lines.append(f"| {row['measure']} | {ours} | {_peer_cell(row)} |")
    return "\n".join(lines)


def build(perf: dict | None = None, recall: dict | None = None, scanner: dict | None = None) -> dict:
    """{"caption", "rows", "markdown"} for the given inputs (at least one)."""
    if perf is None and recall is None and scanner is None:
        raise InvalidInput("bench summary needs perf (perf.json), recall (recall.json) or scanner (scanner.json)")
    rows = ((perf_rows(perf) if perf else []) + (recall_rows(recall) if recall else [])
            + (scanner_rows(scanner) if scanner else []))
    if not rows:
        raise InvalidInput("the given bench outputs hold no echo_duck results to summarise")
    text = caption(perf, recall, scanner)
    return {"caption": text, "rows": rows, "markdown": f"{text}\n\n{table(rows)}"}


def replaced(text: str, block: str, where: str) -> str:
    """``text`` with the part between the markers replaced by ``block``; every other byte kept."""
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise InvalidInput(f"{where} needs exactly one {START} line followed by one {END} line")
    head, rest = text.split(START)
    _, tail = rest.split(END)
    return f"{head}{START}\n{block}\n{END}{tail}"


def write(paths: list[str | Path], block: str) -> list[str]:
    """Replace the block in every file; all are checked before any is written."""
    new = {}
    for path in map(Path, paths):
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise InvalidInput(f"{path} is not a readable UTF-8 file: {e}") from None
        new[path] = replaced(text, block, str(path))
    for path, text in new.items():
        path.write_bytes(text.encode("utf-8"))
    return [str(p) for p in new]
