"""Commands that hand the machine over or wreck it, stored for an agent to run later.

An agent with a shell, file or database tool reads its memories as context; a stored note that tells it to pipe a
download into a shell, open a reverse shell, wipe a system path or switch a safeguard off is an attack whatever words
frame it, and the classifier (trained mostly on prose) reads many of them as ordinary developer notes. Rules, by
what the command does, not by what the note says. Always:

  * code fetched and run: a download piped into a shell or interpreter, or evaluated (curl … | sh, iex (iwr …),
    bash -c "$(wget …)"), unless it comes from named https hosts only (an official installer one-liner is a normal
    note: "install rustup with curl … https://sh.rustup.rs | sh");
  * a shell handed to another machine: nc/ncat -e, /dev/tcp/, bash -i >&, socat exec:;
  * rm -rf of the root or the home folder, chmod/chown -R of the root, a fork bomb; sudo aliased; a scheduled job
    calling a public address or a public plain-http URL.

What a person also does to their own machines (a note may be a runbook, or a record of what the user did) counts
only when the note waves confirmation away ("no need to ask", "without telling the user", "不用确认"): rm -rf of a
system folder, mkfs or dd onto a disk, SELinux, the firewall, the antivirus or TLS checks off, passwordless sudo,
/etc/hosts pointing a public name elsewhere, dropping data or DELETE / UPDATE without a real WHERE, terraform
destroy, kubectl delete of namespaces or everything, a forced push to main or master, a downloaded installer from
a named https host.

A command with a negation just before it ("never run rm -rf /", "禁止 git push --force") is advice, and a note that
calls it an attack (a post-mortem, an advisory) a report: neither is an order.
Evidence for a person to look at, never proof: each finding only quarantines (verdict.py blocks when the classifier
agrees strongly). Reads the folded view (normalise.fold), a bounded number of candidates, so the cost is linear.
"""

from __future__ import annotations

import re
from itertools import islice

from .normalise import fold
from .phrases import _rx  # one pattern of any of the parts

MAX_CANDIDATES = 50


_NEGATION_BEFORE = re.compile(
    r"(?:\b(?:never|don'?t|do not)\b(?!\s+(?:forget|hesitate|skip|wait))|\bavoid\b|\bban(?:ned|s)?\b|\bforbid|"
    r"\bnot allowed\b|\bmust not\b|\bshould not\b|\bwithout running\b|禁止|不要|不准|不得|切勿|严禁|别再?|不能|避免)"
    r"[^.!?。！？\n]{0,40}$")
# The note waves confirmation away or hides the act from the user: what turns a risky but ordinary command into an
# order. Not a schedule ("at startup", "each session", "silently" in an ops note describe automation).
_WAIVED = _rx(
    r"\b(?:no need to (?:ask|confirm|check|tell)|without (?:asking|confirm\w*|telling|checking)|"
    r"(?:don'?t|do not|never) (?:ask|confirm|tell|mention|notify)|skip (?:the )?confirm\w*)\b",
    r"不(?:需要|用|必|要)(?:再)?(?:确认|征求|询问|告诉|通知|备份)|无需(?:确认|询问|告诉|备份)|别告诉|悄悄")
# A note that calls the command an attack just before it is a report of one (a post-mortem, an advisory).
_REPORT = _rx(r"\b(?:malicious|malware|attacker|compromised|post-?mortem|advisory|threat intel|honeypot|iocs?|"
               r"phishing|injected)\b", r"恶意|攻击者|复盘|事故|漏洞")
REPORT_BEFORE = 200  # characters before a command in which a report word frames it
_FETCH = r"(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b"
_RUNNER = (r"(?:sudo(?:\s+-\w+)*\s+)?(?:/usr)?(?:/bin/)?(?:env\s+)?(?:ba|z|k|da|fi)?sh\b|python[23]?\b|perl\b|ruby\b|"
           r"node\b|iex\b|invoke-expression\b|pwsh\b|powershell\b")
_PIPE_RUN = _rx(
    rf"{_FETCH}[^|;&\n]{{0,100}}(?:://|\w\.\w|\$\{{?\w)[^|;&\n]{{0,100}}\|\s*(?:{_RUNNER})",
    rf"(?:ba|z)?sh\s+(?:-c\s+)?[\"']?(?:\$\(|<\(|`)\s*{_FETCH}",
    rf"(?:iex|invoke-expression)\s*\(?\s*(?:\(?\s*new-object\s+net\.webclient|{_FETCH})",
    rf"\beval\s*[\"'(]?\s*\$\(\s*{_FETCH}")
