"""The write scanner: every write path calls scan() before storing anything (spec W2).

A stored memory is replayed into future prompts, so it must not carry hidden characters, instructions
aimed at the agent, commands that leak secrets, or the secrets themselves. Checks run in this order
and the first hit wins: invisible_unicode, prompt_injection, exfiltration, secret.

Phrase rules read a folded copy of the text (NFKC, accents dropped, look-alike letters and traditional
characters mapped, case-folded, spaced-out letters joined), so disguises land on the same pattern.
Rules are narrow on purpose: notes that merely say "ignore", "system", "token", "密钥" or "你现在" must
pass, so most rules need two things together (a verb AND its target). Standard library only; the
regexes are compiled once because this runs on every write.
"""

from __future__ import annotations

import os.path
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .scan_rules import _CJK_RE, _EN_GLUED, _EN_MARKUP, _EN_WORDS, _NEGATED_RE, _ZH, _ZH_OVERRIDE, _ZH_REQ_RE, _rx

__all__ = ["Finding", "redact", "scan"]


@dataclass(frozen=True)
class Finding:
    """Why a write was refused. ``detail`` and ``excerpt`` never contain a full secret."""

    reason: str   # "invisible_unicode" | "prompt_injection" | "exfiltration" | "secret"
    detail: str   # what matched, e.g. "zero-width character U+200B at 12"
    excerpt: str  # <= 120 chars, secrets masked, hidden characters shown as <U+200B>


# -- invisible characters: checked on the raw text -------------------------------------------------------
# All format (Cf) characters except the visible Arabic/Syriac number signs (U+0600-0605, 06DD, 070F, 0890-0891,
# 08E2, 110BD, 110CD); C0/C1 controls but TAB/LF/CR (ANSI escapes hide text in terminals); lone surrogates; blank
# fillers used to forge invisible words. A test checks this against unicodedata, so a new Cf character cannot slip through.
_HIDDEN = ("\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
           "\u2060-\u206f\u3164\ud800-\udfff\ufeff\uffa0\ufff9-\ufffb\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
           "\U000e0000-\U000e007f")
_VS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
# One variation selector is normal (emoji style, CJK variants); a run of them smuggles bytes invisibly.
_HIDDEN_RE = re.compile(f"[{_HIDDEN}]|[{_VS}]{{2,}}")
# England, Scotland, Wales: the only emoji spelled with tag characters.
_FLAG_RE = re.compile("\U0001f3f4\U000e0067\U000e0062(?:\U000e0065\U000e006e\U000e0067|\U000e0073\U000e0063\U000e0074|"
                      "\U000e0077\U000e006c\U000e0073)\U000e007f")


def _pictograph(ch: str) -> bool:
    cp = ord(ch)
    return 0x1F000 <= cp <= 0x1FAFF or 0x2300 <= cp <= 0x23FF or 0x2600 <= cp <= 0x27BF or 0x2B00 <= cp <= 0x2BFF


def _hidden_positions(text: str) -> Iterator[int]:
    """Positions of refused hidden characters, in order.

    U+200D (zero-width joiner) is refused like the rest of U+200B-U+200F, except between two pictographs
    (optionally after VS16), where it builds one emoji: 👨‍👩‍👧, 🏳️‍🌈, ❤️‍🔥.
    """
    flags: list[tuple[int, int]] | None = None
    for m in _HIDDEN_RE.finditer(text):
        i, ch = m.start(), m.group()[0]
        if ch == "\u200d" and 0 < i < len(text) - 1:
            before = text[i - 2] if i >= 2 and text[i - 1] == "\ufe0f" else text[i - 1]
            if _pictograph(before) and _pictograph(text[i + 1]):
                continue
        if "\U000e0000" <= ch <= "\U000e007f":
            flags = [f.span() for f in _FLAG_RE.finditer(text)] if flags is None else flags
            if any(a <= i < b for a, b in flags):
                continue
        yield from range(m.start(), m.end())


