"""Episode summaries and entity ids for consolidation (SPEC L4): extractive, deterministic, bilingual."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from ..errors import InvalidInput
from ..text.pos import tagged
from ..text.segment import STOP_WORDS
from .extract import _SENTENCE, _TOOLS, _han, _pairs, _words  # shared tokenising helpers

__all__ = ["summarize", "episode_summary", "entities"]


def episode_summary(messages: Sequence[tuple[str, str]]) -> str:
    """An episode's summary: the most salient third of the sentences (one to five), at most 400 characters —
    a summary of what happened, not the transcript (seed 004 layer 4)."""
    count = sum(1 for role, content in _pairs(messages) if role in ("user", "human", "assistant")
                for m in _SENTENCE.finditer(re.sub(r"```.*?(?:```|$)", " ", content, flags=re.S)) if m.group().strip())
    return summarize(messages, max_chars=400, max_sentences=max(1, min(5, math.ceil(count / 3))))


def summarize(messages: Sequence[tuple[str, str]], max_chars: int = 500, max_sentences: int | None = None) -> str:
    """An extractive summary of at most ``max_chars``: the most salient sentences, in their original order.

    Salience = how often the sentence's content words recur in the conversation (log term frequency,
    length-normalised), plus a bonus for early sentences and for the first sentence of a user message and
    a penalty for near-empty ones ("thanks!", "好的。"). Code blocks and system/tool messages are skipped.
    """
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        raise InvalidInput(f"max_chars must be a positive whole number, got {max_chars!r}")
    sentences = []  # (text, content words, salience bonus)
    for role, content in _pairs(messages):
        if role in ("user", "human", "assistant"):
            content = re.sub(r"```.*?(?:```|$)", " ", content, flags=re.S)
            for i, m in enumerate(_SENTENCE.finditer(content)):
                if text := re.sub(r"\s+", " ", m.group()).strip():
                    sentences.append((text, _words(text), 1.2 if i == 0 and role != "assistant" else 1.0))
    tf = Counter(w for _, words, _ in sentences for w in set(words))
    scores = []
    for i, (_, words, bonus) in enumerate(sentences):
        distinct = set(words)
        base = sum(math.log1p(tf[w]) for w in distinct) / math.sqrt(len(distinct)) if distinct else 0.0
        scores.append(base * bonus * (1.3 - 0.3 * i / len(sentences)) * (0.3 if len(words) < 3 else 1.0))
    ranked = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
    chosen, used = [], -1
    for i in ranked:
        if max_sentences is not None and len(chosen) >= max_sentences:
            break
        if used + 1 + len(sentences[i][0]) <= max_chars:
            chosen.append(i)
            used += 1 + len(sentences[i][0])
    if not chosen and ranked:  # even the best sentence is too long: cut it
        return sentences[ranked[0]][0][: max_chars - 1] + "…" if max_chars > 1 else sentences[ranked[0]][0][:1]
    return " ".join(sentences[i][0] for i in sorted(chosen))


_ENTITY = re.compile(
    r"(?P<url>https?://(?P<host>[\w.-]+)\S*)|(?P<domain>(?<![\w.@/-])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|io|org|net|dev|ai|"
    r"app|cn|co|cloud|internal|local)(?!\w|\.\w))(?:/[\w./-]*)?|(?<![\w.@])(?P<handle>@[A-Za-z0-9_][\w.-]*[A-Za-z0-9_])|"
    r"(?P<path>(?:~|\.{1,2})?(?:/[\w.-]+)+/?|(?<![\w/])[\w.-]+(?:/[\w.-]+)+|(?<![\w/.-])[\w-]+(?:\.[\w-]+)*\."
    r"(?:py|js|ts|tsx|json|ya?ml|toml|md|txt|sql|csv|parquet|duckdb|sh|rs|go|java|c|h|cpp|html|css|lock|cfg|ini|env)\b)|"
    r"(?P<name>(?<![A-Za-z0-9_])[A-Z][A-Za-z0-9_]*(?: [A-Z][A-Za-z0-9_]*){0,2}(?![A-Za-z0-9_]))|"
    r"(?P<word>(?<![A-Za-z0-9_])[a-z][a-z0-9+#-]*(?![A-Za-z0-9_]))")
_STARTERS = frozenset("please remember always never yes no ok okay thanks thank hi hello hey sure great user let lets "
                      "maybe actually also then today tomorrow yesterday now note i monday tuesday wednesday thursday friday "
                      "saturday sunday mondays tuesdays wednesdays thursdays fridays saturdays sundays january february "
                      "march april may june july august september october november december".split())


def entities(text: str) -> list[str]:
    """Entity ids in order of first appearance: capitalised names ("Acme Corp"), @handles, file names and
    paths, URL hosts, known tools (lower case), Chinese person/place/organisation names (jieba posseg).

    English capitalises every sentence's first word, so a lone capitalised word there counts only when it is
    capitalised elsewhere too or possessive ("Alice's").
    """
    text = text or ""
    starts = {m.end() for m in re.finditer(r"(?:^|[.!?。！？\n])\s*", text)}
    matches = list(_ENTITY.finditer(text))
    mid_caps = {m.group("name").split()[0] for m in matches if m.group("name") and m.start() not in starts}
    found: list[tuple[int, str]] = []
    for m in matches:
        kind = "url" if m.group("url") else m.lastgroup
        value = m.group(kind)
        if kind == "url":
            found.append((m.start(), m.group("host").lower()))
        elif kind in ("handle", "path", "domain") or (kind == "word" and value in _TOOLS):
            found.append((m.start(), value.lower() if kind == "handle" else value.rstrip(".")))  # "see ~/x." 
        elif kind == "name" and value.lower() in _TOOLS:
            found.append((m.start(), value.lower()))
        elif kind == "name":
            words = value.split()
            while words and (words[0].lower() in STOP_WORDS or words[0].lower() in _STARTERS):
                words.pop(0)  # "The Acme Corp" -> "Acme Corp"
            lone_start = m.start() in starts and words == [value] and value not in mid_caps
            if words and (not lone_start or text.startswith("'s", m.end())):
                found.append((m.start(), " ".join(words)))
    if re.search(r"[\u3400-\u9fff]", text):
        pos = 0  # Chinese text only; posseg loads its dictionary once (about 2 s)
        for word, flag in tagged(text):
            if flag in ("nr", "nrt", "ns", "nt") and len(word) >= 2 and _han(word[0]):
                found.append((pos, word))
            pos += len(word)
    seen: set[str] = set()
    return [e for _, e in sorted(found, key=lambda p: p[0]) if not (e.lower() in seen or seen.add(e.lower()))]
