"""A small, deterministic store for the notebooks (notebooks/*.ipynb) and the scale-out tests.

``build_tour_store(path)`` writes a store whose history covers what an analyst looks at: two agents,
the four memory types, the semantic, episodic and archival tiers, contradictions resolved three ways and one left pending, a
consolidated session, a retrieval log with feedback, a decay pass and a Parquet archive export. It
runs on a fixed clock, so the same call gives the same rows (ids aside) on every machine.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..embed.embedder import model_status
from ..lifecycle.archive import archive_dir
from ..lifecycle.verify import Verdict
from ..store.facade import EchoDuck

START = datetime(2026, 1, 5, 9, 0, 0)
TEAM = "platform"


@dataclass(frozen=True)
class TourStore:
    path: Path
    archive_dir: Path
    now: datetime  # the fixture clock when the build finished: use it as the analyst's "now"
    embedder: str


class _Clock:
    def __init__(self, start: datetime):
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def default_embedder_name() -> str:
    """The real default model when it is installed, else the deterministic hash embedder."""
    return "default" if model_status()["use-multilingual"]["available"] else "hash"


def key_family_verifier(a: Any, b: Any) -> Verdict:
    """The tour's verifier: two memories of one key family disagree when their wording differs. It is
    sure (0.9: settled by provenance, then recency) unless two sources of equal standing disagree
    (0.7: below contradiction_auto_confidence, so the conflict stays pending for a person)."""
    family = bool(a.key and b.key) and (a.key.startswith(b.key) or b.key.startswith(a.key))
    torn = getattr(a, "provenance", 0) == getattr(b, "provenance", 0) and \
        getattr(a, "source_session", None) != getattr(b, "source_session", None)
    return Verdict(family and a.content != b.content, 0.7 if torn else 0.9, f"'{a.content}' vs '{b.content}'")


def build_tour_store(path: str | Path | None = None, *, embedder: str | None = None) -> TourStore:
    """Write the tour store at ``path`` (a new temporary folder when None) and return where it is."""
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="echo_duck_tour_")) / "tour.duckdb"
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} exists; the tour store is built into a new file")
    embedder = embedder or default_embedder_name()
    clock = _Clock(START)
    # Two opens only (each open loads the extensions): one per agent.
    # The tour is built by its host: admin handles acting as each agent (grants, decay and archive are admin jobs).
    with EchoDuck(path, agent_id="coder", team_id=TEAM, now=clock, embedder=embedder, verifier=key_family_verifier,
                  admin=True) as mem:
        _coder_facts(mem, clock)
        _coder_contradictions(mem, clock)
        _coder_session_and_recalls(mem, clock)
    with EchoDuck(path, agent_id="reviewer", team_id=TEAM, now=clock, embedder=embedder, admin=True) as mem:
        _reviewer_history(mem, clock)
        # Time passes: low-importance facts nobody recalls decay to the archival tier (the job covers
        # the whole store), and past the archive retention (90 days) they and the superseded versions
        # leave for the Parquet archive.
        clock.advance(days=45)
        mem.decay()
        clock.advance(days=91)
        mem.archive()
        # A fact learned after the export, and fresh recalls: these memories' curves restart now.
        mem.remember("The CI runners moved to ARM64 machines", type="environment", key="ci:arch",
                     importance=0.7, scope="team", team_id=TEAM)
        for query in ("which machines run CI?", "where is the style guide?"):
            mem.recall(query, k=2)
            clock.advance(minutes=3)
    return TourStore(path, archive_dir(str(path)), clock.now, embedder)


def _coder_facts(mem: EchoDuck, clock: _Clock) -> None:
    mem.grant(team=TEAM)
    mem.remember_many([
        dict(content="User prefers answers in Chinese", type="user", key="reply_language",
             provenance="user_stated", pinned=True),
        dict(content="用户的名字是李雷，在上海工作", type="user", key="user_identity", provenance="user_stated"),
        dict(content="Run the test suite with `pytest -q tests/`", type="environment", key="test_command",
             importance=0.8, tags=["python"]),
        dict(content="The staging database is PostgreSQL 15 on db-staging.internal", type="environment",
             key="staging_db", importance=0.6, scope="team", team_id=TEAM),
        dict(content="Deploys go out on Tuesdays after the standup", type="environment", key="deploy:day",
             importance=0.7, scope="team", team_id=TEAM, tags=["deploy"]),
        dict(content="回答代码问题时先给出可运行的示例", type="procedure", key="code_answers", provenance="user_stated"),
        dict(content="I tend to forget to run the linter before committing", type="self", key="lint_habit"),
    ])
    # Low-importance one-offs: these are what decay archives.
    mem.remember_many([dict(content=text, type="environment", importance=imp, tags=["trivia"]) for text, imp in [
        ("The coffee machine on floor 3 is broken", 0.1),
        ("A flaky test in test_http.py failed once on Monday", 0.15),
        ("The demo laptop password was reset last week", 0.1),
        ("Someone renamed the #random channel to #watercooler", 0.05),
        ("The old Jenkins server is being retired", 0.2),
        ("Office wifi was slow this morning", 0.1),
    ]])
    clock.advance(days=1)
    # A fact that changed: version 2 supersedes version 1 (version 1 ends in the archive).
    mem.remember("项目使用 pnpm 管理依赖，不要用 npm", type="environment", key="package_manager", tags=["node"])
    clock.advance(days=2)
    mem.remember("项目使用 pnpm 9 管理依赖，锁文件是 pnpm-lock.yaml", type="environment", key="package_manager",
                 tags=["node"])


def _coder_contradictions(mem: EchoDuck, clock: _Clock) -> None:
    """The verifier is confident; how each contradiction is settled depends on the two sources."""
    # higher provenance wins: the user's word beats the agent's guess.
    mem.remember("The API base URL is api.v1.example.com", type="environment", key="api:base_url",
                 provenance="model_inferred")
    clock.advance(hours=2)
    mem.remember("The API base URL is api.v2.example.com", type="environment", key="api:base_url:prod",
                 provenance="user_stated")
    # same source, newer wins.
    mem.remember("The deploy freeze starts on the 15th", type="environment", key="deploy:freeze",
                 source_session="planning")
    clock.advance(hours=1)
    mem.remember("The deploy freeze starts on the 20th", type="environment", key="deploy:freeze:start",
                 source_session="planning")
    # two sources disagree: pending until someone decides; the first pair the user settles.
    a = mem.remember("The on-call rotation changes on Monday", type="environment", key="oncall:rotation",
                     source_session="standup")
    clock.advance(minutes=30)
    mem.remember("The on-call rotation changes on Wednesday", type="environment", key="oncall:rotation:day",
                 source_session="retro")
    mem.remember("The release train leaves every second Thursday", type="environment", key="release:train",
                 source_session="standup")
    clock.advance(minutes=30)
    mem.remember("The release train leaves every Friday", type="environment", key="release:train:day",
                 source_session="retro")
    pending = [c for c in mem.contradictions() if a.id in (c.memory_a, c.memory_b)]
    clock.advance(hours=1)
    mem.resolve(pending[0].id, a.id)


def _coder_session_and_recalls(mem: EchoDuck, clock: _Clock) -> None:
    # A conversation, consolidated into an episode and facts.
    session = mem.start_session()
    for role, text in [
        ("user", "Remember that the frontend lives in the web/ folder"),
        ("assistant", "Noted: the frontend is in web/."),
        ("user", "I prefer short answers with a code example first"),
        ("assistant", "Understood, short answers with code first."),
        ("user", "以后提交前先运行 ruff 检查"),
        ("assistant", "好的，以后提交前先运行 ruff。"),
    ]:
        clock.advance(minutes=1)
        mem.add_message(session, role, text)
    mem.end_session(session, consolidate=False)
    mem.consolidate(session)

    # The retrieval log: what was asked, what came back, and whether it helped.
    clock.advance(days=1)
    for query in ("which package manager does the project use?", "how do I run the tests?",
                  "用户喜欢什么语言？", "when do deploys happen?", "API base URL"):
        hits = mem.recall(query, k=3)
        if hits:
            mem.mark(hits[0], helpful=True)
        clock.advance(minutes=7)


def _reviewer_history(mem: EchoDuck, clock: _Clock) -> None:
    mem.grant(team=TEAM)
    mem.remember_many([
        dict(content="Review pull requests within one working day", type="procedure", key="review_sla",
             provenance="user_stated"),
        dict(content="Large diffs should be split into stacked PRs", type="self", key="review:stacking",
             importance=0.6),
        dict(content="The style guide is docs/STYLE.md", type="environment", key="style_guide", importance=0.7),
    ])
    mem.remember_many([dict(content=text, type="environment", importance=0.05, tags=["trivia"]) for text in (
        "PR #412 had a typo in the changelog",
        "The review bot was down for an hour on Friday",
        "A reviewer was on holiday last week",
    )])
    clock.advance(hours=3)
    for query in ("how fast should I review?", "where is the style guide?", "when do deploys happen?"):
        mem.recall(query, k=3)
        clock.advance(minutes=5)
