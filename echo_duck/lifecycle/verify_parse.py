"""Reading a memory for the contradiction heuristic (verify.py): tokens with copulas, prepositions and
negations marked, the predicate, proper names, verbs, quantities in base units, time qualifiers, the
change a statement describes. Pure and deterministic (jieba's tagger for Chinese); cached per text.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field

from ..text.pos import tagged
from ..text.segment import STOP_WORDS
from . import verify_lexicon as lex

_NEGATIONS = frozenset("not no 不 没 没有 别 勿 未 无 非 甭 never".split()) - {"never"}
_NOT_NEGATION = frozenset("不过 不断 不同 不少 不仅 不久 不论 不管 不如 不错 不但 别人 别的 别处 没错 非常 无论 不错".split())
_SYNONYM = {"answer": "reply", "respond": "reply", "response": "reply", "using": "use", "used": "use",
            "preferred": "prefer", "living": "live", "called": "call", "named": "name", "回答": "回复", "答复": "回复",
            "使用": "用", "采用": "用", "住在": "住", "现居": "住", "定居": "住", "children": "child", "kids": "child",
            "kid": "child", "allergy": "allergic", "过敏": "过敏", "went": "go", "goes": "go", "ran": "run", "led": "lead",
            "headed": "lead", "head": "lead", "relocated": "move", "relocate": "move", "moved": "move",
            "搬到": "搬", "迁居": "搬", "老婆": "妻子", "太太": "妻子", "color": "color"}
_SUBJECT = frozenset("user users project repo repository codebase team app 用户 项目".split())
_KEEP = frozenset(("over", "than"))  # comparatives carry meaning: which side is preferred
_EXTRA_NEUTRAL = frozenset("insist insists 坚持 一定 必须 well really 一点 一些 有点 越 更 越好 稍微 slightly".split())
# Prepositions separate a value from its qualifier ("tea | in the morning"): kept as the marker "@", so
# that two differences either side of one are two differences, not one compound value.
_PREPOSITIONS = frozenset("in on at for with by after before during from to via per under over into of".split()) - _KEEP
_WORD = re.compile(r"[a-z0-9]+(?:[._/+#:'-][a-z0-9]+)*[+#]*|[^\x00-\x7f]+")
_MAX_CHARS, _MAX_TOKENS = 2000, 200  # a fact is short; its head decides (difflib is quadratic on repetitive text)
_NUMBER = re.compile(r"^\d+(?:[.:,]\d+)*$")
_SUPERLATIVE = re.compile(r"\b(?:favou?rite|only|main|primary|default)\b|最|唯一|主要|默认|只")
_QUANTITY = re.compile(r"(?P<num>\d+(?:\.\d+)?|[零一二两三四五六七八九十百千万]+|半|\b(?:" + "|".join(
    sorted((w for w in lex.EN_NUMBERS if " " not in w), key=len, reverse=True)) + r")\b)\s*"
                       r"(?P<unit>[a-z%/]+\b|%|个小时|小时|钟头|分钟|秒钟|毫秒|秒|公里|千米|厘米|毫米|米|公斤|千克|斤|克|毫升|"
                       r"公升|升|千卡|大卡|天|个星期|星期|周|个月|年|吨)")
_HALVES = ((re.compile(r"\bhalf an? (\w+)"), r"0.5 \1"), (re.compile(r"\ban? (\w+) and a half\b"), r"1.5 \1"),
           (re.compile(r"\b(\d+) and a half (\w+)"), r"\1.5 \2"), (re.compile(r"(\d+(?:\.\d+)?)k\b"), r"\g<1>000"),
           (re.compile(r"半(个)?小时"), "0.5 小时"), (re.compile(r"一个半小时"), "1.5 小时"))
_SCOPE = frozenset("when while if during whenever unless".split())  # a clause that limits where a claim holds


@dataclass
class Statement:
    """What the heuristic reads out of one memory."""

    tokens: list[str]  # content tokens, copulas as "="
    negated: bool
    past: bool  # bounded to the past, nothing said about now
    ceased: bool  # "quit X", "戒烟": a present negation
    proper: set[str] = field(default_factory=set)  # names: capitalised (EN), tagged nr/ns/nt/nz (ZH), ASCII in ZH
    verbs: set[str] = field(default_factory=set)
    quantities: dict[str, list[float]] = field(default_factory=dict)  # dimension -> values in the base unit
    change: tuple[set[str], set[str]] | None = None  # "changed from X to Y": (X tokens, Y tokens)

    superlative: bool = False  # "favourite", "only", 最: one value at a time
    scoped: str = ""  # the clause after "when"/"while"/"if" (时/的时候), if any
    zh_at: int | None = None  # index of the first Chinese preposition (在 …): a predicate when no verb is found

    @property
    def predicate(self) -> int:
        """Index of the first predicate token (a copula or a verb; else a preposition: "老家在湖南");
        len(tokens) when there is none: then the whole statement is a label ("fact 1")."""
        found = next((i for i, t in enumerate(self.tokens) if t == "=" or t in self.verbs), None)
        return found if found is not None else self.zh_at if self.zh_at is not None else len(self.tokens)


def _han(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff"


def _stem(w: str) -> str:
    w = lex.SPELLING.get(w, _SYNONYM.get(w, w))
    if not w.isascii() or not w.isalpha() or w in lex.SLOT or w in lex.ANTONYM or w in lex.NEUTRAL or w in lex.UNITS:
        return w
    for cut, add in (("ies", "y"), ("es", ""), ("s", ""), ("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("d", "")):
        if len(w) > len(cut) + 2 and w.endswith(cut) and not w.endswith(("ss", "us", "is")):
            base = w[: -len(cut)] + add
            if base in lex.VERBS or base in lex.NEUTRAL or base in _SYNONYM:
                return _SYNONYM.get(base, base)
    if len(w) > 5 and w.endswith(("ing", "ed")):  # committing -> commit, planned -> plan
        w = w[:-3] if w.endswith("ing") else w[:-2]
        w = w[:-1] if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "ls" else w
        return _SYNONYM.get(w, w)
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return _SYNONYM.get(w[:-1], w[:-1])
    return w


def _is_verb(w: str) -> bool:
    return w in lex.VERBS or w in lex.ZH_VERBS or w in {"lead", "move", "搬"}


def _zh_words(run: str) -> list[tuple[str, str]]:
    return tagged(run)


@functools.lru_cache(maxsize=8192)
def analyse(text: str) -> Statement:
    original = unicodedata.normalize("NFKC", (text or "")[:_MAX_CHARS])
    low = original.lower().replace("’", "'")
    low = _normalise(low)
    low = re.sub(r"(?<=\d),(?=\d{3}\b)", "", low)  # 10,240 -> 10240
    low = re.sub(r"(?<=\w)'s\b", "", low)  # the user's laptop -> the user laptop
    low = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r"\1", low)  # the 3rd floor -> the 3 floor
    low = re.sub(r"(?<![\d.])0+(?=\d)", "", low)  # 02:00 -> 2:00
    low = re.sub(r"(?<!\d)[:：]|[:：](?!\d)", " is ", low)  # "Auth service port: 8001"
    superlative = bool(_SUPERLATIVE.search(low))
    clause = re.search(r"\b(?:when|while|whenever|if|unless|during)\b\s+(.+)$|(\S+?)(?:的时候|时)", low)
    scoped = " ".join((clause.group(1) or clause.group(2) or "").split()[:3]) if clause else ""
    change = _change(low)
    past = bool(lex.PAST.search(low)) and not lex.PRESENT.search(low)
    ceased = bool(lex.CESSATION.search(low))
    quantities = _quantities(low)
    low = re.sub(r"\bcan'?t\b|\bcannot\b", "can not", low)
    low = re.sub(r"\bwon't\b", "will not", re.sub(r"\bno longer\b", " not ", low))
    low = re.sub(r"n't\b", " not", low)
    low = re.sub(r"\bwithout\b", " not ", low)
    low = re.sub(r",\s*(?:but\s+)?not\b|\brather than\b|\binstead of\b|而不是|而非", " over ", low)
    low = re.sub(r"\b(?:quit|quits|stopped|gave up)\b|戒了?", " not ", low) if ceased else low
    proper = {m.group().lower() for m in re.finditer(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w-]*", original)}
    proper |= {m.group().lower() for m in re.finditer(r"\b[a-z]+[A-Z][\w-]*", original)}  # iPhone, macOS
    raw: list[tuple[str, str]] = []  # (token, jieba flag or "")
    for m in _WORD.finditer(low):
        if m.group().isascii():
            raw.append((m.group(), "colon" if m.group() == ":" else ""))
        else:
            raw.extend(_zh_words(m.group()))
    if re.search(r"[\u3400-\u9fff]", low):  # an English word in Chinese text names something (flat white, Linear)
        proper |= {t for t, _ in raw if t.isascii() and t.isalpha() and t not in STOP_WORDS and t not in _SUBJECT
                   and t not in _PREPOSITIONS and t not in lex.COPULA and not _is_verb(_stem(t))}
    tokens, verbs, negations, zh_at = [], set(), 0, None
    for t, flag in raw:
        if not t.strip() or not re.search(r"\w", t):
            continue
        if _han(t[0]) and t[0] in "不没别" and len(t) > 1 and t not in _NOT_NEGATION and t not in lex.NEGATING \
                and t not in lex.ANTONYM:
            negations, t = negations + 1, t[1:]  # "不用" -> not + "用"
        if t in _NEGATIONS:
            negations += 1
            continue
        if t in lex.COPULA:
            tokens.append("=")
            continue
        if t in ("has", "have", "had", "having"):  # a stop word, but the predicate of "has 3 brokers"
            tokens.append("have")
            verbs.add("have")
            continue
        if (t in _PREPOSITIONS or flag == "p") and tokens:
            if flag == "p" and zh_at is None:
                zh_at = len(tokens)
            tokens.append("@")
            continue
        if t in STOP_WORDS and t not in _KEEP and t not in lex.ANTONYM and t not in proper:
            continue
        word, negated = lex.NEGATING.get(_stem(t), (_stem(t), False))
        negations += negated
        if word in _SUBJECT or (word in STOP_WORDS and word not in _KEEP and word not in lex.ANTONYM
                                and t not in proper):
            continue
        tokens.append(word)
        if t in proper or word in proper:
            pass
        elif flag.startswith("v") or flag in ("a", "ad", "d") or _is_verb(word) \
                or (word.isascii() and _stem(t) != t and _stem(t) in lex.VERBS):
            verbs.add(word)
        if flag in ("nr", "ns", "nt", "nz", "nrt", "eng"):
            proper.add(word)
    return Statement(tokens[:_MAX_TOKENS], negations % 2 == 1, past, ceased, proper, verbs, quantities, change,
                     superlative, scoped, zh_at)


_ZH_NUM = "零一二两三四五六七八九十百千万"
# Chinese numerals before a unit or classifier become digits ("三楼" -> "3楼", "一个半小时" -> "1个半小时");
# words such as 一直/一般/一起 are left alone because no unit follows them.
_ZH_COUNTED = re.compile(rf"(?<![{_ZH_NUM}])([{_ZH_NUM}]+)(?=个|米|楼|层|年级|月|号|日|点|岁|斤|公斤|千克|克|公里|千米|厘米|毫米|"
                         rf"小时|钟头|分钟|秒|天|周|星期|次|人|台|块|元|寸|英寸|摄氏度|度)")
_MONTHS = {m: i for i, m in enumerate("january february march april may june july august september october november "
                                      "december".split(), 1)}
_MONTH = "|".join(_MONTHS)


def _normalise(low: str) -> str:
    """Amounts written many ways, written one way: Chinese numerals before a unit as digits, 1个半小时 as
    1.5 小时, 1米75 as 1.75 米, dates (3月8日, 8 march, march 8) as one token, temperatures in °C, and rate
    denominators ("2 liters a day", 每天) dropped from the amounts ("a day" is not one day long).
    Leading time adverbials that start a claim now ("since 2024", "as of this month", 从今年起) are dropped:
    the claim is about the present (not the past) and the adverbial is not its subject."""
    low = _ZH_COUNTED.sub(lambda m: str(int(_number(m.group(1)) or 0)) if _number(m.group(1)) is not None
                          else m.group(1), low)
    low = re.sub(r"(\d+)\s*个半\s*(小时|钟头|月|星期)", r"\1.5 \2", low)
    low = re.sub(r"(\d+)\s*米\s*([零一二两三四五六七八九])([零一二两三四五六七八九])?(?![\d个])",
                 lambda m: f"{m.group(1)}.{''.join(str(int(_number(c))) for c in m.groups()[1:] if c)} 米", low)
    low = re.sub(r"(\d+)\s*米\s*(\d{1,2})(?![\d.个])", r"\1.\2 米", low)
    low = re.sub(r"(\d{1,2})\s*月\s*(\d{1,2})\s*(?:日|号)", r" d\1-\2 ", low)
    low = re.sub(rf"\b(\d{{1,2}})\s+({_MONTH})\b", lambda m: f"d{_MONTHS[m.group(2)]}-{m.group(1)}", low)
    low = re.sub(rf"\b({_MONTH})\s+(\d{{1,2}})\b(?!\s*(?:am|pm|:))", lambda m: f"d{_MONTHS[m.group(1)]}-{m.group(2)}", low)
    low = re.sub(r"(-?\d+(?:\.\d+)?)\s*(?:°\s*|degrees?\s+)?(?:f\b|fahrenheit\b)|华氏\s*(-?\d+(?:\.\d+)?)\s*度",
                 lambda m: f"{(float(m.group(1) or m.group(2)) - 32) * 5 / 9:.1f} degc", low)
    low = re.sub(r"(-?\d+(?:\.\d+)?)\s*(?:°\s*c\b|degrees?\s+c(?:elsius)?\b|摄氏度|℃)|摄氏\s*(-?\d+(?:\.\d+)?)\s*度",
                 lambda m: f"{float(m.group(1) or m.group(2)):.1f} degc", low)
    low = re.sub(r"(\d\s*[a-z%]+\b(?:\s+of\s+[a-z]+)?)\s+(?:an?|each)\s+(?=(?:day|week|month|year|hour|minute)s?\b)",
                 r"\1 per ", low)  # an amount per unit of time: "2 liters a day" (but "lasts an hour" is an amount)
    low = re.sub(r"^(?:since\s+(?:\d{4}|last\s+\w+|this\s+\w+|january|february|march|april|may|june|july|august|"
                 r"september|october|november|december)|as of (?:this|today|now|\d{4})\s*\w*|starting (?:this|today|"
                 r"\d{4})\s*\w*|from now on)\s*,?\s*", "", low)
    low = re.sub(r"\b(?:since|as of)\s+(?:\d{4}|last\s+\w+|this\s+\w+|january|february|march|april|may|june|july|"
                 r"august|september|october|november|december)\s*[.]?$", "", low)
    low = re.sub(r"(?:从|自)(?:今年|上个?月|上周|去年|\d{4}\s*年|今天|本月)(?:起|开始)(?:，|,)?", "", low)
    return low


def _change(low: str) -> tuple[set[str], set[str]] | None:
    m = lex.TRANSITION.search(low)
    if not m:
        return None
    x = m.group("x") or m.group("zx") or ""
    y = m.group("y") or m.group("zy") or m.group("ty") or ""
    def words(s): return {_stem(w) for w in re.findall(r"[a-z0-9:.]+|[\u3400-\u9fff]+", s)} - {"the", "a", "an"}
    return words(x), words(y)


def _number(text: str) -> float | None:
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    if text in lex.EN_NUMBERS:
        return lex.EN_NUMBERS[text]
    if text == "半":
        return 0.5
    total, current = 0, 0
    for ch in text:
        if ch in lex.ZH_DIGITS:
            current = lex.ZH_DIGITS[ch]
        elif ch in lex.ZH_MAGNITUDE:
            total += (current or 1) * lex.ZH_MAGNITUDE[ch]
            current = 0
        else:
            return None
    return float(total + current)


def _quantities(low: str) -> dict[str, list[float]]:
    """Values in base units per dimension; adjacent amounts of one dimension add up (1 小时 20 分钟)."""
    out: dict[str, list[float]] = {}
    last_dim, last_end = None, -10
    for pattern, replacement in _HALVES:
        low = pattern.sub(replacement, low)
    for m in _QUANTITY.finditer(low):
        unit = m.group("unit")
        value = _number(m.group("num"))
        if unit not in lex.UNITS or value is None or (m.group("num").isalpha() and m.group("num").isascii()
                                                      and len(unit) < 3):
            continue
        dim, factor = lex.UNITS[unit]
        amount = value * factor
        if dim == last_dim and m.start() - last_end <= 1:
            out[dim][-1] += amount
        else:
            out.setdefault(dim, []).append(amount)
        if dim == "data" and unit in lex.BINARY:
            out.setdefault("data_binary", []).append(value * lex.BINARY[unit])
        last_dim, last_end = dim, m.end()
    return out


def _quantity_token(t: str) -> bool:
    if t == "个":  # the classifier left between a numeral and its unit (1 个 小时)
        return True
    if re.fullmatch(r"[零一二两三四五六七八九十百千万半]+个?", t):
        return True
    return bool(_NUMBER.match(t)) or t in lex.UNITS or bool(re.fullmatch(r"[零一二两三四五六七八九十百千万半个]+.*", t)
                                                           and any(t.endswith(u) for u in lex.UNITS if not u.isascii()))


def _same_amount(a: float, b: float) -> bool:
    return abs(a - b) <= 0.03 * max(abs(a), abs(b))


def _compare_quantities(a: Statement, b: Statement) -> tuple[bool, str] | None:
    dims = [d for d in a.quantities if d in b.quantities and d != "data_binary"]
    if len(dims) != 1 or len(a.quantities[dims[0]]) != 1 or len(b.quantities[dims[0]]) != 1:
        return None
    x, y = a.quantities[dims[0]][0], b.quantities[dims[0]][0]
    same = _same_amount(x, y)
    if not same and dims[0] == "data":  # 1 TB = 1024 GB (binary) as well as 1000 GB (decimal)
        bx, by = a.quantities.get("data_binary", [x])[0], b.quantities.get("data_binary", [y])[0]
        same = any(_same_amount(p, q) for p in (x, bx) for q in (y, by))
    return same, f"{dims[0]} {x:g} vs {y:g} (base units)"


def _show(tokens) -> str:
    out = ""
    for t in tokens:
        out += ("" if not out or (_han(out[-1]) and _han(t[0])) else " ") + t
    return out if len(out) <= 60 else out[:59] + "…"


def _neutral(t: str) -> bool:
    return t in ("=", "@") or t in lex.NEUTRAL or t in _EXTRA_NEUTRAL
