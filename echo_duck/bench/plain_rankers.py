"""The plain baselines ``bench recall`` sets beside echo_duck's arms: BM25 over lower-cased words and CJK
unigrams and bigrams, the shared scorer's baseline in a few lines (the ``plain_bm25`` column).

May import: the standard library only.
"""

from __future__ import annotations

import collections
import math
import re


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN_RE = re.compile(f"([{_CJK}]+)|([^\\W_{_CJK}]+)")


def plain_tokens(text: str) -> list[str]:
    out: list[str] = []
    for cjk, word in _TOKEN_RE.findall(text.lower()):
        if word:
            out.append(word)
        else:
            out.extend(cjk)
            out.extend(cjk[i:i + 2] for i in range(len(cjk) - 1))
    return out


class PlainBM25:
    def __init__(self, texts: list[str], k1: float = 1.2, b: float = 0.75):
        docs = [collections.Counter(plain_tokens(t)) for t in texts]
        lengths = [sum(d.values()) for d in docs]
        avgdl = (sum(lengths) / len(lengths)) if lengths and sum(lengths) else 1.0
        self.postings: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
        for i, d in enumerate(docs):
            for term, tf in d.items():
                self.postings[term].append((i, tf))
        n = len(texts)
        self.idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self.postings.items()}
        self.norm = [k1 * (1 - b + b * dl / avgdl) for dl in lengths]
        self.k1 = k1

    def top(self, query: str, k: int) -> list[int]:
        scores: dict[int, float] = collections.defaultdict(float)
        for term, qtf in collections.Counter(plain_tokens(query)).items():
            for i, tf in self.postings.get(term, ()):
                scores[i] += qtf * self.idf[term] * tf * (self.k1 + 1) / (tf + self.norm[i])
        return sorted(scores, key=lambda i: (-scores[i], i))[:k]
