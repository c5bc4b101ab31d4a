"""Contradiction verification (spec L3): can memory ``a`` and memory ``b`` both be true?

A verifier is any callable ``(a, b) -> Verdict``; ``a`` and ``b`` only need ``.content``, ``.key`` and
``.type``. ``heuristic_verifier`` is deterministic and explains itself; ``llm_verifier(complete)`` asks any
``complete(prompt) -> str`` callable and falls back to the heuristic when the answer is unusable.

The heuristic (EN and ZH; word lists in verify_lexicon.py) reads each statement as subject + predicate
+ value and calls two statements contradictory only when they say different things about the SAME
subject at the SAME time. Precision first: a false alarm can retire a true memory (a confident verdict
resolves by provenance, then recency), a miss only leaves two memories side by side.
1. Tokens: NFKC, lower case; ASCII words keep inner ``. - _ / :`` ("3.11", "6:30", "pnpm-lock.yaml");
   Chinese through jieba's tagger (verbs and proper nouns known). Negations are counted and removed
   ("n't", "no longer", 不/没/别 + word); antonyms that negate fold into their positive word (never =
   not always, 讨厌 = 不喜欢); copulas become "="; stop words and "user"/用户 go.
2. The subject is what comes before the first predicate (a verb, a copula, a colon). A difference there
   means different subjects ("the search service … 9200" vs "the ingest service … 9300"; "fact 0" vs
   "fact 1", which has no predicate at all): both can hold.
3. Quantities with units are compared by value: "5 minutes" = "300 seconds" holds, "5 minutes" vs
   "30 seconds" does not. Time: a claim bounded to the past ("used to", "in 2019", 以前) and one about
   now both hold; "moved from Tuesday to Thursday" conflicts with "is on Tuesday", not with "is on
   Thursday"; a cessation ("quit smoking") is a present negation.
4. Same polarity: exactly one differing value after the predicate, of like kind on both sides (numbers,
   members of one closed class such as package managers or languages, antonyms, names), is a
   contradiction. More than one difference (a qualifier: "tea in the morning" vs "coffee after lunch"),
   an added detail, a much longer side (elaboration), verbs only (paraphrase), or a non-exclusive
   predicate ("likes tea" vs "likes coffee") are not. Opposite polarity over the same content is. A value in
   each language ('berlin' vs '柏林') may be the same fact restated as well as a change: under one key it is no
   contradiction, without one a dispute left for review (0.6); a closed class's members that translate each
   other ('chinese' = '中文') are one value, those that do not ('english' vs '中文') two.
Confidence: 0.85 antonyms, closed classes and negations; 0.8 numbers and quantities; 0.75 proper names;
0.7 other values (below the 0.75 at which a contradiction resolves itself: such a conflict waits for
review); the same key lifts a value change to >= 0.8, different keys or types lower it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from typing import Protocol

from . import verify_lexicon as lex
from . import verify_rules as rules

__all__ = ["Verdict", "MemoryLike", "heuristic_verifier", "llm_verifier"]


@dataclass(frozen=True)
class Verdict:
    contradicts: bool
    confidence: float  # 0..1: how sure the verifier is of this verdict (either way)
    description: str  # what differs, e.g. "package manager 'npm' vs 'pnpm' under the same subject ('use')"


class MemoryLike(Protocol):
    content: str
    key: str | None
    type: str


from .verify_parse import (  # noqa: F401  (analyse and _neutral are used by compress.py and tools)
    _KEEP, _NUMBER, Statement, _compare_quantities, _han, _is_verb, _neutral, _quantity_token,
    _show, analyse)


def _harmonise(ta: list[str], tb: list[str]) -> tuple[list[str], list[str]]:
    """Chinese words cut differently on the two sides ("吃辣" vs "吃 辣"): split a word into the other
    side's words when it is exactly their concatenation."""
    def split(tokens, vocabulary):
        out = []
        for t in tokens:
            parts, rest = [], t
            while rest and _han(t[0]) and len(t) > 1:
                head = next((w for w in sorted(vocabulary, key=len, reverse=True) if w != t and rest.startswith(w)), None)
                if head is None:
                    break
                parts.append(head)
                rest = rest[len(head):]
            out.extend(parts if parts and not rest else [t])
        return out
    return split(ta, set(tb)), split(tb, set(ta))


