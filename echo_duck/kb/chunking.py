"""The text side of the knowledge base (no database here): how a document is cut into chunks and how each
chunk is screened. What is read: sources.py; secrets masked: masking.py; found chunks rendered: rendering.py.

Chunks follow the document's structure: a markdown heading starts a new section (headings inside
fenced code are not headings) and no chunk spans two sections, so every chunk has one exact heading
trail. A section longer than ``MAX_CHARS`` is cut at the last paragraph break that fits, else a line
break, a sentence end, a space, or (Chinese without spaces) anywhere; the next piece then repeats up
to ``OVERLAP`` characters from a sentence or word start, so a fact cut in two is still whole in one of
them. Plain .txt files are one section. Offsets are Python str indices into the decoded text, and
``text[start:end]`` is always exactly the chunk (surrounding whitespace is trimmed by moving them).

``stage_chunks`` turns documents into the column lists kb.py writes: each piece screened by the
scanner (the policy is in kb.py's docstring) and segmented for BM25 with its heading trail. Secrets are
found in the whole document before it is cut (masking.py), so one a boundary cuts is masked in both pieces.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa

from ..errors import InvalidInput
from ..text import segment as segmentation
from ..write.scan import hidden_positions, scan_many  # the scanner's own definitions: no second copy
from .masking import document_spans, mask_piece, mask_secrets
from .rendering import CLOSE, OPEN, PREAMBLE, UNTRUSTED_CLOSE, UNTRUSTED_NOTE, UNTRUSTED_OPEN, fence_safe, render
from .sources import MAX_FILE_BYTES, SUFFIXES, Document, files_in, inputs, read

__all__ = ["CLOSE", "MAX_CHARS", "MAX_FILE_BYTES", "OPEN", "OVERLAP", "PREAMBLE", "SUFFIXES", "UNTRUSTED_CLOSE",
           "UNTRUSTED_NOTE", "UNTRUSTED_OPEN", "Document", "Piece", "chunk", "doc_stage", "fence_safe", "files_in",
           "in_context", "inputs", "mask_secrets", "plan", "read", "render", "screen", "stage_chunks", "title_of",
           "vector_stage"]

MAX_CHARS = 1200
OVERLAP = 150
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_CODE_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_LINE = re.compile(r"[^\n]*\n|[^\n]+$")
# ASCII punctuation ends a sentence only before a space ("v1.5.5", "e.g.x" do not); CJK punctuation always.
_SENTENCE_END = r"(?:[.!?;:]+[\"')\]]*\s+|[。！？；：…]+[”’）」]*\s*)"
# Where a cut may fall, best first: after a blank line, a line end, a sentence end, a space.
_CUTS = (re.compile(r"\n[ \t]*\n\s*"), re.compile(r"\n\s*"), re.compile(_SENTENCE_END), re.compile(r"\s+"))
_STARTS = (re.compile(_SENTENCE_END + r"(?=\S)"), re.compile(r"\s+(?=\S)"))  # a sentence start, then a word start


@dataclass(frozen=True)
class Piece:
    """A chunk before it is stored: text[start:end] under the headings of ``trail``."""

    seq: int
    trail: tuple[str, ...]
    start: int
    end: int


def chunk(text: str, *, markdown: bool = True, max_chars: int = MAX_CHARS, overlap: int = OVERLAP) -> list[Piece]:
    """Cut ``text`` into pieces of at most ``max_chars`` (each a section or part of one)."""
    if not 0 <= overlap < max_chars // 2:
        raise InvalidInput(f"overlap must be from 0 to less than half of max_chars ({max_chars}), got {overlap}")
    pieces: list[Piece] = []
    for trail, start, end, body_start in _sections(text, markdown):
        if not text[body_start:end].strip():
            continue  # a heading directly followed by a sub-heading: it lives on in the trail
        for a, b in _split(text, start, end, max_chars, overlap):
            pieces.append(Piece(len(pieces), trail, a, b))
    return pieces


def title_of(text: str, markdown: bool, fallback: str) -> str:
    """The first level-1 heading, else the first heading, else the first non-blank line."""
    headings = enumerate(_headings(text)) if markdown else ()
    titled = sorted((level, i, title) for i, (level, title, *_) in headings if title)
    if titled:
        return titled[0][2][:200]
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first[:200] or fallback


@dataclass(frozen=True)
class Plan:
    """What an add changes: (document id, document) pairs to chunk or only to re-label, ids to drop."""

    fresh: list[tuple[str, Document]]  # new, changed or re-activated: (re)chunked
    relabel: list[tuple[str, Document]]  # same text under a new source or tags: no re-chunking
    replaced: list[str]  # active documents whose old chunks go
    gone: list[str]  # active documents below a re-added folder whose file is no longer there
    unchanged: int


def plan(docs: Sequence[Document], known: dict[str | None, dict], source: str, tags: Sequence[str], sync: bool,
         owner: dict | None = None) -> Plan:
    """Compare the inputs with the stored documents (``known``: by path, any status) by content hash;
    a document whose source, tags or scope fields (``owner``) changed is re-labelled."""
    known, fresh, relabel, replaced, unchanged = dict(known), [], [], [], 0
    for doc in docs:
        row = known.pop(doc.path, None)
        active = row is not None and row["status"] == "active"
        if active and row["content_hash"] == doc.content_hash:
            same_owner = owner is None or all(row.get(k) == v for k, v in owner.items())
            if row["source"] == source and tuple(row["tags"]) == tuple(tags) and same_owner:
                unchanged += 1
            else:
                relabel.append((str(row["id"]), doc))
            continue
        fresh.append((str(row["id"]) if row else str(uuid.uuid4()), doc))
        if active:
            replaced.append(str(row["id"]))
    gone = [str(r["id"]) for r in known.values() if r["status"] == "active"] if sync else []
    return Plan(fresh, relabel, replaced, gone, unchanged)


def stage_chunks(docs: Sequence[tuple[str, Document]],
                 protected: Sequence[str]) -> tuple[pa.Table, list[str], list[str]]:
    """(echo_duck_kb_chunk_stage rows, the text to embed per chunk, 'citation: reason' per flagged chunk)."""
    cols: dict[str, list] = {c: [] for c in ("id", "document_id", "seq", "heading_trail", "start_offset", "end_offset",
                                              "content", "flagged", "flag_reason", "tokens")}
    contexts, notes = [], []
    for doc_id, doc in docs:
        seq, secrets = 0, document_spans(doc.text)  # found whole, before the text is cut
        for piece in chunk(doc.text, markdown=doc.markdown):
            masked, kinds = mask_piece(doc.text, piece.start, piece.end, secrets)
            trail, content, reason = screen(piece.trail, doc.text[piece.start:piece.end], protected,
                                            (masked, kinds) if kinds else None)
            if not content.strip():
                continue  # nothing but hidden characters
            contexts.append(in_context(trail, content))
            if reason:
                notes.append(f"{' › '.join((doc.path or 'text', *trail))} [{piece.start}:{piece.end}]: {reason}")
            row = dict(id=str(uuid.uuid4()), document_id=doc_id, seq=seq, heading_trail=list(trail),
                       start_offset=piece.start, end_offset=piece.end, content=content, flagged=reason is not None,
                       flag_reason=reason, tokens=segmentation.segment_for_index(contexts[-1]))
            for name, value in row.items():
                cols[name].append(value)
            seq += 1
    types = {"heading_trail": pa.list_(pa.string()), "seq": pa.int32(), "start_offset": pa.int32(),
             "end_offset": pa.int32(), "flagged": pa.bool_(), "flag_reason": pa.string()}
    return pa.table({k: pa.array(v, type=types.get(k, pa.string())) for k, v in cols.items()}), contexts, notes


def screen(trail: tuple[str, ...], content: str, protected: Sequence[str],
           masked: tuple[str, list[str]] | None = None) -> tuple[tuple[str, ...], str, str | None]:
    """(trail, content, flag reason or None): hidden characters removed, then the scanner's verdict.
    ``masked``: the content with the secrets found in the whole document masked (stored then), and their kinds."""
    removed: list[str] = []

    def strip(value: str, count: bool = True) -> str:
        drop = set(hidden_positions(value))
        if count:
            removed.extend(f"U+{ord(value[i]):04X}" for i in sorted(drop))
        return "".join(ch for i, ch in enumerate(value) if i not in drop) if drop else value

    trail, content = tuple(strip(t) for t in trail), strip(content)
    stored = content if masked is None else strip(masked[0], count=False)
    reasons = [f"invisible_unicode: removed {len(removed)} hidden character(s), first {removed[0]}"] if removed else []
    # Documentation is imperative by nature ("follow it in order", "do not improvise"): in a KB chunk the
    # scanner's model only confirms what a rule layer found, as for labels; the rules flag on their own.
    finding = scan_many([in_context(trail, content)], protected_paths=protected, labels=[True])[0]
    if finding is not None:
        reasons.append(f"{finding.reason}: {finding.detail}")
    masked_trail, stored = tuple(mask_secrets(t) for t in trail), mask_secrets(stored)
    if stored != content or masked_trail != trail:  # the store never holds a secret: masked at ingest
        kinds = f" ({', '.join(dict.fromkeys(masked[1]))}, found in the whole document)" if masked else ""
        reasons.append(f"secret: masked before storing{kinds}")
        trail, content = masked_trail, stored
    return trail, content, "; ".join(reasons) or None


def in_context(trail: Sequence[str], content: str) -> str:
    """What both arms index and the scanner reads: the heading trail, then the chunk."""
    return f"{' › '.join(trail)}\n{content}" if trail else content


def doc_stage(items: Sequence[tuple[str, Document]], source: str, tags: list[str]) -> pa.Table:
    """echo_duck_kb_doc_stage rows for (document id, document) pairs."""
    return pa.table({
        "id": [i for i, _ in items], "path": pa.array([d.path for _, d in items], type=pa.string()),
        "source": [source] * len(items), "content_hash": [d.content_hash for _, d in items],
        # the title is read from the text: its secrets masked as the chunks' (the store never holds one)
        "title": [mask_secrets(title_of(mask_secrets(d.text), d.markdown, Path(d.path).name if d.path else source))
                  for _, d in items],
        "tags": pa.array([tags] * len(items), type=pa.list_(pa.string())),
        "size": pa.array([len(d.text) for _, d in items], type=pa.int64()),
    })


def vector_stage(ids: list[str], vectors: np.ndarray) -> pa.Table:
    """echo_duck_kb_vector_stage rows: one FLOAT[] per chunk id, built without a Python list per row."""
    flat = pa.array(vectors.astype(np.float32, copy=False).ravel())
    offsets = pa.array(np.arange(0, len(flat) + 1, vectors.shape[1], dtype=np.int32))
    return pa.table({"chunk_id": ids, "vector": pa.ListArray.from_arrays(offsets, flat)})


def _headings(text: str):
    """(level, title, line_start, line_end) of each ATX heading outside fenced code."""
    fence = None
    for m in _LINE.finditer(text):
        line = m.group().rstrip("\r\n")
        if f := _CODE_FENCE.match(line):
            mark = f.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence) and not line.strip().strip(mark[0]):
                fence = None
            continue
        if fence is None and (h := _ATX.fullmatch(line)):
            yield len(h.group(1)), (h.group(2) or "").strip(), m.start(), m.end()


def _sections(text: str, markdown: bool):
    """(trail, start, end, body_start) per section; text before the first heading has an empty trail."""
    if not markdown:
        yield (), 0, len(text), 0
        return
    stack: list[tuple[int, str]] = []
    trail: tuple[str, ...] = ()
    start = body = 0
    for level, title, line_start, line_end in _headings(text):
        yield trail, start, line_start, body
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        trail, start, body = tuple(t for _, t in stack if t), line_start, line_end
    yield trail, start, len(text), body


def _split(text: str, start: int, end: int, max_chars: int, overlap: int):
    """(a, b) spans covering text[start:end] in pieces of at most max_chars, trimmed, overlapping."""
    pos = _skip_space(text, start, end)
    while pos < end:
        if end - pos <= max_chars:
            cut = end
        else:
            cut = _best_cut(text, pos, pos + max_chars)
        a, b = pos, cut
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            yield a, b
        if cut >= end:
            return
        pos = _skip_space(text, _overlap_start(text, max(pos + 1, cut - overlap), cut), end)


def _best_cut(text: str, lo: int, hi: int) -> int:
    """The end of the last boundary in text[lo + (hi-lo)//2 : hi], best kind first; else hi."""
    floor = lo + (hi - lo) // 2
    for rx in _CUTS:
        ends = [m.end() for m in rx.finditer(text, floor, hi)]
        if ends:
            return min(ends[-1], hi)
    return hi


def _overlap_start(text: str, lo: int, cut: int) -> int:
    """The first sentence start in [lo, cut), else the first word start, else lo (mid-word: fine for Chinese)."""
    for rx in _STARTS:
        m = rx.search(text, lo, cut)
        if m and m.end() < cut:
            return m.end()
    return lo


def _skip_space(text: str, pos: int, end: int) -> int:
    while pos < end and text[pos].isspace():
        pos += 1
    return pos
