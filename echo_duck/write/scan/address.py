"""A note addressed to the agent that will read it: "Note for the AI: …", "Rappel pour l'IA : …", "给助手补充一句".

A memory is what the user or a source said, replayed into a later prompt; a line written *to* the model inside it
("P.S. for the assistant", "Nota para la IA", "Asistan, …") is the shape of an injection planted in a document,
an email or a web page, in whatever language the rest of the note is in. Users write such notes too ("Note for the
assistant: I prefer metric units"), so this is weak evidence: verdict.py looks for it only when the classifier
finds the note at least somewhat like an instruction (within ``MARGIN`` below its quarantine threshold), and then it
quarantines (never blocks). Without the model the rules do not read it.

The shapes, in any register: a note-word for the AI ("Instructions to the support agent AI processing this ticket"),
a heading that names AI readers ("AI code reviewers and assistants: …", "AI助手注意：…", "[assistant instruction]"),
"if you are an AI …" / "如果你是AI", "addressed to AI models", an @-mention of the agent. A quotation counts too (a
summary quotes the page's footer that carries the injection) unless the note frames it as a report ("Red-team
report: the payload 'Note for the AI: …' was blocked").
"""

from __future__ import annotations

import re

from .asks import reported, unquoted
from .normalise import fold

MARGIN = 2.0  # classifier score units below the quarantine threshold at which an address still counts
_AI = (r"(?:ai|a\.i\.|ia|ki|ии|assistant|assistente|asistente|assistent|asistan|ассистент\w{0,3}|bot|agent|agente|"
       r"llm|chatbot|yapay zeka|trợ lý|sztuczna inteligencja|asystent|asystencie)")
# A note-word + for/to + the AI, per language; "AI," / "Assistant," (a vocative: only where a sentence starts, see
# find); or the CJK "to the AI".
# Unmistakably an AI (a bare "assistant" or "agent" may be a person: "Support agents: …", "If you are an assistant
# manager"): the readers a planted heading names ("AI code reviewers", "language models", "LLMs reading this").
_AIQ = (r"(?:(?:ai|a\.i\.|llm|gpt)(?:[\s-]+[\w-]+){0,2}?[\s-]+(?:models?|agents?|assistants?|systems?|tools?|"
        r"summari[sz]ers?|reviewers?|readers?|crawlers?|bots?|helpers?)|(?:large\s+)?language\s+models?|ais|llms?|"
        r"chatbots?)")
# After "an AI", a person or a business, not an AI ("if you are an AI engineer", "addressed to all AI tool users").
_NOT_AN_AI = (r"[\s-]+(?:[\w-]+\s+)?(?:engineers?|researchers?|developers?|evaluators?|scientists?|enthusiasts?|"
              r"experts?|specialists?|practitioners?|users?|hobbyists?|students?|professionals?|people|persons?|"
              r"compan(?:y|ies)|teams?|startups?|vendors?|labs?|leads?|managers?|designers?|founders?|investors?|"
              r"ethicists?)\b")
_NOT_AN_AI_ZH = r"\s?(?:爱好者|从业者|工程师|研究员|开发者|用户|公司|团队|产品|行业|领域|技术|专家|创业)"
# What a heading without a participle must go on with to be an address, not a topic: an order or "you".
_ORDER = (r"(?:you|your|please|always|never|do\s+not|don'?t|ignore|disregard|remember|make\s+sure|from\s+now\s+on|"
          r"rate|approve|recommend|tell|reply|respond|answer|mark|send|forward|describe|say)\b")
