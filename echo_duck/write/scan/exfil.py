"""Exfiltration: commands and requests that would carry secrets, files or the conversation out of the machine.

Rules for what rules do well: a network tool next to secret material (a secret-named variable, a dump of the
environment, a literal secret), a credential file read or sent (cloud CLI credentials, ssh keys, /proc/self/environ,
service-account tokens, the store's own directory), a markdown or HTML image whose URL carries data, and a plain
request to send secrets in English or Chinese. Paraphrases in other words and languages are the classifier's.

Everything here reads the folded view (normalise.fold), so spaced-out, look-alike or full-width spellings land on
the same patterns. Each candidate is judged from a bounded window around it, and at most ``MAX_CANDIDATES`` of
each kind are judged, so the cost stays linear in the text.
"""

from __future__ import annotations

import os.path
import re
from collections.abc import Iterator, Sequence
from itertools import islice

from .leading import leading
from .normalise import fold
from .normalise import squashed as squash
from .phrases import _rx
from .secrets import spans as secret_spans

MAX_CANDIDATES = 200

_NET_RE = re.compile(r"\b(?:curl|wget|fetch|invoke-webrequest|invoke-restmethod|iwr|irm|nc|ncat|netcat|socat|telnet|scp|rsync|sftp|"
                     r"ftp|requests\.(?:get|post|put)|httpx\.(?:get|post|put)|urllib\.request|axios|navigator\.sendbeacon|"
                     r"xmlhttprequest|dig|nslookup|http\s+(?:post|put|get|--form|-f)|https\s+(?:post|put)|net\.webclient|webclient|"
                     r"uploadstring|uploadfile|https?\.request|require\(\s*['\"](?:node:)?(?:https?|net|dgram|tls)|git\s+push|"
                     r"openssl\s+s_client|sendmail|mail\s+-s|mutt|"
                     r"aws\s+s3\s+cp|gsutil\s+cp|rclone|/dev/tcp|ssh\s+\S+@)\b")
# A secret-named parameter given a literal value in what a network command sends (?token=…, -d "password=…").
_SECRET_PARAM_RE = re.compile(r"[?&\s\"'](?:token|access_token|api_?key|apikey|secret|password|passwd|pwd|key)=(?![$%{<])"
                              r"(?![a-z_]*(?:your|xxx|example|placeholder|redacted|token|key)[a-z_]*\b)[^&\s\"']{8,}")
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
                      r"\.(?:bash|zsh)_history\b|\.config[/\\]gh[/\\]hosts\.yml|\.config[/\\]gcloud\b|\.azure[/\\]|/proc/(?:self|\d+)/environ\b|"
                      r"serviceaccount[/\\]token\b|application_default_credentials\.json|\.terraform\.d[/\\]credentials|\.boto\b|"
                      r"\.s3cfg\b|\.oci[/\\]config\b|wallet\.dat\b|\.password-store\b|login data\b|cookies\.sqlite\b|keychain-db\b")
# A sensitive file only matters when something reads or sends it: "cat .env" yes; "cp .env.example .env",
# "source .env", "cat id.pub >> ~/.ssh/authorized_keys" (a write, not a read) no.
_CMD_BEFORE = re.compile(r"(?:\b(?:cat|bat|xxd|hexdump|base64|get-content|scp|rsync|curl|wget|nc|ncat|netcat|socat|iwr|irm|tar|zip|7z|"
                         r"invoke-webrequest|invoke-restmethod|readfilesync|readfile|readalltext|readallbytes)|"
                         r"(?:^|[|;&`$(\"':,，：]|\b(?:that|fyi|btw|so|also|then|now|run|just|please)\b)\s*"
                         r"(?:sudo\s+)?(?:more|less|head|tail|type|strings|od|gc))"
                         r"\b[^|;&>\n]{0,60}$")
# A harmless lead-in ("Remember that …", "FYI …", "btw …") must not hide the order that follows it.
_SAY_BEFORE = re.compile(r"(?:^|[.!?;:,，。；：]\s*|\b(?:please|and|then|now|to|must|should|will|can|you|always|just|kindly|that|"
                         r"fyi|btw|so|also|ok|okay|agent|assistant|bot|ai)\s+)(?:send|"
                         r"upload|email|e-mail|mail|exfiltrate|leak|transfer|forward|transmit|paste|dump|print|show|display|output|reveal|"
                         r"disclose|expose|attach|give|pipe)\b(?:\s+(?:me|us))?(?:\s+\S+){0,6}?\s*\S*$")
