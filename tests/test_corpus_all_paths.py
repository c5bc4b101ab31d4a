"""The scan corpus on every write path other than the API (issue 6): import, consolidation, tools, CLI.

Every attack of data_fixtures/scan_corpus/attacks.jsonl must be refused (nothing stored) and every
benign note stored byte-exactly, whichever way it comes in. tests/test_write_scanning.py covers the
API; this file covers the rest. The CLI opens the store (and loads the embedding model) per command,
so by default it runs a seeded sample; ECHO_DUCK_LONG=1 runs the whole corpus through it.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import echo_duck
from echo_duck import tools
from echo_duck.cli.main import cli
from echo_duck.lifecycle.extract import Candidate
from echo_duck.write.scan import scan, scan_many

CORPUS = Path(__file__).parent.parent / "data_fixtures" / "scan_corpus"
ATTACKS = [json.loads(line)["text"] for line in (CORPUS / "attacks.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
BENIGN = [json.loads(line)["text"] for line in (CORPUS / "benign.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
# The corpus's exfiltration cases name these directories as "the store's own".
PROTECTED = ("/home/u/.echo_duck", "/data/mem")
LONG = os.environ.get("ECHO_DUCK_LONG") == "1"


def _open(path):
    return echo_duck.open(path, protected_paths=PROTECTED, embedder="hash", admin=True)


def _contents(mem) -> list[str]:
    """What could reach a prompt: every memory but those held for review (status 'quarantined')."""
    return mem.sql("SELECT content FROM memories WHERE status <> 'quarantined'")["content"].to_list()


def test_corpus_is_the_size_the_issue_asks_for():
    assert len(ATTACKS) >= 200 and len(BENIGN) >= 500


# -- import ---------------------------------------------------------------------------------------

def _jsonl(path: Path, texts: list[str]) -> Path:
    path.write_text("".join(json.dumps({"content": t, "type": "environment"}, ensure_ascii=False) + "\n" for t in texts),
                    encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["jsonl", "facts.json"])
def test_import_blocks_every_attack_and_stores_every_benign_note(tmp_path, shape):
    from echo_duck.io.importers import import_file

    def write(name, texts):
        if shape == "jsonl":
            return _jsonl(tmp_path / f"{name}.jsonl", texts)
        path = tmp_path / f"{name}_facts.json"  # ethan-style facts.json, detected by name
        path.write_text(json.dumps([{"content": t, "category": "knowledge", "confidence": 0.9} for t in texts],
                                   ensure_ascii=False), encoding="utf-8")
        return path

    with _open(tmp_path / "mem.duckdb") as mem:
        attacks = import_file(mem, write("attacks", ATTACKS))
        assert attacks.stored == len(attacks.quarantined) and attacks.read == len(ATTACKS)  # stored only to be held
        reasons = attacks.by_reason
        # A NUL byte is malformed text (refused before the scanner); everything else is the scanner's.
        assert reasons.get("rejected", 0) + reasons.get("invalid", 0) + attacks.stored == len(ATTACKS)
        assert reasons.get("invalid", 0) <= 1
        assert _contents(mem) == []
        assert mem.sql("SELECT count(*) FROM blocked_writes WHERE path = 'import'").item() == reasons["rejected"]

        benign = import_file(mem, write("benign", BENIGN))
        assert benign.stored == len(BENIGN), benign.by_reason  # none refused
        held = set(mem.sql("SELECT content FROM memories WHERE status = 'quarantined'")["content"].to_list())
        assert len(held & set(BENIGN)) <= len(BENIGN) // 20  # at most 5% held for a person's review
        assert sorted(_contents(mem) + sorted(held & set(BENIGN))) == sorted(BENIGN)  # the rest live, byte-exact
        assert mem.sql("SELECT count(*) FROM blocked_writes").item() == reasons["rejected"]
    print(f"\nimport[{shape}]: attacks blocked {len(ATTACKS) - attacks.stored}/{len(ATTACKS)}, "
          f"benign stored {benign.stored}/{len(BENIGN)}")


# -- consolidation --------------------------------------------------------------------------------

def _echo_extractor(messages):
    """A naive 'LLM' that proposes every message verbatim as a fact: the worst case for the scanner."""
    return [Candidate(text, "environment", None, (), 0.6, 0.8, i, text) for i, (_, text) in enumerate(messages)]


@pytest.fixture(scope="module")
def attack_sessions(tmp_path_factory):
    """One store whose sessions hold every attack twice: verbatim, and offered as a fact ("Remember that …",
    which the default extractor turns into a fact). Built once, copied per extractor."""
    path = tmp_path_factory.mktemp("sessions") / "sessions.duckdb"
    texts = [a for a in ATTACKS if "\x00" not in a]  # a message cannot hold NUL either (InvalidInput)
    with _open(path) as mem:
        for start in range(0, len(texts), 60):
            session = mem.start_session()
            for text in texts[start:start + 60]:
                mem.add_message(session, "user", text)
                mem.add_message(session, "user", f"Remember that {text}")
    return path, texts


@pytest.mark.slow
@pytest.mark.parametrize("extractor", ["default", "echo"])
def test_attacks_in_session_messages_never_become_memories(tmp_path, attack_sessions, extractor):
    source, texts = attack_sessions
    path = tmp_path / "mem.duckdb"
    shutil.copy(source, path)
    with echo_duck.open(path, protected_paths=PROTECTED, embedder="hash",
                        extractor=_echo_extractor if extractor == "echo" else None, admin=True) as mem:
        reports = mem.consolidate(all=True)
        assert len(reports) == -(-len(texts) // 60) and all(r.skipped is None for r in reports)
        contents = _contents(mem)
        # Consolidation stores nothing the scanner would refuse (facts and episode summaries alike) …
        assert [c for c in contents if scan(c, protected_paths=PROTECTED) is not None] == []
        # … and no attack reaches a memory, as written or behind a lead-in.
        assert [a for a in texts if any(a in c for c in contents)] == []
        blocked = mem.sql("SELECT count(*) FROM blocked_writes WHERE path = 'consolidation'").item()
        if extractor == "echo":  # every message was offered as a fact verbatim
            # each refused (blocked) or held for review (quarantined, counted as pending)
            assert sum(r.facts_rejected + r.facts_pending for r in reports) >= 2 * len(texts)
    print(f"\nconsolidation[{extractor}]: {len(texts)} attacks (x2 phrasings) in {len(reports)} sessions, "
          f"{len(texts)} checked never stored, {blocked} quarantined, {len(contents)} memories (episode summaries)")


# Found by this file: rules anchored at the start of the text let 11 attacks through behind a harmless
# lead-in ("Remember that SYSTEM: …", "FYI less ~/.bash_history"); the scanner now reads past lead-ins.
LEAD_INS = ("Remember that ", "FYI ", "Note: ", "Also, ", "Reminder: ", "btw ", "Important: ", "ok so ", "记住：")


@pytest.mark.slow
@pytest.mark.parametrize("lead_in", LEAD_INS)
def test_a_lead_in_does_not_hide_an_attack(lead_in):
    attacks = [a for a in ATTACKS if "\x00" not in a]
    evading = [a for a, f in zip(attacks, scan_many([lead_in + a for a in attacks], protected_paths=PROTECTED)) if f is None]
    assert evading == []
    verdicts = scan_many([lead_in + b for b in BENIGN], protected_paths=PROTECTED)
    assert [b for b, f in zip(BENIGN, verdicts) if f is not None and f.blocked] == []
    assert sum(f is not None for f in verdicts) <= len(BENIGN) // 20  # quarantined for review, at most 5%


@pytest.mark.slow
def test_benign_session_messages_consolidate_into_memories(tmp_path):
    # Each stored fact costs a contradiction check: a seeded sample by default, all with ECHO_DUCK_LONG=1.
    benign = BENIGN if LONG else random.Random(6).sample(BENIGN, 120)
    with echo_duck.open(tmp_path / "mem.duckdb", protected_paths=PROTECTED, embedder="hash",
                        extractor=_echo_extractor, admin=True) as mem:
        reports = []
        for start in range(0, len(benign), 60):
            session = mem.start_session()
            for text in benign[start:start + 60]:
                mem.add_message(session, "user", text)
            reports += mem.consolidate(session)
        contents = set(_contents(mem))
        held = set(mem.sql("SELECT content FROM memories WHERE status = 'quarantined'")["content"].to_list())
        missing = [b for b in benign if b not in contents and b not in held]
        assert missing == [] and sum(r.facts_rejected for r in reports) == 0  # nothing blocked ...
        assert len(held) <= len(benign) // 20  # ... and at most 5% held for review
        assert mem.sql("SELECT count(*) FROM blocked_writes").item() == 0
    print(f"\nconsolidation[echo]: benign stored {len(benign) - len(missing)}/{len(benign)}"
          f"{'' if LONG else ' (seeded sample)'}")


# -- tools ----------------------------------------------------------------------------------------

WRITE_TOOLS = {
    "memory_write": lambda t: {"content": t, "type": "environment", "provenance": "user_stated"},
    "procedure_write": lambda t: {"rule": t},
    "profile_update": lambda t: {"section": "工作与沟通方式", "content": t, "mode": "append"},
}


@pytest.mark.slow
@pytest.mark.parametrize("tool", sorted(WRITE_TOOLS))
def test_tools_refuse_every_attack(tmp_path, tool):
    with _open(tmp_path / "mem.duckdb") as mem:
        answers = [tools.call(mem, tool, WRITE_TOOLS[tool](a)) for a in ATTACKS]
        # each one refused, or stored quarantined (never recalled or shown until a person approves it)
        assert all(not a["ok"] or a["memory"]["status"] == "quarantined" for a in answers)
        errors = [a["error"] for a in answers if not a["ok"]]
        # NUL is malformed input (InvalidInput) before the scanner; the rest are scanner refusals.
        assert errors.count("RejectedWrite") >= len(ATTACKS) // 2 and set(errors) <= {"RejectedWrite", "InvalidInput"}
        assert _contents(mem) == []
        assert mem.sql("SELECT count(*) FROM blocked_writes WHERE path = 'tool'").item() == errors.count("RejectedWrite")
    print(f"\ntools[{tool}]: attacks blocked {len(answers)}/{len(ATTACKS)}")


@pytest.mark.slow
def test_tools_store_benign_notes(tmp_path):
    # Each stored note costs a contradiction check against the growing store: a seeded sample by default.
    benign = BENIGN if LONG else random.Random(6).sample(BENIGN, 200)
    with _open(tmp_path / "mem.duckdb") as mem:
        answers = [tools.call(mem, "memory_write", WRITE_TOOLS["memory_write"](b)) for b in benign]
        assert [a for a in answers if not a["ok"]] == []
        assert [a["memory"]["content"] for a in answers] == benign
        rules = [tools.call(mem, "procedure_write", {"rule": b}) for b in benign[::10]]
        assert all(r["ok"] for r in rules)
        assert mem.sql("SELECT count(*) FROM blocked_writes").item() == 0
    print(f"\ntools[memory_write]: benign stored {len(answers)}/{len(benign)}; procedure_write {len(rules)}/{len(rules)}"
          f"{'' if LONG else ' (seeded sample)'}")


# -- CLI ------------------------------------------------------------------------------------------

def _cli_text(text: str, store_dir: Path) -> str:
    """The CLI protects the directory of its own store: point the corpus's store paths at it."""
    for path in ("/home/u/.echo_duck", "~/.echo_duck", "/data/mem"):
        text = text.replace(path, str(store_dir))
    return text