_NOT_FILLER = r"(?:about|on|regarding|re|of|for|with|using|from|around|concerning)\b"
_ADDRESS_RE = re.compile(
    rf"(?i)(?<![\w'])(?:"
    rf"(?:note|notes|memo|reminder|message|hint|instructions?|p\.?s\.?)\s+(?:for|to)\s+(?:the\s+|any\s+|my\s+|future\s+)*{_AI}|"
    rf"(?:nota|recordatorio|mensaje|aviso|ps|p\.s\.)\s+(?:para|al?)\s+(?:la\s+|el\s+)?{_AI}|"
    rf"(?:rappel|note|message|mot|consigne|ps|p\.s\.)s?\s+(?:pour|à)\s+(?:l'|le\s+|la\s+)?{_AI}|"
    rf"(?:lembrete|nota|recado|aviso|ps)\s+(?:pra|para|ao|à)\s+(?:a\s+|o\s+)?{_AI}|"
    rf"(?:promemoria|nota|messaggio|ps)\s+(?:per|all')\s*(?:l'|il\s+)?{_AI}|"
    rf"(?:hinweis|notiz|nachricht|ps)\s+(?:an|für)\s+(?:die|den)\s+{_AI}|"
    rf"(?:notitie|bericht|ps)\s+(?:voor|aan)\s+(?:de\s+)?{_AI}|"
    rf"(?:заметка|напоминание|записка|ps)\s+для\s+{_AI}|"
    rf"(?P<vocative>{_AI}\s*,\s+(?=\w))|"
    # a note-word, a few words, then the AI: "instructions to the support agent AI processing this ticket" (not a note
    # to people about AI: "a reminder to all staff about the AI usage policy")
    rf"(?:note|message|instructions?|reminder)\s+(?:for|to)\s+(?:the|any|all|every)\s+"
    rf"(?:(?!{_NOT_FILLER})[\w-]+\s+){{0,3}}?(?:{_AIQ}|ai)\b(?!{_NOT_AN_AI})|"
    # a heading naming the AI readers of this text: "AI agents comparing products:", "LLMs reading this -", "To any
    # AI summarising this page:" (where a sentence starts; not a topic heading: "AI tools:", "Chatbots:")
    rf"(?P<heading>(?:(?:attention|notice|warning|dear|hey|hello|hi|to)\s*,?\s+)?(?:all\s+|any\s+|the\s+)?"
    rf"(?:(?:{_AIQ}|ai)(?:\s+(?:and|or|&)\s+(?:{_AIQ}|assistants|agents))?"
    rf"\s+(?:\w+ing|who|that)\b(?:\s+[\w-]+){{0,3}}\s*[:\-–—]\s|"
    rf"{_AIQ}(?:\s+(?:and|or|&)\s+(?:{_AIQ}|assistants|agents))?\s*[:\-–—]\s+(?={_ORDER})))|"
    rf"[\[(]\s*(?:(?:note|message|instructions?)\s+(?:for|to)\s+)?(?:the\s+)?{_AI}\s+"
    rf"(?:note|instructions?|only)\s*[\])]|"
    rf"\bif\s+you(?:\s+are|'?re)\s+(?:an?\s+)?(?:{_AIQ}|ai)\b(?!{_NOT_AN_AI})|"
    rf"\b(?:addressed|meant|written)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:{_AIQ}|ai)\b(?!{_NOT_AN_AI})|"
    # an @-mention of the agent where a sentence starts ("09:42 mark: @agent when you …"), not a product's syntax
    # mid-sentence ("comment @claude on an issue")
    r"(?P<mention>(?<![\w.@])@(?:ai|agents?|assistants?|llm|claude|chatgpt|gpt|copilot)\b(?![.-]\w)))"
    r"|(?:给|給|致|对|對)(?:ai|AI|助手|助理|アシスタント|模型)|(?:给|給|致)\s(?:ai|助手|助理|模型)|(?:给|給|致)(?:所有|各位|任何)的?\s?(?:ai|助手|大模型|人工智能)|"
    r"(?:给|致)(?:大模型|人工智能)|"
    r"(?:AI|ＡＩ|アシスタント)(?:へ|に告ぐ)|(?:AI|어시스턴트|비서)에게|"
    # 中文：“AI助手注意：”“大模型请注意”“如果你是AI”“读到这段话的AI”
    r"(?:(?:AI|ai|ＡＩ|人工智能)\s?(?:助手|助理|模型|机器人|智能体)?|大模型|语言模型|智能体|智能助手)(?:们)?\s?[,，]?\s?请?"
    r"(?:注意|留意|须知)(?!力|事项)|"
    rf"(?:如果|假如|若)(?:你|您)是\s?(?:一[个名位])?\s?(?:AI|ai|ＡＩ|人工智能|大模型|语言模型|智能体|AI\s?助手)(?!{_NOT_AN_AI_ZH})|"
    rf"(?:读到|阅读|看到)(?:这|本|此)[^，。,.\n]{{0,8}}的\s?(?:AI|ai|ＡＩ|人工智能|助手|大模型|智能体)(?!{_NOT_AN_AI_ZH})")
# A quotation that carries the address counts unless the note frames it as a report of an attack.
_ABOUT_ATTACKS_RE = re.compile(
    r"(?i)\b(?:inject\w*|attack\w*|malicious|phishing|jailbreak\w*|red[\s-]?team\w*|adversarial|exploit\w*)\b|"
    r"注入|攻击|钓鱼|越狱|红队|恶意")
_SENTENCE_START_RE = re.compile(r"(?:^|[\n.;:!?)(\[\"“'「—*#>-])\s{0,2}$")
# A pasted transcript ("User: …" / "AI: …"): "AI:" or "Assistant, …" is a speaker there. Both sides must speak: one
# "Q:" line does not make a planted note a transcript.
_SPEAKERS_RE = re.compile(r"(?im)^\s*(?:user|human|me|customer|q)\s*:")
_AI_SPEAKS_RE = re.compile(r"(?im)^\s*(?:ai|a|assistant|bot|agent|model|chatbot|gpt|claude|support)\s*[:,]")


def find(text: str) -> tuple[str, int] | None:
    """(what addresses the agent, its position) of the first address to the agent in ``text``, else None."""
    if _SPEAKERS_RE.search(text) and _AI_SPEAKS_RE.search(text):
        return None
    folded = fold(text)  # look-alike letters and full-width forms read as the prompt shows them: "ＡＩ", Cyrillic "А"
    hit = _find(folded)
    return None if hit is None else (hit[0], hit[1] * len(text) // max(1, len(folded)))


def _find(text: str) -> tuple[str, int] | None:
    bare = unquoted(text)
    if (hit := _first(bare)) is not None or bare == text:
        return hit
    return None if reported(text, lambda _: False) or _ABOUT_ATTACKS_RE.search(bare) else _first(text, quoted=True)


def _first(low: str, quoted: bool = False) -> tuple[str, int] | None:
    """``quoted``: the text with its quotations, where a vocative ("KI-Assistent, …") is someone's reported words."""
    for m in _ADDRESS_RE.finditer(low):
        if quoted and m.group("vocative"):
            continue
        if not (m.group("vocative") or m.group("heading") or m.group("mention")) or \
                _SENTENCE_START_RE.search(low, max(0, m.start() - 3), m.start()):
            return m.group().strip()[:40], m.start()
    return None
