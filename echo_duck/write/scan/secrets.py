"""Secrets: where they are in a text, how sure we are, and how to show the text without them.

Two kinds of evidence. A provider's token format (detect-secrets' pattern plugins and ours, in
secret_plugins.py) is precise: the write is blocked. A random-looking string right after a label word
(password, secret, token, API key, 密码, パスワード, contraseña, пароль, … in the corpus's languages)
is likely but not certain: the write is quarantined. Documentation values (AKIA…EXAMPLE, sk-xxxx…,
${VAR}, <your-key>) are neither. The second half of a key pair (an AWS secret key after its key id)
is found and masked with the first.

``spans(text)`` gives every secret's position; ``mask(text, spans)`` replaces each by "****" whole:
no prefix, no last characters, in whatever script the text is written (full-width letters are read
as ASCII, position for position, so they are found and masked too).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass

from .leading import leading
from .memo import per_text
from .secret_shapes import spans as shape_spans

# Full-width letters, digits and the symbols keys use, read as ASCII (position for position); full-width punctuation
# (，：；) stays, so it still ends a token as it does for a CJK reader.
_HALF_WIDTH = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F) if chr(cp - 0xFEE0).isalnum() or chr(cp - 0xFEE0) in "-_/+="} \
    | {0x3000: 0x20}
_PLACEHOLDER_RE = re.compile(r"example(?:key)?$|(?<![a-z0-9])example(?![a-z0-9])|placeholder|your|xxxx|changeme|redacted|"
                             r"dummy|sample|\*\*\*|^\$\{?[A-Za-z_]\w*\}?$|^<.*>?$|^%\w+%$|^\{\{|^~?/|^AAAA[BC]3NzaC1|(.)\1{5,}|"
                             r"(?-i:^my[A-Z][a-z]+(?:[A-Z][a-z]+)*;?$)", re.I)  # Password=myPassword: the docs' own
# Words that label a password (any value after them is a credential) and words that label other secrets (only a
# random-looking value counts). Latin words must end there ("passage" is no label); others may run into the value.
_STRONG_LATIN = r"pass(?:word|wd|phrase|code)?|pwd|passwort|kennwort|contraseña|senha|mot de passe|mdp|wachtwoord|parola|" \
                r"mật khẩu|mat khau|kata sandi|lösenord|adgangskode|passord"
_STRONG_OTHER = r"hasł|hasl|şifre|sifre|salasana|heslo|jelsz|密码|密碼|口令|パスワード|暗証番号|비밀번호|암호|пароль|كلمة المرور|كلمة مرور|كلمة السر|סיסמה|סיסמא|पासवर्ड|รหัสผ่าน"
_WEAK_LATIN = r"secret|token|api[\s_-]?key|apikey|access[\s_-]?key|private[\s_-]?key|signing[\s_-]?key|credentials?|login|" \
              r"auth|key|codes?|psk|bearer|authorization|clave|chave|schlüssel|clé|ключ|токен"
_WEAK_OTHER = r"密钥|密鑰|秘钥|令牌|凭证|憑證|签名|加签|トークン|シークレット|キー|시크릿|토큰|키|مفتاح|סוד|कुंजी"
_LABEL_RE = re.compile(rf"(?i)(?<![a-z])(?:(?P<strong>(?:{_STRONG_LATIN})(?-i:(?![a-z]))|{_STRONG_OTHER})|"
                       rf"(?:{_WEAK_LATIN})(?-i:(?![a-z]))|{_WEAK_OTHER})")
_LABEL_RE = leading(_LABEL_RE)  # the same matches, tried only where a label can start (leading.py)
# Only a Latin label needs a word start: "Wi-Fiパスワード" is labelled as much as "パスワード" (a second pattern: one
# with the word start inside its Latin branches tried more positions).
_GLUED_LABEL_RE = leading(re.compile(rf"(?<=[A-Za-z])(?:(?P<strong>{_STRONG_OTHER})|{_WEAK_OTHER})"))
_TOKEN_RE = re.compile(r"[!-~]{8,128}")
_TOKEN_RUN_RE = re.compile(r"[!-~]{8,}")
_NOT_TOKEN_RE = re.compile(r"^(?:https?://|https?/\d|www\.|/|~/|\.{0,2}/)|^[\w.+-]+@[\w-]+\.[\w.]+$|^[\w-]+\.(?:com|org|net|io|md|txt|"
                           r"json|ya?ml|py|sh|env|example)$|^\d{4}-\d\d-\d\d|^[\d\s:.,/-]+$", re.I)
_HEX_RE = re.compile(r"(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{16,}|(?=[0-9A-F]*[A-F])(?=[0-9A-F]*\d)[0-9A-F]{16,}")
_ACCOUNT_RE = re.compile(r"(?<![\w.+@-])[\w.+@-]{1,64} [/|] ")
_UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_ASSIGN_RE = re.compile(r"['\"]?\s*(?:[:=：]|is|是|为)\s*['\"]?")  # key=<uuid>, "token is <uuid>"
_PAIR_RE = re.compile(r"[A-Za-z0-9/+=_-]{20,100}")
_CLASSES = (re.compile(r"[a-z]"), re.compile(r"[A-Z]"), re.compile(r"\d"), re.compile(r"[^A-Za-z0-9_.\-/]"))
_CODE_RE = re.compile(r"^-|\$\{|\$\(|^\$[A-Za-z_]|[(\[{'\"<>]|^[a-z]+[:=]|https?:|\.(?:py|ya?ml|json|md|sh|txt)$")
_GENERIC_PREFIX = ("sk-", "key-", "AC", "SK")  # inside a longer word ("risk-assessment-2024…") these are not keys
_WEAK_KINDS = {"Basic Auth Credentials", "connection-string password"}


@dataclass(frozen=True)
class Secret:
    start: int
    end: int
    kind: str
    sure: bool  # a provider's format (block) rather than a labelled random string (quarantine)


@functools.lru_cache(maxsize=1)
def _plugins():
    """(kind, pattern, the literal strings every match contains): a text without one of them cannot match,
    so the pattern is not run over it (a 100,000-character note went through all 75 patterns: ~70 ms)."""
    from .secret_plugins import PLUGINS  # detect-secrets is imported on the first scan, not with echo_duck

    return [(p.secret_type, rx, _required_literals(rx)) for p in PLUGINS for rx in p.denylist]


def _required_literals(rx: re.Pattern) -> tuple[str, ...]:
    """Runs of plain characters in the pattern's top-level sequence (outside any alternation, repeat or
    group with its own flags): each is in every match. In a case-insensitive pattern only ASCII digits and
    symbols count (no other character folds to one of them)."""
    import re._parser as parser  # noqa: PLC0415 - only when the plugins load

    caseless = bool(rx.flags & re.IGNORECASE)
    runs, current = [], []

    def walk(items) -> None:
        for op, arg in items:
            if op == parser.LITERAL and arg < 128 and not (caseless and chr(arg).isalpha()):
                current.append(chr(arg))
                continue
            if op == parser.SUBPATTERN and not arg[1] and not arg[2]:  # a plain group: its items in sequence
                walk(arg[3])
                continue
            if current:
                runs.append("".join(current))
                current.clear()

    walk(parser.parse(rx.pattern, rx.flags & ~re.UNICODE).data)
    if current:
        runs.append("".join(current))
    return tuple(runs)


def entropy(s: str) -> float:
    counts = Counter(s)
    return -sum(c / len(s) * math.log2(c / len(s)) for c in counts.values())


def _class_of(ch: str) -> int:
    return 0 if ch.islower() else 1 if ch.isupper() else 2 if ch.isdigit() else 3


_WORD_RE = re.compile(r"(?:[A-Z]?[a-z]+|[A-Z]+)[,.;:!?)]*")


def _plain_value(token: str) -> bool:
    return not (len(token) < 8 or _WORD_RE.fullmatch(token) or _CODE_RE.search(token) or _PLACEHOLDER_RE.search(token) or _NOT_TOKEN_RE.search(token))


def random_looking(token: str) -> bool:
    """A key rather than an identifier, path, flag, file name or word: three kinds of character (lower, upper,
    digit, symbol) that change often, or mixed case that changes often, or a long mixed hex string."""
    if not _plain_value(token):
        return False
    if _HEX_RE.fullmatch(token):
        return entropy(token) >= 3.0
    classes = sum(bool(rx.search(token)) for rx in _CLASSES)
    changes = sum(1 for a, b in zip(token, token[1:]) if _class_of(a) != _class_of(b)) / (len(token) - 1)
    if classes >= 3 and (changes >= 0.3 or len(token) >= 20) and entropy(token) >= 3.0:
        return len(token) >= 10 or bool(_CLASSES[3].search(token))
    mixed_case = classes == 2 and bool(_CLASSES[0].search(token)) and bool(_CLASSES[1].search(token))
    return mixed_case and changes >= 0.4 and len(token) >= 10 and entropy(token) >= 3.2


def password_like(token: str) -> bool:
    """After a password label: any value of 8+ characters with a digit or symbol that is not code or a placeholder."""
    if not _plain_value(token):
        return False
    if random_looking(token):
        return True
    symbol = bool(_CLASSES[3].search(token))
    return ("/" not in token and bool(re.search(r"\d", token)) and bool(re.search(r"[A-Za-z]", token))
            and (len(token) >= 10 or symbol))


def url_password_like(value: str) -> bool:
    """The password of user:password@host: six characters or more, two kinds, not a ${VAR} or a word."""
    if len(value) < 6 or value.startswith(("${", "$(", "{{", "<")) or _PLACEHOLDER_RE.search(value):
        return False
    return sum(bool(rx.search(value)) for rx in _CLASSES) >= 2


def _ascii_letter_before(text: str, a: int) -> bool:
    return a > 0 and text[a - 1].isascii() and (text[a - 1].isalnum() or text[a - 1] == "_")


def spans(text: str) -> list[Secret]:
    """Every secret in ``text``, sorted by position, overlaps merged (the surer kind wins). A scan asks for the same
    text's secrets more than once (the rules, then the excerpt that masks them): remembered (memo.py)."""
    return list(_spans_remembered(text))