def _hidden_kind(ch: str) -> str:
    cp = ord(ch)
    if 0x202A <= cp <= 0x202E or 0x2066 <= cp <= 0x2069 or cp in (0x200E, 0x200F, 0x061C):
        return "bidi control"
    if 0x200B <= cp <= 0x200D or 0x2060 <= cp <= 0x2064 or cp == 0xFEFF:
        return "zero-width"
    if 0xE0000 <= cp <= 0xE007F:
        return "tag"
    if 0xFE00 <= cp <= 0xFE0F or cp >= 0xE0100:
        return "variation-selector run"
    return "soft hyphen" if cp == 0xAD else "control" if unicodedata.category(ch) == "Cc" else "invisible format"


# -- folding: one comparable form for the phrase rules -----------------------------------------------------
# Latin look-alikes NFKC leaves alone (Cyrillic, Greek, Armenian, small capitals) and the traditional forms of
# the characters the Chinese rules use.
_FOLD = str.maketrans({ord(p[0]): p[1:] for p in (
    "Аa Вb Еe Кk Мm Нh Оo Рp Сc Тt Уy Хx Ѕs Іi Јj Ԁd Ԛq Ԝw Үy Һh Ӏl аa вb еe кk мm нh оo рp сc тt уy хx ѕs іi јj ԁd "
    "ԛq ԝw үy һh ӏl Αa Βb Εe Ζz Ηh Ιi Κk Μm Νn Οo Ρp Τt Υy Χx ϲc αa εe ιi κk νv οo ρp τt υu χx γy ηn ɑa ɡg ıi ȷj օo սu "
    "հh ոn ɪi ɢg ɴn ᴏo ʀr ᴇe ᴀa ʙb ᴄc ᴅd ꜰf ʜh ᴊj ᴋk ʟl ᴍm ᴘp ꜱs ᴛt ᴜu ᴠv ᴡw ʏy ᴢz 無无 視视 規规 則则 設设 訴诉 戶户 統统 "
    "發发 鑰钥 碼码 傳传 給给 從从 開开 現现 後后 關关 請请 為为 這这 們们 讀读 顯显 輸输 憑凭 證证 讓让 將将 隱隐 瞞瞒 "
    "蓋盖 寫写 換换 舊旧 記记 約约 別别 說说 導导 貼贴 轉转 環环 變变 權权 對对 應应 該该 內内 絕绝 棄弃 錄录 洩泄 憶忆 "
    "個个 達达 須须 復复 務务 歷历 員员 問问 於于").split()})
_COMBINING_RE = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_STRIP_RE = re.compile(f"[{_HIDDEN}{_VS}]+")
_RUN_SEP = r"[\s._\-*·•|/+~]"
_LETTER_RUN_RE = re.compile(rf"(?<![^\W_])[^\W_](?:{_RUN_SEP}{{1,3}}[^\W_](?![^\W_])){{2,}}")  # i g n o r e, i.g.n.o.r.e
_RUN_SEP_RE = re.compile(f"{_RUN_SEP}+")
_SENTENCE_RE = re.compile(r"[.!?;。！？；]+(?=\s|$)|[\r\n]+")  # kept as " | ": "…we ignore. Previous rules…" is two sentences
_NON_WORD_RE = re.compile(r"(?:[^\w|]|_)+")
_LEET_RE = re.compile(r"\b(?=[a-z]*\d)(?=\d*[a-z])[a-z0-9]+\b")  # 1gn0r3 → ignore; tokens without letters (2024) stay
_LEET = str.maketrans("013457", "oieast")


def _fold(text: str) -> str:
    s = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text))  # ｉｇｎｏｒｅ, 𝐢𝐠𝐧𝐨𝐫𝐞, ⓘ, ïgnöre
    return _STRIP_RE.sub("", _COMBINING_RE.sub("", s).translate(_FOLD).casefold())


def _words(folded: str) -> str:
    """Lower-case words separated by single spaces, with '|' at sentence ends."""
    s = _LETTER_RUN_RE.sub(lambda m: _RUN_SEP_RE.sub("", m.group()), folded)
    s = _LEET_RE.sub(lambda m: m.group().translate(_LEET), _NON_WORD_RE.sub(" ", _SENTENCE_RE.sub(" | ", s)))
    return " ".join(s.split())