def _content(tokens: list[str]) -> set[str]:
    """Content words: neutral words (predicates, qualifiers, time words) and markers left out."""
    return {t for t in tokens if not _neutral(t) and t not in _KEEP}


def _regions(a: Statement, b: Statement, ta: list[str], tb: list[str]):
    """Differing stretches of the two token lists, neutral words left out: (a's, b's, in a's subject, in b's)."""
    out = []
    pa, pb = a.predicate, b.predicate
    for op, i1, i2, j1, j2 in SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        after_a = i1 > 0 and ta[i1 - 1] == "@"  # the object of a preposition is a qualifier, even "for builds"
        after_b = j1 > 0 and tb[j1 - 1] == "@"
        ra = [t for t in ta[i1:i2] if not (_neutral(t) and not (after_a and t not in ("=", "@")))]
        rb = [t for t in tb[j1:j2] if not (_neutral(t) and not (after_b and t not in ("=", "@")))]
        if ra or rb:
            out.append((ra, rb, i1 < pa and bool(ra), j1 < pb and bool(rb)))
    return out


def _after(tokens: list[str], number: str) -> str | None:
    """The word a number counts or measures: the next token, unless that is another difference."""
    i = tokens.index(number) if number in tokens else -1
    nxt = tokens[i + 1] if 0 <= i < len(tokens) - 1 else None
    return None if nxt in (None, "@", "=") else nxt


def _scope(s: Statement, tokens: list[str]) -> set[str]:
    """The situations a claim is limited to: words naming one (verify_lexicon.SITUATIONS: "in the morning",
    "with clients", 周末) and whatever follows "when"/"while"/"if"."""
    out = {t for t in tokens if t in lex.SITUATIONS}
    if s.scoped:
        out.add(s.scoped)
    return out


def _tail(tokens: list[str], region: list[str]) -> bool:
    """Is ``region`` (non-neutral tokens of one difference) what ``tokens`` end with, neutral words aside?"""
    rest = [t for t in tokens if not _neutral(t)]
    return rest[-len(region):] == region and len(rest) > len(region)


def _script(token: str) -> str | None:
    """'han' or 'latin' for a word, None for a number or a sign."""
    return "han" if any(_han(ch) for ch in token) else "latin" if re.search(r"[a-z]", token) else None


def _two_languages(x: str, y: str) -> bool:
    """A Chinese word against an English one: a translation as often as another value ('berlin' vs '柏林')."""
    return None not in (_script(x), _script(y)) and _script(x) != _script(y)


def _kind(x: str, y: str, a: Statement, b: Statement) -> tuple[float, str] | None:
    """How surely two single values exclude each other, or None if they are not values of one kind. Values in
    two languages are of one kind only as two members of a closed class that do not translate each other."""
    if _two_languages(x, y) and not (x in lex.SLOT and lex.SLOT[x] == lex.SLOT.get(y)
                                     and lex.SAME.get(x, x) != lex.SAME.get(y, y)):
        return None
    if lex.SAME.get(x, x) == lex.SAME.get(y, y):
        return None  # one value named in two languages
    ax, ay = lex.ANTONYM.get(x, ()), lex.ANTONYM.get(y, ())
    if any(i == j and side != other for i, side in ax for j, other in ay) or rules.compound_opposites(x, y):
        return 0.85, f"opposites '{x}' vs '{y}'"
    if x in lex.SLOT and lex.SLOT[x] == lex.SLOT.get(y):
        return 0.85, f"{lex.SLOT[x]} '{x}' vs '{y}'"
    if _NUMBER.match(x) and _NUMBER.match(y):
        return 0.8, f"number '{x}' vs '{y}'"
    if re.sub(r"\d+", "#", x) == re.sub(r"\d+", "#", y) and re.search(r"\d", x):  # 4-space vs 2-space
        return 0.8, f"number in '{x}' vs '{y}'"
    if _is_verb(x) and _is_verb(y) or x in a.verbs and y in b.verbs:
        return None  # two verbs: a rewording (leads / is headed by)
    if x in a.proper and y in b.proper:
        return 0.75, f"name '{x}' vs '{y}'"
    return 0.7, f"value '{x}' vs '{y}'"