@per_text
def _spans_remembered(text: str) -> tuple[Secret, ...]:
    return tuple(_spans(text))


def _spans(text: str) -> list[Secret]:
    t = text.translate(_HALF_WIDTH)
    found: list[Secret] = []
    for kind, rx, needs in _plugins():
        if not all(n in t for n in needs):
            continue
        for m in rx.finditer(t):
            a, b = next(((m.start(g), m.end(g)) for g in range(m.re.groups, 0, -1) if m.group(g)), m.span())
            if kind == "GitHub Token":
                a, b = m.start(), m.end() + len(re.match(r"[A-Za-z0-9_.=-]*", t[m.end():m.end() + 2000]).group())
            if label := re.match(r"[A-Za-z_]{3,30}=", t[a:b]):  # AccountKey=<key>: the key
                a += label.end()
            value = t[a:b]
            if _PLACEHOLDER_RE.search(value) or _PLACEHOLDER_RE.search(m.group()):
                continue
            if _ascii_letter_before(t, m.start()) and m.group().startswith(_GENERIC_PREFIX) \
                    and not m.group().startswith(("sk-proj-", "sk-ant-", "sk-svcacct-", "sk-admin-")):
                continue
            if kind in _WEAK_KINDS and not url_password_like(value):
                continue  # postgres://dev:dev@localhost is a documented local default
            if kind == "Private Key":
                end = t.find("-----END", b)
                close = t.find("-----", end + 8) if end >= 0 else -1
                b = len(t) if close < 0 else close + 5
                if not re.search(r"[A-Za-z0-9+/=]{40}", t[a:b]):
                    if end >= 0:
                        continue  # a header with "...redacted..." in place of the key
                    found.append(Secret(a, b, kind, False))  # a header alone: maybe the start of a pasted key
                    continue
            found.append(Secret(a, b, kind, kind != "JSON Web Token"))  # a JWT may be a published sample
            pair = _PAIR_RE.search(t, b, min(len(t), b + 80))
            if pair:
                value = re.split(r"[=:]", pair.group())[-1]  # AWS_SECRET_ACCESS_KEY=<value>: the value
                if random_looking(value):
                    found.append(Secret(pair.end() - len(value), pair.end(), f"{kind} (paired secret)", True))
    runs = [r.span() for r in _TOKEN_RUN_RE.finditer(t)]  # where a token (8+ printable ASCII) can start
    run_ends = [b for _, b in runs]
    values: dict[str, tuple[str, int]] = {}  # raw token -> (value, its offset): a long note repeats its tokens
    verdicts: dict[tuple[bool, str], bool] = {}  # (strong label, value) -> password_like / random_looking
    # What follows a label decides alone (the 168 characters after it): a long note that repeats its labels and values
    # is read once per distinct (label strength, what follows).
    seen: dict[tuple[bool, str], tuple[int, int] | None] = {}
    for m in itertools.chain(_LABEL_RE.finditer(t), _GLUED_LABEL_RE.finditer(t)) if runs else ():  # no token: no value
        first = bisect.bisect_left(run_ends, m.end() + 8)  # the first run with 8 characters after the label
        if first == len(runs) or runs[first][0] > m.end() + 40:
            continue  # no token starts within 40 characters of it (a note that repeats 密码 in prose)
        key = (bool(m.group("strong")), t[m.end():m.end() + _AFTER_LABEL])
        if key not in seen:
            seen[key] = _labelled(key[1], key[0], values, verdicts)
        if (hit := seen[key]) is not None:
            found.append(Secret(m.end() + hit[0], m.end() + hit[1], "labelled credential", False))
    for m in _ACCOUNT_RE.finditer(t) if " / " in t or " | " in t else ():  # "user / password": a pass only then
        tok = _TOKEN_RE.match(t, m.end())
        value = tok.group().rstrip("'\"`.,;:)]}>") if tok else ""
        if value and random_looking(value):
            found.append(Secret(tok.start(), tok.start() + len(value), "account password", False))
    found += [Secret(a, b, kind, sure) for a, b, kind, sure in shape_spans(t)]
    return _merged(found)


