"""Checks the contradiction heuristic (verify.py) runs before it trusts a verdict: general rules about
what makes two statements comparable, each named after the class of mistake it prevents.

- ``weak_value_doubt``: a plain value difference ("value"/"name", confidence <= 0.75, not a number, closed
  class or antonym) is only a conflict when both values fill the SAME slot: values of one kind (both
  names or neither: "Biscuit" vs "thunderstorms"), the same frame (one side naming a new attribute with
  its own copula, "最喜欢吃火锅" vs "最喜欢的歌手是周杰伦", is another slot), and not two differences at
  once (a value and its qualifier: "Vim over SSH" vs "VS Code on their laptop").
- ``restated_in_a_clause``: a statement one of whose clauses says all the other says, with the same
  polarity, entails it ("X is vegetarian" vs "X doesn't eat meat; they're vegetarian"): negation is
  scoped to its clause.
- ``opposite_polarity_same_content``: one side denies exactly what the other asserts, in another word
  order ("the cluster has autoscaling enabled" vs "autoscaling is not enabled on the cluster").
- ``stopped_but_still_done``: a cessation ("quit smoking three years ago", 戒掉了咖啡) is a present
  negation, so a present positive claim about the same activity contradicts it, however long ago it stopped.
- ``compound_opposites``: words built from opposites with a shared part (左撇子-style compounds:
  "left-handed"/"right-handed", 变快/变慢, 朝南/朝北, 浅色/深色).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from . import verify_lexicon as lex

_QUALIFIER = frozenset(("@", "over", "than"))
_CLAUSE = re.compile(r"[;；，,。]|\bbut\b|\band\b|但是?|不过|而且")


def _opposite(x: str, y: str) -> bool:
    ax, ay = lex.ANTONYM.get(x, ()), lex.ANTONYM.get(y, ())
    return any(i == j and s != t for i, s in ax for j, t in ay)


def compound_opposites(x: str, y: str) -> bool:
    """Two words that differ in one part only, that part being a pair of opposites."""
    if x == y:
        return False
    if "-" in x and "-" in y:
        px, py = x.split("-"), y.split("-")
        if len(px) == len(py):
            diff = [(p, q) for p, q in zip(px, py) if p != q]
            return len(diff) == 1 and _opposite(*diff[0])
        return False
    if len(x) == len(y) >= 2 and all("\u3400" <= c <= "\u9fff" for c in x + y):
        diff = [(p, q) for p, q in zip(x, y) if p != q]
        return len(diff) == 1 and _opposite(*diff[0])
    return False


def _raw_regions(ta: list[str], tb: list[str]) -> list[tuple[list[str], list[str]]]:
    return [(ta[i1:i2], tb[j1:j2]) for op, i1, i2, j1, j2
            in SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes() if op != "equal"]


def _name(t: str, proper: set[str]) -> bool:
    return t in proper or re.split(r"[^\w]", t)[0] in proper  # "UTC+2" is read as the name "UTC"


def weak_value_doubt(ta: list[str], tb: list[str], proper_a: set[str], proper_b: set[str], what: str,
                     neutral) -> str | None:
    """Why a plain value difference may not be one slot with two values; None when it is."""
    if ta.count("=") != tb.count("="):
        return "one side names another attribute (its own 'is'): not the same slot"
    regions = _raw_regions(ta, tb)
    for ra, rb in regions:
        qa = next((i for i, t in enumerate(ra) if t in _QUALIFIER), None)
        qb = next((i for i, t in enumerate(rb) if t in _QUALIFIER), None)
        if qa is not None and qb is not None and qa > 0 and qb > 0 \
                and [t for t in ra[qa + 1:] if not neutral(t)] != [t for t in rb[qb + 1:] if not neutral(t)]:
            return "the values differ and so do their qualifiers: two differences, other situations"
    if what.startswith("value"):
        va = [t for ra, _ in regions for t in ra if not neutral(t)]
        vb = [t for _, rb in regions for t in rb if not neutral(t)]
        if va and vb and any(_name(t, proper_a) for t in va) != any(_name(t, proper_b) for t in vb):
            return "a name on one side, a common word on the other: values of different kinds"
    return None


def clauses(text: str) -> list[str]:
    parts = [p.strip() for p in _CLAUSE.split(text or "") if p and p.strip()]
    return parts if len(parts) > 1 else []


def restated_in_a_clause(text_long: str, short, analyse, content) -> bool:
    """Does one clause of ``text_long`` say everything ``short`` says, with the same polarity?"""
    want = content(short.tokens)
    if not want:
        return False
    for clause in clauses(text_long):
        c = analyse(clause)
        if c.negated == short.negated and c.past == short.past and want <= content(c.tokens):
            return True
    return False


_ASPECT = frozenset("ago already 前 年前 掉 了 已经 就 早就".split())


def stopped_but_still_done(x, y, content, quantity_token) -> bool:
    """``x`` says something stopped ("quit smoking", 戒掉了咖啡), ``y`` says it is done now, positively."""
    if not (x.ceased and x.negated) or y.negated or y.past or y.ceased:
        return False
    what = {t for t in content(x.tokens) if not quantity_token(t) and t not in _ASPECT and t not in lex.SITUATIONS
            and t != "last" and not lex.PAST.search(t) and not lex.PRESENT.search(t)}  # when it stopped is not what
    return bool(what) and all(t in y.tokens or (not t.isascii() and any(t in u for u in y.tokens)) for t in what)


def opposite_polarity_same_content(a, b, content) -> bool:
    """Opposite polarity over the same content words, whatever their order."""
    ca, cb = content(a.tokens), content(b.tokens)
    return a.negated != b.negated and bool(ca) and ca == cb and len(ca) >= 2
