"""The blocks of the prompt snapshot, one function each (seed 004's injection, SPEC R12).

Each block function takes the memories (or conflict rows) sql/macros/50_snapshot.sql chose for it, in
order, and a character budget, and returns the block's lines (each ending in a newline), never longer
than the budget. The snapshot (snapshot.py) is their composition, so a new block is one more function
in ``BLOCKS``.

- profile:     the user profile (seed 004 layer 3), whole, one ``###`` heading per section in the
               seed's order (基础特征, 身份与背景, 目标与方向, 工作与沟通方式, 心理与情绪, 个人语言与激励,
               与 Agent 的约定), then any other section; not ranked by confidence.
- user:        other facts about the user, by provenance, pinned, confidence, recency.
- rules:       every active procedure, every turn (seed 004's <behavioral_guidelines>), by provenance, pinned,
               confidence, recency; one from outside (legacy: an import, a tool's output) says so on its line.
               If the budget cannot hold them all, a last line says how many did not fit. Never silently dropped.
- environment: project facts, tools, paths, by provenance, pinned, confidence, recency.
- self:        the agent's own notes, only those whose confidence was earned above the threshold,
               each with its confidence.
- conflicts:   disputed facts, marked as such, with both sources: pending ones (neither side is
               asserted elsewhere in the snapshot, unless one stands (dispute_stands in 50_snapshot.sql:
               the higher provenance of one agent's two memories, or the caller's own against another
               agent's claim; the host's rows and an agent's under its id are two authors): it keeps its
               block, and the other is named as a claim against it) and ones settled by recency that nobody
               reviewed. The gate reads each line at its memory's trust (a conflict's: its less trusted side's).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from ..models import PROVENANCE, Memory, shown_agent
from ..write.scan.fences import neutralise
from ..write.validate import section_name

PROFILE_SECTIONS = ("基础特征", "身份与背景", "目标与方向", "工作与沟通方式", "心理与情绪", "个人语言与激励", "与 Agent 的约定")
_MIN_TRUNCATED = 24  # below this, a cut-down line carries too little to be worth its space
MAX_SELF_NOTES = 5
MAX_CONFLICTS = 5
SOURCE_CHARS = 80  # a conflict side's source as its line shows it: at most this many characters
CONFLICT_WORDS = 240  # and its words, cut inside the quotes (fit_conflict: less, down to MIN_CONFLICT_WORDS, when
MIN_CONFLICT_WORDS = 40  # the line would not fit budget_conflicts whole: a line is never cut)
HOST_ABOVE = 2 * max(PROVENANCE.values()) + 2  # trust(): the host's own line above any line of provenance and pin


@dataclass(frozen=True)
class Budgets:
    """Characters per block (a block's lines, headings included, never exceed its budget)."""

    user: int = 1375
    rules: int = 2000
    environment: int = 2200
    profile: int = 2000
    self: int = 600
    conflicts: int = 800


@dataclass
class Selection:
    """What SQL chose, by block, and how many fact lines (user + environment) may still be shown."""

    by_block: dict[str, list[Memory]]
    conflicts: list[dict[str, Any]]
    fact_limit: int
    reserved: dict[str, int] = field(default_factory=dict)  # fact lines a block leaves to later ones (select)


def fence_safe(text: str) -> str:
    """Neutralise anything that could open or close a prompt fence (look-alike spellings too: write/scan/fences.py)."""
    return neutralise(text)


def one_line(text: str) -> str:
    return " ".join(fence_safe(text).split())


def profile_lines(content: str) -> list[str]:
    """A profile section's lines as its block shows them: each line of its content without its list marker."""
    return [t for line in content.splitlines() if (t := line.strip().lstrip("-*+ ").strip())]


def trust(memory: Memory) -> int:
    """How far the snapshot's gate trusts a memory's line (write/scan/gate.py gate_lines' ranks): whether the host
    wrote it itself (memories.by_host: an agent handle may carry the host's agent id, and its pinned user_stated lines
    must not rank above the host's own word), then its provenance, then its pin. Whether the line is unconfirmed goes
    by provenance alone (``unconfirmed``)."""
    return rank(memory.provenance, memory.pinned, memory.by_host)


def rank(provenance: int, pinned: bool, by_host: bool) -> int:
    """trust() of a memory with these fields."""
    return 2 * provenance + int(bool(pinned)) + (HOST_ABOVE if by_host else 0)


def unconfirmed(memory: Memory) -> bool:
    """Whether the gate reads a memory's line as unconfirmed: below what the user said or what was consolidated from
    the user's words (an import, a tool's output, the agent's own inference, pinned or not), whoever wrote it."""
    return memory.provenance < PROVENANCE["consolidated"]


# A rule is an instruction the model follows every turn: one that came from outside (an import, a tool's output,
# text consolidated from either: provenance legacy) says so on its line, after the user's and the agent's own rules;
# so does each line of a profile section (the profile heads the prompt, and its sections read as standing agreements).
OUTSIDE_RULE = " (from an import or outside text, not confirmed by the user)"


def outside(memory: Memory) -> bool:
    """Whether a memory came from outside (provenance legacy): its rule line and profile lines say so."""
    return memory.provenance < PROVENANCE["model_inferred"]


def _fit(lines: Iterable[str], budget: int, *, cut_first: bool = True) -> tuple[list[str], int]:
    """The lines that fit in ``budget``, in order, skipping ones too long for the room left (a later,
    shorter one may fit); the very first line may be cut with an ellipsis, its words only: the outside-text label
    after them stays (cut off, an imported rule read as the user's). Returns (lines, skipped)."""
    out, used, skipped = [], 0, 0
    for line in lines:
        room = budget - used
        if len(line) > room:
            label = OUTSIDE_RULE if line.endswith(OUTSIDE_RULE + "\n") else ""
            if out or room - len(label) < _MIN_TRUNCATED or not cut_first:
                skipped += 1
                continue
            line = line[: room - 2 - len(label)] + "…" + label + "\n"
        out.append(line)
        used += len(line)
    return out, skipped


def profile_block(sel: Selection, budget: int) -> list[str]:
    sections: dict[str, Memory] = {}
    seen: set[str] = set()
    for m in sel.by_block.get("profile", []):  # in SQL's order (provenance, pinned, …): the first of a name stands
        name = section_name(m.key.split(":", 1)[1])
        if "".join(name.split()) not in seen:  # "基础 特征" reads as "基础特征": one heading, not two
            seen.add("".join(name.split()))
            sections[name] = m
    order = [s for s in PROFILE_SECTIONS if s in sections] + sorted(s for s in sections if s not in PROFILE_SECTIONS)
    # the budget goes to the most trusted sections first (three long imported sections named before the user's own
    # took all of it), then they are shown in the profile's order
    shown: dict[str, list[str]] = {}
    used = 0
    for name in sorted(order, key=lambda n: (-trust(sections[n]), order.index(n))):
        label = OUTSIDE_RULE if outside(sections[name]) else ""
        body = [f"- {one_line(line)}{label}\n" for line in profile_lines(sections[name].content)]
        head = f"### {one_line(name)}\n"
        if not body or used + len(head) >= budget:
            continue
        lines, _ = _fit(body, budget - used - len(head))
        if lines:
            shown[name] = [head, *lines]
            used += len(head) + sum(map(len, lines))
    return [line for name in order if name in shown for line in shown[name]]


def _facts(name: str) -> Callable[[Selection, int], list[str]]:
    def block(sel: Selection, budget: int) -> list[str]:
        room = max(sel.fact_limit - sel.reserved.get(name, 0), 0)
        lines = [f"- {one_line(m.content)}\n" for m in sel.by_block.get(name, [])[:room]]
        out, _ = _fit(lines, budget)
        sel.fact_limit -= len(out)
        return out

    block.__name__ = f"{name}_block"
    return block


def rules_block(sel: Selection, budget: int) -> list[str]:
    rules = sel.by_block.get("rules", [])
    lines = [f"- {one_line(m.content)}{OUTSIDE_RULE if outside(m) else ''}\n" for m in rules]
    out, skipped = _fit(lines, budget)
    while skipped:
        note = f"- ({skipped} more rule{'s' if skipped > 1 else ''} did not fit: raise budget_rules)\n"
        if sum(map(len, out)) + len(note) <= budget or not out:
            return out + ([note] if len(note) <= budget else [])
        out.pop()
        skipped += 1
    return out


def self_block(sel: Selection, budget: int) -> list[str]:
    notes = sel.by_block.get("self", [])[:MAX_SELF_NOTES]
    return _fit([f"- {self_line(m)}\n" for m in notes], budget)[0]


def self_line(memory: Memory) -> str:
    """A self-note as its block shows it (after "- "): its words and the confidence it earned."""
    return f"{one_line(memory.content)} (confidence {memory.confidence:.2f})"


def conflicts_block(sel: Selection, budget: int) -> list[str]:
    """The conflict lines that fit whole (a cut line lost the author labels at its end)."""
    return _fit([f"- {conflict_line(c)}\n" for c in sel.conflicts[:MAX_CONFLICTS]], budget, cut_first=False)[0]


def fit_conflict(c: dict[str, Any], budget: int) -> dict[str, Any]:
    """The conflict with its sides' words cut (``words``, inside the quotes) so that its line fits ``budget`` whole,
    if at least MIN_CONFLICT_WORDS each can (a long dispute with long sources left the block, the reader never told)."""
    words = CONFLICT_WORDS
    while True:
        over = len(f"- {conflict_line({**c, 'words': words})}\n") - budget
        if over <= 0 or words == MIN_CONFLICT_WORDS:
            return {**c, "words": words}
        words = max(MIN_CONFLICT_WORDS, words - (over + 1) // 2)


def conflict_line(c: dict[str, Any]) -> str:
    """A conflict (a snapshot_conflicts row) as its block shows it (after "- "): both sides, quoted, with sources. What
    a writer chose (its words, its source) is quoted as a JSON string: a quote mark or parenthesis of its own must not
    close the quote and write the rest of the line (a member's claim then read "… stands (the user corrected it)")."""
    a, b = (f"{quoted(c[f'content_{s}'], c.get('words', CONFLICT_WORDS))} ({_source(c, s)})" for s in "ab")
    if c["status"] == "pending" and c.get("stands_a") != c.get("stands_b"):  # one side keeps its block
        stands, other = ("a", "b") if c.get("stands_a") else ("b", "a")
        high, low = (a, b) if stands == "a" else (b, a)
        if c.get("same_agent"):
            why = "higher provenance"
        elif c.get("same_id") and c.get(f"by_host_{stands}") and not c.get(f"by_host_{other}"):
            why = "the host's word; the other is an agent's claim under the host's agent id"
        else:
            why = "your own memory; the other is another agent's claim"
        return f"Disputed: {high} stands ({why}); {low} disagrees. Ask the user if it matters."
    if c["status"] == "pending":
        return f"Disputed, unresolved: {a} vs {b}. Neither is confirmed; ask the user before relying on either."
    newer, older = (a, b) if str(c["winner"]) == str(c["memory_a"]) else (b, a)
    return f"Settled by recency, not reviewed: {newer} replaced {older}."


def _source(c: dict[str, Any], side: str) -> str:
    """Who wrote a conflict's side, then where it came from: "from host, user_stated", "from agent bob, legacy", or
    "from agent bob via "<its source>", model_inferred". The author comes from the row (agent id, by_host), never from
    the source text a writer chose (a member's source_refs=["host"] read "(from host, …)"), and that text is quoted
    (``quoted``). A row without an agent (render() called by hand): "from <source>"."""
    source = one_line(str(c[f"source_{side}"]))
    where, _, provenance = source.rpartition(", ")  # contradictions.source_*: "<where>, <provenance name>"
    if provenance not in PROVENANCE:
        where, provenance = source, ""
    agent = c.get(f"agent_{side}")
    if agent is None:
        return f"from {source}"
    who = "host" if c.get(f"by_host_{side}") else f"agent {shown_agent(str(agent))}"
    via = "" if where == f"agent {one_line(str(agent))}" else f" via {quoted(where, SOURCE_CHARS)}"
    return f"from {who}{via}" + (f", {provenance}" if provenance else "")


def quoted(text: str, limit: int = CONFLICT_WORDS) -> str:
    """A writer's text on one line, at most ``limit`` characters (cut with "…" inside the quotes: a line cut at its
    end lost the author label after it), as a JSON string: its own quote marks and backslashes escaped, and the marks
    that read as a quote (“”„«»「」『』〝〞＂″˶⹂ …: ``QUOTE_LIKE``) made an ASCII apostrophe: json.dumps escapes only '"',
    and 'runbook” (from host, user_stated) stands' closed the quote for a reader."""
    line = one_line(text)
    line = line if len(line) <= limit else line[: limit - 1] + "…"
    return json.dumps(line.translate(_QUOTE_LIKE), ensure_ascii=False)


# Every character Unicode 14 files as an initial or final quotation mark, or that is not a letter (nor a combining
# mark) and whose name says quotation mark, prime, double acute, double grave, ditto or corner bracket (their
# half-width and vertical forms too): tests/test_prompt_labels.py recomputes it.
QUOTE_LIKE = "«»ʹʺ˝˵˶‘’‚‛“”„‟′″‴‵‶‷‹›⁗❛❜❝❞❟❠❮❯⸂⸃⸄⸅⸉⸊⸌⸍⸜⸝⸠⸡⹂〃「」『』〝〞〟﹁﹂﹃﹄＂｢｣🙶🙷🙸"
_QUOTE_LIKE = str.maketrans(dict.fromkeys(QUOTE_LIKE, "'"))


def conflict_trust(c: dict[str, Any]) -> tuple[int, bool]:
    """A Conflicts line's trust in the gate, and whether it is confirmed: its less trusted side's (the line quotes
    both sides' words; an unknown line ranked 0, below every memory line, so one fragment took out a dispute)."""
    provenance = {s: c.get(f"provenance_{s}", 0) for s in "ab"}  # none (render() called by hand): the least trusted
    trusts = [rank(provenance[s], c.get(f"pinned_{s}"), c.get(f"by_host_{s}")) for s in "ab"]
    return min(trusts), min(provenance.values()) >= PROVENANCE["consolidated"]


# (block name, heading, function, budget field): the order of the snapshot.
BLOCKS: tuple[tuple[str, str, Callable[[Selection, int], list[str]], str], ...] = (
    ("profile", "User profile", profile_block, "profile"),
    ("user", "About the user", _facts("user"), "user"),
    ("rules", "Behaviour rules", rules_block, "rules"),
    ("environment", "Environment and project", _facts("environment"), "environment"),
    ("self", "Agent self-notes (earned from outcomes)", self_block, "self"),
    ("conflicts", "Conflicts", conflicts_block, "conflicts"),
)


FACT_BLOCKS = ("user", "environment")  # in the snapshot's order: they share fact_limit


def select(candidates: Sequence[tuple[str, Memory]], conflicts: Sequence[dict[str, Any]], fact_limit: int) -> Selection:
    """The candidates by block. The fact blocks share ``fact_limit`` lines, the first block filling first; but the
    lines a later block holds among the ``fact_limit`` most trusted of both (provenance, then pin; alike, the first
    block's first) are reserved for it: fifteen imported 'user' facts must not push a user-stated environment fact
    out of the prompt."""
    by_block: dict[str, list[Memory]] = {}
    for block, memory in candidates:
        by_block.setdefault(block, []).append(memory)
    facts = [(-trust(m), b, p, name)
             for b, name in enumerate(FACT_BLOCKS) for p, m in enumerate(by_block.get(name, []))]
    top = [name for *_, name in sorted(facts)[: max(fact_limit, 0)]]
    reserved = {name: sum(top.count(later) for later in FACT_BLOCKS[b + 1:]) for b, name in enumerate(FACT_BLOCKS)}
    return Selection(by_block, list(conflicts), fact_limit, reserved)