_AFTER_LABEL = 168  # characters after a label where its value is looked for (a token starting within the first 40)


_SETTING_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\s*[=:]")
_NAME_LABEL_RE = re.compile(r"(?i)(?:\b(?:ssid|network name|wi-?fi name|user ?name|login|account name)|"
                            r"网络名|无线名称|用户名|账号名?)\s*[:：=]?\s*$")


def _labelled(after: str, strong: bool, values: dict, verdicts: dict) -> tuple[int, int] | None:
    """Where in ``after`` (the text right after a label) the label's value is, when it looks like a credential."""
    for tok in _TOKEN_RE.finditer(after):
        if tok.start() > 40:
            break
        raw = tok.group()
        if "\n" in after[:tok.start()] and _SETTING_RE.match(raw):
            break  # another setting's line ("API_KEY=<your key>" / "DATABASE_URL=…"): the label's value was on its own
        if _NAME_LABEL_RE.search(after, 0, tok.start()):
            continue  # the value of another label right before it ("密码在标签上，网络名 TP-LINK_5G"): a name
        if raw not in values:
            values[raw] = _labelled_value(raw)
        token, offset = values[raw]
        start = tok.start() + offset
        if (strong, token) not in verdicts:
            verdicts[strong, token] = (password_like if strong else random_looking)(token)
        if verdicts[strong, token] or _UUID_RE.fullmatch(token) and _ASSIGN_RE.fullmatch(after, 0, start):
            return start, start + len(token)
    return None


def _labelled_value(raw: str) -> tuple[str, int]:
    """The value a token after a label holds, and where it starts in the token: trailing quotes and
    punctuation off, NAME=value inside one token ("_ACCESS_KEY=5Spe…") reduced to the value."""
    token = raw.rstrip("'\"`.,;:)]}>")
    if "://" not in token:
        token = re.split(r"[=:]", token)[-1] if re.search(r"[=:].", token) else token
    token = token.lstrip("=:'\"`")
    return token, raw.rfind(token) if token else 0


def _merged(found: list[Secret]) -> list[Secret]:
    out: list[Secret] = []
    for s in sorted(found, key=lambda s: (s.start, -s.end)):
        if out and s.start < out[-1].end:
            last = out[-1]
            out[-1] = Secret(last.start, max(last.end, s.end), last.kind if last.sure or not s.sure else s.kind,
                             last.sure or s.sure)
        else:
            out.append(s)
    return out


def mask(text: str, found: list[Secret]) -> str:
    """``text`` with each secret replaced by ****."""
    out, at = [], 0
    for s in found:
        out += [text[at:s.start], "****"]
        at = s.end
    return "".join(out) + text[at:]