# A scheduled job that calls out to a public address or over plain http to a public host: a beacon, not a backup
# (loopback and private networks are the user's own).
_LOCAL = r"(?:localhost|127\.|10\.|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.)"
_CRON_CALL = re.compile(rf"(?:(?:\*|\d+)(?:/\d+)?\s+){{4}}(?:\*|\d+)\s+[^\n]{{0,80}}{_FETCH}[^\n]{{0,40}}"
                        rf"(?:http://(?!{_LOCAL})|(?<![\w.])(?!{_LOCAL})\d{{1,3}}(?:\.\d{{1,3}}){{3}})")
_URL = re.compile(r"(https?)://([^/\s'\"`|)]+)")
_IP_HOST = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?$")
_REVERSE_SHELL = _rx(
    r"\b(?:nc|ncat|netcat)\b[^|;\n]{0,80}\s(?:-[a-z]*[ec]|--(?:sh-)?exec)[\s=]*[\"']?/?(?:usr/)?(?:bin/)?"
    r"(?:ba|z)?sh\b",
    r"/dev/tcp/", r"\bbash\s+-i\s*>&", r"\bsocat\b[^\n]{0,80}\bexec:", r"\bmkfifo\b[^\n]{0,80}\b(?:nc|ncat)\b",
    r"socket\.socket\([^\n]{0,200}(?:subprocess|pty\.spawn|os\.dup2)")
_SYSTEM_DIRS = r"(?:etc|var|usr|bin|sbin|boot|lib|lib64|home|opt|root|srv|dev|sys|system32|windows|users)"
_RM_FLAGS = (r"(?:-[a-z]*r[a-z]*f[a-z]*|-[a-z]*f[a-z]*r[a-z]*|--recursive\s+--force|--force\s+--recursive|"
             r"-r\s+-f|-f\s+-r)")
_END = r"(?=[\s;&|`'\"]|$)"
# the root or the home folder: nobody's runbook wipes those
_RM_ROOT = rf"(?:/\*?|~/?\*?|[\"']?\$\{{?home\}}?[\"']?/?\*?|[a-z]:\\\\?\*?){_END}"
# a system folder, or everything in one (not a program's own folder: /opt/nvim): a runbook may ("rm -rf /var/tmp/*")
_RM_SYSTEM = rf"(?:/{_SYSTEM_DIRS}/?\*?|/{_SYSTEM_DIRS}/[\w.-]+/\*){_END}"
_RM = rf"\brm\s+{_RM_FLAGS}(?:\s+--no-preserve-root)?\s+(?:[^\s;&|]+\s+){{0,6}}?"
_DESTROY = _rx(
    rf"{_RM}{_RM_ROOT}", r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}", rf"\bch(?:mod|own)\s+(?:-r\s+\S+|\S+\s+-r)\s+/{_END}",
    r"\bformat\s+c:", rf"\bremove-item\b[^\n]{{0,60}}-recurse[^\n]{{0,40}}\s[a-z]:\\\\?{_END}",
    r"\bdel\s+/[sq]\s+/[sq]\s+[a-z]:\\")
# What a person does to their own machines too (wipe a disk, clean a system folder, drop a table, turn SELinux off,
# force-push): an order only when the note waves confirmation away.
_DESTROY_IF_WAIVED = _rx(
    rf"{_RM}{_RM_SYSTEM}", r"\bmkfs(?:\.\w+)?\s+/dev/", r"\bdd\b[^\n]{0,80}\bof=/dev/(?:sd|nvme|hd|disk|xvd|mmcblk)",
    r"\bdrop\s+(?:database|schema|table)\b", r"\btruncate\s+table\s+\w+", r"\btruncate\s+[\w.\"`]+\s*;",
    r"\bdelete\s+from\s+[\w.\"`]+\s*(?:;|$|where\s+(?:1\s*=\s*1|true)\b)",
    r"\bupdate\s+[\w.\"`]+\s+set\s+[^;\n]{1,80}(?:;|$)",
    r"\bterraform\s+destroy\b", r"\bkubectl\s+delete\s+(?:ns|namespaces?)\b", r"\bkubectl\s+delete\b[^\n]{0,40}--all\b",
    r"\bgit\s+push\s+(?:[^\n]{0,40}\s)?(?:--force|-f)\b[^\n]{0,40}\b(?:main|master|prod\w*)\b",
    r"\bgit\s+push\s+[^\n]{0,40}\b(?:main|master)\b[^\n]{0,20}\s(?:--force|-f)\b",
    r"\bgit\s+push\s+\S+\s+\+(?:main|master)\b",
    r"\baws\s+s3\s+(?:rb\s+[^\n]*--force|rm\s+[^\n]*--recursive)", r"\bdelete_repositor(?:y|ies)\b",
    r"\bchmod\s+(?:-r\s+)?777\b")