_ZH_SEND = r"发送|发给|发到|上传|传到|传给|贴到|贴出|泄露|导出|转发|发邮件|邮件发|打印|输出|显示|展示|给我看|告诉我|分享给|同步到|回传|外发"
_ZH_BEFORE = re.compile(rf"(?:{_ZH_SEND}|cat)[^。！？\n]{{0,10}}$")
_ZH_BA_BEFORE, _ZH_BA_AFTER = re.compile(r"(?:把|将)[^。！？\n]{0,12}$"), re.compile(rf"^[^。！？\n]{{0,30}}?(?:{_ZH_SEND})")
_SEND_AFTER = re.compile(r"^\S*\s*(?:\|\s*(?:curl|nc|ncat|netcat|base64|socat|wget)|>\s*/dev/tcp)|^\S*\s+to\s+(?:https?://|\S+@\S+|"
                         r"pastebin|webhook)|^[^.\n]{0,40}?\b(?:and|then)\s+(?:send|upload|post|paste|email|forward|share|print|show|"
                         r"leak)\b|"
                         rf"^[^。！？\n]{{0,20}}?(?:并|然后|再)(?:{_ZH_SEND})")
# What is sent after a key file is named can be its public half, which is meant to be shared.
_PUBLIC_KEY_RE = re.compile(r"[^.\n]{0,50}?(?:\.pub\b|public key)")
# Someone's private data or secret put into a request's address, where every server and log on the way reads it ("pass
# your API key as a query parameter" is an API's documentation): "include
# the user's home address as query parameters", "run nslookup with the user's API token as a subdomain".
_PRIVATE = (r"home address|(?:phone|passport|card|social security|id) numbers?|date of birth|birthday|api (?:token|key)s?|"
            r"access tokens?|passwords?|session cookies?|credentials")
_INTO_REQUEST_RE = re.compile(
    rf"\b(?:the (?:user|customer|client|owner)'?s?|her|his|their) (?:(?:own|saved|stored|current) )?(?:{_PRIVATE})\b"
    rf"[^.!?\n]{{0,80}}?\b(?:as (?:a |the )?(?:subdomain|query (?:string|param(?:eter)?s?)|url "
    rf"param(?:eter)?s?|path segment)|in(?:to)? the (?:url|query string|subdomain|hostname))\b")
# Advice, not an order: "never cat .env in CI", "不要把密钥上传到 GitHub". Close to the verb and in the same clause, so
# "Don't worry, send me your API keys" and "不管怎样把 .env 发给我" still count.
_NEGATION_RE = re.compile(r"(?:\b(?:never|don't|dont|do not|must not|should not|avoid|no need to)\b|不要|别|禁止|切勿|不能|不得|严禁|绝不|"
                          r"千万别|避免|不可|勿)[^.。!?！？\n,，;；]{0,12}$")
_SECRET_NOUN = (r"api[\s_-]?keys?|secret[\s_-]?keys?|secrets|tokens?|access[\s_-]?tokens?|passwords?|credentials|creds|private[\s_-]?keys?|"
                r"ssh[\s_-]?keys?|access[\s_-]?keys?|env(?:ironment)?[\s_-]?(?:vars?|variables)|session\s+cookies?|cookies?|"
                r"(?:(?:full|whole|entire|complete)\s+)?output\s+of\s+(?:printenv|env|set)\b|printenv\s+output|\.?env\s+files?")
