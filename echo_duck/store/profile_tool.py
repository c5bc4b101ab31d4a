"""The ``profile_update`` tool (seed 004 layer 3): one section of the user profile, stored as the user memory keyed
``profile:<section>``, appended to, merged into (a similar or contradicting bullet replaced) or overwritten. tools.py
registers it; ``brief`` is the memory as every tool returns it.
"""

from __future__ import annotations

import itertools
import unicodedata
from typing import Any

from ..errors import AmbiguousMatch, InvalidInput, ProvenanceConflict, RejectedWrite
from ..models import PROVENANCE, Memory
from ..recall.snapshot_blocks import outside
from ..write import validate
from ..write.scan import scan
from ..write.writer import prepare

CONFIDENCE = 0.95  # seed 004: proactive writes by the agent are stored with confidence 0.95
PROFILE_KEY = "profile:{section}"
RESULT_CHARS = 4_000  # a memory's content in a tool result (memory_search shares SEARCH_CHARS among its hits)
SECTIONS_READ = 1000  # the caller's profile sections searched for another spelling of a name


def profile_update(mem, section, mode, provenance, content=None, entry=None) -> dict[str, Any]:
    if (content is None) == (entry is None):
        raise InvalidInput("profile_update: give the text as entry (or content), exactly one of the two")
    content = validate.text(entry if content is None else content, "entry")  # not only invisible characters
    content = "\n".join(line for line in content.splitlines() if validate.visible(line))  # what is stored of it
    section = section.strip()
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in section):
        raise InvalidInput("profile_update: section must be one line of visible text (it is shown as a heading)")
    # Scan the lines as the agent sent them: the "- " bullets added below would hide rules anchored
    # at the start of a line ("SYSTEM: …", "less ~/.bash_history") from the writer's own scan.
    # The section name is shown as a heading: a name is not content anybody approves, so unsure refuses it too.
    unsure = {}
    for field, text, unsure_refuses in (("content", content, False), ("section", section, True)):
        unsure[field] = finding = scan(text, protected_paths=mem.writer.protected_paths)
        if finding is not None and (finding.blocked or unsure_refuses):
            mem.writer.quarantine(mem.caller, field, finding.reason, finding.detail, finding.excerpt)
            raise RejectedWrite(finding.reason, finding.detail, field)
    key, current = _section(mem, section)
    if len(current) > 1:
        raise AmbiguousMatch(f"profile section {section!r} has {len(current)} live memories; forget the extra ones")
    old = current[0].content if current else ""
    lines = [_bullet(line) for line in content.splitlines()]
    if mode == "overwrite":
        body = content.strip()
    elif mode == "merge":  # seed 004: a similar or contradicting bullet is replaced (UPDATE), else added (ADD)
        kept = [line for line in old.splitlines() if line.strip()]
        for line in lines:
            same = next((i for i, k in enumerate(kept) if _replaces(line, k)), None)
            if same is None:
                kept.append(line)
            elif _plain(kept[same]) != _plain(line):  # the same words again change nothing
                kept[same] = line
        body = "\n".join(kept)
    else:
        body = "\n".join(([old.rstrip()] if old.strip() else []) + lines)
    if body == old or not body.strip():
        return {"changed": False, "section": section, "mode": mode,
                "memory": brief(current[0]) if current else None}
    level = validate.provenance(provenance)
    if mode != "overwrite" and current and level < PROVENANCE["user_stated"]:  # the section keeps its old lines, and
        provenance = min(level, current[0].provenance)  # where they came from (the agent's line unlabelled an import's)
    elif mode != "overwrite" and current and outside(current[0]):  # the user's line would make an import's the user's
        raise ProvenanceConflict(f"profile_update: section {section!r} holds imported lines the user never confirmed, "
                                 "which the user's words would make the user's: confirm it whole (mode 'overwrite')")
    tags = list(current[0].tags) if current else []
    if "profile" not in tags:
        tags.append("profile")
    if unsure["content"] is not None:  # unsure about the new lines: the section as written waits for a person
        spec = prepare(mem.caller, body, type="user", key=key, tags=tags, provenance=provenance, confidence=CONFIDENCE)
        memory = mem.writer.remember_many(mem.caller, [spec], screened={0: unsure["content"]}, atomic=True)[0]
    else:
        memory = mem.remember(body, type="user", key=key, tags=tags, provenance=provenance, confidence=CONFIDENCE)
    return {"changed": True, "section": section, "mode": mode, "memory": brief(memory)}


