"""The write scanner: every write path calls ``scan()`` before storing anything (spec W2).

A stored memory is replayed into future prompts, so it must not carry hidden characters, instructions aimed at
the agent, commands that leak secrets, or the secrets themselves. Layers, one module each:

    normalise / skeleton  the text as the prompt will show it (lines joined, look-alikes and encodings folded)
    decode                payloads a model would decode (base64, hex, ROT13, reversed, upside-down, …)
    invisible             hidden characters, with ZWJ/ZWNJ allowed where they are spelling
    secrets (+ plugins)   detect-secrets' pattern plugins and ours; labelled random strings
    secret_shapes         PINs and codes after a label, card and identity numbers, recovery phrases, CLI passwords
    exfil, phrases        the rules: exfiltration commands, injection phrases (English and Chinese)
    commands              orders to run a command that hands the machine over or wrecks it
    asks                  hand-overs and "don't tell the user" in the languages the model barely knows
    address               a note addressed to the agent ("Note for the AI: …"), counted when the classifier half-agrees
    classifier (+ train)  kNN + probe over the multilingual embedding model, any language or register
    calibrate             its quarantine threshold, set on a fixed reference of risky-looking benign notes
    verdict               evidence → pass (None) / Finding(outcome="quarantine") / Finding(outcome="block")
    gate                  the rendered snapshot, re-scanned as one text: the last gate before the prompt

``scan(text)`` returns None when the text may be stored, else a ``Finding`` whose ``outcome`` says whether
to block it or to quarantine it for a person to approve. The rule layers (~240 regular expressions) load on
the first scan, not when a store is opened. May import what ``write`` may.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from .invisible import HIDDEN as _HIDDEN
from .invisible import hidden_positions
from .secrets import spans as secret_spans

if TYPE_CHECKING:
    from .verdict import Finding, Scanner

__all__ = ["Finding", "Scanner", "default_scanner", "excerpt", "finds_anything", "gate_lines", "hidden_positions", "labels_pass", "redact",
           "scan", "scan_many", "secret_spans", "_HIDDEN"]


def scan(text: str, *, protected_paths: Sequence[str] = ()) -> Finding | None:
    """None when the text is safe to store; otherwise a Finding (``outcome`` "block" or "quarantine").

    ``protected_paths`` are directories (the store's own) whose mention in a read/send context is refused."""
    if not isinstance(text, str):
        raise TypeError(f"scan() needs a str, got {type(text).__name__}")
    return default_scanner().scan(text, protected_paths)


def scan_many(texts: Sequence[str], *, protected_paths: Sequence[str] = (),
              labels: Sequence[bool] | None = None, keep_for: str | None = None,
              store_embedder: object | None = None, users_own: Sequence[bool] | None = None) -> list[Finding | None]:
    """scan() of each text, with one pass of the model over all of them (bulk writes). ``labels`` marks the texts
    that are keys, tags or entities: there the model only confirms what a rule found. ``keep_for``: the texts
    are about to be stored by an index of this model_id, which may reuse the scanner's vectors; ``store_embedder``:
    that index's embedder. ``users_own`` marks the texts the user states through the host: their own say, which
    they may give away (Scanner.scan_many)."""
    return default_scanner().scan_many(list(texts), protected_paths, labels, keep_for, store_embedder, users_own)


def default_scanner() -> Scanner:
    """The process-wide scanner (verdict.default_scanner)."""
    from .verdict import default_scanner as scanner

    return scanner()


def redact(text: str, limit: int = 120) -> str:
    """One line of at most ``limit`` chars for the audit table: secrets masked, hidden characters shown (verdict.redact)."""
    from .verdict import redact as redact_text

    return redact_text(text, limit)


def excerpt(text: str, pos: int, limit: int = 120) -> str:
    """Like redact(), starting a little before ``pos`` (verdict.excerpt)."""
    from .verdict import excerpt as excerpt_of

    return excerpt_of(text, pos, limit)


def gate_lines(lines: Sequence[str], ranks: Sequence[int] | None = None, *,
               unsure_below: float | None = None, authors: Sequence[str] | None = None,
               cut: Sequence[bool] | None = None, by_author: bool | Sequence[bool] = False) -> list[bool]:
    """Keep (True) or leave out (False) each rendered snapshot line; ``ranks``: each line's trust; ``unsure_below``:
    the rank below which a line is unconfirmed; ``authors``: who wrote each line; ``cut``: which lines are shown
    cut; ``by_author``: an author's lines count at its lowest rank in a run (gate.gate_lines)."""
    from .gate import gate_lines as gate

    return gate(lines, ranks, unsure_below=unsure_below, authors=authors, cut=cut, by_author=by_author)


def finds_anything(texts: Sequence[str]) -> list[bool]:
    """Whether the scanner finds anything (a block or a quarantine) in each text (gate.finds_anything)."""
    from .gate import finds_anything as finds

    return finds(texts)


def labels_pass(labels: Sequence[str]) -> list[bool]:
    """Whether the scanner finds nothing in each label the snapshot shows (gate.labels_pass)."""
    from .gate import labels_pass as passing

    return passing(labels)


def __getattr__(name: str) -> Any:
    if name in ("Finding", "Scanner"):
        from . import verdict

        return getattr(verdict, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