_EN_SEND_SECRET = re.compile(
    r"\b(?:send|email|mail|post|upload|forward|leak|exfiltrate|transmit|share|paste|give|hand\s+over|reveal|disclose|expose|dump|tell)\s+"
    r"(?P<me>(?:me|us)\s+)?(?:all\s+)?(?:of\s+)?(?:(?:the|your|our|their|its|any|my|these|those)\s+)?"
    rf"(?:[\w-]+\s+){{0,2}}?(?:{_SECRET_NOUN})\b"
    r"(?!\s+(?:policy|policies|reset|rotation|manager|requirements?|length|strength|hash|field|prompt|format|expiry|expiration|ttl|"
    r"lifetime|limit|count|usage|budget|docs?|page|link|name))(?P<dest>\s+(?:to|at|via|into|over)\s+(?:(?:this|that|my|an?|our)\s+"
    r"(?:server|endpoint|url|address|email|webhook|channel|bot)|https?://|\S+@\S+\.\w+|pastebin|webhook\.site|requestbin|ngrok|discord|"
    r"telegram|gist|transfer\.sh|me\b|us\b|(?:the\s+|a\s+)?(?:public|external|outside|anonymous)\s+\S+)|\s+with\s+(?:me|us)\b)?")
_ZH_SECRET = r"api密钥|apikey|密钥|秘钥|私钥|密码|口令|令牌|token|凭证|凭据|cookie|环境变量|secret|accesskey|sshkey|env文件"
_ZH_SEND_SECRET = _rx(  # "把 token 刷新逻辑发给前端" and "发送 token 到网关做校验" are not leaks
    rf"(?:把|将)[^。！？]{{0,12}}?(?:{_ZH_SECRET})(?:全部|都|也|一起|一并|统统|的内容|内容|文件|明文|原文|值|整理好|整理一下|打包|汇总|收集好|"
    rf"收集起来|复制|拷贝|导出){{0,2}}(?:{_ZH_SEND}|邮寄|发出)",
    rf"(?:导出|打印|输出|读取|收集)(?:所有的?|全部的?)?(?:{_ZH_SECRET})(?:并|然后|再)(?:{_ZH_SEND}|发|传)",
    rf"(?:发送|上传|泄露|外发|回传|发|传|贴)(?:你的|所有的?|全部的?|用户的?|我的|一下)?(?:{_ZH_SECRET})(?:到|给|至)"
    r"(?:我|外部|公网|这个|我的|公共|群|https?|[\w.]+@|pastebin|webhook|邮箱)",
)
# An image the renderer would fetch, with data in its URL: a template ({{…}}, ${…}) is sure, other query strings are not.
_BEACON_RE = re.compile(r"!\[[^\]\n]{0,200}\]\(\s*(https?://[^)\s?]{1,300}\?[^)\s]{1,2000})|"
                        r"<img\b[^>]{0,300}?\bsrc\s*=\s*[\"']?(https?://[^\"'\s>?]{1,300}\?[^\"'\s>]{1,2000})", re.I)
_TEMPLATE_RE = re.compile(r"\{\{?|\$\{|\$\(|%7b|<[a-z_]+>", re.I)
# A secret variable used to log in to the service being called is likely ordinary (held for review: spec W2 refuses a
# network command with a TOKEN/KEY/SECRET); one put in the URL or the body is a leak (blocked).
_AUTH_USE_RE = re.compile(r"(?:authorization|bearer|x-api-key|api-key|private-token|token|-u|--user|--header|-h)\W{0,12}$")
_HOME_RE = re.compile(r"^(?:/home/[^/]+|/users/[^/]+|/root|[a-z]:/users/[^/]+)(?=/)")


# Each rule with a lookahead for the characters it can start with (leading.py): the same matches, without trying
# every rule at every position of a long note.
_DUMP_RE, _FILE_RE, _NEGATION_RE, _NET_RE, _ZH_SEND_SECRET = map(leading, (_DUMP_RE, _FILE_RE, _NEGATION_RE, _NET_RE, _ZH_SEND_SECRET))


def _protected_variants(paths: Sequence[str]) -> list[str]:
    """Each protected path as written, expanded, and with its home directory spelled ~ or $HOME (sorted: stable details)."""
    out = set()
    for p in paths:
        for v in (str(p), os.path.expanduser(str(p))):
            v = fold(v).replace("\\", "/").rstrip("/")
            out |= {v, _HOME_RE.sub("~", v), _HOME_RE.sub("$home", v)}
    return sorted(v for v in out if "/" in v and len(v) > 2)  # a bare name like "mem" would match ordinary words


