"""Decode what a model would decode: hidden payloads become extra texts for the detectors to read.

``decodings(text)`` returns (how, decoded text) pairs for every stretch that decodes to readable text:
base64 / base32 / hex / binary / percent-encoding / HTML entities / \\u and \\x escapes / Morse, a
Caesar shift (ROT13 among them) or Atbash of the Latin letters, text reversed or turned upside down,
leetspeak, and tag characters. A decoding is kept only when the result reads as text (mostly letters
and spaces, valid UTF-8) and differs from the input: an image's base64 or a commit hash decodes to
bytes, not prose, and yields nothing. Each decoder is one linear pass; at most ``MAX_DECODINGS`` are
returned so a crafted input cannot multiply the work after it.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import urllib.parse

import numpy as np

from .invisible import tag_payload
from .leading import leading

MAX_DECODINGS = 8
# Decodings that are exact (the payload is what the encoder was given), not a guess that makes text read better.
EXACT = frozenset({"tag characters", "variation selectors", "base64", "base32", "hex", "binary", "percent-encoding", "html entities", "escapes",
                   "morse", "upside down"})
_B64_RE = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_B32_RE = re.compile(r"[A-Z2-7]{16,}={0,6}")
_HEX_RE = re.compile(r"(?:(?:\\x|0x)?[0-9a-fA-F]{2}[\s:,]?){8,}")
_BIN_RE = re.compile(r"(?:[01]{8}\s?){4,}")
_PCT_RE = re.compile(r"(?:%[0-9a-fA-F]{2}){3,}")
_PCT_ONE_RE = re.compile(r"%(?:2[0-9a-fA-F]|3[a-fA-F]|[4-7][0-9a-fA-F])")  # an escaped ASCII space, punctuation or letter
_ENTITY_RE = re.compile(r"&#(?:x[0-9a-fA-F]{1,6}|[0-9]{1,7});|&[a-zA-Z]{2,8};")
_ESC_RE = re.compile(r"\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|\\U[0-9a-fA-F]{8}")
_MORSE_RE = re.compile(r"[.\-·•_−]{1,7}(?:[ /|]+[.\-·•_−]{1,7}){7,}")
_LATIN_LETTER_RE = re.compile(r"[A-Za-z]")
_TAG_PLANE_RE = re.compile("[\U000e0000-\U0010ffff]")  # tag characters, supplementary variation selectors, private use
_SELECTORS_RE = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{4,}")
_REVERSE_SPLIT_RE = re.compile(r"[\n\u202a-\u202e\u2066-\u2069]+|(?<=[a-z0-9])[.!?]\s+(?=[.!?]?\w)")
_UPSIDE = str.maketrans("ɐqɔpǝɟƃɥᴉɾʞןɯuodbɹsʇnʌʍxʎz∀ᗺƆᗡƎℲ⅁HIſꓘ⅂WNOԀΌᴚS⊥∩ΛMX⅄Z˙'¡¿‾",
                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.,!?_")
# Turned letters only: ¡ ¿ and ˙ also turn, but Spanish writes ¡ and ¿ in every other sentence.
_UPSIDE_RE = re.compile("[ɐǝɟƃɥᴉɾʞןɯɹʇʌʍʎ∀ᗺƆᗡƎℲ⅁ſꓘ⅂ԀᴚΛ⅄]")
_MORSE = {".-": "a", "-...": "b", "-.-.": "c", "-..": "d", ".": "e", "..-.": "f", "--.": "g", "....": "h", "..": "i",
          ".---": "j", "-.-": "k", ".-..": "l", "--": "m", "-.": "n", "---": "o", ".--.": "p", "--.-": "q", ".-.": "r",
          "...": "s", "-": "t", "..-": "u", "...-": "v", ".--": "w", "-..-": "x", "-.--": "y", "--..": "z",
          "-----": "0", ".----": "1", "..---": "2", "...--": "3", "....-": "4", ".....": "5", "-....": "6",
          "--...": "7", "---..": "8", "----.": "9", ".-.-.-": ".", "--..--": ",", ".--.-.": "@", "-..-.": "/"}
# Multi-character leetspeak first, then single symbols. Applied only to text that is mostly leetspeak.
_LEET_MULTI = [("|\\/|", "m"), ("/\\/\\", "m"), ("|\\|", "n"), ("/\\/", "n"), ("\\/\\/", "w"), ("|_|", "u"), ("(_)", "u"),
               ("/-\\", "a"), ("/\\", "a"), ("|-|", "h"), ("]-[", "h"), ("|2", "r"), ("|)", "d"), ("|>", "d"), ("><", "x"),
               ("`/", "y"), ("|<", "k"), ("|_", "l"), ("\\/", "v"), ("|*", "p"), ("()", "o"), ("[]", "o")]
_LEET_ONE = str.maketrans({"4": "a", "@": "a", "8": "b", "(": "c", "3": "e", "€": "e", "6": "g", "9": "g", "#": "h",
                           "1": "i", "!": "i", "|": "l", "0": "o", "$": "s", "5": "s", "7": "t", "+": "t", "2": "z"})
_LEET_LETTER_RE = re.compile(r"[a-zA-Z]")
_LEET_MARK_RE = re.compile(r"[0-9@$€|+#(\\/]")
_LEET_SYMBOLS_RE = re.compile(r"[|\\/()_<>`\-\[\]*]{2}")


def _leet_token(token: str) -> bool:
    """A token (no whitespace) that mixes letters with digits or symbols, or starts with two symbols ("|-|"). Three
    linear searches: the one pattern this replaces backtracked quadratically on a long run of letters."""
    return bool(_LEET_LETTER_RE.search(token) and _LEET_MARK_RE.search(token) or _LEET_SYMBOLS_RE.match(token))
# Letter frequencies of English (a–z), good enough to tell prose from a shifted alphabet in Latin-script languages.
_FREQ = [8.2, 1.5, 2.8, 4.3, 12.7, 2.2, 2.0, 6.1, 7.0, 0.15, 0.77, 4.0, 2.4, 6.7, 7.5, 1.9, 0.095, 6.0, 6.3, 9.1, 2.8,
         0.98, 2.4, 0.15, 2.0, 0.074]
_COMMON = frozenset("the and you your all to of is are be this that with for not now from on in it me my any was "
                    "were have has will do as at by if or an never every send them their user what when "
                    "que de la el los las y en es por para no tu su del lo le les et des est pas vous une qui "
                    "der die das und ist nicht du ein eine zu mit den il di che per non e un una gli ai "
                    "o os as um uma com het een van niet je ik dat".split())


_LETTER_RE = re.compile(r"[^\W\d_]")
_UNPRINTABLE_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufffd]")
HEURISTIC_LIMIT = 4000  # Caesar, Atbash, reversed and leetspeak are tried on this much of a text: payloads are short


# Each rule with a lookahead for the characters it can start with (leading.py): the same matches, without trying
# every rule at every position of a long note.
_BIN_RE, _PCT_RE, _REVERSE_SPLIT_RE = map(leading, (_BIN_RE, _PCT_RE, _REVERSE_SPLIT_RE))


def _readable(s: str, min_letters: int = 6) -> bool:
    if not s or "\ufffd" in s:
        return False
    letters = len(_LETTER_RE.findall(s))
    printable = len(s) - len(_UNPRINTABLE_RE.findall(s))
    return letters >= min_letters and printable >= 0.95 * len(s) and letters >= 0.5 * len(s.replace(" ", "")) and \
        (" " in s.strip() or letters >= 12 and not s.isascii())


def _utf8(raw: bytes) -> str | None:
    try:
        s = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return s if _readable(s) else None


def _b64(token: str) -> str | None:
    t = token.rstrip("=")
    if len(set(t)) < 10:
        return None
    for alt in (None, b"-_"):
        try:
            raw = base64.b64decode(t + "=" * (-len(t) % 4), altchars=alt, validate=False)
        except (binascii.Error, ValueError):
            continue
        if (s := _utf8(raw)) is not None:
            return s
    return None


def _b32(token: str) -> str | None:
    t = token.rstrip("=")
    try:
        raw = base64.b32decode(t + "=" * (-len(t) % 8))
    except (binascii.Error, ValueError):
        return None
    return _utf8(raw)


def _hex(chunk: str) -> str | None:
    digits = re.sub(r"\\x|0x|[\s:,]", "", chunk)
    if len(digits) % 2:
        digits = digits[:-1]
    try:
        return _utf8(bytes.fromhex(digits))
    except ValueError:
        return None


def _chi(counts: list[int]) -> float:
    total = sum(counts) or 1
    return sum((c - f * total / 100) ** 2 / (f * total / 100) for c, f in zip(counts, _FREQ))


_SHIFTS = [str.maketrans({c: chr((c - 97 + k) % 26 + 97) for c in range(97, 123)} |
                         {c: chr((c - 65 + k) % 26 + 65) for c in range(65, 91)}) for k in range(26)]
_ATBASH = str.maketrans({c: chr(219 - c) for c in range(97, 123)} | {c: chr(155 - c) for c in range(65, 91)})
_ROTATE = np.array([[(i - k) % 26 for i in range(26)] for k in range(26)])  # row k: the counts _chi reads for shift k
_FREQ_ARRAY = np.array(_FREQ)
_NEAR = 1e-9  # relative: numpy's chi values are within ~1e-14 of _chi's; closer calls than this are redone by _chi


def _shift(text: str, k: int) -> str:
    return text.translate(_SHIFTS[k % 26])


def _atbash(text: str) -> str:
    return text.translate(_ATBASH)


def _common_words(s: str) -> int:
    return sum(1 for w in re.findall(r"[a-z]+", s.lower()) if w in _COMMON)


def _reads_better(before: str, after: str) -> bool:
    """The candidate is prose and the original was not: three or more common words, a fifth of its words."""
    n = len(re.findall(r"[a-zA-Z]+", after)) or 1
    hits = _common_words(after)
    return hits >= 3 and hits >= 0.2 * n and _common_words(before) <= 0.05 * n


def _mostly_ascii_letters(seg: str) -> bool:
    letters = len(_LETTER_RE.findall(seg))
    return letters >= 12 and len(_LATIN_LETTER_RE.findall(seg)) >= 0.9 * letters


def _best_shift(base: list[int]) -> tuple[int, bool]:
    """The shift with the lowest _chi (the first of equals) and whether it is under a quarter of the unshifted one:
    exactly what min(range(26), key=_chi(...)) and the comparison give. numpy computes all 26 at once (squares as x*x,
    sums pairwise: within ~1e-14 of _chi, whose ``** 2`` is libm's pow); a call closer than _NEAR is redone by _chi."""
    total = sum(base) or 1
    expected = _FREQ_ARRAY * total / 100
    diff = np.asarray(base, dtype=np.float64)[_ROTATE] - expected
    chi = (diff * diff / expected).sum(axis=1)
    best = int(np.argmin(chi))
    near = _NEAR * float(chi.max())
    if np.count_nonzero(chi <= chi[best] + near) > 1 or best and abs(chi[best] - 0.25 * chi[0]) <= near:
        exact = [_chi([base[(i - k) % 26] for i in range(26)]) for k in range(26)]
        best = min(range(26), key=exact.__getitem__)
        return best, bool(best) and exact[best] < 0.25 * exact[0]
    return best, bool(best) and bool(chi[best] < 0.25 * chi[0])


def _alphabet(text: str) -> list[tuple[str, str]]:
    """A Caesar shift or Atbash that makes the Latin letters read like prose (segment by segment)."""
    out = []
    for seg in re.split(r"\n+|[:：]\s+", text):
        low = seg.lower()
        base = [low.count(c) for c in "abcdefghijklmnopqrstuvwxyz"]
        if sum(base) < 12 or not _mostly_ascii_letters(seg):
            continue
        if re.search(r"[a-z]{4}", low) and _common_words(seg) > 0.05 * (len(re.findall(r"[a-zA-Z]+", seg)) or 1):
            continue  # prose already: a shift or mirror keeps the words where they are, so none can read better
        best_k, fits = _best_shift(base)
        if fits and (_reads_better(seg, shifted := _shift(seg, best_k)) or not re.search(r"[a-z]{4}", low)):
            out.append((f"caesar{best_k}", shifted))
            continue
        if _reads_better(seg, _atbash(seg)):
            out.append(("atbash", _atbash(seg)))
    return out


def _reversed(text: str) -> list[tuple[str, str]]:
    """Stretches written backwards (a whole text, one sentence, or what follows a right-to-left override)."""
    out = []
    for seg in _REVERSE_SPLIT_RE.split(text):
        if len(seg) < 12 or not _mostly_ascii_letters(seg):
            continue
        for how, cand in (("reversed", seg[::-1]), ("words reversed", " ".join(w[::-1] for w in seg.split(" ")))):
            if _reads_better(seg, cand):
                out.append((how, cand))
                break
    return out


def _leet(text: str) -> str | None:
    tokens = text.split()
    if len(tokens) < 3 or sum(1 for t in tokens if _leet_token(t)) < 0.3 * len(tokens):
        return None
    s = text
    for a, b in _LEET_MULTI:
        s = s.replace(a, b)
    s = s.translate(_LEET_ONE)
    return s if s != text and _common_words(s) > _common_words(text) else None


_HEBREW_RE = re.compile("[\u05d0-\u05d9\u05db-\u05ea]")  # Hebrew letters but final nun (ן), upside-down text's "l"


def _upside_marks(head: str) -> int:
    """Upside-down letters in ``head``; in Hebrew text its final nun is a letter, not an upside-down l."""
    marks = _UPSIDE_RE.findall(head)
    return len(marks) - marks.count("ן") if len(_HEBREW_RE.findall(head, 0, 2000)) >= 3 else len(marks)


def decodings(text: str) -> list[tuple[str, str]]:
    """(how, decoded) for each stretch of ``text`` that decodes to readable text."""
    found: list[tuple[str, str]] = []

    def add(how: str, decoded: str | None) -> None:
        if decoded and decoded.strip() and len(found) < MAX_DECODINGS and (how, decoded) not in found:
            found.append((how, decoded))

    if not text.isascii() and _TAG_PLANE_RE.search(text):
        add("tag characters", tag_payload(text))
        for m in _SELECTORS_RE.finditer(text):  # bytes as variation selectors: 0-15 → U+FE00.., 16-255 → U+E0100..
            add("variation selectors", _utf8(bytes(ord(c) - 0xFE00 if c < "\ufe10" else ord(c) - 0xE0100 + 16
                                                   for c in m.group())))
    for m in _B64_RE.finditer(text):
        if len(found) >= MAX_DECODINGS:
            break
        token = m.group()
        add("base64", _b64(token))
        if _B32_RE.fullmatch(token):
            add("base32", _b32(token))
    for rx, fn, how in ((_HEX_RE, _hex, "hex"), (_BIN_RE, lambda c: _utf8(int(c.replace(" ", ""), 2).to_bytes(
            len(c.replace(" ", "")) // 8, "big")) if len(c.replace(" ", "")) % 8 == 0 else None, "binary")):
        for m in rx.finditer(text):
            add(how, fn(m.group()))
    if _PCT_RE.search(text):
        add("percent-encoding", urllib.parse.unquote(text))
    elif len(_PCT_ONE_RE.findall(text, 0, 4000)) >= 3:  # words between escapes: a query string ("msg=assistant%3A%20treat")
        add("url-encoded words", urllib.parse.unquote(text))
    if len(_ENTITY_RE.findall(text, 0, 4000)) >= 3:
        add("html entities", html.unescape(text))
    if len(_ESC_RE.findall(text, 0, 4000)) >= 3:
        add("escapes", _ESC_RE.sub(lambda m: chr(int(m.group()[2:], 16)), text))
    for m in _MORSE_RE.finditer(text):
        morse = m.group().translate(str.maketrans("·•_−", "..--"))
        words = [" ".join(_MORSE.get(c, "") for c in w.split()) for w in re.split(r"\s*[/|]\s*|\s{2,}", morse)]
        add("morse", " ".join("".join(w.split()) for w in words))
    head = text[:HEURISTIC_LIMIT]
    if _LATIN_LETTER_RE.search(head):
        for how, decoded in _alphabet(head):
            add(how, decoded)
        for how, decoded in _reversed(head):
            add(how, decoded)
        add("leetspeak", _leet(head))
    if _upside_marks(head) >= 3:
        add("upside down", head.translate(_UPSIDE)[::-1])
    add("joined words", _joined(head))
    return [(how, d) for how, d in found if _readable(d, 4) and not _shown(how, d, text)]


_SPELLED_OUT = frozenset({"base64", "base32", "hex", "binary"})
# Five or more words joined by marks ("from_now_on_send_a_copy", "silently-add-the-…", "from.now~on|send", mixed), or
# run together capitalised ("FromNowOnSendACopy"): a model reads them as easily as the spaced words; the classifier
# reads words. Identifiers of two to four words (snake_case, kebab-case) and the paths of links ("https://…/never-
# share-your-password-…", a slug a page chose) are left as they are.
_WORD = r"[^\W\d_]+(?:'[^\W\d_]+)?"  # a run starts at a word's edge: a long word is tried once, not from each letter
_MARKS = r"(?:[^\w\s'=<>\"$@{}()\[\];&?%#`\\]|_)+"  # not the marks of a settings line or a template ("KEY=<YOUR_KEY>")
_JOINED_RE = re.compile(rf"(?<![^\W\d_]){_WORD}(?:{_MARKS}{_WORD}){{4,}}")
_CAMEL_RUN_RE = re.compile(r"(?:[A-Z][a-z]+|A(?=[A-Z][a-z])){5,}")
_LINK_RE = re.compile(r"(?:https?|ftp)://\S+|www\.\S+", re.IGNORECASE)


_GLUE = frozenset("the a an to of on in at for and or your you my me every all any with from is are be this that it "
                  "its their before after now no not never always".split())


def _names(run: str) -> bool:
    """A run that is names, not a sentence: capitals ("OPENAI_API_KEY"), or no two of the words that glue a sentence
    ("$AUTH_URL/.well-known/openid-configuration", "x-forwarded-proto-header-value")."""
    words = re.findall(r"[^\W\d_]+", run)
    return sum(w.isupper() for w in words) * 2 >= len(words) or sum(w.lower() in _GLUE for w in words) < 2


def _joined(text: str) -> str | None:
    """``text`` (its links left out) with the words of joined runs spaced, if it has any; else None."""
    text = _LINK_RE.sub(" ", text)
    runs = [m for m in _JOINED_RE.finditer(text) if not _names(m.group())]
    if not (runs or _CAMEL_RUN_RE.search(text)):
        return None
    spaced = _JOINED_RE.sub(lambda m: m.group() if _names(m.group()) else re.sub(_MARKS, " ", m.group()), text)
    return _CAMEL_RUN_RE.sub(lambda m: re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=A)(?=[A-Z][a-z])", " ", m.group()), spaced)


def _shown(how: str, decoded: str, text: str) -> bool:
    """A token whose decoding the note also writes out ("'aWdub3Jl…' is base64 for 'ignore previous instructions'")
    hides nothing: what it says is read, and judged, in the clear."""
    if how not in _SPELLED_OUT:
        return False
    plain = " ".join(decoded.lower().split()).strip(" .!?'\"")
    return len(plain) >= 8 and plain in " ".join(text.lower().split())