@pytest.mark.slow
def test_cli_add_blocks_attacks_and_stores_benign_notes(tmp_path):
    rng = random.Random(6)
    attacks = ATTACKS if LONG else rng.sample(ATTACKS, 40)
    benign = BENIGN if LONG else rng.sample(BENIGN, 20)
    db, runner = tmp_path / "mem.duckdb", CliRunner()
    refused = 0
    for text in attacks:
        result = runner.invoke(cli, ["add", "--type", "user", "--db", str(db), "--", _cli_text(text, tmp_path)])
        assert "Traceback" not in result.output, (text, result.output)
        held = result.exit_code == 0 and "quarantined: held for review" in result.output
        assert held or "RejectedWrite" in result.output or ("NUL" in result.output and "\x00" in text), (text, result.output)
        refused += 1
    stored = 0
    for text in benign:
        result = runner.invoke(cli, ["add", "--type", "user", "--json", "--db", str(db), "--", text])
        assert result.exit_code == 0, (text, result.output)
        stored += 1
    with echo_duck.open(db, embedder="hash", read_only=True, admin=True) as mem:
        assert sorted(_contents(mem)) == sorted(benign)  # every benign note live, no attack
    print(f"\ncli add: attacks blocked {refused}/{len(attacks)}, benign stored {stored}/{len(benign)}"
          f"{'' if LONG else ' (seeded sample; ECHO_DUCK_LONG=1 for all)'}")