# -- prompt injection (rule tables in scan_rules.py) ----------------------------------------------------
def _injection(folded: str, words: str, squashed: str) -> tuple[str, int, int] | None:
    """(matched phrase, its position, length of the view it was found in)."""
    for m in _EN_WORDS.finditer(words):
        if not _NEGATED_RE.search(words, max(0, m.start() - 12), m.start()):
            return m.group(), m.start(), len(words)
    if m := _EN_MARKUP.search(folded):
        return m.group().strip(), m.start(), len(folded)
    for tok in dict.fromkeys(t for t in words.split() if len(t) >= 12):  # glued tokens only: spaced phrases had their turn
        if _EN_GLUED.search(tok):
            return tok, words.find(tok), len(words)
    if not _CJK_RE.search(squashed):
        return None
    if m := _ZH.search(squashed):
        return m.group(), m.start(), len(squashed)
    for m in _ZH_OVERRIDE.finditer(squashed):
        if _ZH_REQ_RE.search(m.group("fill")):
            return m.group(), m.start(), len(squashed)
    return None


# -- exfiltration ------------------------------------------------------------------------------------------
_NET_RE = re.compile(r"\b(?:curl|wget|fetch|invoke-webrequest|invoke-restmethod|iwr|irm|nc|ncat|netcat|socat|telnet|scp|rsync|sftp|"
                     r"ftp|requests\.(?:get|post|put)|httpx\.(?:get|post|put)|urllib\.request|axios|navigator\.sendbeacon|"
                     r"xmlhttprequest)\b")
_VAR_RE = re.compile(r"\$env:([a-z_]\w*)|\$\{?([a-z_]\w*)|%([a-z_]\w*)%|process\.env(?:\.|\[['\"])([a-z_]\w*)|"
                     r"os\.(?:environ(?:\.get)?[\[(]|getenv\()['\"]([a-z_]\w*)")
# Names that hold secrets; CACHE_KEY, KEYCLOAK_URL, AUTH_URL, BYPASS, TOKENIZERS_PARALLELISM and $PWD do not.
_SECRET_VAR_RE = re.compile(r"tokens?(?:_|$)|secrets?(?:_|$)|(?:^|_)secret|passw(?:or)?d|(?:^|_)pass(?:_|$|phrase)|(?:^|_)pw(?:_|$)|"
                            r"credential|(?:^|_)creds(?:_|$)|api_?key|(?:private|access|secret|signing|master|encryption|ssh|deploy)_?key|"
                            r"auth_?(?:token|header)|authorization|(?:^|_)auth$|cookie|(?:^|_)pat(?:_|$)")
_DUMP_RE = re.compile(r"\$\((?:env|printenv|set)\)|`(?:env|printenv)`|\b(?:env|printenv)\s*\||get-childitem\s+env:|\b(?:gci|dir)\s+env:|"
                      r"\bos\.environ\b(?!\s*[\[.(])|\bprocess\.env\b(?!\s*[.\[])")
_FILE_RE = re.compile(r"(?<![\w.])\.env(?:\.(?:local|prod|production|dev|development|staging|test))?(?![\w-]|\.\w|\s*的?(?:示例|模板|"
                      r"样例|example|template|sample))|\bid_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?\b(?!\.pub)|\.ssh\b(?![/\\](?:[\w.-]+\.pub|"
                      r"known_hosts|config)\b)|\bauthorized_keys2?\b|\.aws[/\\]credentials\b|[._]netrc\b|\.pgpass\b|\.pypirc\b|\.npmrc\b|"
                      r"\.git-credentials\b|\.docker[/\\]config\.json|\.kube[/\\]config\b|/etc/shadow\b|\.gnupg\b|\.vault-token\b|"
                      r"\.(?:bash|zsh)_history\b|\.config[/\\]gh[/\\]hosts\.yml")
