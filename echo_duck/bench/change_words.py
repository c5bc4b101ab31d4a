"""``echo-duck bench changes``: how well the SQL macro ``states_change`` (sql/macros/20_ranking.sql; recall's
update_credit reads it) tells a note that says something changed from one that does not, on the hand-written sets in
data_fixtures/change_sets (a development set and a held-out one, English and Chinese)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from ..errors import InvalidInput
from ..storage.sqlfiles import macro_statement

SETS = Path(__file__).resolve().parent.parent.parent / "data_fixtures" / "change_sets"


def run(folder: Path | None = None) -> dict[str, Any]:
    folder = folder or SETS
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise InvalidInput(f"no *.jsonl change sets in {folder}")
    con = duckdb.connect()
    con.execute(macro_statement("states_change"))
    sets, misses = {}, []
    for path in files:
        counts = dict(n=0, changes=0, found=0, false_alarms=0)
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            said = bool(con.execute("SELECT states_change(?)", [item["text"]]).fetchone()[0])
            counts["n"] += 1
            counts["changes"] += bool(item["change"])
            counts["found"] += said and bool(item["change"])
            counts["false_alarms"] += said and not item["change"]
            if said != bool(item["change"]):
                misses.append(dict(set=path.stem, id=item["id"], text=item["text"], change=item["change"]))
        flagged = counts["found"] + counts["false_alarms"]
        sets[path.stem] = {**counts, "recall": round(counts["found"] / max(counts["changes"], 1), 3),
                           "precision": round(counts["found"] / flagged, 3) if flagged else None}
    con.close()
    return {"sets": sets, "misses": misses}


def markdown(report: dict[str, Any]) -> str:
    lines = ["| set | notes | changes | recall | precision | false alarms |", "|---|---|---|---|---|---|"]
    for name, c in report["sets"].items():
        lines.append(f"| {name} | {c['n']} | {c['changes']} | {c['recall']:.3f} | {c['precision']} | "
                     f"{c['false_alarms']} of {c['n'] - c['changes']} |")
    return "\n".join(lines)
