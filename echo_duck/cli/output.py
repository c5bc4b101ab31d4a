"""Rendering for the CLI: JSON for programs, compact aligned tables and detail blocks for people."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from datetime import datetime
from typing import Any, Iterable, Sequence

import click


def to_jsonable(value: Any) -> Any:
    polars = sys.modules.get("polars")  # not imported: value cannot be a DataFrame
    if polars is not None and isinstance(value, polars.DataFrame):
        return [to_jsonable(row) for row in value.to_dicts()]
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def emit_json(value: Any) -> None:
    """JSON with C1 and bidi controls written as \\u escapes too (json.dumps escapes C0 only): same data, no raw control."""
    text = json.dumps(to_jsonable(value), ensure_ascii=False, indent=2, default=str)
    click.echo(_UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", text))


# Control characters (an ESC starts a terminal escape sequence: conceal a row, rewrite the clipboard) and bidi
# controls, which reorder what a terminal shows: stored text is printed with them escaped (\x1b, \u202e)
_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def safe(text: str) -> str:
    """``text`` for a terminal: line breaks kept, control and bidi characters shown escaped."""
    return _UNSAFE.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str], *, widths: dict[str, int] | None = None) -> str:
    """A plain text table; long cells are cut with '…' to the column's maximum width."""
    widths = widths or {}
    cells = [[_cell(row.get(c), widths.get(c, 40)) for c in columns] for row in rows]
    sizes = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(sizes[i]) for i, c in enumerate(columns)).rstrip(),
             "  ".join("-" * sizes[i] for i in range(len(columns)))]
    lines += ["  ".join(r[i].ljust(sizes[i]) for i in range(len(columns))).rstrip() for r in cells]
    return "\n".join(lines)


def details(record: dict[str, Any], fields: Iterable[str] | None = None) -> str:
    names = list(fields) if fields is not None else list(record)
    width = max(len(n) for n in names)
    return "\n".join(f"{n.ljust(width)}  {_cell(record.get(n), 10_000)}" for n in names)


def hits(found: Sequence[Any], explain: bool = False) -> str:
    """Recall hits as a numbered list: score, short id, type and key, then the content, indented."""
    blocks = []
    for rank, h in enumerate(found, 1):
        head = f"{rank:>2}. {h.score:.4f}  {h.id[:8]}  {h.memory.type}" + (f"  {_cell(h.key, 200)}" if h.key else "")
        if h.conflicts_with:
            head += f"  (conflicts with {', '.join(str(c)[:8] for c in h.conflicts_with)})"
        body = textwrap.fill(_cell(h.content, 600), width=100, initial_indent="    ", subsequent_indent="    ")
        if explain and h.explanation is not None:
            e = h.explanation
            body += (f"\n    bm25 rank {_rank(e.bm25_rank)}, vector rank {_rank(e.vector_rank)}, similarity "
                     f"{'-' if e.similarity is None else f'{e.similarity:.2f}'}, gate {e.gate}")
            if getattr(e, "session_credit", None) is not None and e.relevance == e.session_credit:
                body += ", lifted by the memory before it in its session"
            if getattr(e, "bridge_coverage", None):
                body += f", its words translate {e.bridge_coverage:.0%} of the question's"
            if getattr(e, "asking_weight", 1.0) < 1.0:
                body += f", it mostly asks (score × {e.asking_weight:g})"
            window, seen = getattr(e, "time_window", None), h.memory.observed_at or h.memory.created_at
            if window and seen is not None and window[0] <= seen.isoformat() < window[1]:
                body += f", observed in the time the question names ({window[0][:10]} to {window[1][:10]})"
            if getattr(e, "rerank_score", None) is not None:
                body += f", reranker score {e.rerank_score:.2f}"
            elif getattr(e, "rerank", None) not in (None, "reranked"):
                body += f", rerank {e.rerank}"
        blocks.append(f"{head}\n{body}")
    return "\n".join(blocks)


def readable(df, *, max_columns: int = 6) -> str:
    """A frame for people: "(none)", one row as name/value lines, a narrow frame as a table, a wide
    one as one name/value block per row; ids cut to the 8 characters that ``show`` accepts."""
    rows = [{k: _short_id(v) for k, v in row.items()} for row in df.to_dicts()]
    if not rows:
        return "(none)"
    if len(rows) == 1:
        return details(rows[0])
    if len(df.columns) <= max_columns:
        return table(rows, df.columns)
    return "\n\n".join(details(row) for row in rows)


def frame(df) -> str:
    import polars as pl

    with pl.Config(tbl_rows=50, tbl_cols=20, fmt_str_lengths=60, tbl_hide_dataframe_shape=False):
        return safe(str(df))


def _short_id(value: Any) -> Any:
    text = str(value) if value is not None else ""
    if len(text) == 36 and text.count("-") == 4:
        return text[:8]
    return value


def _cell(value: Any, limit: int) -> str:
    if value is None:
        text = ""
    elif isinstance(value, datetime):
        text = value.isoformat(sep=" ", timespec="seconds")
    elif isinstance(value, (list, tuple)):
        text = ", ".join(str(v) for v in value)
    elif isinstance(value, float):
        text = f"{value:.3g}"
    else:
        text = str(value)
    text = safe(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _rank(rank: int | None) -> str:
    return "-" if rank is None else str(rank)