def _judge(a: Statement, b: Statement, same_key: bool) -> tuple[bool, float, str]:
    ta, tb = _harmonise(a.tokens, b.tokens)
    if not ta or not tb:
        return False, 0.5, "nothing to compare" if not (ta or tb) else "one side has no content words"
    quantity = _compare_quantities(a, b) if a.negated == b.negated else None
    if quantity is not None and quantity[0]:
        return False, 0.8, f"the same quantity in other units ({quantity[1]})"
    if quantity is not None and not _regions(a, b, [t for t in ta if not _quantity_token(t)],
                                             [t for t in tb if not _quantity_token(t)]):
        return True, 0.8, f"quantity {quantity[1]}"  # everything else is the same: the amount differs
    for x, y in ((a, b), (b, a)):
        if x.change is not None and y.change is None:
            old, new = x.change
            told = set(y.tokens)
            if new & told:
                return False, 0.75, f"both give the value after the change ('{_show(sorted(new))}')"
            if old & told and not y.past:
                return True, 0.8, f"one says it changed from '{_show(sorted(old))}', the other still says so"
            return False, 0.6, "one describes a change; the other does not name either value"
    content_a = set(ta) - {"=", "@"} - _KEEP
    content_b = set(tb) - {"=", "@"} - _KEEP
    if content_a and content_b and not content_a & content_b and not same_key \
            and not any((k := _kind(x, y, a, b)) and k[0] >= 0.85 for x in content_a for y in content_b):
        return False, 0.9, "no words in common: unrelated"
    if _KEEP & set(ta) & set(tb) and ta != tb and sorted(ta) == sorted(tb) and a.negated == b.negated:
        return True, 0.8, f"order reversed: '{_show(ta)}' vs '{_show(tb)}'"
    if any(rules.stopped_but_still_done(x, y, _content, _quantity_token) for x, y in ((a, b), (b, a))):
        return True, 0.8, "one says it stopped, the other that it is done now"
    if a.past != b.past and not (a.ceased or b.ceased):
        return False, 0.75, "held at different times: one claim is about the past"
    if (a.past and b.ceased and not a.ceased) or (b.past and a.ceased and not b.ceased):
        return False, 0.75, "one stopped what the other says was done in the past: both hold"
    if rules.opposite_polarity_same_content(a, b, _content):
        return True, 0.85, f"negation: one says '{_show(tb if a.negated else ta)}', the other the opposite (reworded)"
    regions = _regions(a, b, ta, tb)
    if len(regions) == 1 and regions[0][0] and regions[0][1] and ta[-1] != tb[-1] \
            and (a.predicate < len(ta) or b.predicate < len(tb)) \
            and _tail(ta, regions[0][0]) and _tail(tb, regions[0][1]) \
            and any((k := _kind(x, y, a, b)) and k[0] >= 0.8 for x in regions[0][0] for y in regions[0][1]):
        # one difference ends both, and it is a pair of values (opposites, one closed class, numbers):
        # the predicate was not recognised ("性格比较内向" vs "性格很外向"), the difference is the value
        regions = [(regions[0][0], regions[0][1], False, False)]
    set_a, set_b = set(ta), set(tb)
    if any((in_a and any(t not in set_b for t in ra)) or (in_b and any(t not in set_a for t in rb))
           for ra, rb, in_a, in_b in regions):
        return False, 0.75, "different subjects: they differ before what is said about them"
    if quantity is not None:  # different amounts of one dimension, about the same subject
        rest = _regions(a, b, [t for t in ta if not _quantity_token(t)], [t for t in tb if not _quantity_token(t)])
        if not rest:
            return True, 0.8, f"quantity {quantity[1]}"
        if len(rest) == 1 and not rest[0][2] and not rest[0][3] and max(len(rest[0][0]), len(rest[0][1])) <= 1:
            return True, 0.75, f"quantity {quantity[1]} (worded differently: '{_show(rest[0][0])}' vs '{_show(rest[0][1])}')"
    scope_a, scope_b = _scope(a, ta), _scope(b, tb)
    if scope_a != scope_b and not scope_a & scope_b:  # no situation in common: both can hold
        return False, 0.7, (f"they apply in different situations ('{_show(sorted(scope_a))}' vs "
                            f"'{_show(sorted(scope_b))}')")
    if a.negated != b.negated:
        removed = [t for ra, _, _, _ in regions for t in ra]
        added = [t for _, rb, _, _ in regions for t in rb]
        shared = len(ta) - len([t for t in ta if t in removed])
        overlap = shared / min(len(ta), len(tb))
        if overlap >= 0.5 and not (removed and added):
            positive = _show(tb if a.negated else ta)
            return True, 0.85 if not (removed or added) else 0.7, f"negation: one says '{positive}', the other the opposite"
        return False, 0.7, "opposite polarity about different things: both can hold"
    if not regions:
        return False, 0.9, "same content words" if ta == tb else "only wording differs"
    if len(regions) > 1:  # reordered wording leaves several stretches: compare as sets
        qualifiers = {t for tokens in (ta, tb) for i, t in enumerate(tokens) if i and tokens[i - 1] == "@"}
        da = [t for t in dict.fromkeys(ta) if t not in tb and (not _neutral(t) or t in qualifiers)]
        db = [t for t in dict.fromkeys(tb) if t not in ta and (not _neutral(t) or t in qualifiers)]
        if len(da) == 1 and len(db) == 1:
            regions = [(da, db, False, False)]
        elif not da or not db:
            return False, 0.7, f"{'b' if db else 'a'} adds detail ('{_show(db or da)}'): a refinement"
        else:
            return False, 0.7, f"they differ in more than one place ('{_show(da)}' vs '{_show(db)}'): other scope"
    ra, rb, _, _ = regions[0]
    if not ra or not rb:
        return False, 0.7, f"{'b' if rb else 'a'} adds detail ('{_show(rb or ra)}'): a refinement, not a contradiction"
    joined = ("".join(ra), "".join(rb))
    if len(ra) + len(rb) > 2 and len(ra) <= 4 and len(rb) <= 4 and _kind(*joined, a, b) is not None \
            and _kind(*joined, a, b)[0] >= 0.85:  # a phrase pair: 早睡早起 vs 熬夜晚起 (cut as 熬 夜晚 起)
        confidence, what = _kind(*joined, a, b)
        return True, max(confidence, 0.8) if same_key else confidence, what
    short, long_ = (ra, rb) if len(ra) <= len(rb) else (rb, ra)
    lead = _kind(ra[0], rb[0], a, b) if len(short) == 1 else None
    if lead and lead[0] >= 0.85 and (len(long_) > 3 or len(long_) - 1 > 1):  # npm vs "pnpm 9 with workspaces"
        return True, lead[0], f"{lead[1]}, with detail added"
    if len(ra) > 3 or len(rb) > 3 or abs(len(ra) - len(rb)) > 1:
        return False, 0.65, f"one side elaborates ('{_show(ra)}' vs '{_show(rb)}')"
    if len(ra) == len(rb):
        pairs = [(x, y) for x, y in zip(ra, rb) if x != y]
    else:
        pairs = [(x, y) for x in ra for y in rb]
    if any(x.startswith(y + "-") or y.startswith(x + "-") or (_NUMBER.match(x) and _NUMBER.match(y) and
           (x.startswith(y + ".") or y.startswith(x + "."))) for x, y in pairs):  # 3.11 -> 3.11.4: finer
        return False, 0.7, f"one word refines the other ('{_show(ra)}' vs '{_show(rb)}')"
    kinds = [k for x, y in pairs if (k := _kind(x, y, a, b)) is not None]
    if not kinds and pairs and all(_two_languages(x, y) for x, y in pairs):
        if same_key:  # the writer put it in the same slot: a restatement as likely as a change
            return False, 0.6, f"'{_show(ra)}' vs '{_show(rb)}': the same fact in another language, perhaps"
        return True, 0.6, f"'{_show(ra)}' vs '{_show(rb)}': a value in each language, the same or another (review)"
    if not kinds:
        return False, 0.7, f"only the verb differs ('{_show(ra)}' vs '{_show(rb)}'): a rewording"
    confidence, what = max(kinds)
    numbers = [(x, y) for x, y in pairs if _NUMBER.match(x) and _NUMBER.match(y)]
    names = all((x in a.proper or _NUMBER.match(x)) and (y in b.proper or _NUMBER.match(y)) for x, y in pairs)
    if not names and any(None not in (_after(ta, x), _after(tb, y)) and _after(ta, x) != _after(tb, y)
                         for x, y in numbers):  # "3 brokers" vs "7 days": other things counted
        return False, 0.7, f"numbers of different things ('{_show(ra)}' vs '{_show(rb)}')"
    names = all((x in a.proper or _NUMBER.match(x)) and (y in b.proper or _NUMBER.match(y)) for x, y in pairs)
    if numbers and len(pairs) > len(numbers) and confidence <= 0.8 and not names:  # "34 years old" vs "180 cm tall"
        return False, 0.7, f"numbers of different things ('{_show(ra)}' vs '{_show(rb)}')"
    if numbers and names and len(pairs) > len(numbers):  # "2018 Honda Civic" vs "2021 Toyota Corolla"
        confidence, what = 0.75, f"named value '{_show(ra)}' vs '{_show(rb)}'"
    verbs_a = {t if not _neutral(t) or t == "=" else "~" for t in ta if t in a.verbs or t == "="}
    verbs_b = {t if not _neutral(t) or t == "=" else "~" for t in tb if t in b.verbs or t == "="}
    if not what.startswith("opposites") and verbs_a and verbs_b and not verbs_a & verbs_b:
        return False, 0.7, f"different predicates ('{_show(sorted(verbs_a))}' vs '{_show(sorted(verbs_b))}')"
    frame = set(ta) & set(tb)
    exclusive = a.superlative or b.superlative or same_key
    antonym = confidence >= 0.85 and what.startswith("opposites")
    exclusive = exclusive or bool(lex.EXCLUSIVE & frame) or any(t[-1] in "叫住是" for t in frame if _han(t[-1]))
    if confidence <= 0.7 and not exclusive:  # "short answers" vs "examples"
        return False, 0.6, f"'{_show(ra)}' and '{_show(rb)}' may both hold (nothing says there is one value)"
    if lex.NONEXCLUSIVE & frame and not antonym and not exclusive:
        return False, 0.6, f"'{_show(ra)}' and '{_show(rb)}' can both hold ('{_show(sorted(lex.NONEXCLUSIVE & frame))}' is not exclusive)"
    if same_key:
        return True, max(confidence, 0.8), f"{what} under the same key"
    doubt = rules.weak_value_doubt(ta, tb, a.proper, b.proper, what, _neutral) if confidence <= 0.75 else None
    if doubt:
        return False, 0.6, f"'{_show(ra)}' vs '{_show(rb)}': {doubt}"
    return True, confidence, f"{what} under the same subject ('{_show([t for t in ta if t in frame and not _neutral(t) or t in lex.NEUTRAL and t in frame])}')"


