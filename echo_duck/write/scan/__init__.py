"""The write scanner: every write path calls ``scan()`` before storing anything (spec W2).

A stored memory is replayed into future prompts, so it must not carry hidden characters, instructions aimed at
the agent, commands that leak secrets, or the secrets themselves. Layers, one module each:

    normalise / skeleton  the text as the prompt will show it (lines joined, look-alikes and encodings folded)
    decode                payloads a model would decode (base64, hex, ROT13, reversed, upside-down, …)
    invisible             hidden characters, with ZWJ/ZWNJ allowed where they are spelling
    secrets (+ plugins)   detect-secrets' pattern plugins and ours; labelled random strings
    exfil, phrases        the rules: exfiltration commands, injection phrases (English and Chinese)
    asks                  hand-overs and "don't tell the user" in the languages the model barely knows
    classifier (+ train)  kNN + probe over the multilingual embedding model, any language or register
    verdict               evidence → pass (None) / Finding(outcome="quarantine") / Finding(outcome="block")
    gate                  the rendered snapshot, re-scanned as one text: the last gate before the prompt

``scan(text)`` returns None when the text may be stored, else a ``Finding`` whose ``outcome`` says whether
to block it or to quarantine it for a person to approve. May import what ``write`` may.
"""

from __future__ import annotations

from typing import Sequence

from .gate import gate_lines
from .invisible import HIDDEN as _HIDDEN
from .invisible import hidden_positions
from .secrets import spans as secret_spans
from .verdict import Finding, Scanner, default_scanner, excerpt, redact

__all__ = ["Finding", "Scanner", "default_scanner", "excerpt", "gate_lines", "hidden_positions", "redact", "scan",
           "scan_many", "secret_spans", "_HIDDEN"]

def scan(text: str, *, protected_paths: Sequence[str] = ()) -> Finding | None:
    """None when the text is safe to store; otherwise a Finding (``outcome`` "block" or "quarantine").

    ``protected_paths`` are directories (the store's own) whose mention in a read/send context is refused."""
    if not isinstance(text, str):
        raise TypeError(f"scan() needs a str, got {type(text).__name__}")
    return default_scanner().scan(text, protected_paths)


def scan_many(texts: Sequence[str], *, protected_paths: Sequence[str] = (),
              labels: Sequence[bool] | None = None) -> list[Finding | None]:
    """scan() of each text, with one pass of the model over all of them (bulk writes). ``labels`` marks the texts
    that are keys, tags or entities: there the model only confirms what a rule found."""
    return default_scanner().scan_many(list(texts), protected_paths, labels)
