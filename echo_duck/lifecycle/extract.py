"""Consolidation's text side (spec L4): explicit facts from a session, extractive summaries, entity ids
(an LLM may do the extraction instead: ``extract_llm.llm_extractor``).

Precision over recall: a fact comes only from a user message, from a clause that is not a question and
that *starts* with one of a few explicit forms ("remember that…", "I prefer…", "always…", "my name is…",
"we use X for Y", "记住…", "以后…", "我叫…", "项目用…"). Anchoring at the clause start is what keeps
"do you remember…?", "I don't prefer…", "should we always…?" and "I never said…" out. Keys come from the
form plus a normalised subject ("preference:package_manager", "identity:name", "rule:reply_language"), so
a later paraphrase lands on the same key and becomes a new version. Pure and deterministic: no database;
jieba only through ``echo_duck.text.segment`` (and its posseg tagger for Chinese names in ``entities``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import InvalidInput
from ..text.segment import STOP_WORDS, segment

__all__ = ["Candidate", "extract_facts"]

TYPES = ("user", "environment", "procedure", "self")


@dataclass(frozen=True)
class Candidate:
    """A fact worth remembering and the exact span of the message it came from."""

    content: str  # normalised: "User prefers pnpm over npm", "用户偏好中文回答", "Always answer in Chinese"
    type: str  # "user" | "environment" | "procedure" | "self"
    key: str | None  # "preference:package_manager", "identity:name", "rule:reply_language", or None
    tags: tuple[str, ...]
    importance: float
    confidence: float
    source_index: int  # index of the message in the input
    evidence: str  # a substring of that message


# A known word gives a subject its category, so "I prefer pnpm" and "I prefer yarn" share a key.
_CATEGORY = {w: cat for cat, words in {
    "package_manager": "npm pnpm yarn bun pip pipenv poetry uv conda",
    "editor": "vim neovim nvim emacs vscode sublime pycharm intellij",
    "programming_language": "python rust golang java javascript typescript ruby php kotlin",
    "language": "chinese english japanese korean french german spanish 中文 英文 汉语 英语 日语 韩语 法语 德语",
    "database": "postgres postgresql mysql sqlite duckdb mongodb redis",
    "shell": "bash zsh powershell",
    "test_framework": "pytest unittest jest vitest mocha",
    "indentation": "tabs spaces",
}.items() for w in words.split()}
_TOOLS = frozenset(w for w, c in _CATEGORY.items() if c not in ("language", "indentation")) | frozenset(
    "git github gitlab docker podman kubernetes k8s terraform nginx react vue django flask fastapi numpy pandas "
    "polars jieba onnx onnxruntime pytorch webpack vite ruff mypy cargo npx".split())
_ANSWER = frozenset("answer answers reply replies respond response responses 回答 回复 答复 说话 交流".split())
_RULE_NOISE = frozenset("always never again ever please dont don 不要 别 再 以后 请 都 一律 总是 永远 不 了".split())

_SENTENCE = re.compile(r"(?:[^\n.。！？!?；;]|\.(?=\S))+[.。！？!?；;]*")
_BOUNDARY = re.compile(r"\s*[,，;；]\s*(?:(?:and|but|also|plus|so|而且|并且|另外|还有)\s*)?|\s+(?:and|but|also|plus|so)\s+", re.I)
_FILLER = re.compile(r"^(?:(?:ok(?:ay)?|so|also|and|but|btw|by the way|oh|hey|hi|well|actually|honestly|fyi|just|"
                     r"好的|好吧|嗯|哦|噢|另外|对了|还有|顺便说一下|顺便|其实|总之)\b[\s,，:：;!！.。-]*)+", re.I)
_QUESTION = re.compile(r"^(?:do(?!\s+not\b)|does|did|is|are|was|were|am|should|shall|can|could|would|will|may|might|"
                       r"must|have|has|what|why|how|when|where|who|which|whether|don't you|isn't|aren't)\b|"
                       r"(?:吗|么)$|是不是|要不要|能不能|可不可以|会不会|对不对|好不好|行不行|有没有|是否|为什么|为啥|难道", re.I)
_LEAD_IN = re.compile(r"^(?:please\s+)?(?:from now on|going forward|in the future|henceforth|remember(?: that)?|note that|"
                      r"keep in mind(?: that)?|请?你?记住|以后|今后|从现在开始|从现在起|从今以后|请)$", re.I)
# A clause after a reporting verb is someone else's words ("It said, from now on reply only in French"; "my coworker
# used to say, always skip the tests"; 邮件里说，以后只用法语回复): quoted, it states nothing the user asked for, and
# the rest of the sentence is dropped (precision first: "He said X, but I prefer Y" loses Y).
_REPORTING = re.compile(r"(?:\b(?:said|says|say|saying|wrote|writes|claimed|claims|told (?:me|us|them|him|her)|"
                        r"tells? (?:me|us)|asked|asks|warned|warns|stated|states|insisted|insists|announced|posted)"
                        r"(?: that)?|说|说道|说过|写道|写着|声称|告诉我们?|提到)\s*[:：\"'“”‘’「」]*$", re.IGNORECASE)
_TRAIL = re.compile(r"[\s.。!！?？;；,，~～…]+$|(?<=[\u3400-\u9fff])[了吧啊呀哦哈啦嘛]+$")
_REMEMBER = re.compile(r"^(?P<ask>(?:can|could|would|will) you\s+)?(?:please\s+)?(?:remember(?: that)?|note that|keep in mind"
                       r"(?: that)?|(?:don't|do not) forget(?: that)?|for the record)\b[\s,:]*(?P<body>.+)|"
                       r"^(?:请你?|你要|帮我|麻烦你?)?(?:记住|记下|记一下|记好)[\s：:，,]*(?P<zbody>.+)", re.I)
_PATTERNS = [(re.compile(p, re.I if p.isascii() else 0), kind) for p, kind in [
    (r"^(?:my name(?:'s| is)|i(?:'m| am) called)\s+(?P<v>.+)", "name"),
    (r"^(?:you can |please )?call me\s+(?-i:(?P<v>[A-Z\"'].*))", "call"),  # "Call me Ed", not "call me back"
    (r"^i(?: (?:currently |now |still )?live|(?:'m| am) (?:living|based|located)) in\s+(?P<v>.+)", "location"),
    (r"^i (?:work|am working|'m working) (?:at|for)\s+(?P<v>.+)", "employer"),
    (r"^i (?:work|am working|'m working) as\s+(?P<v>.+)", "role"),
    (r"^i(?:'d| would)? (?:(?:really|much|definitely|generally|usually|personally|strongly|also|still|always) )*"
     r"(?:prefer|rather)\s+(?P<x>.+?)(?:(?:\s+(?:over|to|rather than|instead of|than)|,?\s+(?:and )?not)\s+(?P<y>.+))?$",
     "prefer"),
    (r"^i (?:(?:really|also|just|absolutely|genuinely|do) )*(?P<verb>like|love|enjoy|hate|dislike|can't stand|cannot stand|"
     r"don't like|do not like)\s+(?P<x>.+)", "like"),
    (r"^(?:please\s+)?(?:from now on|going forward|in the future|henceforth|from here on)\b[\s,:]*(?P<body>.+)", "rule"),
    (r"^(?:please\s+)?(?P<pol>always|never)\s+(?P<body>.+)", "rule"),
    (r"^(?:please\s+)?(?:don't|do not|dont)\s+(?:ever\s+(?P<b>.+)|(?:ever\s+)?(?P<body>.+?)\s+(?:ever\s+)?again\b.*)", "never"),
    (r"^we(?:'re| are)? (?:use|using|rely on)\s+(?P<x>.+?)\s+(?:for|to)\s+(?P<y>.+)", "use_for"),
    (r"^we(?:'re| are)? (?:use|using)\s+(?P<x>.+)", "use"),
    (r"^(?:the |this |our )?(?:project|repo|repository|codebase|app|service|backend|frontend)\s+(?P<verb>uses|is using|"
     r"runs on|is built with|is written in|depends on)\s+(?P<x>.+)", "project"),
    (r"^our\s+(?P<s>[a-z][\w .-]{0,30}?)\s+(?P<cop>is|are)\s+(?!not\b)(?P<v>.+)", "our"),
    (r"^我的名字(?:是|叫)\s*(?P<v>.+)", "name"),
    (r"^我叫\s*(?P<v>(?![了他她你它人过])[\u3400-\u9fff]{1,5}|[A-Za-z][\w .'-]{0,30})$", "name"),  # not "我叫了外卖"
    (r"^(?:你可以|你就|请|以后)?叫我\s*(?P<v>.+?)(?:就行|就好|就可以)?$", "call"),
    (r"^我(?:现在|目前)?住在\s*(?P<v>.+)", "location"),
    (r"^我(?:现在|目前)?在\s*(?P<v>.+?)(?:工作|上班)$", "employer"),
    (r"^我是(?:一名|一个|一位|个)\s*(?P<v>.+)", "role"),
    (r"^我(?:比较|更|还是|一般|通常)?(?:偏好|偏爱|倾向于|倾向|更喜欢|更偏向|比较喜欢)\s*(?P<x>.+)", "prefer"),
    (r"^我(?:很|非常|特别|真的|也|还|一直|挺|超|最)?(?P<verb>不太喜欢|不喜欢|喜欢|热爱|爱|讨厌|反感)\s*(?P<x>.+)", "like"),
    (r"^(?:请你?|你)?(?:以后|今后|往后|从现在开始|从现在起|从今以后|从今天起|从今天开始)[\s，,:：]*(?:请你?|你)?(?P<body>.+)", "rule"),
    (r"^(?:请你?|你)?(?:不要再|别再|不许再|不准再|永远不要|再也不要)\s*(?P<body>.+)", "never"),
    (r"^(?:这个|我们的|本)?项目(?:里|中)?(?:用的是|使用的是|用|使用|采用)\s*(?P<x>.+)", "project"),
    (r"^我们(?:用|使用|采用)\s*(?P<x>.+?)(?:来|做|进行)\s*(?P<y>.+)", "use_for"),
    (r"^我们的\s*(?P<s>.{1,10}?)(?P<cop>是)\s*(?P<v>.+)", "our"),
]]
_NOT_OBJECT = re.compile(r"^(?:it|this|that|these|those|them|you|your|him|her|what|how|the idea|not|to (?:say|tell|admit|ask|"
                         r"bother|interrupt|break))\b|^[你您他她它这那]", re.I)
_NOT_RULE = re.compile(r"^(?:mind|said|say|told|thought|been|was|were|is|are|had|did|knew|i|we|it|this|that|happens|"
                       r"happened|works|worked|again)\b|^[我再这那]", re.I)  # "never mind", "I never said", "以后再说"
_BODY_LEAD = re.compile(r"^(?:(?:please|always)\s+|you\s+(?:should|must|need to|have to|will|shall)\s+|i\s+(?:want|need)\s+"
                        r"you\s+to\s+|make sure (?:to|you)\s+|be sure to\s+|请你?|你|都|就|一律)+", re.I)
_CLAUSE_END = re.compile(r"\s*(?:,|;|\band\b|\bbut\b|\bbecause\b|\bwhich\b).*$", re.I)
_VALUE_END = re.compile(r"\s*(?:,|;|\b(?:and|but|so|because|who|which|as|now|currently)\b).*$", re.I)


def _han(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff"


def _words(text: str) -> list[str]:
    """Content words: `segment` without stop words and without the sub-words jieba's search mode adds."""
    out: list[str] = []
    for t in segment(text):
        while out and _han(t[0]) and len(out[-1]) < len(t) and out[-1] in t:
            out.pop()  # "阿里", "巴巴", "阿里巴巴" -> "阿里巴巴"
        out.append(t)
    return [t for t in out if t not in STOP_WORDS]