_SAFEGUARDS = re.compile(r"\balias\s+sudo\s*=")
_SAFEGUARDS_IF_WAIVED = _rx(
    r"\bsetenforce\s+(?:0|permissive)\b", r"\bufw\s+disable\b",
    r"\bsystemctl\s+(?:stop|disable)\s+(?:firewalld|ufw|apparmor)\b", r"\biptables\s+-f\b", r"\bnopasswd\s*:\s*all\b",
    r"set-mppreference\s+-disablerealtimemonitoring\s+\$?true", r"\bnode_tls_reject_unauthorized\s*=\s*['\"]?0",
    r"/etc/hosts\b[^\n]{0,80}\b(?:github|google|microsoft|apple|amazon|paypal|npmjs|pypi)\.(?:com|org)\b",
    r"\b(?:github|google|npmjs|pypi)\.(?:com|org)\b[^\n]{0,80}/etc/hosts\b")


_FETCHERS = ("curl", "wget", "iwr", "irm", "invoke-", "fetch")
# Each rule, with the plain substrings one of which any match holds: a note with none of them (most notes) costs a
# few substring searches, not the rules' regular expressions (~0.3 ms for a 1,000-character note).
_RULES: tuple[tuple[re.Pattern[str], str, tuple[str, ...], bool], ...] = (
    (_REVERSE_SHELL, "hands a shell to another machine", ("nc", "/dev/tcp", "bash", "exec:", "mkfifo", "socket"),
     False),
    (_PIPE_RUN, "runs code it downloads", (*_FETCHERS, "iex", "invoke-expression", "eval"), False),
    (_DESTROY, "wipes the root or the home folder", ("rm ", ":(", "chmod", "chown", "format c", "remove-item", "del /"),
     False),
    (_SAFEGUARDS, "aliases sudo", ("alias",), False),
    (_CRON_CALL, "schedules a call to another machine", _FETCHERS, False),
    (_SAFEGUARDS_IF_WAIVED, "switches a safeguard off, with confirmation waved away",
     ("setenforce", "ufw", "systemctl", "iptables", "nopasswd", "mppreference", "tls_reject", "/etc/hosts"), True),
    (_DESTROY_IF_WAIVED, "destroys data, a disk or history, with confirmation waved away",
     ("rm ", "mkfs", "dd ", "drop", "truncate", "delete", "update", "terraform", "kubectl", "git", "aws", "chmod"),
     True),
)


def find(text: str) -> tuple[str, int] | None:
    """(what the command does, its position in the folded text) for the first order to run a harmful command."""
    low = fold(text)
    rules = [rule for rule in _RULES if any(cue in low for cue in rule[2])]
    if not rules:
        return None
    waived = _WAIVED.search(low) is not None
    for pattern, what, _, needs_waiver in rules:
        if needs_waiver and not waived:
            continue
        for m in islice(pattern.finditer(low), MAX_CANDIDATES):
            if _NEGATION_BEFORE.search(low[max(0, m.start() - 60):m.start()]) or \
                    _REPORT.search(low[max(0, m.start() - REPORT_BEFORE):m.start()]):
                continue
            line_end = low.find("\n", m.end())
            if pattern is _PIPE_RUN and not waived and _named_https(low[m.start():line_end if line_end >= 0 else None]):
                continue
            return f"a command that {what}: '{m.group()[:80]}'", m.start()
    return None


def _named_https(command: str) -> bool:
    """The download comes from https URLs with named hosts only (an installer one-liner), not an address or http."""
    urls = _URL.findall(command)
    return bool(urls) and all(scheme == "https" and not _IP_HOST.match(host) for scheme, host in urls)
