"""Episode summaries that quote what a forgotten fact came from (SPEC T3).

Consolidation stores an extractive summary of each session (sentences copied from its messages, and the notes
handed over from working memory; its session's title, cut to 40 characters, first) as an episodic memory. Forgetting
a fact must not leave its words recallable there, and must not hide a whole episode for a fact the summary never
quoted. ``quoting_summaries`` gives the ids of the owner's live summaries, of the episodes the fact was consolidated
in or of the messages it came from, that hold the sentence of one of those messages the fact was taken from (the
sentences sharing the most words with the fact; a title cut short counts when the message starts with it); when
the fact came from a note (no message), every summary of its episode. Whitespace is compared collapsed, as the
summariser writes it.
"""

from __future__ import annotations

import re
from typing import Any

from ..storage.db import Db

_SENTENCE_RE = re.compile(r"(?<=[.!?。！？;；])\s*|\n+")
_WORD_RE = re.compile(r"[^\W\d_]+|\d+")
_HAN_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
MIN_QUOTE = 6  # characters of a piece ("Ok.", "Thanks" prove nothing) …
MIN_QUOTE_HAN = 3  # … or of Han text, where three characters are a word or two ("我叫王芳")
TITLE_SEPARATOR = " — "  # consolidate.py: "<title> — <summary>"


def quoting_summaries(db: Db, memory_id: Any) -> list[Any]:
    summaries = db.dicts("summaries_of_sources_of", id=memory_id)
    if not summaries:
        return []
    texts = [_flat(r["content"]) for r in db.dicts("source_message_texts", id=memory_id)]
    if not texts:  # from a working-memory note: its words were handed to the episode, not kept anywhere else
        return [r["id"] for r in summaries]
    fact = (db.dict("memory_by_id", id=memory_id) or {}).get("content") or ""
    pieces = _source_sentences(texts, fact)
    return [r["id"] for r in summaries if _quotes(_flat(r["content"]), pieces, texts)]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _long_enough(piece: str) -> bool:
    return len(piece) >= (MIN_QUOTE_HAN if _HAN_RE.search(piece) else MIN_QUOTE)


def _terms(text: str) -> set[str]:
    """Words, and Han text as its characters' pairs (no spaces to split on)."""
    out: set[str] = set()
    for w in _WORD_RE.findall(text.lower()):
        out |= {w[i:i + 2] for i in range(len(w) - 1)} if _HAN_RE.search(w) else {w}
    return out


def _source_sentences(texts: list[str], fact: str) -> set[str]:
    """The sentences of the messages the fact was most likely taken from: those sharing the most terms with it (all
    of them when none shares any)."""
    sentences = [p.strip() for t in texts for p in _SENTENCE_RE.split(t) if _long_enough(p.strip())]
    terms = _terms(fact)
    shared = [len(_terms(s) & terms) for s in sentences]
    best = max(shared, default=0)
    return {s for s, n in zip(sentences, shared) if n == best} if best else set(sentences)


def _quotes(summary: str, pieces: set[str], texts: list[str]) -> bool:
    if any(p in summary for p in pieces):
        return True
    title = summary.split(TITLE_SEPARATOR, 1)[0] if TITLE_SEPARATOR in summary else ""
    head = title[:-1].rstrip() if title.endswith("…") else ""  # a title cut short: the message it was made from,
    return _long_enough(head) and any(  # holding the start of one of the sentences
        t.startswith(head) and any(0 <= t.find(p) < len(head) for p in pieces) for t in texts)
