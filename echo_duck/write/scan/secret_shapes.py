"""Secrets that are not random strings: short codes after a PIN or password label, payment card numbers, national
identity numbers (id_numbers.py: more identity documents), wallet recovery phrases, Google app passwords, passwords
given to a command on its command line and one-time-password seeds in an authenticator's link.

secrets.py finds provider formats and random-looking values after a label; none of these is random-looking (a PIN
is four digits, a recovery phrase is twelve dictionary words), so each needs its own shape. All are evidence for
a person to look at (quarantine), except a recovery phrase whose BIP-39 checksum holds, which is one for sure.
``spans(text)`` gives (start, end, kind, sure) for each, on the half-width text secrets.py reads.
"""

from __future__ import annotations

import datetime
import functools
import re

from .id_numbers import shown_as_example, spans as id_spans
from .leading import leading

# Labels of a short numeric code. "PIN" in capitals only (a pin is also a pin); password labels of every language
# secrets.py knows; the payment, card and phone-unlock words.
_CODE_LABEL = (r"(?-i:PIN)(?:[\s-]?(?:code|kode|número|numero|nummer|码|碼))?|passcode|unlock code|security code|"
               r"cvv2?|cvc2?|cryptogramme|code secret|code confidentiel|geheimzahl|pin-code|codice pin|código pin|"
               r"password|passwort|contraseña|senha|mot de passe|пароль|пин-код|пин|şifre|hasło|heslo|"
               r"密码|密碼|支付密码|支付密碼|取款密码|口令|暗証番号|パスコード|パスワード|비밀번호|암호|"
               r"كلمة المرور|رمز|סיסמה|पिन|पासवर्ड|รหัสผ่าน|รหัส")
# Between the label and the code: a few characters of "is", ":", "=", quotes and CJK particles.
_JOIN = r"(?:\s|[:：=「『\"'“]|is|was|ist|est|es|é|è|è il|是|为|為|は|：|는|은|:)"
# Right after the label ("PIN 5821", "密码是 604917"), or after a few words and a colon or "is" ("Geheimzahl der
# EC-Karte: 7302", "PIN for the garage is 5821").
_CODE_RE = leading(re.compile(rf"(?i)(?<![a-z])(?:{_CODE_LABEL})(?-i:(?![a-z]))(?:{_JOIN}{{0,6}}|[^\d\n:：=@/<>]{{1,24}}"
                              rf"(?:[:：=]|\sis|\sist|是|为|は)\s*)(?<![\d.,])(\d{{4,8}})"
                              r"(?![\d.,]\d|\s*(?:位|桁|자리|digits?|characters?|chars|stellig|chiffres|dígitos|cifre|"
                              r"знак|%|年|x\d))"))
_FOUR_DIGITS_RE = re.compile(r"\d{4}")
_SEQUENCES = "0123456789012345678"
_CARD_RE = re.compile(r"(?<![\w-])(?:[2-6]\d{3}(?:([ -]?)\d{4}){2}[ -]?\d{1,7}|3[47]\d{2}([ -]?)\d{6}[ -]?\d{5})(?![\w-])")
# A run of digits with no separators is a card only next to a word for one (else an order, parcel or account number).
_CARD_WORD_RE = re.compile(r"(?i)card|carte|tarjeta|karte|kaart|carta|cartão|cartao|карт|kart|visa|master|amex|卡|カード|카드|بطاقة")
# Published test cards (payment providers' documentation): examples, not secrets.
_TEST_CARDS = {"4111111111111111", "4242424242424242", "4000056655665556", "5555555555554444", "5200828282828210",
               "5105105105105100", "378282246310005", "371449635398431", "6011111111111117", "3566002020360505",
               "4012888888881881", "4000000000000002", "2223003122003222", "6011000990139424",
               # Stripe's documented test cards beyond the first (3D Secure, declines, other brands and countries)
               "4000002760003184", "4000002500003155", "4000000000003220", "4000000000009995", "4000000000009987",
               "4000000000009979", "4000000000000069", "4000000000000127", "4000000000000119", "4000000000000101",
               "4000000000000341", "4000000000000077", "4100000000000019", "3056930009020004", "36227206271667",
               "6200000000000005", "4000000760000002", "4000001240000000"}
# Words that say the card numbers after them are documentation: "Stripe test cards: …", "测试卡号：…"
_TEST_CONTEXT_RE = re.compile(r"(?i)\btest(?:ing)?[\s-]+(?:mode\s+)?cards?\b|\btest mode\b|\bsandbox\b|"
                              r"测试(?:卡|环境|模式)|沙箱")