def _same_slot(a: Statement, b: Statement, verdict: tuple[bool, float, str]) -> tuple[bool, float, str]:
    """Two memories under one key fill one slot: each having a value the other lacks is a conflict,
    whatever the wording around it; a side that only adds detail or rewords is not."""
    da = [t for t in dict.fromkeys(a.tokens) if t not in b.tokens and not _neutral(t) and t not in _KEEP]
    db = [t for t in dict.fromkeys(b.tokens) if t not in a.tokens and not _neutral(t) and t not in _KEEP]
    if not da or not db or a.negated != b.negated or all(_is_verb(t) for t in da + db):
        return verdict
    kinds = [k for x in da for y in db if (k := _kind(x, y, a, b)) is not None]
    if not kinds and all(_two_languages(x, y) for x in da for y in db):
        return False, 0.6, f"'{_show(da)}' vs '{_show(db)}': the same fact in another language, perhaps (not compared)"
    what = max(kinds)[1] if kinds else f"value '{_show(da)}' vs '{_show(db)}'"
    return True, 0.8, f"{what} under the same key"


def heuristic_verifier(a: MemoryLike, b: MemoryLike) -> Verdict:
    """Deterministic EN/ZH verdict on two memories; the description says what differs."""
    key_a = (getattr(a, "key", None) or "").strip().lower()
    key_b = (getattr(b, "key", None) or "").strip().lower()
    if (a.content or "").strip() == (b.content or "").strip():
        return Verdict(False, 0.95, "same statement")
    sa, sb = analyse(a.content or ""), analyse(b.content or "")
    same_key = bool(key_a) and key_a == key_b
    for long_, short in ((a.content or "", sb), (b.content or "", sa)):
        if not short.superlative and rules.restated_in_a_clause(long_, short, analyse, _content):
            return Verdict(False, 0.7, "one side says all the other says, in a clause of its own: no conflict")
    contradicts, confidence, description = _judge(sa, sb, same_key)
    if same_key and not contradicts:
        contradicts, confidence, description = _same_slot(sa, sb, (contradicts, confidence, description))
    if contradicts and key_a and key_b and key_a != key_b:
        confidence, description = confidence - 0.15, f"{description} (but keys differ: '{key_a}' vs '{key_b}')"
    type_a, type_b = getattr(a, "type", None), getattr(b, "type", None)
    if contradicts and type_a and type_b and type_a != type_b:
        confidence, description = confidence - 0.1, f"{description} (types differ: {type_a} vs {type_b})"
    return Verdict(contradicts, round(min(1.0, max(0.0, confidence)), 2), description)