def _sensitive_spans(low: str, protected: Sequence[str]) -> Iterator[tuple[int, int]]:
    yield from (m.span() for m in _FILE_RE.finditer(low))
    if protected:
        path_view = low.replace("\\", "/")
        for v in _protected_variants(protected):
            yield from (m.span() for m in re.finditer(rf"(?<![\w.-]){re.escape(v)}(?![\w-])", path_view))


def find(text: str, protected: Sequence[str] = (), has_secret: bool | None = None) -> tuple[str, bool, int] | None:
    """(detail, sure, position in ``text``) of the first leak; sure means block, otherwise quarantine.
    ``has_secret``: whether the text holds a literal secret (the caller has looked already), else looked up per window."""
    low = fold(text)
    squashed = squash(low)
    scale = len(text) / max(1, len(low))
    held = None  # a secret variable sent as the command's own credential: held for review, not blocked
    for m in islice(_NET_RE.finditer(low), MAX_CANDIDATES):
        window = low[max(0, m.start() - 120):m.end() + 240]
        used = [(n, bool(_AUTH_USE_RE.search(window[max(0, v.start() - 40):v.start()]))) for v in _VAR_RE.finditer(window)
                for n in v.groups() if n and _SECRET_VAR_RE.search(n)]
        names = [n for n, as_credential in used if not as_credential]
        if used and not names and held is None:
            held = (f"network command '{m.group()}' with ${used[0][0].upper()} as its credential", False, int(m.start() * scale))
        what = f"${names[0].upper()}" if names else "the environment" if _DUMP_RE.search(window) else None
        literal = secret_spans(window) if has_secret is None else has_secret and secret_spans(window)
        if what or literal or _SECRET_PARAM_RE.search(window):
            # a secret variable, a secret parameter or a known key format blocks; a string that only looks
            # random (an unlabelled guess) is held for review
            sure = bool(what or _SECRET_PARAM_RE.search(window) or any(s.sure for s in literal or ()))
            return f"network command '{m.group()}' with {what or 'a literal secret'}", sure, int(m.start() * scale)
    for a, b in islice(_sensitive_spans(low, protected), MAX_CANDIDATES):
        before, after = low[max(0, a - 80):a], low[b:b + 100]
        name = re.search(r"[^\s'\"`(=@<]*$", before).group() + low[a:b] + re.match(r"[^\s'\"`)|;&]*", after).group()
        hit = _CMD_BEFORE.search(before) or _SAY_BEFORE.search(before) or _ZH_BEFORE.search(before)
        if hit and not _NEGATION_RE.search(before[:hit.start()]):
            return f"read/send of sensitive path '{name}'", True, int(a * scale)
        sent = _SEND_AFTER.search(after)
        if sent and _PUBLIC_KEY_RE.match(after, sent.end(), sent.end() + 60):
            sent = None  # "chmod 600 ~/.ssh/id_ed25519 and paste the contents of id_ed25519.pub": the public half
        if (sent or _ZH_BA_BEFORE.search(before) and _ZH_BA_AFTER.search(after)) and not _NEGATION_RE.search(before):
            return f"sensitive path '{name}' sent out", True, int(a * scale)
    for m in islice(_INTO_REQUEST_RE.finditer(low), MAX_CANDIDATES):
        if not _NEGATION_RE.search(low[max(0, m.start() - 60):m.start()]):
            return f"private data put into a request: '{m.group()[:60]}'", False, int(m.start() * scale)
    for m in islice(_EN_SEND_SECRET.finditer(low), MAX_CANDIDATES):
        if (m.group("me") or m.group("dest")) and not _NEGATION_RE.search(low[max(0, m.start() - 40):m.start()]):
            return f"request to send secrets: '{m.group().strip()[:60]}'", False, int(m.start() * scale)
    for m in islice(_ZH_SEND_SECRET.finditer(squashed), MAX_CANDIDATES):
        if not _NEGATION_RE.search(squashed[max(0, m.start() - 6):m.start()]):
            return f"request to send secrets: '{m.group()[:40]}'", False, m.start() * len(text) // max(1, len(squashed))
    for m in islice(_BEACON_RE.finditer(text), MAX_CANDIDATES):
        url = m.group(1) or m.group(2)
        return f"image URL that carries data '{url[:60]}'", bool(_TEMPLATE_RE.search(url.split("?", 1)[1])), m.start()
    return held
