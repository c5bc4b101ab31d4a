"""Identity document numbers beyond secret_shapes.py's Chinese resident ID and US SSN.

A stored passport or national ID number is what an identity thief needs, and an agent that keeps one in plain text
puts it into every later prompt. Numbers that carry a check character are found by it (a random string passes one
time in ten or eleven): a Taiwan national ID (a letter, 1 or 2, eight digits), a Hong Kong identity card number (one
or two letters, six digits, a check digit or A in parentheses, or without them after its label) and a Japanese
My Number (twelve digits, after its label, since twelve digits alone are too common). Numbers without one count
only right after their label: passport numbers (any country: 护照号码, 旅券番号, numéro de passeport, …) and driving
licence numbers. A number shown as an example (示例, sample, test) is documentation. All are evidence for a person
to look at (quarantine). ``spans(text)`` gives (start, end, kind, sure) for each, on the half-width text secrets.py reads.
"""

from __future__ import annotations

import re

from .leading import leading

_EXAMPLE_BEFORE = 40  # characters before a number in which an example word makes it documentation
_EXAMPLE_RE = re.compile(r"(?i)\b(?:example|sample|test|dummy|fake|placeholder)s?\b|示例|样例|樣例|范例|範例|例如|测试|測試|假的")
_TW_RE = re.compile(r"(?<![A-Za-z0-9])([A-Z])([12]\d{8})(?![A-Za-z0-9])")
_TW_CODES = dict(zip("ABCDEFGHJKLMNPQRSTUVXYWZIO", range(10, 36)))
_HK_RE = re.compile(r"(?<![A-Za-z0-9])([A-Z]{1,2})(\d{6})(?:\s?\(([0-9A])\)|([0-9A]))(?![A-Za-z0-9])")
# Without its parentheses a Hong Kong number looks like any order or part number: then only after its label.
_HK_LABEL_RE = re.compile(r"(?i)身份證|身份证|\bhkid\b|identity card|id card")
_MY_NUMBER_RE = leading(re.compile(r"(?i)(?:マイナンバー|個人番号|my ?number)\D{0,20}?(\d{4})[\s-]?(\d{4})[\s-]?(\d{4})(?!\d)"))
_DOC_LABEL = (r"passport(?:\s+(?:no\.?|number|#|num))?|护照(?:号码|号|號碼)?|護照(?:號碼|号码|號)?|旅券番号|パスポート番号|여권\s?번호|"
              r"numéro de passeport|numero de passeport|passeport|reisepass(?:nummer)?|pasaporte|passaporte|"
              r"driver'?s licen[cs]e(?:\s+(?:no\.?|number|#))?|driving licen[cs]e(?:\s+(?:no\.?|number|#))?|"
              r"驾驶证号?|駕駛執照|駕照|運転免許証番号|führerschein(?:nummer)?|(?-i:DL)(?:\s+(?:no\.?|#))?")
# The label ("passport no.", 护照号码), at most a few marks (":", " ", "#"), then a number with six to nine digits.
_DOC_RE = leading(re.compile(rf"(?i)(?<![a-z])(?:{_DOC_LABEL})(?![a-z])[^\n\w]{{0,4}}"
                             r"(?<![A-Za-z0-9])([A-Z]{0,2}\d{6,9}[A-Z]?)(?![A-Za-z0-9])"))
_DOC_WORDS = ("passport", "护照", "護照", "旅券", "パスポート", "여권", "passeport", "reisepass", "pasaporte", "passaporte",
              "licen", "驾驶证", "駕駛", "駕照", "運転免許", "führerschein", "dl ")


def spans(t: str) -> list[tuple[int, int, str, bool]]:
    out = []
    for m in _TW_RE.finditer(t):
        if _tw_valid(m) and not shown_as_example(t, m.start()):
            out.append((m.start(), m.end(), "national identity number", False))
    for m in _HK_RE.finditer(t):
        labelled = m.group(3) is not None or _HK_LABEL_RE.search(t, max(0, m.start() - 30), m.start())
        if labelled and _hk_valid(m.group(1), m.group(2), m.group(3) or m.group(4)) and not shown_as_example(t, m.start()):
            out.append((m.start(), m.end(), "national identity number", False))
    for m in _MY_NUMBER_RE.finditer(t):
        if _my_number_valid("".join(m.group(1, 2, 3))) and not shown_as_example(t, m.start(1)):
            out.append((m.start(1), m.end(3), "national identity number", False))
    low = t.lower()
    for m in _DOC_RE.finditer(t) if any(w in low for w in _DOC_WORDS) else ():
        if not shown_as_example(t, m.start(1)):
            out.append((m.start(1), m.end(1), "identity document number", False))
    return out


def shown_as_example(t: str, start: int) -> bool:
    """An example word (sample, 示例, test) in the few characters before ``start``: documentation, not a secret."""
    return _EXAMPLE_RE.search(t, max(0, start - _EXAMPLE_BEFORE), start) is not None


def _tw_valid(m: re.Match[str]) -> bool:
    """The Taiwan ID's check digit: the letter's two digits and the nine that follow, weighted 1 9 8 … 1 1, sum to 0
    modulo 10."""
    code = _TW_CODES[m.group(1)]
    digits = [code // 10, code % 10, *map(int, m.group(2))]
    return sum(d * w for d, w in zip(digits, (1, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1))) % 10 == 0


def _hk_valid(letters: str, digits: str, check: str) -> bool:
    """The Hong Kong ID's check character: letters (a space before a single one, 36) and digits weighted 9 … 2 (or
    8 … 2), plus the check (A = 10), sum to 0 modulo 11."""
    values = ([36] if len(letters) == 1 else []) + [ord(c) - 55 for c in letters] + [int(d) for d in digits]
    total = sum(v * w for v, w in zip(values, range(9, 1, -1)))
    return (total + (10 if check == "A" else int(check))) % 11 == 0


def _my_number_valid(number: str) -> bool:
    """The My Number's check digit (the twelfth): from the right, digit i (1-11) weighted i + 1 up to 6, i - 5 after."""
    body, check = number[:11], int(number[11])
    total = sum(int(d) * (i + 1 if i <= 6 else i - 5) for i, d in enumerate(reversed(body), start=1))
    r = total % 11
    return check == (0 if r <= 1 else 11 - r)