_PROMPT = """Two memories of an AI assistant. Do they contradict each other, i.e. can they NOT both be true
of the same subject at the same time? A paraphrase, added detail or a different subject is NOT a contradiction.

A (type: {a_type}, key: {a_key}): {a}
B (type: {b_type}, key: {b_key}): {b}

Answer with ONLY a JSON object:
{{"contradicts": true or false, "confidence": 0..1, "description": "what differs, in a few words"}}
"""


def _parse_object(answer: str) -> dict:
    """The first JSON object in ``answer``: code fences, prose around it, trailing commas, True/False are fine."""
    text = re.sub(r",\s*([\]}])", r"\1", re.sub(r"```[a-zA-Z]*", "", answer))
    text = re.sub(r"\bTrue\b", "true", re.sub(r"\bFalse\b", "false", text))
    decoder = json.JSONDecoder()
    for m in re.finditer(r"{", text):
        try:
            value = decoder.raw_decode(text, m.start())[0]
        except ValueError:
            continue
        if isinstance(value, dict) and "contradicts" in value:
            return value
    raise ValueError("no JSON object with 'contradicts' in the answer")


def _flag(value) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "false", "no"):
        return value.strip().lower() in ("true", "yes")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ValueError(f"'contradicts' is not a boolean: {value!r}")


