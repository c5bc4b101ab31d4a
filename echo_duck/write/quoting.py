"""Episode summaries that quote what a forgotten fact came from (SPEC T3).

Consolidation stores an extractive summary of each session (sentences copied from its messages, and the notes
handed over from working memory) as an episodic memory. Forgetting a fact must not leave its words recallable
there, and must not hide a whole episode for a fact the summary never quoted. ``quoting_summaries`` gives the ids of
the owner's live summaries, of the episodes the fact was consolidated in or of the messages it came from, that hold
one of those messages' sentences; when the fact came from a note (no message), every summary of its episode.
"""

from __future__ import annotations

import re
from typing import Any

from ..storage.db import Db

_SENTENCE_RE = re.compile(r"(?<=[.!?。！？;；])\s*|\n+")
MIN_QUOTE = 6  # characters: a shorter piece ("Ok.", "好的。") proves nothing


def quoting_summaries(db: Db, memory_id: Any) -> list[Any]:
    summaries = db.dicts("summaries_of_sources_of", id=memory_id)
    if not summaries:
        return []
    texts = [r["content"] for r in db.dicts("source_message_texts", id=memory_id)]
    if not texts:  # from a working-memory note: its words were handed to the episode, not kept anywhere else
        return [r["id"] for r in summaries]
    pieces = {p.strip() for t in texts for p in _SENTENCE_RE.split(t) if len(p.strip()) >= MIN_QUOTE}
    return [r["id"] for r in summaries if any(p in r["content"] for p in pieces)]