def _section(mem: Any, section: str) -> tuple[str, list[Memory]]:
    """The key of ``section`` and its live memories: the section the snapshot shows under the same heading when it
    is spelt another way ("Goals" for "goals", "与Agent的约定" for "与 Agent 的约定"). A new key beside it was a
    second version of the section: the contradiction check retired the old lines by recency, or the profile block
    showed one heading of the two."""
    name = validate.section_name(section)
    key = PROFILE_KEY.format(section=name)
    if len(key) > validate.MAX_KEY_CHARS:  # NFKC may lengthen a name ("ﬃ" is "ffi")
        raise InvalidInput(f"profile_update: section is {len(name):,} characters once folded (NFKC); the limit is "
                           f"{validate.MAX_KEY_CHARS - len(PROFILE_KEY.format(section='')):,}")
    current = mem.find(key=key, type="user", scope="private", limit=2)
    if current:
        return key, current
    same = [m for m in mem.find(type="user", scope="private", tags=["profile"], limit=SECTIONS_READ)
            if m.key and m.key.startswith("profile:") and _folded(m.key[8:]) == _folded(name)]
    keys = sorted({m.key for m in same})
    if len(keys) > 1:
        raise AmbiguousMatch(f"profile section {section!r} is spelt {len(keys)} ways in the profile "
                             f"({', '.join(repr(k[8:]) for k in keys)}); name one of them exactly")
    return (keys[0], same) if keys else (key, [])


def _folded(name: str) -> str:
    """A section name as the snapshot's profile block tells headings apart: no case, no spaces."""
    return "".join(validate.section_name(name).casefold().split())


def brief(m: Memory, chars: int = RESULT_CHARS) -> dict[str, Any]:
    """A memory as a tool result shows it: its content cut at ``chars`` (``truncated`` and ``content_chars`` say
    so), a held write's status explained."""
    out = {"id": m.id, "type": m.type, "key": m.key, "content": m.content, "tags": list(m.tags),
           "version": m.version, "provenance": m.provenance_name, "confidence": m.confidence,
           "supersedes": m.supersedes, "status": m.status}
    if len(m.content) > chars:
        out.update(content=m.content[:chars - 1] + "…", truncated=True, content_chars=len(m.content))
    shown = [t for t, end in zip(m.tags, itertools.accumulate(len(t) + 4 for t in m.tags)) if end <= chars // 4]
    if len(shown) < len(m.tags):  # 64 tags of 100 characters would outweigh the content
        out.update(tags=shown, tags_total=len(m.tags))
    if m.status == "quarantined":
        out["note"] = "held for a person's review: not recalled or shown to you until approved"
    return out


def _bullet(line: str) -> str:
    line = line.strip()
    return line if line[:2] in ("- ", "* ", "+ ") else f"- {line}"


def _replaces(new: str, old: str) -> bool:
    """Does profile line ``new`` restate or contradict ``old`` (so merge replaces it)? The same words, the
    same label ("名字：…"), or a contradiction the default verifier is sure enough of to record."""
    from ..lifecycle.verify import analyse, heuristic_verifier

    if _plain(new) == _plain(old):
        return True
    label_new, label_old = _label(new), _label(old)
    if label_new and label_new == label_old:
        return True
    a, b = _Line(_plain(new)), _Line(_plain(old))
    verdict = heuristic_verifier(a, b)
    if verdict.contradicts and verdict.confidence >= 0.5:
        return True
    wa = {t for t in analyse(a.content).tokens if t not in ("=", "@")}
    wb = {t for t in analyse(b.content).tokens if t not in ("=", "@")}
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= 0.8


class _Line:
    def __init__(self, content: str):
        self.content, self.key, self.type = content, None, "user"


def _label(line: str) -> str | None:
    """The label of a 'label: value' bullet ("名字：林薇" -> "名字")."""
    import re

    m = re.match(r"^\s*[-*+]?\s*([^:：]{1,20})[:：]", line)
    return m.group(1).strip().casefold() if m else None


def _plain(line: str) -> str:
    """A profile line without its bullet, spacing or case, to compare lines in merge mode."""
    return " ".join(line.strip().lstrip("-*+ ").split()).casefold()
