"""The text as the prompt will show it, in one comparable form: what every detector reads.

``view(text)``: hidden characters dropped, compatibility folding (NFKC: full-width, mathematical,
circled, parenthesised letters), enclosed and regional-indicator letters folded, look-alike letters of
other scripts folded inside Latin words (skeleton.py), letters spaced out with any separator joined
back into words ("i g n o r e", "И-г-н-о-р", "Y o u" with hair spaces, "密 码"), and every run of
whitespace (line breaks, U+2028/U+2029 included) made one space, exactly as the snapshot renderer
joins a memory into one line. ``words(view)`` is the lower-case word form the phrase rules read, and
``squashed(view)`` drops everything but letters and digits (for the Chinese rules).

Every step is a linear pass (regexes without nested quantifiers over the same characters).
"""

from __future__ import annotations

import collections
import functools
import re
import unicodedata

from .invisible import HIDDEN, PUA, VS
from .memo import per_text, remember
from .skeleton import fold_enclosed, fold_lookalikes, latin_lookalikes

_STRIP_RE = re.compile(f"[{HIDDEN}{VS}{PUA}]+")
_COMBINING_RE = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
# Single letters separated by one to three separator characters, three letters or more: "i g n o r e", "i.g.n.o.r.e",
# "И-г-н-о", "a,b,c", letters with an emoji or a braille blank between them.
_SEP = r"[\s._\-*·•|/+~,:;\u2800\U0001F300-\U0001FAFF\u2600-\u27BF]"
_LETTER_RUN_RE = re.compile(rf"(?<![^\W\d_])[^\W\d_](?:{_SEP}{{1,3}}[^\W\d_](?![^\W\d_])){{2,}}")
_SEPS_RE = re.compile(f"{_SEP}+")
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_SPACED_RE = re.compile(rf"(?<=[{_CJK}]) (?=[{_CJK}])")
_SENTENCE_RE = re.compile(r"[.!?;。！？；]+(?=\s|$)|[\r\n]+")
_NON_WORD_RE = re.compile(r"(?:[^\w|]|_)+")
_DIGIT_RE = re.compile(r"\d")
_LEET_RE = re.compile(r"\b(?=[a-z]*\d)(?=\d*[a-z])[a-z0-9]+\b")
_LEET = str.maketrans("013457", "oieast")


def _join_run(m: re.Match) -> str:
    """Inside a run of spaced-out letters the most common separator is spacing; any other separator is a word break.
    On a tie the first of them in the run (not a set's order, which changes with the process's hash seed)."""
    run = m.group()
    counts = collections.Counter(_SEPS_RE.findall(run))  # in order of first appearance: max keeps the first of a tie
    common = max(counts, key=counts.__getitem__)
    return _SEPS_RE.sub(lambda s: "" if s.group() == common else " ", run)


def strip_hidden(text: str) -> str:
    return _STRIP_RE.sub("", text)


@per_text
def view(text: str) -> str:
    """What the prompt shows, folded: the form the classifier embeds and the rules read."""
    s = _STRIP_RE.sub("", text.replace("\u2800", " "))
    s = unicodedata.normalize("NFC", fold_enclosed(s))  # i + U+0301 is one letter when runs are joined
    s = _LETTER_RUN_RE.sub(_join_run, s)  # before NFKC, which makes a hair space a space
    s = fold_lookalikes(unicodedata.normalize("NFKC", s))
    s = " ".join(s.split())
    return _CJK_SPACED_RE.sub("", s) if " " in s else s


_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")


def _punctuation_nfkc(m: re.Match) -> str:
    c = m.group()
    return unicodedata.normalize("NFKC", c) if unicodedata.category(c)[0] == "P" else c


def cosmetic(text: str) -> str:
    """``text`` with only what changes no word folded: runs of whitespace (line breaks, ideographic spaces) made one
    space and punctuation in its compatibility form (full-width commas). A text equal to its own view in this form
    holds nothing the view hides (no hidden characters, lookalikes, spaced-out, enclosed or full-width letters, no
    spaces between CJK characters), so a model reading the text itself reads what the view shows: the default model
    gives such a text and its view the same vector (cosine 1.0000 measured; spaces between Chinese words move it by up
    to 0.04, so they are not cosmetic)."""
    s = _NON_ASCII_RE.sub(_punctuation_nfkc, text) if not text.isascii() else text
    return " ".join(s.split())


@remember
@functools.lru_cache(maxsize=256)
def fold(text: str) -> str:
    """view() without accents, case-folded: the comparable form for the phrase and exfiltration rules."""
    s = unicodedata.normalize("NFD", view(text))
    return unicodedata.normalize("NFC", _COMBINING_RE.sub("", s)).casefold()


def words(folded: str) -> str:
    """Lower-case words separated by single spaces, with '|' at sentence ends; leetspeak digits as letters."""
    s = _NON_WORD_RE.sub(" ", _SENTENCE_RE.sub(" | ", folded))
    if _DIGIT_RE.search(s):  # a leetspeak word holds a digit
        s = _LEET_RE.sub(lambda m: m.group().translate(_LEET), s)
    return " ".join(s.split())


@per_text  # the phrase rules and the exfiltration rules both read it
def squashed(folded: str) -> str:
    return _SQUASH_RE.sub("", folded)


_SQUASH_RE = re.compile(r"[\W_]+")


def small_capitals(text: str) -> str:
    """ᴀ (LATIN LETTER SMALL CAPITAL A) as a; other characters as they are."""
    def one(c: str) -> str:
        name = unicodedata.name(c, "") if not c.isascii() else ""
        return name[-1].lower() if name.startswith("LATIN LETTER SMALL CAPITAL ") and len(name.split()[-1]) == 1 else c
    return "".join(one(c) for c in text)


# shapes a person reads as one: capital I, one, bar and small l; zero and capital O; Latin letters that imitate others
_SAME_SHAPE = str.maketrans({"I": "l", "1": "l", "|": "l", "\u01c0": "l", "0": "O", "\u0251": "a", "\u0269": "i",
                             "\u0261": "g", "\u0131": "i", "\u0237": "j"})


_PALOCHKA = str.maketrans({"\u04cf": "l", "\u04c0": "l"})  # reads as l (the look-alike table has it as i)


def identity(text: str) -> str:
    """How a name reads to a person, for telling whether two names would be taken for one another: the prompt's view,
    accents dropped, every letter of another script that imitates a Latin one as that letter (whole words too:
    "аӏісе"), small capitals as letters, capital I and l and 1 as one, "rn" as "m". Case stays: "Bob" and "bob",
    "nell" and "neil" read apart."""
    table = latin_lookalikes()
    bare = "".join(c for c in unicodedata.normalize("NFD", view(text)) if unicodedata.category(c) != "Mn")
    folded = "".join(table.get(c, c) for c in small_capitals(bare).translate(_PALOCHKA))
    return "".join(folded.split()).translate(_SAME_SHAPE).replace("rn", "m")