def llm_verifier(complete: Callable[[str], str], *,
                 fallback: Callable[[MemoryLike, MemoryLike], Verdict] = heuristic_verifier
                 ) -> Callable[[MemoryLike, MemoryLike], Verdict]:
    """A verifier that asks ``complete(prompt) -> str`` (any LLM) for a strict JSON verdict.

    If ``complete`` raises or its answer has no usable ``{"contradicts": …}`` object, ``fallback`` decides
    and its description says so, so an audit can tell the two apart.
    """
    def llm_verifier(a: MemoryLike, b: MemoryLike) -> Verdict:
        prompt = _PROMPT.format(a=json.dumps(a.content, ensure_ascii=False), b=json.dumps(b.content, ensure_ascii=False),
                                a_type=getattr(a, "type", None), a_key=getattr(a, "key", None),
                                b_type=getattr(b, "type", None), b_key=getattr(b, "key", None))
        try:
            data = _parse_object(complete(prompt))
            contradicts = _flag(data["contradicts"])
            confidence = float(data.get("confidence", 0.5))
            confidence = min(1.0, max(0.0, confidence)) if math.isfinite(confidence) else 0.5
            description = str(data.get("description") or "").strip()[:500]
        except Exception:  # whatever the LLM or its client did: the heuristic decides
            verdict = fallback(a, b)
            return replace(verdict, description=f"LLM unavailable, heuristic: {verdict.description}") \
                if isinstance(verdict, Verdict) else verdict
        return Verdict(contradicts, confidence, description or ("contradiction" if contradicts else "no contradiction"))

    return llm_verifier
