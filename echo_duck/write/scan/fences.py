"""The prompt's fence tags, found however they are spelt, so that stored text can neither open nor close one.

A prompt block is fenced by tags (``<memory-context>``, ``<shared-memory-context>``, ``<kb-context>``, …). A model
reads ``‹/memory−context>`` (a single angle quote, a minus sign), ``＜/ｍｅｍｏｒｙ-context＞`` (full width),
``</mеmоry-context>`` (Cyrillic е, о) or ``</memory_context>`` as the same tag, so ``neutralise`` looks for the tags
in a folded copy of the text (one character for one: look-alike letters and small capitals as the Latin ones,
compatibility forms, look-alike brackets, slashes and dashes, the underscore and middle dots as a dash, combining
marks and invisible format characters as a character the patterns skip; a dash in a tag's name may also be spelt as a
space, a dot, a colon or nothing) and writes ``&lt;`` over the opening bracket
of each, in the text as it was. Everything else is left as written.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Iterable

from .skeleton import latin_lookalikes

_AS = {"<": "<‹＜〈〈⟨﹤❮˂ᐸ≺⋖⧼«≪❰❬⟪⦉⦑⧀", "/": "/／⁄∕⧸", "-": "-‐‑‒–—―﹣－−⁃˗_·‧•∙⋅"}
_MARK = "\x00"  # what a combining mark folds to: the tag patterns skip it wherever it stands
# Greek and Cyrillic letters a reader takes for Latin ones in a tag that Unicode's confusables do not list
_NEAR = {"ε": "e", "κ": "k", "τ": "t", "ν": "v", "ρ": "p", "χ": "x", "υ": "u", "ι": "i", "т": "t", "к": "k", "м": "m"}


class _Fold(dict):
    """str.translate table: each character to one comparable character, worked out on first sight."""

    def __missing__(self, code: int) -> str:
        c = chr(code)
        out = next((plain for plain, alike in _AS.items() if c in alike), None)
        name = unicodedata.name(c, "")
        if out is None and unicodedata.category(c) in ("Mn", "Cf"):  # a combining mark; an invisible format character
            out = _MARK  # (a soft hyphen or zero-width space inside "memory-context" showed the tag as written)
        elif out is None and name.startswith("LATIN LETTER SMALL CAPITAL ") and len(name) == 28:
            out = name[-1].lower()  # ᴍᴇᴍᴏʀʏ
        elif out is None:
            alike = _NEAR.get(c) or latin_lookalikes().get(c, "")
            compat = unicodedata.normalize("NFKC", c)
            base = unicodedata.normalize("NFD", c)[0]  # é as e (decomposed, its mark is skipped anyway)
            out = (alike if len(alike) == 1 else compat if len(compat) == 1 and compat != c
                   else base if base.isascii() and base.isalpha() else c)
        self[code] = out
        return out


_FOLD = _Fold()


@lru_cache(maxsize=16)
def _pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    skip = re.escape(_MARK) + "*"
    # a dash in a name: any dash, a space, a dot or colon, or nothing ("</memory context>", "</memorycontext>")
    sep = rf"[-\s.:{re.escape(_MARK)}]*"
    alternatives = "|".join("".join(sep if c == "-" else re.escape(c) + skip for c in n) for n in names)
    return re.compile(rf"<[\s{_MARK}]*/?[\s{_MARK}]*(?:{alternatives})", re.IGNORECASE)


# Every fence echo_duck writes into a prompt: a text inside any of them may open or close none of them (a KB document
# printed the shared block's fence, and a line inside it then read as the host's).
PROMPT_FENCES = ("memory-context", "shared-memory-context", "kb-context", "untrusted-quoted-material")


def neutralise(text: str, names: Iterable[str] = PROMPT_FENCES) -> str:
    """``text`` with '&lt;' over the bracket of every opening or closing tag named in ``names`` (e.g.
    "memory-context"), spelt with look-alikes or not."""
    if "<" not in text and text.isascii():
        return text
    folded = text.translate(_FOLD)
    starts = [m.start() for m in _pattern(tuple(names)).finditer(folded)]
    if not starts:
        return text
    pieces, last = [], 0
    for start in starts:
        pieces += [text[last:start], "&lt;"]
        last = start + 1
    return "".join(pieces) + text[last:]