# National identity numbers: a Chinese resident ID (18 characters: region, a real birth date, a sequence, the ISO 7064
# MOD 11-2 check character, which a random 18-digit run passes one time in eleven) and a US Social Security number
# after its label (not the never-issued 000, 666 and 9xx areas).
_CN_ID_RE = re.compile(r"(?<![\dA-Za-z])([1-8]\d{5})((?:19|20)\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])\d{3}[\dXx]"
                       r"(?![\dA-Za-z])")
_CN_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CN_ID_EXAMPLES = {"11010519491231002X"}  # GB 11643's worked example, the one documentation and tests use
_SSN_RE = re.compile(r"(?i)(?<![a-z])(?:ssn|social security(?: number| no\.?| #)?)\W{0,12}(?:is\W{1,4})?"
                     r"(?!000|666|9)(\d{3}-(?!00)\d{2}-(?!0000)\d{4})(?![\d-])")
_APP_PASSWORD_RE = leading(re.compile(r"(?i)(?<![a-z])(?:app[\s-]?password|app[\s-]?passwort|application password|"
                                      r"mot de passe d'application|contraseña de aplicación|应用专用密码|アプリ パスワード|"
                                      r"アプリパスワード|password)(?![a-z])\W{0,12}(?:is\W{1,4})?"
                                      r"((?-i:[a-z]{4}) (?-i:[a-z]{4}) (?-i:[a-z]{4}) (?-i:[a-z]{4}))(?![a-z])"))
_APP_WORDS = ("password", "passwort", "mot de passe", "contraseña", "应用专用密码", "パスワード")
# A password given to a command: mysql -pSECRET / -p'SECRET', sshpass -p SECRET (PGPASSWORD=… is a label: secrets.py).
# A one-time-password seed in an authenticator app's link (otpauth://totp/Issuer:account?secret=BASE32…): whoever
# reads it makes the second factor's codes.
_OTPAUTH_RE = re.compile(r"(?i)otpauth://[ht]otp/[^\s?]{0,120}\?(?:[^\s#]{0,200}?&)?secret=([a-z2-7]{16,128})(?![a-z2-7])")
_CLI_RE = leading(re.compile(r"(?<![\w-])(?:(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]{0,120}?\s-p(['\"]?)"
                             r"([^\s'\"]{6,64})\1(?!\S)|sshpass\s+-p\s*(['\"]?)([^\s'\"]{6,64})\3(?!\S))"))
_SEED_WORD_RE = re.compile(r"[^\W\d_]{3,8}")
# What may stand between two words of a phrase ("1. fix 2.skirt", "(3)wheel", "fix-skirt").
_SEED_GAP = r"[\s,;·-]|\d{1,2}[.)]|\(\d{1,2}\)"
_SEED_GAP_RE = re.compile(rf"(?:{_SEED_GAP})*")
# Anything but letters separates the prefilter's words (a superset of the gaps: "助记词：harbor …" starts at harbor)
_SEED_SPLIT_RE = re.compile(r"[\W\d_]+")
SEED_WORDS = 12


def spans(t: str) -> list[tuple[int, int, str, bool]]:
    out = []
    digits = _FOUR_DIGITS_RE.search(t) is not None  # a code or a card has four digits in a row: else neither pass
    for m in _CODE_RE.finditer(t) if digits else ():
        code = m.group(1)
        if len(set(code)) > 1 and code not in _SEQUENCES and code not in _SEQUENCES[::-1]:  # not 0000, 1234, 4321
            out.append((m.start(1), m.end(1), "labelled PIN or code", False))
    for m in _CARD_RE.finditer(t) if digits else ():
        number = re.sub(r"\D", "", m.group())
        spaced = bool(m.group(1) or m.group(2))
        if not spaced and not _CARD_WORD_RE.search(t, max(0, m.start() - 40), m.start()):
            continue
        if _TEST_CONTEXT_RE.search(t, max(0, m.start() - 120), m.start()):
            continue  # a card listed after "test cards" / "sandbox": documentation
        if 13 <= len(number) <= 19 and number not in _TEST_CARDS and len(set(number)) > 2 and _luhn(number):
            out.append((m.start(), m.end(), "payment card number", False))
    for m in _CN_ID_RE.finditer(t) if digits else ():
        if _cn_id_valid(m) and m.group().upper() not in _CN_ID_EXAMPLES and not shown_as_example(t, m.start()):
            out.append((m.start(), m.end(), "national identity number", False))
    for m in _SSN_RE.finditer(t) if digits else ():
        out.append((m.start(1), m.end(1), "national identity number", False))
    low = t.lower()  # the app-password and command-line patterns run only where their words are (a pass each)
    for m in _APP_PASSWORD_RE.finditer(t) if any(w in low for w in _APP_WORDS) else ():
        out.append((m.start(1), m.end(1), "app password", False))
    for m in _CLI_RE.finditer(t) if "mysql" in low or "mariadb" in low or "sshpass" in low else ():
        g = 2 if m.group(2) else 4
        if not m.group(g).startswith(("$", "<", "{", "%")):
            out.append((m.start(g), m.end(g), "command-line password", False))
    for m in _OTPAUTH_RE.finditer(t) if "otpauth:" in low else ():
        out.append((m.start(1), m.end(1), "one-time-password seed", False))
    out += id_spans(t) if digits else []
    out += _seed_phrases(t)
    return out


