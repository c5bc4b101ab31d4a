"""The bridge as recall reads it: the question's dictionary translations (text/bridge.py) and their coverage
of the vector arm's candidates written in the other script than the question, the only memories that take
``bridge_coverage`` (recall_fused's bridge step, sql/macros/40_recall.sql)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..index.keyword_search import KeywordArm, KeywordSearcher
from ..text import bridge
from .fusion import VectorArm


def bridged_words(question: str, vector: VectorArm) -> str | None:
    """The question's words in the other language, segmented, when the vector arm found a memory written in
    the other script than the question; else None (nothing could take the credit: the search is skipped)."""
    if vector.query_script is None or not len(vector.ids):
        return None
    if not np.any(np.asarray(vector.scripts) != vector.query_script):
        return None
    return bridge.bridged_query(question) or None


def bridge_coverage(words: str, vector: VectorArm, keywords: KeywordSearcher, counted: Callable) -> KeywordArm:
    """covered_idf and query_idf_all of the bridged words (keyword_bm25 over them: ``counted``, the caller's
    rows, eligibility.counted) for the vector arm's candidates in the other script: what keyword_candidates(words)
    gives recall_fused for those."""
    others = [i for i, script in zip(vector.ids, vector.scripts) if script != vector.query_script]
    return keywords.covered(words, others, counted)
