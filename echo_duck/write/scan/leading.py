"""Rule patterns that say which character they can start with, so the regex engine skips every other position.

Python's engine tries a pattern at every position of the text; for an alternation of dozens of rules that is most of
the cost of a 100,000-character note. It skips ahead on its own only when every branch starts with a plain literal:
a lookbehind, a word boundary or a group in front hides that. ``leading(rx)`` works out the set of characters any
match must start with (through groups, alternations, optional parts, zero-width assertions and repeats) and puts a
lookahead for it in front: the same matches, found faster. When the set cannot be known (a class such as \\w, a
pattern that can match nothing) the pattern is returned as it is.
"""

from __future__ import annotations

import re
from re import _constants as C
from re import _parser

_ZERO_WIDTH = {C.AT, C.ASSERT, C.ASSERT_NOT}


def leading(rx: re.Pattern[str]) -> re.Pattern[str]:
    """``rx`` with a lookahead for its possible first characters in front, when they are known."""
    first, empty = _sequence(list(_parser.parse(rx.pattern, rx.flags)))
    if not first or empty:
        return rx  # unknown, or the pattern can match the empty string anywhere
    chars = "".join(re.escape(chr(c)) for c in sorted(first))
    # The lookahead is compiled with the pattern's flags: case-insensitive, its class matches every case variant the
    # pattern's own letters match (and a case-sensitive (?-i:...) part is only looked for more widely).
    body = _GLOBAL_FLAGS_RE.sub("", rx.pattern, count=1)  # carried by rx.flags: they must not follow the lookahead
    return re.compile(f"(?=[{chars}])(?:{body})", rx.flags)


_GLOBAL_FLAGS_RE = re.compile(r"^\(\?[aiLmsux]+\)")


def _sequence(items: list) -> tuple[set[int] | None, bool]:
    """(the characters a match of ``items`` in a row can start with or None when unknown, whether it can be empty)."""
    out: set[int] = set()
    for op, arg in items:
        first, empty = _item(op, arg)
        if first is None:
            return None, False
        out |= first
        if not empty:
            return out, False
    return out, True


def _item(op, arg) -> tuple[set[int] | None, bool]:
    if op in _ZERO_WIDTH:
        return set(), True  # consumes nothing (a lookahead only narrows what follows)
    if op is C.LITERAL:
        return {arg}, False
    if op is C.IN:
        return _class(arg), False
    if op is C.SUBPATTERN:
        return _sequence(list(arg[-1]))
    if op is C.BRANCH:
        out: set[int] = set()
        can_be_empty = False
        for branch in arg[1]:
            first, empty = _sequence(list(branch))
            if first is None:
                return None, False
            out |= first
            can_be_empty = can_be_empty or empty
        return out, can_be_empty
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        first, empty = _sequence(list(arg[2]))
        return first, empty or arg[0] == 0
    return None, False  # a class such as \w, a back-reference, anything else: unknown


def _class(items: list) -> set[int] | None:
    out: set[int] = set()
    for op, arg in items:
        if op is C.LITERAL:
            out.add(arg)
        elif op is C.RANGE and arg[1] - arg[0] < 512:
            out.update(range(arg[0], arg[1] + 1))
        else:
            return None  # a negated class, a category, a wide range
    return out
