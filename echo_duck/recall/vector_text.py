"""The question as the vector arm reads it: without the words more than half of the store holds.

A word most memories contain (the user's name in a store about one user, each speaker's name in a chat log)
tells no memory from another: the keyword arm gives it no weight (its RSJ weight is ~0 at half the store). The
embedding model has no such notion: "What is the name of Andrew's childhood dog?" sits closest to whatever
Andrew said, about anything. So recall embeds the question without those words (``bm25_common_words`` in SQL,
``KeywordSearch.common_words`` in process) and the vector arm ranks by that vector.

A whitespace-separated token of the question is left out when one of its indexed words is common and each of
the others is common too or a single character ("Andrew's" is indexed as "andrew s"). Stop words are never
indexed, so never common; a Chinese question has no spaces to drop at, so it is read whole unless all of it is
common. A question made only of common words is read whole. A caller's own ``query_vector`` is used as given.
"""

from __future__ import annotations

from typing import Collection

from ..text.segment import segment_for_index


def vector_question(question: str, common: Collection[str]) -> str:
    """``question`` without its tokens made of ``common`` words (see the module docstring)."""
    if not common:
        return question
    common = set(common)
    kept = []
    for token in question.split():
        words = segment_for_index(token).lower().split()
        if words and any(w in common for w in words) and all(w in common or len(w) == 1 for w in words):
            continue
        kept.append(token)
    return " ".join(kept) if kept else question
