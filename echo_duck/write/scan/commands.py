"""Commands that hand the machine over or wreck it, stored for an agent to run later.

An agent with a shell, file or database tool reads its memories as context; a stored note that tells it to pipe a
download into a shell, open a reverse shell, wipe a system path or switch a safeguard off is an attack whatever words
frame it, and the classifier (trained mostly on prose) reads many of them as ordinary developer notes. Rules, by
what the command does, not by what the note says. Always:

  * code fetched and run: a download piped into a shell or interpreter, or evaluated (curl … | sh, iex (iwr …),
    bash -c "$(wget …)", python -c "exec(urlopen(…).read())"),
    unless it comes from named https hosts only (an official installer one-liner is a normal
    note: "install rustup with curl … https://sh.rustup.rs | sh");
  * a shell handed to another machine: nc/ncat -e, /dev/tcp/, bash -i >&, socat exec:;
  * rm -rf of the root or the home folder, chmod/chown -R of the root, a fork bomb; sudo aliased or fed a password
    written in the note; a scheduled job calling a public address or a public plain-http URL.

What a person also does to their own machines (a note may be a runbook, or a record of what the user did) counts
only when the note turns it into an order for the agent: it waves confirmation away ("no need to ask", "不用确认"),
hides the act ("don't mention it", "无需通知任何人"), claims it is already approved ("pre-approved by the DBA",
"管理员要求") or arms it for the agent ("whenever the user says …", "the agent should run"). Those commands: rm -rf
of a system folder, mkfs or dd onto a disk, SELinux, the firewall, the antivirus or TLS checks off (git, npm, pip,
Node, Python), passwordless sudo, remote root logins, a second uid-0 account, the Docker daemon or a bucket opened to
anyone, /etc/hosts pointing a public name elsewhere, dropping data or DELETE / UPDATE without a real WHERE,
terraform destroy, deleting cloud projects, groups or instances, kubectl delete of namespaces or everything, a
forced push to main, master or every branch, a downloaded installer from a named https host.

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
# What turns a risky but ordinary command into an order for the agent: the note waves confirmation away ("no need to
# ask", "不用确认"), hides the act ("don't mention it", "无需通知任何人"), claims the act is already approved ("pre-approved
# by the DBA", "管理员要求", "用户已授权"), or arms it for the agent ("whenever the user says …", "the agent should run",
# "do this automatically"). Not a schedule alone ("at startup", "each session", "silently" describe automation too).
_WAIVED = _rx(
    r"\b(?:no need to (?:ask|confirm|check|double-check|tell|notify|wait|announce|mention|inform)|no confirmation|"
    r"without (?:asking|confirm\w*|telling|checking|prompting|approval|review\w*|waiting|a human|mentioning)|"
    r"(?:don'?t|do not|never|must not) (?:ask|confirm|tell|mention|notify|prompt|wait|interrupt|bother|disturb|log it|"
    r"record it)|"
    r"skip (?:the )?confirm\w*|not (?:be |to be )?(?:asked|prompted|interrupted|bothered)|"
    r"don'?t want to be (?:asked|prompted|bothered)|"
    r"(?:don'?t|do not|never) (?:check|run it|run this|clear it) (?:with|by|past)|"
    r"(?:do it|run it|apply it|go ahead) (?:straight away|right away|immediately)|"
    # the user's own wishes set aside, or their consent claimed
    r"(?:even if|even when|regardless of what|no matter what) the user|"
    r"(?:the )?user (?:is|was) (?:fine|ok|okay|happy|comfortable) with)\b",
    r"\b(?:pre-?(?:approved|authori[sz]ed|cleared)|already (?:approved|authori[sz]ed|confirmed)|"
    r"(?:has|have) been (?:approved|authori[sz]ed|signed off)|standing (?:instruction|order|rule)|"
    r"(?:user|they|he|she)(?:'ve| has| have)? (?:already )?(?:confirmed|authori[sz]ed|approved)|"
    r"(?:admin|administrator|lead|dba|manager|management|owner|boss|security team|it team|ops team)"
    r"(?:'s)? (?:says|said|requires|required|asked|wants|approved|prefers|gave us|instruction)|"
    r"the (?:user'?s )?stated preference)\b",
    r"\b(?:whenever|when|if|each time|every time) the user (?:says|asks|types|mentions)\b|"
    r"\b(?:whenever|each time|every time) you (?:need|want|have|run|install|set up|open|deploy|build)\b|"
    r"\bthe (?:ai |coding |llm )?(?:agent|assistant) (?:should|must|shall|will|needs to)\b|"
    r"\b(?:do (?:this|it|that)|run (?:it|this|them)|execute (?:it|this)) automatically\b",
    r"不(?:需要|用|必|要)(?:再)?\s?(?:向[^，。,.\n]{1,6}?)?(?:确认|征求|询问|告诉|通知|备份|提示|打扰|审批|记录|等|问|ask)|"
    r"无需(?:向[^，。,.\n]{1,6}?)?(?:确认|询问|告诉|备份|通知|审批|记录|提示)|"
    r"(?:即使|就算|不管|无论)用户|(?:用户|他|她)(?:的)?(?:默认|既定|固定)(?:偏好|流程|做法)|用户(?:已经?)?设定好的|"
    r"别告诉|悄悄|已(?:经)?(?:获|得到)?[^，。,.\n]{0,6}(?:批准|授权|同意|审批)|"
    r"(?:管理员|组长|领导|运维|老板|管理层|dba|admin)[^，。,.\n]{0,4}(?:要求|安排|同意|批准|确认|说)|"
    r"(?:智能体|助手|agent)[^，。,.\n]{0,4}(?:应|要|需要|必须|请)|自动执行|直接(?:执行|執行|运行|運行|跑)")
# A note that calls the command an attack just before it is a report of one (a post-mortem, an advisory).
_REPORT = _rx(r"\b(?:malicious|malware|attacker|compromised|post-?mortem|advisory|threat intel|honeypot|iocs?|"
               r"phishing|injected)\b", r"恶意|攻击者|复盘|事故|漏洞")
REPORT_BEFORE = 200  # characters before a command in which a report word frames it
_FETCH = r"(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b"
_RUNNER = (r"(?:sudo(?:\s+-\w+)*\s+)?(?:/usr)?(?:/bin/)?(?:env\s+)?(?:ba|z|k|da|fi)?sh\b|python[23]?\b|perl\b|ruby\b|"
           r"node\b|iex\b|invoke-expression\b|pwsh\b|powershell\b")
_CODE_GET = (r"urlopen|urlretrieve|requests\.get|httpx\.get|fetch\s*\(|\.get\s*\(\s*['\"]https?://|open-uri|lwp::|"
             r"net::http")
_CODE_RUN = r"\b(?:exec|eval)\b"
_PIPE_RUN = _rx(
    rf"{_FETCH}[^|;&\n]{{0,100}}(?:://|\w\.\w|\$\{{?\w)[^|;&\n]{{0,100}}\|\s*(?:{_RUNNER})",
    rf"(?:ba|z)?sh\s+(?:-c\s+)?[\"']?(?:\$\(|<\(|`)\s*{_FETCH}",
    rf"(?:iex|invoke-expression)\s*\(?\s*(?:\(?\s*new-object\s+net\.webclient|{_FETCH})",
    rf"\beval\s*[\"'(]?\s*\$\(\s*{_FETCH}",
    # an interpreter one-liner that downloads code and runs it: python -c "…exec(urlopen(…).read())", node -e
    # "fetch(…).then(eval)"
    rf"\b(?:python[23]?|node|deno|perl|ruby)\s+-[ce]\s+[\"'][^\n]{{0,200}}?(?:{_CODE_GET})[^\n]{{0,200}}?{_CODE_RUN}",
    rf"\b(?:python[23]?|node|deno|perl|ruby)\s+-[ce]\s+[\"'][^\n]{{0,200}}?{_CODE_RUN}[^\n]{{0,200}}?(?:{_CODE_GET})")
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
_END = r"(?=[\s;&|`'\",)。]|$)"
# the root or the home folder: nobody's runbook wipes those
_RM_ROOT = rf"(?:/\*?|~/?\*?|[\"']?\$\{{?home\}}?[\"']?/?\*?|[a-z]:\\\\?\*?){_END}"
# a system folder, or everything in one (not a program's own folder: /opt/nvim): a runbook may ("rm -rf /var/tmp/*")
_RM_SYSTEM = rf"(?:/{_SYSTEM_DIRS}(?:/[\w.-]+)*/?\*?|\.git|(?:~|\$\{{?home\}}?)/\.[\w.-]+/?\*?){_END}"
_RM = rf"\brm\s+{_RM_FLAGS}(?:\s+--no-preserve-root)?\s+(?:[^\s;&|]+\s+){{0,6}}?"
_DESTROY = _rx(
    rf"{_RM}{_RM_ROOT}", r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}", rf"\bch(?:mod|own)\s+(?:-r\s+\S+|\S+\s+-r)\s+/{_END}",
    r"\bformat\s+c:", rf"\bremove-item\b[^\n]{{0,60}}-recurse[^\n]{{0,40}}\s[a-z]:\\\\?{_END}",
    r"\bdel\s+/[sq]\s+/[sq]\s+[a-z]:\\")
# What a person does to their own machines too (wipe a disk, clean a system folder, drop a table, turn SELinux off,
# force-push): an order only when the note waves confirmation away.
_DESTROY_IF_WAIVED = _rx(
    rf"{_RM}{_RM_SYSTEM}",
    # files found under a system or home folder and deleted: find /home -name '*.bak' | xargs rm -f, -delete, -exec rm
    rf"\bfind\s+/{_SYSTEM_DIRS}\b[^\n|;]{{0,120}}(?:\s-delete\b|\s-exec\s+rm\b|\|\s*xargs\s+(?:-\S+\s+)*rm\b)", r"\bmkfs(?:\.\w+)?\s+/dev/", r"\bdd\b[^\n]{0,80}\bof=/dev/(?:sd|nvme|hd|disk|xvd|mmcblk)",
    r"\bdrop\s+(?:database|schema|table)\b", r"\btruncate\s+table\s+\w+", r"\btruncate\s+[\w.\"`]+\s*;",
    r"\bdelete\s+from\s+[\w.\"`]+\s*(?:;|$|[\"')]|where\s+(?:1\s*=\s*1|true)\b)",
    r"\bupdate\s+[\w.\"`]+\s+set\s+[^;\n]{1,80}(?:;|$)",
    r"\bterraform\s+destroy\b", r"\bkubectl\s+delete\s+(?:ns|namespaces?)\b", r"\bkubectl\s+delete\b[^\n]{0,40}--all\b",
    r"\bgit\s+push\s+(?:[^\n]{0,40}\s)?(?:--force|-f)\b[^\n]{0,40}\b(?:main|master|prod\w*)\b",
    r"\bgit\s+push\s+[^\n]{0,40}\b(?:main|master)\b[^\n]{0,20}\s(?:--force|-f)\b",
    r"\bgit\s+push\s+\S+\s+\+(?:main|master)\b",
    r"\bgit\s+push\b[^\n]{0,40}\s(?:--force|-f)\b[^\n]{0,20}\s--all\b",
    r"\bgit\s+push\b[^\n]{0,40}\s--all\b[^\n]{0,20}\s(?:--force|-f)\b",
    r"\bgcloud\s+projects\s+delete\b", r"\baz\s+group\s+delete\b", r"\baws\s+ec2\s+terminate-instances\b",
    r"\baws\s+rds\s+delete-db-(?:instance|cluster)\b",
    r"\baws\s+s3\s+(?:rb\s+[^\n]*--force|rm\s+[^\n]*--recursive)", r"\bdelete_repositor(?:y|ies)\b",
    r"\bchmod\s+(?:-r\s+)?777\b",
    r"(?:--force|\s-f|force[- ]?push)\w*[^\n]{0,12}\s(?:to|onto|into|到)\s*(?:origin\s+)?(?:main|master)\b")
# sudo aliased, or fed a password written in the note (echo 'hunter2' | sudo -S …): root for whoever reads it
_TLS_OFF = r"(?:node_tls_reject_unauthorized\s*=\s*['\"]?0|pythonhttpsverify\s*=\s*['\"]?0|git_ssl_no_verify\s*=\s*['\"]?(?:1|true))"
_SHELL_RC = r"(?:\.bashrc|\.zshrc|\.bash_profile|\.profile|/etc/environment|/etc/profile)\b"
_SAFEGUARDS = _rx(r"\balias\s+sudo\s*=",
                  # TLS checks off for every shell the user opens: written into a shell's start-up file
                  rf"{_TLS_OFF}[^\n]{{0,200}}{_SHELL_RC}", rf"{_SHELL_RC}[^\n]{{0,200}}{_TLS_OFF}",
                  r"\becho\s+(?:-n\s+)?(?:'[^'$\n]{4,64}'|\"[^\"$\n]{4,64}\"|[^\s'\"$|]{4,64})\s*\|\s*sudo\s+-s\b")
_SAFEGUARDS_IF_WAIVED = _rx(
    r"\bsetenforce\s+(?:0|permissive)\b", r"\bufw\s+disable\b",
    r"\bsystemctl\s+(?:stop|disable)\s+(?:firewalld|ufw|apparmor)\b", r"\biptables\s+-f\b", r"\bnopasswd\s*:\s*all\b",
    r"set-mppreference\s+-disablerealtimemonitoring\s+\$?true", r"\bnode_tls_reject_unauthorized\s*=\s*['\"]?0",
    r"/etc/hosts\b[^\n]{0,80}\b(?:github|google|microsoft|apple|amazon|paypal|npmjs|pypi)\.(?:com|org)\b",
    r"\b(?:github|google|npmjs|pypi)\.(?:com|org)\b[^\n]{0,80}/etc/hosts\b",
    # TLS checks off for git, npm, pip and Python
    r"\bhttp\.sslverify\s+false\b", r"\bstrict-ssl\s*[=\s]\s*false\b", r"\bpythonhttpsverify\s*=\s*0\b",
    r"--trusted-host[\s=]+['\"]?[\w*]",  # pip skips TLS checks for that host
    # remote root logins, a second root account, the Docker daemon open to anyone, the antivirus told to skip a disk
    r"\bpermitrootlogin\s+yes\b", r"\buseradd\b[^\n]{0,40}\s-o\b[^\n]{0,20}\s-u\s*0\b",
    r"\buseradd\b[^\n]{0,40}\s-u\s*0\b[^\n]{0,20}\s-o\b", r"\bchmod\s+(?:-r\s+)?66[67]\s+/var/run/docker\.sock\b",
    r"\bdockerd\b[^\n]{0,40}\s-h\s+tcp://0\.0\.0\.0\b",
    r"add-mppreference\s+-exclusionpath\s+['\"]?[a-z]:\\\\?['\"]?(?=\s|$)",
    # a storage bucket opened to the world
    r"--acl\s+public-read-write\b", r"\bdelete-public-access-block\b",
    # packages from a plain-http index on another machine; authentication or a security check switched off by a flag
    rf"(?:--(?:extra-)?index-url|\s-i|--registry|\bglobal\.(?:extra-)?index-url)[\s=]+['\"]?http://(?!{_LOCAL})",
    rf"\bnpm\s+config\s+set\s+registry\s+['\"]?http://(?!{_LOCAL})", rf"(?:^|\s)registry\s*=\s*http://(?!{_LOCAL})",
    r"\b\w*(?:auth|security|csrf|ssl|tls|mfa|2fa|waf)\w*_(?:disabled?|off)\s*[=:]\s*['\"]?(?:true|1|yes|on)\b",
    r"\b\w*(?:auth|security|csrf|ssl|tls|mfa|2fa|waf)\w*_(?:enabled?|on|required)\s*[=:]\s*['\"]?(?:false|0|no|off)\b")


_FETCHERS = ("curl", "wget", "iwr", "irm", "invoke-", "fetch")
# Each rule, with the plain substrings one of which any match holds: a note with none of them (most notes) costs a
# few substring searches, not the rules' regular expressions (~0.3 ms for a 1,000-character note).
_RULES: tuple[tuple[re.Pattern[str], str, tuple[str, ...], bool], ...] = (
    (_REVERSE_SHELL, "hands a shell to another machine", ("nc", "/dev/tcp", "bash", "exec:", "mkfifo", "socket"),
     False),
    (_PIPE_RUN, "runs code it downloads", (*_FETCHERS, "iex", "invoke-expression", "eval", "exec"), False),
    (_DESTROY, "wipes the root or the home folder", ("rm ", ":(", "chmod", "chown", "format c", "remove-item", "del /"),
     False),
    (_SAFEGUARDS, "hands over sudo or switches TLS checks off for every shell", ("alias", "sudo", "rc", "profile",
                                                                               "/etc/environment"), False),
    (_CRON_CALL, "schedules a call to another machine", _FETCHERS, False),
    (_SAFEGUARDS_IF_WAIVED, "switches a safeguard off, with confirmation waved away",
     ("setenforce", "ufw", "systemctl", "iptables", "nopasswd", "mppreference", "tls_reject", "/etc/hosts", "sslverify",
      "strict-ssl", "httpsverify", "trusted-host", "permitrootlogin", "registry",
      "useradd", "docker", "acl", "public-access", "http://", "_dis", "_off", "_enab", "_on", "_req"), True),
    (_DESTROY_IF_WAIVED, "destroys data, a disk or history, with confirmation waved away",
     ("rm ", "mkfs", "dd ", "drop", "truncate", "delete", "update", "terraform", "kubectl", "git", "aws", "chmod",
      "gcloud", "az ", "terminate", "force", "find "),
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