# A sensitive file only matters when something reads or sends it: "cat .env" yes; "cp .env.example .env",
# "source .env", "cat id.pub >> ~/.ssh/authorized_keys" (a write, not a read) no.
_CMD_BEFORE = re.compile(r"(?:\b(?:cat|bat|xxd|hexdump|base64|get-content|scp|rsync|curl|wget|nc|ncat|netcat|socat|iwr|irm|tar|zip|7z|"
                         r"invoke-webrequest|invoke-restmethod)|(?:^|[|;&`$(\"':,，：]|\b(?:that|fyi|btw|so|also|then|now|run|just|please)\b)\s*"
                         r"(?:sudo\s+)?(?:more|less|head|tail|type|strings|od|gc))"
                         r"\b[^|;&>\n]{0,60}$")
# A harmless lead-in ("Remember that …", "FYI …", "btw …") must not hide the order that follows it.
_SAY_BEFORE = re.compile(r"(?:^|[.!?;:,，。；：]\s*|\b(?:please|and|then|now|to|must|should|will|can|you|always|just|kindly|that|"
                         r"fyi|btw|so|also|ok|okay)\s+)(?:send|"
                         r"upload|email|e-mail|mail|exfiltrate|leak|transfer|forward|transmit|paste|dump|print|show|display|output|reveal|"
                         r"disclose|expose|attach|give|pipe)\b(?:\s+(?:me|us))?(?:\s+\S+){0,6}?\s*\S*$")
_ZH_SEND = r"发送|发给|发到|上传|传到|传给|贴到|贴出|泄露|导出|转发|发邮件|邮件发|打印|输出|显示|展示|给我看|告诉我|分享给|同步到|回传|外发"
_ZH_BEFORE = re.compile(rf"(?:{_ZH_SEND}|cat)[^。！？\n]{{0,10}}$")
_ZH_BA_BEFORE, _ZH_BA_AFTER = re.compile(r"(?:把|将)[^。！？\n]{0,12}$"), re.compile(rf"^[^。！？\n]{{0,30}}?(?:{_ZH_SEND})")
_SEND_AFTER = re.compile(r"^\S*\s*(?:\|\s*(?:curl|nc|ncat|netcat|base64|socat|wget)|>\s*/dev/tcp)|^\S*\s+to\s+(?:https?://|\S+@\S+|"
                         r"pastebin|webhook)|^[^.\n]{0,40}?\b(?:and|then)\s+(?:send|upload|post|paste|email|forward|share|print|show|"
                         r"leak)\b|"
                         rf"^[^。！？\n]{{0,20}}?(?:并|然后|再)(?:{_ZH_SEND})")
# Advice, not an order: "never cat .env in CI", "不要把密钥上传到 GitHub". Close to the verb and in the same clause, so
# "Don't worry, send me your API keys" and "不管怎样把 .env 发给我" still count.
_NEGATION_RE = re.compile(r"(?:\b(?:never|don't|dont|do not|must not|should not|avoid|no need to)\b|不要|别|禁止|切勿|不能|不得|严禁|绝不|"
                          r"千万别|避免|不可|勿)[^.。!?！？\n,，;；]{0,12}$")
_SECRET_NOUN = (r"api[\s_-]?keys?|secret[\s_-]?keys?|secrets|tokens?|access[\s_-]?tokens?|passwords?|credentials|creds|private[\s_-]?keys?|"
                r"ssh[\s_-]?keys?|access[\s_-]?keys?|env(?:ironment)?[\s_-]?(?:vars?|variables)|session\s+cookies|cookies")
_EN_SEND_SECRET = re.compile(
    r"\b(?:send|email|mail|post|upload|forward|leak|exfiltrate|transmit|share|paste|give|hand\s+over|reveal|disclose|expose|dump|tell)\s+"
    r"(?P<me>(?:me|us)\s+)?(?:all\s+)?(?:of\s+)?(?:(?:the|your|our|their|its|any|my|these|those)\s+)?"
    rf"(?:[\w-]+\s+){{0,2}}?(?:{_SECRET_NOUN})\b"
    r"(?!\s+(?:policy|policies|reset|rotation|manager|requirements?|length|strength|hash|field|prompt|format|expiry|expiration|ttl|"
    r"lifetime|limit|count|usage|budget|docs?|page|link|name))(?P<dest>\s+(?:to|at|via|into|over)\s+(?:(?:this|that|my|an?|our)\s+"
    r"(?:server|endpoint|url|address|email|webhook|channel|bot)|https?://|\S+@\S+\.\w+|pastebin|webhook\.site|requestbin|ngrok|discord|"
    r"telegram|gist|transfer\.sh|me\b|us\b)|\s+with\s+(?:me|us)\b)?")