def _cn_id_valid(m: re.Match[str]) -> bool:
    """A real birth date (not in the future) and the check character that ISO 7064 MOD 11-2 gives the first 17."""
    try:
        born = datetime.date(int(m.group(2)), int(m.group(3)), int(m.group(4)))
    except ValueError:
        return False
    number = m.group().upper()
    check = "10X98765432"[sum(int(d) * w for d, w in zip(number, _CN_ID_WEIGHTS)) % 11]
    return born <= datetime.date.today() and number[17] == check


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


@functools.lru_cache(maxsize=1)
def _wordlists() -> tuple[dict[str, frozenset[str]], dict, frozenset[str]]:
    """BIP-39's alphabetic word lists (the mnemonic package: Trezor's reference implementation), their checkers, and
    every word of any of them."""
    try:
        from mnemonic import Mnemonic  # noqa: PLC0415 - on the first scan, not with echo_duck
    except ImportError:
        return {}, {}, frozenset()
    names = ("english", "spanish", "french", "italian", "portuguese", "czech", "turkish")
    checkers = {n: Mnemonic(n) for n in names}
    lists = {n: frozenset(c.wordlist) for n, c in checkers.items()}
    return lists, checkers, frozenset().union(*lists.values())


def _seed_phrases(t: str) -> list[tuple[int, int, str, bool]]:
    """Runs of SEED_WORDS or more words of one BIP-39 list, separated by spaces, commas or numbering."""
    lists, checkers, words = _wordlists()
    return _seed_runs(t, lists, checkers) if lists and _may_hold_seed(t, words) else []


def _may_hold_seed(t: str, words: frozenset[str]) -> bool:
    """SEED_WORDS listed words in a row, split at the gaps _seed_runs allows between them (so never fewer than it
    finds): a pass over the text's tokens (a regex over every position of a 100,000-character note cost ~15 ms), each
    token's membership a byte, the run looked for in them (a loop in Python over them cost ~8 ms)."""
    return b"\x01" * SEED_WORDS in bytes(map(words.__contains__, _SEED_SPLIT_RE.split(t)))


def _seed_runs(t: str, lists: dict, checkers: dict) -> list[tuple[int, int, str, bool]]:
    out, run, langs, end = [], [], set(), 0
    for m in _SEED_WORD_RE.finditer(t):
        w = m.group()  # seeds are written in lower case ("Fire Spin, Flame Wheel, …" is a list of names)
        still = {n for n in langs if w in lists[n]} if run and _SEED_GAP_RE.fullmatch(t, end, m.start()) else set()
        if still:
            run.append(m)
            langs = still
        else:
            _close(run, langs, checkers, out)
            langs = {n for n, words in lists.items() if w in words}
            run = [m] if langs else []
        end = m.end()
    _close(run, langs, checkers, out)
    return out


def _close(run: list, langs: set[str], checkers: dict, out: list) -> None:
    if len(run) < SEED_WORDS:
        return
    words = [m.group() for m in run]
    if len(set(words)) < 0.75 * len(words):  # "word word word …": a seed repeats a word rarely
        return
    sure = len(words) <= 48 and any(checkers[n].check(" ".join(words[i:i + k])) for n in sorted(langs)
                                    for k in (12, 15, 18, 21, 24) for i in range(len(words) - k + 1))
    out.append((run[0].start(), run[-1].end(), "wallet recovery phrase", sure))
