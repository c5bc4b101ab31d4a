"""Contradiction verification (spec L3): can memory ``a`` and memory ``b`` both be true?

A verifier is any callable ``(a, b) -> Verdict``; ``a`` and ``b`` only need ``.content``, ``.key`` and
``.type``. ``heuristic_verifier`` is deterministic and explains itself; ``llm_verifier(complete)`` asks any
``complete(prompt) -> str`` callable and falls back to the heuristic when the answer is unusable.

The heuristic, in EN and ZH:
1. Tokens: NFKC, lower case; ASCII words keep inner ``. - _ /`` so "3.11" and "pnpm-lock.yaml" stay one
   value; everything else goes through ``text.segment``. Negations are counted and removed ("n't", "no
   longer", 不/没/别 + word); antonyms become their positive word plus a negation (never = not always,
   hates = not like, avoids = not prefer, 讨厌 = 不喜欢); light EN stemming; stop words and subject words
   ("user", "project", 用户) dropped. Comparatives stay ("pnpm over npm" is not "npm over pnpm").
2. Alignment (difflib) gives what ``a`` has that ``b`` lacks and the reverse. Predicate words (use, prefer,
   live, 用, 偏好 …) are wording, not values.
3. Verdict: polarity flip over the same words -> contradiction (0.85); each side has its own value in the
   same slot -> contradiction: a known slot ("npm" vs "pnpm", "中文" vs "英文") 0.85, a number ("8080" vs
   "9090", "3.11" vs "3.12") 0.8, any other single word ("上海" vs "北京") 0.65 (below the default 0.75 at
   which contradictions resolve themselves, so such a conflict waits for the user); the same key lifts a
   value change to >= 0.8. Not contradictions: identical or reworded text, one side only adding detail
   ("uses pnpm" vs "uses pnpm 9 with workspaces": a refinement, confidence 0.7), a version refined ("3.11"
   vs "3.11.4"), non-exclusive predicates ("likes tea" vs "likes coffee"), unrelated texts. A different type or different
   keys lower a contradiction's confidence. ``confidence`` is the certainty of the verdict either way.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from typing import Protocol

from ..text.segment import STOP_WORDS, segment

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


_NEGATIONS = frozenset("not no 不 没 没有 别 勿 未 无 非 甭".split())
_NOT_NEGATION = frozenset("不过 不断 不同 不少 不仅 不久 不论 不管 不如 不错 不但 别人 别的 别处 没错 非常 无论".split())
# word -> (positive word, is it the negation of that word?)
_ANTONYM = {w: pair for pair, words in {
    ("always", True): "never", ("prefer", True): "avoid", ("like", True): "dislike hate", ("like", False): "love enjoy",
    ("enable", True): "disable disabled", ("enable", False): "enabled", ("allow", True): "forbid forbidden disallow",
    ("allow", False): "allowed", ("true", True): "false", ("include", True): "exclude",
    ("喜欢", True): "讨厌 厌恶 反感", ("喜欢", False): "爱 热爱", ("总是", True): "从不 从来不",
    ("总是", False): "一直 始终 永远 每次", ("允许", True): "禁止 不准 不许", ("偏好", True): "避免", ("偏好", False): "偏爱",
}.items() for w in words.split()}
_SYNONYM = {"answer": "reply", "respond": "reply", "response": "reply", "using": "use", "used": "use",
            "preferred": "prefer", "living": "live", "called": "call", "named": "name", "回答": "回复", "答复": "回复",
            "使用": "用", "采用": "用", "住在": "住"}
_SUBJECT = frozenset("user project repo repository codebase team app 用户 项目 团队".split())
_KEEP = frozenset(("over", "than"))  # comparatives carry meaning: which side is preferred
# Predicate and qualifier words: a difference in these alone is wording or relation, not a value.
_NEUTRAL = frozenset("""use prefer like want need live work run reply write read call name go make build test
deploy install keep set have get take try start base located locate stay default really also best more most
usually generally mostly often sometimes always enable allow include true based speak know
用 喜欢 偏好 想 要 需要 住 工作 回复 写 读 跑 运行 部署 安装 叫 是 总是 通常 一般 比较 默认 允许 希望 名叫 名字 说 会 有""".split())
_NONEXCLUSIVE = frozenset("like know speak have 喜欢 说 会 有".split())  # "likes tea" and "likes coffee" both hold
_SLOT = {w: slot for slot, words in {
    "package manager": "npm pnpm yarn bun pip pipenv poetry uv conda",
    "language": "chinese english japanese korean french german spanish 中文 英文 汉语 英语 日语 韩语 法语 德语 中国话",
    "programming language": "python rust go golang java javascript typescript ruby php kotlin swift",
    "database": "postgres postgresql mysql sqlite duckdb mongodb redis",
    "editor": "vim neovim nvim emacs vscode sublime pycharm",
    "shell": "bash zsh fish powershell",
    "operating system": "linux macos windows ubuntu debian",
    "test framework": "pytest unittest jest vitest mocha",
    "indentation": "tab space",
    "cloud": "aws gcp azure",
    "weekday": "monday tuesday wednesday thursday friday saturday sunday 周一 周二 周三 周四 周五 周六 周日",
    "theme": "dark light",
}.items() for w in words.split()}
_NO_STEM = frozenset(_SLOT) | frozenset("always sometimes postgres redis kubernetes aws macos windows status yes".split())
_WORD = re.compile(r"[a-z0-9]+(?:[._/+#-][a-z0-9]+)*[+#]*|[^\x00-\x7f]+")
_MAX_CHARS, _MAX_TOKENS = 2000, 200  # a fact is short; its head decides (difflib is quadratic on repetitive text)
_NUMBER = re.compile(r"^\d+(?:[.:,]\d+)*$")


def _han(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff"


def _stem(w: str) -> str:
    w = _SYNONYM.get(w, w)
    if not w.isascii() or not w.isalpha() or w in _NO_STEM or w in _ANTONYM or w in _NEUTRAL:
        return w
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    elif len(w) > 5 and w.endswith("ing") or len(w) > 5 and w.endswith("ed"):
        w = w[:-3] if w.endswith("ing") else w[:-2]
        w = w[:-1] if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "ls" else w  # committing -> commit
    return _SYNONYM.get(w, w)


def _tokens(text: str) -> tuple[list[str], bool]:
    """(content tokens with antonyms folded, is the statement negated overall)."""
    text = unicodedata.normalize("NFKC", (text or "")[:_MAX_CHARS]).lower().replace("’", "'")
    text = re.sub(r"\bcan'?t\b|\bcannot\b", "can not", text)
    text = re.sub(r"\bwon't\b", "will not", re.sub(r"\bno longer\b", " not ", text))
    text = re.sub(r"n't\b", " not", text)
    text = re.sub(r",\s*(?:but\s+)?not\b|\brather than\b|\binstead of\b|而不是|而非", " over ", text)
    raw: list[str] = []
    for m in _WORD.finditer(text):
        if m.group().isascii():
            raw.append(m.group())
            continue
        for t in segment(m.group()):  # drop the sub-words jieba's search mode adds ("阿里", "阿里巴巴")
            while raw and _han(t[0]) and len(raw[-1]) < len(t) and raw[-1] in t:
                raw.pop()
            raw.append(t)
    out, negations = [], 0
    for t in raw:
        if _han(t[0]) and t[0] in "不没别" and len(t) > 1 and t not in _NOT_NEGATION and t not in _ANTONYM:
            negations, t = negations + 1, t[1:]  # "不用" -> not + "用"
        if t in _NEGATIONS:
            negations += 1
            continue
        if t in STOP_WORDS and t not in _KEEP:
            continue
        word, negated = _ANTONYM.get(_stem(t), (_stem(t), False))
        negations += negated
        if word not in _SUBJECT and (word not in STOP_WORDS or word in _KEEP):  # "owns" -> "own", a stop word
            out.append(word)
    return out, negations % 2 == 1


def _show(tokens) -> str:
    out = ""
    for t in tokens:
        out += ("" if not out or (_han(out[-1]) and _han(t[0])) else " ") + t
    return out if len(out) <= 60 else out[:59] + "…"


def _judge(ta: list[str], na: bool, tb: list[str], nb: bool, same_key: bool) -> tuple[bool, float, str]:
    if not ta or not tb:
        return False, 0.5, "nothing to compare" if not (ta or tb) else "one side has no content words"
    ops = SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes()
    shared = [t for op, i1, i2, _, _ in ops if op == "equal" for t in ta[i1:i2]]
    removed = [t for op, i1, i2, _, _ in ops if op in ("replace", "delete") for t in ta[i1:i2]]
    added = [t for op, _, _, j1, j2 in ops if op in ("replace", "insert") for t in tb[j1:j2]]
    for x in [t for t in removed if _NUMBER.match(t)]:  # "3.11" -> "3.11.4" refines, it does not contradict
        finer = next((y for y in added if _NUMBER.match(y) and (y.startswith(x + ".") or x.startswith(y + "."))), None)
        if finer:
            removed.remove(x)
            added.remove(finer)
            (added if len(finer) > len(x) else removed).append(f"{x}->{finer}")
    overlap = len(shared) / min(len(ta), len(tb))
    related = bool(set(shared) - _NEUTRAL)  # share a word that is not just a predicate
    vr = [t for t in removed if t not in _NEUTRAL]
    va = [t for t in added if t not in _NEUTRAL]
    subject = f"('{_show(shared)}')" if shared else ""
    if na != nb:
        if overlap >= 0.5 and not (vr and va):
            positive = _show(tb if na else ta)
            return True, 0.85 if not (vr or va) else 0.7, f"negation: one says '{positive}', the other says the opposite"
        return False, 0.6 if related else 0.8, "opposite polarity about different things: both can hold"
    if not vr and not va:
        if not removed and not added:
            return False, 0.9, "same content words"
        return False, 0.7, f"only wording differs ('{_show(removed)}' vs '{_show(added)}')"
    if not vr or not va:
        return False, 0.7, f"{'b' if va else 'a'} adds detail ('{_show(va or vr)}'): a refinement, not a contradiction"
    if sorted(vr) == sorted(va):
        if _KEEP & set(ta) & set(tb):
            return True, 0.8, f"order reversed: '{_show(ta)}' vs '{_show(tb)}'"
        return False, 0.8, "same words in another order"
    if not shared and not same_key:
        return False, 0.9, "no words in common: unrelated"
    pred = _NONEXCLUSIVE & set(shared)
    slot = next(((x, y, _SLOT[x]) for x in vr for y in va if x in _SLOT and _SLOT[x] == _SLOT.get(y)), None)
    number = next(((x, y) for x in vr for y in va if _NUMBER.match(x) and _NUMBER.match(y)), None)
    if pred and not same_key:
        return False, 0.6, f"'{_show(vr)}' and '{_show(va)}' can both hold ('{_show(sorted(pred))}' is not exclusive)"
    if slot:
        confidence, what = 0.85, f"{slot[2]} '{slot[0]}' vs '{slot[1]}'"
    elif number:
        confidence, what = 0.8, f"number '{number[0]}' vs '{number[1]}'"
    elif (len(removed) == len(added) == 1 and overlap >= 0.3) or (overlap >= 0.5 and set(shared) - _NEUTRAL):
        confidence, what = 0.65, f"value '{_show(vr)}' vs '{_show(va)}'"
    elif same_key:
        confidence, what = 0.75, f"value '{_show(vr)}' vs '{_show(va)}'"
    else:
        return False, 0.6 if related else 0.8, "different subjects: little in common besides the predicate"
    if same_key:
        return True, max(confidence, 0.8), f"{what} under the same key"
    return True, confidence, f"{what} under the same subject {subject}".rstrip()


def heuristic_verifier(a: MemoryLike, b: MemoryLike) -> Verdict:
    """Deterministic EN/ZH verdict on two memories; the description says what differs."""
    key_a = (getattr(a, "key", None) or "").strip().lower()
    key_b = (getattr(b, "key", None) or "").strip().lower()
    if (a.content or "").strip() == (b.content or "").strip():
        return Verdict(False, 0.95, "same statement")
    ta, na = _tokens(a.content)
    tb, nb = _tokens(b.content)
    contradicts, confidence, description = _judge(ta[:_MAX_TOKENS], na, tb[:_MAX_TOKENS], nb, bool(key_a) and key_a == key_b)
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
