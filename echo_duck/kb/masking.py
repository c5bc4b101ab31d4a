"""Secrets out of what the knowledge base stores: masked in the whole document before it is cut into chunks,
in a chunk, and in a file's path.

A secret must be found where it is whole. The scanner reads a chunk alone, so a secret that a chunk boundary
cuts in two (a PEM private key longer than a chunk, a token in a long line without spaces) would be found in
neither half, or only in the half that holds its start. ``document_spans`` finds the secrets in the document's
full text, once, before it is cut; ``mask_piece`` masks every part of them that falls in a piece, so each half
of a cut secret is masked. A PEM block is masked whole, from its ``-----BEGIN`` line to the end of its
``-----END …-----`` line (to the end of the document when that line is missing): the scanner's own span.

Each masked part becomes ``****`` (nothing of the secret is kept, not even its length), as everywhere else.
"""

from __future__ import annotations

from typing import Sequence

from ..write.scan import hidden_positions, secret_spans  # the scanner's own definitions: no second copy

MASK = "****"


def mask_secrets(value: str) -> str:
    """Secrets the scanner recognises, each replaced by **** whole (a PEM block from its first dash)."""
    return mask_piece(value, 0, len(value), document_spans(value))[0]


def document_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each secret in a whole document, sorted; a private key from its first dash.

    Read as the chunks are stored, hidden characters removed (a zero-width space inside a token does not hide
    it), the positions mapped back into ``text``."""
    drop = set(hidden_positions(text))
    kept = [i for i in range(len(text)) if i not in drop] if drop else None
    clean = "".join(text[i] for i in kept) if kept is not None else text
    found = []
    for s in secret_spans(clean):
        start = s.start
        if s.kind == "Private Key":  # the scanner's span starts at "BEGIN": the dashes before it go too
            while start > 0 and clean[start - 1] == "-":
                start -= 1
        if kept is None:
            found.append((start, s.end, s.kind))
        elif s.end > start:
            found.append((kept[start], kept[s.end - 1] + 1, s.kind))
    return found


def mask_piece(text: str, start: int, end: int, spans: Sequence[tuple[int, int, str]]) -> tuple[str, list[str]]:
    """(text[start:end] with every part of ``spans`` inside it replaced by ****, the kinds masked)."""
    out, pos, kinds = [], start, []
    for a, b, kind in spans:
        a, b = max(a, start, pos), min(b, end)
        if a >= b:
            continue
        if a > pos or not out or out[-1] != MASK:  # two touching secrets: one mask
            out += [text[pos:a], MASK]
        pos = b
        kinds.append(kind)
    out.append(text[pos:end])
    return "".join(out), kinds


def mask_path(path: str) -> str:
    """A file's path as stored and cited: a secret in a file or folder name masked like one in the text.

    Each name is read without its file suffix as well as the whole path: the scanner takes "…/x.md" for a
    path or a file name, not a value, so "token=9f8e….md" would pass whole but not as "token=9f8e…"."""
    parts = []
    for part in path.split("/"):
        stem, dot, suffix = part.rpartition(".") if "." in part.lstrip(".") else (part, "", "")
        parts.append(mask_secrets(stem) + dot + suffix)
    return mask_secrets("/".join(parts))
