"""Invisible characters: which ones hide text, and where a joiner or selector is ordinary spelling.

Refused: every format (Cf) character except the visible Arabic/Syriac number signs; C0/C1 controls
but TAB/LF/CR; lone surrogates; Hangul fillers; Mongolian free variation selectors outside Mongolian;
tag characters outside the England/Scotland/Wales flags; a braille blank or a private-use character
between letters; a variation selector after a letter of an alphabet (one per letter is a known way to
smuggle text), or two in a row.

Allowed where they are spelling: U+200D/U+200C between letters (or after a virama) of the scripts that
use them (Arabic, Persian, Syriac, the Indic scripts, Sinhala, Myanmar, Khmer, Mongolian, Tibetan) and
U+200D inside emoji sequences (👨‍👩‍👧, 🏳️‍🌈, 🧑🏻‍🎓); LRM/RLM/ALM and the bidi embeddings and isolates
in text that contains right-to-left letters (the overrides U+202D/U+202E never: they reverse what a
reader sees). Standard library only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

# All Cf but the visible number signs (U+0600-0605, 06DD, 070F, 0890-0891, 08E2, 110BD, 110CD); C0/C1 controls but
# TAB/LF/VT/FF/CR (white space the renderer joins like any other); lone surrogates; blank fillers; Mongolian free
# variation selectors. tests/test_scan.py checks the Cf list.
HIDDEN = ("\x00-\x08\x0e-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
          "\u202a-\u202e\u2060-\u206f\u3164\ud800-\udfff\ufeff\uffa0\ufff9-\ufffb\U00013430-\U0001343f\U0001bca0-\U0001bca3"
          "\U0001d173-\U0001d17a\U000e0000-\U000e007f")
VS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
PUA = "\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"
_CANDIDATE_RE = re.compile(f"[{HIDDEN}{VS}{PUA}\u2800]")
# England, Scotland, Wales: the only emoji spelled with tag characters.
_FLAG_RE = re.compile("\U0001f3f4\U000e0067\U000e0062(?:\U000e0065\U000e006e\U000e0067|\U000e0073\U000e0063\U000e0074|"
                      "\U000e0077\U000e006c\U000e0073)\U000e007f")
# Scripts whose spelling uses ZWJ/ZWNJ: Hebrew-Arabic-Syriac-Thaana-NKo ... Sinhala, Tibetan, Myanmar, Khmer, Mongolian,
# and the Arabic presentation forms.
_JOINING = ((0x0600, 0x08FF), (0x0900, 0x0DFF), (0x0F00, 0x109F), (0x1780, 0x18AF), (0xA8E0, 0xA8FF), (0xA9E0, 0xA9FF),
            (0xAA60, 0xAA7F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF))
_RTL_RE = re.compile("[\u05d0-\u05ea\u0620-\u064a\u066e-\u06d3\u06fa-\u06ff\u0710-\u074f\u0780-\u07a5\u07ca-\u07ea\u0800-\u0815"
                     "\u0840-\u0858\u08a0-\u08c9\ufb1d-\ufdff\ufe70-\ufefc]")  # right-to-left letters (not the marks)
_BIDI_SOFT = {0x200E, 0x200F, 0x061C, 0x202A, 0x202B, 0x202C, 0x2066, 0x2067, 0x2068, 0x2069}


def pictograph(ch: str) -> bool:
    cp = ord(ch)
    return 0x1F000 <= cp <= 0x1FAFF or 0x2300 <= cp <= 0x23FF or 0x2600 <= cp <= 0x27BF or 0x2B00 <= cp <= 0x2BFF


def _joining_script(ch: str) -> bool:
    cp = ord(ch)
    return any(a <= cp <= b for a, b in _JOINING) and unicodedata.category(ch)[0] in "LM"


def _letter(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "L"


# A function's name, after at most one letter of coefficient as copies glue them ("x=acos⁡θ", "y=bsin⁡θ").
_MATH_SIGNS = frozenset("=+×÷±∑∏∫√∞≤≥≈≠∈∉⊂⊆∪∩∂∇′″")
_FUNCTION_NAME_RE = re.compile(r"(?<![A-Za-z])[A-Za-z]?(?:(?:sin|cos|tan|cot|sec|csc)h?|arc(?:sin|cos|tan)|log|ln|lg|"
                               r"exp|lim|det|max|min|arg|sup|inf|gcd|dim|ker|deg|Pr)$")


def _cjk_or_myanmar(ch: str) -> bool:
    cp = ord(ch)
    return (0x3400 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x3FFFF or 0x1000 <= cp <= 0x109F
            or 0x1820 <= cp <= 0x18AF)


def _allowed(text: str, i: int, rtl: bool) -> bool:
    ch, cp = text[i], ord(text[i])
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if ch in "\u200c\u200d":
        # Between letters of these scripts; at a word's end, ZWNJ after any of them and ZWJ after a virama
        # (Malayalam's chillu letters in their older spelling, "അവന്\u200d").
        if before and _joining_script(before) and (not after or _joining_script(after) or not _letter(after) and (
                ch == "\u200c" or unicodedata.combining(before) == 9)):
            return True
        if ch == "\u200d" and before and after:
            emoji_before = text[i - 2] if i >= 2 and before in "\ufe0f\u20e3" else before
            return pictograph(emoji_before) and pictograph(after)
        return False
    if ch == "\u2061":  # FUNCTION APPLICATION after a function's name, as math copied from MathML writes "cos⁡θ"
        return _FUNCTION_NAME_RE.search(text[max(0, i - 8):i]) is not None
    if cp in _BIDI_SOFT:
        return rtl
    if 0x180B <= cp <= 0x180F:
        return bool(before) and 0x1800 <= ord(before) <= 0x18AF
    if 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF:
        if not before or _CANDIDATE_RE.match(before) and (0xFE00 <= ord(before) <= 0xFE0F or ord(before) >= 0xE0100):
            return False  # a run of selectors
        return not _letter(before) or _cjk_or_myanmar(before)
    if ch == "\u2800" or unicodedata.category(ch) == "Co":
        return not (before and after and (_letter(before) or _letter(after)))
    return False


def hidden_positions(text: str) -> Iterator[int]:
    """Positions of refused hidden characters, in order."""
    flags: list[tuple[int, int]] | None = None
    rtl: bool | None = None
    for m in _CANDIDATE_RE.finditer(text):
        i, ch = m.start(), m.group()
        if "\U000e0000" <= ch <= "\U000e007f":
            flags = [f.span() for f in _FLAG_RE.finditer(text)] if flags is None else flags
            if any(a <= i < b for a, b in flags):
                continue
        else:
            if rtl is None:
                rtl = _RTL_RE.search(text) is not None
            if _allowed(text, i, rtl):
                continue
        yield i


def kind(ch: str) -> str:
    cp = ord(ch)
    if 0x202A <= cp <= 0x202E or 0x2066 <= cp <= 0x2069 or cp in (0x200E, 0x200F, 0x061C):
        return "bidi control"
    if 0x200B <= cp <= 0x200D or 0x2060 <= cp <= 0x2064 or cp == 0xFEFF:
        return "zero-width"
    if 0xE0000 <= cp <= 0xE007F:
        return "tag"
    if 0xFE00 <= cp <= 0xFE0F or cp >= 0xE0100 or 0x180B <= cp <= 0x180F:
        return "variation-selector"
    if cp == 0x2800:
        return "braille blank"
    if unicodedata.category(ch) == "Co":
        return "private-use"
    return "soft hyphen" if cp == 0xAD else "control" if unicodedata.category(ch) == "Cc" else "invisible format"


def _beside_math(text: str, i: int) -> bool:
    """A Greek letter or a math operator within two characters: rendered math copied from a page puts a
    zero-width space after each subscript ("θP\u200b=αθA\u200b+…")."""
    return any("\u0370" <= c <= "\u03ff" or c in _MATH_SIGNS for c in text[max(0, i - 2):i] + text[i + 1:i + 3])


def strong(text: str, positions: list[int]) -> bool:
    """Hidden characters that can only be smuggling: a tag payload, a bidi override, selectors or joiners
    threaded through a word (three or more inside letters), a run of two or more inside a word, or eight
    or more in all."""
    # math operators; soft hyphens, and U+0002 where text copied out of a PDF had a line-end hyphen
    # ("pre\x02dicting"); what rendered math leaves beside its symbols
    positions = [i for i in positions if not ("\u2061" <= text[i] <= "\u2064" or text[i] in "\u00ad\x02"
                                              or _beside_math(text, i))]
    if not positions:
        return False
    chars = [text[i] for i in positions]
    if any("\U000e0000" <= c <= "\U000e007f" or c in "\u202d\u202e" for c in chars):
        return True
    inside = sum(1 for i in positions if 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum())
    return inside >= 3 or _run_inside_a_word(text, positions) or len(positions) >= 8


def _run_inside_a_word(text: str, positions: list[int]) -> bool:
    """Two or more hidden characters in a row with a letter or digit on both sides ("ig\u200b\u200bnore"); a pair
    at a word's edge ("* \ufeff\ufeffHighly", pasted from a document) splits nothing."""
    start = 0
    for k in range(1, len(positions) + 1):
        if k == len(positions) or positions[k] != positions[k - 1] + 1:
            a, b = positions[start], positions[k - 1]
            if b > a and a > 0 and b + 1 < len(text) and text[a - 1].isalnum() and text[b + 1].isalnum():
                return True
            start = k
    return False


def tag_payload(text: str) -> str:
    """The ASCII that tag characters (U+E0020-E007E) spell, outside flags: text hidden in plain sight."""
    spans = [f.span() for f in _FLAG_RE.finditer(text)] if "\U0001f3f4" in text else []
    out = [chr(ord(ch) - 0xE0000) for i, ch in enumerate(text)
           if "\U000e0020" <= ch <= "\U000e007e" and not any(a <= i < b for a, b in spans)]
    return "".join(out)