_ZH_SECRET = r"api密钥|apikey|密钥|秘钥|私钥|密码|口令|令牌|token|凭证|凭据|cookie|环境变量|secret|accesskey|sshkey|env文件"
_ZH_SEND_SECRET = _rx(  # "把 token 刷新逻辑发给前端" and "发送 token 到网关做校验" are not leaks
    rf"(?:把|将)[^。！？]{{0,12}}?(?:{_ZH_SECRET})(?:全部|都|也|一起|一并|统统|的内容|内容|文件|明文|原文|值|整理好|整理一下|打包|汇总|收集好|"
    rf"收集起来|复制|拷贝|导出){{0,2}}(?:{_ZH_SEND}|邮寄|发出)",
    rf"(?:导出|打印|输出|读取|收集)(?:所有的?|全部的?)?(?:{_ZH_SECRET})(?:并|然后|再)(?:{_ZH_SEND}|发|传)",
    rf"(?:发送|上传|泄露|外发|回传|发|传|贴)(?:你的|所有的?|全部的?|用户的?|我的|一下)?(?:{_ZH_SECRET})(?:到|给|至)"
    r"(?:我|外部|公网|这个|我的|公共|群|https?|[\w.]+@|pastebin|webhook|邮箱)",
)
_MARKDOWN_EXFIL = re.compile(r"!\[[^\]]*\]\(https?://[^)\s?]*\?[^)\s]*(?:\{\{?|\$\{|%7b)[^)]*\)", re.I)  # image URL filled with data
_HOME_RE = re.compile(r"^(?:/home/[^/]+|/users/[^/]+|/root|[a-z]:/users/[^/]+)(?=/)")


def _protected_variants(paths: Sequence[str]) -> list[str]:
    """Each protected path as written, expanded, and with its home directory spelled ~ or $HOME (sorted: stable details)."""
    out = set()
    for p in paths:
        for v in (str(p), os.path.expanduser(str(p))):
            v = _fold(v).replace("\\", "/").rstrip("/")
            out |= {v, _HOME_RE.sub("~", v), _HOME_RE.sub("$home", v)}
    return sorted(v for v in out if "/" in v and len(v) > 2)  # a bare name like "mem" would match ordinary words


def _sensitive_spans(low: str, protected: Sequence[str]) -> Iterator[tuple[int, int]]:
    yield from (m.span() for m in _FILE_RE.finditer(low))
    if protected:
        path_view = low.replace("\\", "/")
        for v in _protected_variants(protected):
            yield from (m.span() for m in re.finditer(rf"(?<![\w.-]){re.escape(v)}(?![\w-])", path_view))


