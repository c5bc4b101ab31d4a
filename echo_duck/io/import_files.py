"""Reading an import file into records: where each one is, remember()'s arguments, or why it is skipped.

One parser per format (``PARSERS``, keyed as ``formats.FORMATS``); ``detect_format`` guesses the format
from the file's name and, for JSON, its objects. Nothing here touches a store: importers.py writes the
records through the write path. May import what ``io`` may.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from ..errors import InvalidInput
from ..write import validate
from .formats import FORMATS
from .import_trust import chain_order, parse_history, provenance_of, usage_of

_CONTAINERS = ("memories", "entries", "facts", "procedures", "rules", "items", "data")
_CONTENT = ("content", "text", "value", "fact", "rule", "entry", "memory")
_WHEN = ("observed_at", "created_at", "timestamp", "updated_at")
_TYPES = {"user": "user", "environment": "environment", "env": "environment", "procedure": "procedure",
          "rule": "procedure", "self": "self"}
_PASS = ("confidence", "importance", "pinned", "scope", "sensitivity", "entities", "team_id", "tenant_id")

# A parsed record: where it is, the remember() arguments, or why it is skipped (reason, detail).
Record = tuple[str, "dict[str, Any] | None", "tuple[str, str] | None"]


def detect_format(path: str | Path) -> str:
    path = Path(path)
    name = path.name.lower()
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith((".md", ".markdown")):
        return "ethan-profile" if "profile" in name else "echo-history" if "history" in name else "memory-md"
    if name.endswith(".json"):
        for needle, fmt in (("user_memory", "echo-user"), ("env_memory", "echo-env"), ("procedure", "ethan-procedures"),
                            ("fact", "ethan-facts")):
            if needle in name:
                return fmt
        objects = [o for _, o in _json_items(path) if isinstance(o, dict)]
        if objects and all("rule" in o for o in objects):
            return "ethan-procedures"
        if objects and all(("category" in o or "confidence" in o) for o in objects):
            return "ethan-facts"
    raise InvalidInput(f"cannot tell the format of {path}; pass format= one of {', '.join(FORMATS)}")


# -- reading files -----------------------------------------------------------------------------------

def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InvalidInput(f"no file at {path}") from None
    except UnicodeDecodeError as e:
        line = path.read_bytes()[: e.start].count(b"\n") + 1
        raise InvalidInput(f"{path}, line {line}: not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise InvalidInput(f"cannot read {path}: {e.strerror}") from None


def _json_items(path: Path) -> list[tuple[str, Any]]:
    data = _loads(path, _read_text(path), None)
    if isinstance(data, dict):
        box = next((name for name in _CONTAINERS if isinstance(data.get(name), (list, dict))), None)
        if box is not None:
            data = data[box]
        elif any(isinstance(data.get(c), str) for c in _CONTENT):
            data = [data]  # one memory
    if isinstance(data, list):
        return [(f"item {i}", {"content": o} if isinstance(o, str) else o) for i, o in enumerate(data, 1)]
    if isinstance(data, dict):  # key -> entry, or key -> content string
        out = []
        for k, v in data.items():
            v = {"content": v} if isinstance(v, str) else v
            if isinstance(v, dict) and "key" not in v and not validate.looks_like_uuid(k):
                v = {**v, "key": k}
            out.append((f"key {k!r}", v))
        return out
    raise InvalidInput(f"{path}: expected a JSON list of memories, or an object holding one under "
                       f"{', '.join(_CONTAINERS)}; got a {type(data).__name__}")


def _objects(path: Path, items: Any, *, forced_type: str | None = None, default_type: str | None = None,
             ref_ids: bool = True, extra: Callable[[dict, dict], None] | None = None) -> list[Record]:
    items, versions = chain_order(list(items))  # a kept version chain comes older first (import_trust.py)
    return [_normalise(path, where, obj, forced_type, default_type, ref_ids, extra, versions) for where, obj in items]


def _normalise(path, where, obj, forced_type, default_type, ref_ids, extra, versions=frozenset()) -> Record:
    if not isinstance(obj, dict):
        return where, None, ("invalid", f"expected an object, got {type(obj).__name__}")
    status = str(obj.get("status") or "active").lower()
    is_version = str(obj.get("id")) in versions
    if (obj.get("superseded_by") or status == "superseded") and not is_version:
        return where, None, ("superseded", "replaced by a newer version in the source")
    if (status != "active" and not is_version) or obj.get("active") is False:
        return where, None, ("inactive", f"status {status!r}" if status != "active" else "active: false")
    tier = str(obj.get("tier") or "semantic").lower()
    content = next((obj[c] for c in _CONTENT if obj.get(c) is not None), None)
    if tier == "working" or content is None:
        return where, None, ("invalid", "working memory is never persisted" if tier == "working"
                             else f"no content (looked for {', '.join(_CONTENT)})")
    when = next((w for w in _WHEN if obj.get(w) is not None), None)
    try:
        observed_at = None if when is None else _when(obj[when], when)
    except InvalidInput as e:
        return where, None, ("invalid", str(e))
    fields: dict[str, Any] = {
        "content": content, "key": obj.get("key"), "observed_at": observed_at, "provenance": provenance_of(obj),
        "type": forced_type or _TYPES.get(str(obj.get("type")).lower(), obj.get("type") or default_type),
        "tags": _tags(obj.get("tags")) + _tags(obj.get("keywords")),
        "tier": "episodic" if tier == "episodic" else "semantic",
        "source_refs": _tags(obj.get("source_refs") or obj.get("sources")),
        "source_session": obj.get("source_session") or obj.get("session_id"),
        **{name: obj[name] for name in _PASS if obj.get(name) is not None},
    }
    if ref_ids and obj.get("id") is not None:
        fields["source_refs"].append(f"import:{path.name}#{obj['id']}")
    try:  # an impossible count refuses the file before anything is written (import_trust.usage_of)
        fields["_usage"] = usage_of(obj, _when)
    except InvalidInput as e:
        raise InvalidInput(f"{path}, {where}: {e}; nothing was imported") from None
    fields["_version"] = is_version
    fields["_by_host"] = obj.get("by_host") is True  # kept by a trusted import only (importers.py)
    fields["_agent_id"] = obj.get("agent_id") if isinstance(obj.get("agent_id"), str) else None  # likewise
    if extra is not None:
        extra(obj, fields)
    return where, fields, None


def _ethan_extra(obj: dict, fields: dict) -> None:
    for name, prefix in (("category", ""), ("source", "source:"), ("context", "context:")):
        if isinstance(obj.get(name), str) and obj[name].strip():
            fields["tags"].append((prefix + obj[name].strip())[: validate.MAX_TAG_CHARS])


def _tags(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _when(value: Any, name: str) -> datetime | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value / 1000 if value > 1e12 else value, tz=timezone.utc).replace(tzinfo=None)
        except (OverflowError, OSError, ValueError):
            raise InvalidInput(f"{name} {value!r} is not a Unix time in seconds or milliseconds") from None
    if isinstance(value, str) and value.endswith("Z"):
        value = value[:-1] + "+00:00"
    return validate.timestamp(value, name)


def _jsonl(path: Path) -> list[Record]:
    items = []
    # Records end at "\n" only: str.splitlines would also cut at U+2028, U+0085, \x1c … which JSON
    # leaves raw inside strings (json.dumps(ensure_ascii=False) writes U+2028 as is).
    for n, line in enumerate(_read_text(path).split("\n"), 1):
        line = line.removesuffix("\r")
        if line.strip():
            items.append((f"line {n}", _loads(path, line, n)))
    return _objects(path, items, ref_ids=False)


MAX_DEPTH = 64  # no memory record nests deeper; a deeper document is refused before it is parsed


def _loads(path: Path, text: str, line: int | None) -> Any:
    """json.loads with the errors a person can act on: where the JSON is bad, or that it nests too deep."""
    where = f"{path}" + (f", line {line}" if line is not None else "")
    if _depth(text) > MAX_DEPTH:
        raise InvalidInput(f"{where}: JSON nested more than {MAX_DEPTH} levels deep; not a memory file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        at = f"{path}, line {line if line is not None else e.lineno}, column {e.colno}"
        raise InvalidInput(f"{at}: not valid JSON ({e.msg})") from None
    except RecursionError:
        raise InvalidInput(f"{where}: JSON nested too deep to read; not a memory file") from None
    except ValueError as e:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise InvalidInput(f"{where}: a number too long to read ({str(e)[:80]}); not a memory file") from None


_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def _depth(text: str) -> int:
    """The deepest [ / { nesting outside strings (no recursion, so no RecursionError whatever the input)."""
    depth = deepest = 0
    for m in _BRACKET.finditer(_JSON_STRING.sub("", text)):
        depth += 1 if m.group() in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _parquet(path: Path) -> list[Record]:
    import pyarrow.parquet as pq

    try:
        rows = pq.ParquetFile(path).read().to_pylist()  # one file: read_table would read a folder as a dataset
    except (OSError, ValueError, OverflowError) as e:  # ArrowInvalid (a ValueError), OSError; a timestamp past 9999
        raise InvalidInput(f"{path}: not a readable Parquet file ({e})") from None
    return _objects(path, ((f"row {i}", r) for i, r in enumerate(rows, 1)), ref_ids=False)


# -- Markdown ----------------------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*\S)\s*$")
_LABEL = re.compile(r"^(?:\*\*(.+?)\*\*|`(.+?)`)\s*[:：]\s*(.+)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SECTION_TYPES = (  # the nearest heading that names a type decides; ASCII words match at a word start
    ("user", re.compile(r"\b(user|preference|profile|persona)|用户|偏好|画像|习惯", re.I)),
    ("procedure", re.compile(r"\b(rule|procedure|guideline|behaviou?r)|规则|约定|准则|行为", re.I)),
    ("self", re.compile(r"\bself\b|自我", re.I)),
)


def _markdown_lines(path: Path) -> list[tuple[int, str, str, str]]:
    """(line number, kind, text, raw line); kind is h1..h6, item, more (indented), text, blank or code."""
    out, fence = [], None
    for n, line in enumerate(_read_text(path).splitlines(), 1):
        stripped = line.strip()
        if fence is not None or (m := _FENCE.match(line)):
            if fence is None:
                fence = (n, m.group(1))
            elif stripped.startswith(fence[1]):
                fence = None
            out.append((n, "code", "", line))
        elif m := _HEADING.match(line):
            out.append((n, f"h{len(m.group(1))}", m.group(2).strip("`* ¶"), line))
        elif m := _ITEM.match(line):
            out.append((n, "item", m.group(1), line))
        elif not stripped or stripped in ("---", "***") or stripped.startswith("<!--"):
            out.append((n, "blank", "", line))
        else:
            out.append((n, "more" if line[:1].isspace() else "text", stripped, line))
    if fence is not None:
        raise InvalidInput(f"{path}, line {fence[0]}: code fence {fence[1]} is never closed")
    return out


def _memory_md(path: Path) -> list[Record]:
    lines = _markdown_lines(path)
    kinds = [kind for _, kind, _, _ in lines if kind[0] == "h"]
    title = 1 if kinds.count("h1") == 1 and len(kinds) > 1 else 0  # a lone H1 is the file's title, not a tag
    out: list[Record] = []
    heads: list[tuple[int, str]] = []
    item: list | None = None  # [line, text, headings]
    prose_line = -1  # last line of the paragraph being skipped: a paragraph is reported once
    for n, kind, text, _ in lines + [(0, "blank", "", "")]:
        if kind == "more" and item is not None:
            item[1] += " " + text
            continue
        if item is not None:
            out.append(_md_item(*item, title))
            item = None
        if kind[0] == "h":
            heads = [h for h in heads if h[0] < int(kind[1])] + [(int(kind[1]), text)]
        elif kind == "item":
            item = [n, text, list(heads)]
        elif kind in ("text", "more"):
            if prose_line != n - 1:
                out.append((f"line {n}", None, ("prose", "only list items become memories")))
            prose_line = n
    return out


def _md_item(n: int, text: str, heads: list[tuple[int, str]], title: int) -> Record:
    kind = next((t for _, h in reversed(heads) for t, rx in _SECTION_TYPES if rx.search(h)), "environment")
    tags = [re.sub(r"[\W_]+", "-", h.lower()).strip("-")[: validate.MAX_TAG_CHARS] for level, h in heads if level > title]
    fields: dict[str, Any] = {"content": text, "type": kind, "key": None, "tags": [t for t in tags if t]}
    if m := _LABEL.match(text):
        label = (m.group(1) or m.group(2)).strip()
        fields.update(key=label, content=f"{label}: {m.group(3).strip()}")
    return f"line {n}", fields, None


def _ethan_profile(path: Path) -> list[Record]:
    lines = _markdown_lines(path)
    level = "h2" if any(kind == "h2" for _, kind, _, _ in lines) else "h1"
    sections: list[tuple[int, str, list[str]]] = []
    for n, kind, text, raw in lines:
        if kind == level or (kind[0] == "h" and kind < level):  # a title above the sections gets no record
            sections.append((n, text if kind == level else "", []))
        elif sections:
            sections[-1][2].append(raw.rstrip())
    out: list[Record] = []
    for n, title, body in (s for s in sections if s[1]):
        content, where = "\n".join(body).strip(), f"line {n} (section {title})"
        out.append((where, None, ("empty", "the section has no text")) if not content else
                   (where, {"content": content, "type": "user", "key": f"profile:{title}", "tags": ["profile"]}, None))
    return out


PARSERS: dict[str, Callable[[Path], list[Record]]] = {
    "echo-user": lambda p: _objects(p, _json_items(p), forced_type="user"),
    "echo-env": lambda p: _objects(p, _json_items(p), forced_type="environment"),
    "ethan-facts": lambda p: _objects(p, _json_items(p), default_type="user", extra=_ethan_extra),
    "ethan-procedures": lambda p: _objects(p, _json_items(p), forced_type="procedure", extra=_ethan_extra),
    "memory-md": _memory_md,
    "echo-history": lambda p: parse_history(p, _read_text(p)),
    "ethan-profile": _ethan_profile,
    "jsonl": _jsonl,
    "parquet": _parquet,
}