def _slug(words: Sequence[str], limit: int = 5) -> str:
    out = ""
    for w in words[:limit]:
        out += ("" if not out or (_han(out[-1]) and _han(w[0])) else "_") + w
    return out


def _category(words: Sequence[str]) -> str | None:
    cat = next((_CATEGORY[w] for w in words if w in _CATEGORY), None)
    if cat == "language" and (_ANSWER & set(words) or len(words) <= 2):
        return "reply_language"  # "answers in Chinese", "用中文": the language the agent replies in
    return cat


def _tidy(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip().strip("\"'“”「」")
    return _TRAIL.sub("", s).strip("\"'“”「」 ")


def _third_person(s: str) -> str:
    """ "my answers" -> "their answers", inside a phrase that "User prefers …" already introduces."""
    table = {"my": "their", "mine": "theirs", "me": "them", "myself": "themselves", "i": "they", "i'm": "they're"}
    return re.sub(r"\b(?:my|mine|me|myself|i'm|i)\b", lambda m: table[m.group().lower()], s, flags=re.I)


_UNINFLECTED = frozenset("said told went had did was were knew thought made got took saw came ate bought left lost found gave "
                  "sent met can will would should must could might".split())


_FIRST_PERSON = ((r"i(?:'m| am)\b", "User is"), (r"i(?:'ve| have)\b", "User has"), (r"i (?:don't|do not)\b", "User doesn't"))


def _as_user(s: str) -> str:
    """A first-person statement retold about the user: "I have two cats" -> "User has two cats"."""
    if not s.isascii():
        return s.replace("我的", "用户的").replace("我们", "\0").replace("我", "用户").replace("\0", "我们")
    for form, subject in _FIRST_PERSON:
        if m := re.match(form, s, re.I):
            s = subject + s[m.end():]
            break
    else:
        if m := re.match(r"(?i)i ((?:never|always|also|really|usually|often|still|only) )?(\w+)", s):
            verb = m.group(2)
            if verb.lower() not in _UNINFLECTED and not verb.endswith("ed"):  # "I own" -> "User owns"
                verb = {"do": "does", "go": "goes"}.get(verb, re.sub(r"(?<=[^aeiou])y$", "ie", verb) +
                                                         ("es" if re.search(r"(?:s|sh|ch|x)$", verb) else "s"))
            s = f"User {m.group(1) or ''}{verb}{s[m.end():]}"
    s = re.sub(r"\b(?:my|mine)\b", "the user's", s, flags=re.I)
    s = re.sub(r"\b(?:me|myself)\b", "the user", s, flags=re.I)
    return s[0].upper() + s[1:]


def _rule(body: str, never: bool, zh: bool) -> tuple | None:
    body = _tidy(_BODY_LEAD.sub("", body))
    if re.match(r"(?i)(?:don't|do not|never)\s+", body):
        body, never = re.sub(r"(?i)^(?:don't|do not|never)\s+", "", body), True
    if not body or _NOT_RULE.match(body) or (len(body.split()) < 2 if body.isascii() else len(body) < 2):
        return None
    words = [w for w in _words(body) if w not in _RULE_NOISE]
    # A positive reply-language rule is exclusive ("以后回复都用英文" replaces "always answer in Chinese"), so it
    # gets one key; any other rule is keyed by its own words, so "never use npm" never silently replaces
    # "always use pnpm": the contradiction check decides whether two such rules conflict.
    cat = "reply_language" if not never and _category(words) == "reply_language" else _slug(words) or None
    if zh:
        content = ("不要再" if never else "以后") + body
    else:
        content = ("Never " if never else "Always ") + (body[0].lower() + body[1:] if body[1:2].islower() else body)
    return content, "procedure", cat and f"rule:{cat}", ("rule",), 0.8, 0.9


_IDENTITY = {"name": ("User's name is {}", "用户名叫{}"), "call": ("User wants to be called {}", "用户希望被称为{}"),
             "location": ("User lives in {}", "用户住在{}"), "employer": ("User works at {}", "用户在{}工作"),
             "role": ("User works as {}", "用户是{}")}


def _build(kind: str, m: re.Match) -> tuple | None:
    """(content, type, key, tags, importance, confidence) for one matched form, or None to refuse it."""
    g = {k: _tidy(v) for k, v in m.groupdict().items() if v}
    zh = not m.string.isascii()
    if kind in _IDENTITY:
        v = g.get("v", "") if zh else _VALUE_END.sub("", g.get("v", "")).strip()
        if not v or re.match(r"(?i)(?:not|no|never|sure|unknown|myself|me|you|it|this|that|here|there)\b|[不没]", v) \
                or len(v.split()) > 5:
            return None
        slot = "preferred_name" if kind == "call" else kind
        return _IDENTITY[kind][zh].format(v), "user", f"identity:{slot}", ("identity",), 0.8, 0.9
    if kind in ("prefer", "like"):
        x, y = _CLAUSE_END.sub("", g.get("x", "")), _CLAUSE_END.sub("", g.get("y", ""))
        if not x or _NOT_OBJECT.match(x):
            return None  # "I love it", "I like that": reactions, not preferences
        if kind == "like":
            negative = bool(re.match(r"(?i)hate|dislike|can|don|do not|不|讨厌|反感", g["verb"]))
            verb, zverb = ("dislikes", "不喜欢") if negative else ("likes", "喜欢")
        else:
            verb, zverb = "prefers", "偏好"
        content = f"用户{zverb}{x}" if zh else f"User {verb} {_third_person(x)}" + (f" over {_third_person(y)}" if y else "")
        words = _words(x) + _words(y)
        subject = (_category(words) if kind == "prefer" else None) or _slug(_words(x))
        key = subject and f"preference:{subject}"
        tags = ("preference",) + tuple(t for t in words if t in _TOOLS)
        return (content, "user", key, tags) + ((0.7, 0.85) if kind == "prefer" else (0.6, 0.8))
    if kind in ("rule", "never"):
        return _rule(g.get("body") or g["b"], kind == "never" or g.get("pol", "").lower() == "never", zh)
    x, y = _CLAUSE_END.sub("", g.get("x") or g.get("v", "")), _CLAUSE_END.sub("", g.get("y", ""))
    if not x:
        return None
    words = _words(x)
    tools = tuple(w for w in words if w in _TOOLS)
    if kind == "our":
        content = f"项目的{g['s']}是{x}" if zh else f"The project's {g['s']} {g['cop'].lower()} {x}"
        return content, "environment", f"project:{_slug(_words(g['s']))}", ("project",) + tools, 0.6, 0.8
    subject = _category(words) or _slug(_words(y) if y else words)
    if kind == "use_for":
        content = f"项目用{x}来{y}" if zh else f"The project uses {x} for {y}"
    else:
        content = f"项目使用{x}" if zh else f"The project {(g.get('verb') or 'uses').lower()} {x}"
    return content, "environment", subject and f"tool:{subject}", ("project", "tool") + tools, 0.6, 0.8


def _match(clause: str) -> tuple | None:
    for pattern, kind in _PATTERNS:
        m = pattern.match(clause)
        if m and (fact := _build(kind, m)):
            return fact
    return None


def _remembered(body: str) -> tuple | None:
    """ "remember that …": the inner statement if it is a known form (boosted), else the sentence retold."""
    body = _tidy(_BODY_LEAD.sub("", body))
    if len(body.split() if body.isascii() else body) < 2 or _NOT_OBJECT.match(body) or re.match(
            r"(?i)(?:to|when|how|what|where|who|why|if|whether)\b|[了吗]", body):
        return None  # "remember to buy milk" is a to-do, "remember when…" a reminiscence, "记住了" an acknowledgement
    inner = _match(body)
    if inner:
        return inner[:4] + (min(1.0, inner[4] + 0.1), max(inner[5], 0.95))
    first_person = re.search(r"(?i)\b(?:i|i'm|i've|my|me|mine)\b" if body.isascii() else r"我(?!们)", body)
    content = _as_user(body) if first_person else body[0].upper() + body[1:]
    m = re.match(r"我的(?P<s>.{1,8}?)是|(?i:(?P<p>my|our|the)) (?P<t>[\w ]{1,30}?) (?:is|are)\b", body)
    subject = m and _slug(_words(m.group("s") or m.group("t")))
    key = subject and (f"identity:{subject}" if m.group("s") or m.group("p").lower() == "my" else f"project:{subject}")
    return content, "user" if first_person else "environment", key or None, ("remembered",), 0.8, 0.95


def _clauses(sentence: str):
    """Split a sentence where a new explicit statement starts, unless what precedes is only a lead-in."""
    start = 0
    for b in _BOUNDARY.finditer(sentence):
        head = _FILLER.sub("", sentence[start:b.start()].strip()).strip()
        if _REPORTING.search(head):  # what follows is quoted
            yield sentence[start:b.start()]
            return
        tail = _FILLER.sub("", sentence[b.end():b.end() + 300].strip())  # enough to recognise a statement
        if head and not _LEAD_IN.match(head) and (_match(tail) or _REMEMBER.match(tail)):
            yield sentence[start:b.start()]
            start = b.end()
    yield sentence[start:]


def _facts_of(text: str, index: int) -> list[Candidate]:
    out = []
    for s in _SENTENCE.finditer(text):
        question = s.group().rstrip().endswith(("?", "？"))
        for raw in _clauses(s.group()):
            evidence = raw.strip()
            clause = _TRAIL.sub("", _FILLER.sub("", evidence)).strip()
            m = _REMEMBER.match(clause)
            if m and (not question or m.group("ask")):  # "can you remember that …?" is a request
                fact = _remembered(m.group("body") or m.group("zbody"))
            elif question or _QUESTION.search(clause):
                continue
            else:
                fact = _match(clause)
            if fact:
                out.append(Candidate(*fact, source_index=index, evidence=evidence))
    return out


def _pairs(messages: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    try:
        pairs = [(str(role).lower(), content) for role, content in messages]
    except (TypeError, ValueError):
        raise InvalidInput("messages must be a sequence of (role, content) pairs") from None
    if any(not isinstance(c, str) for _, c in pairs):
        raise InvalidInput("each message's content must be a string")
    return pairs


def extract_facts(messages: Sequence[tuple[str, str]]) -> list[Candidate]:
    """Explicit facts from the user's messages, in order; assistant, system and tool messages yield none.
    A fact stated twice (same type, key and content) is kept once, with its first source."""
    seen, out = set(), []
    for index, (role, content) in enumerate(_pairs(messages)):
        for c in _facts_of(content, index) if role in ("user", "human") else ():
            if (c.type, c.key, c.content) not in seen:
                seen.add((c.type, c.key, c.content))
                out.append(c)
    return out