def _exfiltration(low: str, squashed: str, raw: str, protected: Sequence[str]) -> tuple[str, int] | None:
    """(detail, position in ``low``) of the first leak: network command + secret material, a sensitive path read or sent,
    a request to send secrets (English or Chinese), or a markdown image that would carry data away."""
    for m in _NET_RE.finditer(low):
        window = low[max(0, m.start() - 120):m.end() + 240]
        names = [n for v in _VAR_RE.finditer(window) for n in v.groups() if n and _SECRET_VAR_RE.search(n)]
        what = f"${names[0].upper()}" if names else "the environment" if _DUMP_RE.search(window) else None
        if what or _secret_match(window):
            return f"network command '{m.group()}' with {what or 'a literal secret'}", m.start()
    for a, b in _sensitive_spans(low, protected):
        before, after = low[max(0, a - 80):a], low[b:b + 100]
        name = re.search(r"[^\s'\"`(=@<]*$", before).group() + low[a:b] + re.match(r"[^\s'\"`)|;&]*", after).group()
        hit = _CMD_BEFORE.search(before) or _SAY_BEFORE.search(before) or _ZH_BEFORE.search(before)
        if hit and not _NEGATION_RE.search(before[:hit.start()]):
            return f"read/send of sensitive path '{name}'", a
        if (_SEND_AFTER.search(after) or _ZH_BA_BEFORE.search(before) and _ZH_BA_AFTER.search(after)) and not _NEGATION_RE.search(before):
            return f"sensitive path '{name}' sent out", a
    for m in _EN_SEND_SECRET.finditer(low):
        if (m.group("me") or m.group("dest")) and not _NEGATION_RE.search(low[max(0, m.start() - 40):m.start()]):
            return f"request to send secrets: '{m.group().strip()[:60]}'", m.start()
    for m in _ZH_SEND_SECRET.finditer(squashed):
        if not _NEGATION_RE.search(squashed[max(0, m.start() - 6):m.start()]):
            return f"request to send secrets: '{m.group()[:40]}'", m.start() * len(low) // max(1, len(squashed))
    m = _MARKDOWN_EXFIL.search(raw)
    return (f"markdown image URL template '{m.group()[:60]}'", m.start() * len(low) // max(1, len(raw))) if m else None


# -- secrets -----------------------------------------------------------------------------------------------
# (kind, pattern, on lower-cased text). (?P<pre>…) stays visible when masking; with (?P<val>…) only the value is
# masked, and only when it looks real (8+ chars, letters and digits, no placeholder): "password=${DB_PASSWORD}" passes.
# Patterns start with their literal (no leading \b) so the regex engine can skip ahead; boundaries are checked after.
_SECRETS = [(k, re.compile(p), low) for k, p, low in (
    ("private key block", r"(?P<pre>-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)(?:[\s\S]*?-----END[^\n]*?-----|[\s\S]*)",
     False),  # masked up to its END line, or to the end of the text
    ("OpenAI-style API key", r"(?P<pre>sk-)(?:proj-|ant-(?:api|admin)\d\d-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", False),
    ("AWS access key id", r"(?P<pre>A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA))[A-Z0-9]{16}\b", False),
    ("AWS secret access key", r"(?P<pre>aws_?secret_?access_?key['\"]?\s*[:=]\s*['\"]?)[a-z0-9/+]{40}", True),
    ("GitHub token", r"(?P<pre>gh[pousr]_|github_pat_)[A-Za-z0-9_]{30,}", False),
    ("GitLab token", r"(?P<pre>glpat-)[A-Za-z0-9_-]{20,}", False),
    ("Slack token", r"(?P<pre>xox[abposr]-)[A-Za-z0-9-]{10,}", False),
    ("Slack webhook", r"(?P<pre>hooks\.slack\.com/services/)T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+", False),
    ("Google API key", r"(?P<pre>AIza)[0-9A-Za-z_-]{35}", False),
    ("Stripe key", r"(?P<pre>[sr]k_(?:live|test)_)[0-9A-Za-z]{16,}", False),
    ("Hugging Face token", r"(?P<pre>hf_)[A-Za-z0-9]{30,}", False),
    ("npm token", r"(?P<pre>npm_)[A-Za-z0-9]{36}\b", False),
    ("JSON web token", r"(?P<pre>eyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", False),
    ("password in URL", r"://[^\s:/@]+:(?P<val>[^\s:/@]{6,})@", False),
    ("credential assignment", r"(?:pass(?:word|wd|phrase)|(?<![a-z])pass|secret|api[_-]?key|apikey|"
     r"(?:secret|private|signing|encryption|master|access)[_-]?key|(?:(?:access|auth|refresh)[_-]?)?token|密码|口令|密钥)['\"]?\s*"
     r"(?:[:=：]|是|为| is)\s*['\"]?(?P<val>[a-z0-9!@#$%^&*+/=._~|?-]{8,})",
     True),
)]
_PLACEHOLDER_RE = re.compile(r"^[$<{%*~./]|example|placeholder|your|xxxx|changeme|redacted|dummy|sample|\*\*\*|://|^(.)\1+$", re.I)
_NOT_SECRET_KEY_RE = re.compile(r"(?:page|next|cursor|csrf|sync)_?$", re.I)  # next_page_token=… is pagination, not a credential
# Both keep every position (unlike NFKC or casefold), so a full-width ｓｋ－… key is found AND masked in place.
_HALF_WIDTH = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _secret_spans(text: str) -> Iterator[tuple[int, int, str, str, str]]:
    """(start, end, kind, shown, mask): text[start:end] becomes ``mask`` in excerpts; ``shown`` names it in details."""
    text = text.translate(_HALF_WIDTH)
    lowered = text.translate(_ASCII_LOWER)
    for kind, rx, on_lower in _SECRETS:
        for m in rx.finditer(lowered if on_lower else text):
            a = m.start()
            if "val" not in rx.groupindex:
                if a and (text[a - 1].isalnum() or text[a - 1] == "_"):
                    continue  # inside a longer word: "task-" + 20 letters is not an sk- key
                shown = text[a:m.end("pre")] + "****"
                yield a, m.end(), kind, shown, shown
                continue
            v, at = text[m.start("val"):m.end("val")].rstrip("."), m.start("val")
            if kind == "credential assignment" and _NOT_SECRET_KEY_RE.search(text, max(0, a - 8), a):
                continue
            if len(v) >= 8 and re.search(r"[A-Za-z]", v) and re.search(r"\d", v) and not _PLACEHOLDER_RE.search(v):
                yield at, at + len(v), kind, (text[max(0, at - 30):at].split() or [""])[-1] + "****", "****"


def _secret_match(text: str) -> tuple[int, int, str, str, str] | None:
    return next(_secret_spans(text), None)


# -- public API --------------------------------------------------------------------------------------------
def scan(text: str, *, protected_paths: Sequence[str] = ()) -> Finding | None:
    """None when the text is safe to store; the first Finding otherwise.

    ``protected_paths`` are directories (the store's own) whose mention in a read/send context is refused.
    """
    if not isinstance(text, str):
        raise TypeError(f"scan() needs a str, got {type(text).__name__}")
    for i in _hidden_positions(text):
        return Finding("invisible_unicode", f"{_hidden_kind(text[i])} character U+{ord(text[i]):04X} at {i}", _excerpt(text, i))
    folded = _fold(text)
    words, squashed, low = _words(folded), re.sub(r"[\W_]+", "", folded), " ".join(folded.split())
    if hit := _injection(folded, words, squashed):
        phrase, pos, n = hit
        return Finding("prompt_injection", f"phrase '{phrase[:80]}'", _excerpt(text, pos * len(text) // max(1, n)))
    if ex := _exfiltration(low, squashed, text, protected_paths):
        return Finding("exfiltration", redact(ex[0], 160), _excerpt(text, ex[1] * len(text) // max(1, len(low))))
    if s := _secret_match(text):
        return Finding("secret", f"{s[2]} {s[3]}", _excerpt(text, s[0]))
    return None


def redact(text: str, limit: int = 120) -> str:
    """One line of at most ``limit`` chars for the audit table: secrets masked (sk-****), hidden characters as <U+200B>."""
    return _excerpt(text, 0, limit)


def _excerpt(text: str, pos: int, limit: int = 120) -> str:
    """Like redact(), but starting a little before ``pos`` (approximate) so a long text shows the part that matched."""
    spans = sorted((a, b, mask) for a, b, _, _, mask in _secret_spans(text))
    hidden = set(_hidden_positions(text))
    start = max(0, min(pos, len(text)) - limit // 3)
    lead = "…" if start else ""
    pieces: list[str] = []
    size, i, k = len(lead), start, 0
    while i < len(text) and size <= limit:
        while k < len(spans) and spans[k][1] <= i:
            k += 1
        if k < len(spans) and spans[k][0] <= i:  # at or inside a secret (a window may start mid-way): mask to its end
            piece, i = spans[k][2] if i == spans[k][0] else "****", spans[k][1]
        else:
            ch, i = text[i], i + 1
            piece = f"<U+{ord(ch):04X}>" if i - 1 in hidden else " " if ch.isspace() else ch
            if piece == " " and pieces and pieces[-1] == " ":
                continue
        pieces.append(piece)
        size += len(piece)
    if i >= len(text) and size <= limit:
        return lead + "".join(pieces)
    while pieces and size + 1 > limit:
        size -= len(pieces.pop())
    return lead + "".join(pieces) + "…"
