"""session_credit: a candidate from a source session scores at least FOLLOW_WEIGHT × the relevance of the nearest
earlier candidate of the same owner and session (sql/macros/40_recall.sql, recall_fused's followed step). With the
real model: the answer to a question asked in a conversation shares few of its words, and is lifted by the turn that
asked it. Only the caller's visible candidates of one owner pass credit on. (tests/test_fusion.py holds the
in-process ranking equal to the macro, session_credit included.)"""

from __future__ import annotations

from datetime import datetime

import pytest
from click.testing import CliRunner

import echo_duck
from echo_duck.cli.main import cli
from echo_duck.recall import fusion

TURNS = [
    "Dave: Hey Calvin, how was the move to the new apartment?",
    "Calvin: Exhausting, but the living room is finally set up.",
    "Dave: Did you get a new TV for it?",
    "Calvin: Yes, a big one, mounted on the wall above the fireplace.",
    "Dave: Nice setup! What do you usually watch on it?",
    "Calvin: Mostly music videos, and old cartoons on Sunday mornings.",
    "Dave: Ha, classic. I'm still fixing my car this weekend.",
    "Calvin: The old Ford? What broke this time?",
    "Dave: The alternator. I ordered a new one online.",
    "Calvin: Good luck with that, send me a picture when it runs.",
]
EARLIER = [
    "Dave: My sister started a pottery class last month.",
    "Calvin: I went hiking near the lake with my cousins.",
    "Dave: The concert tickets sold out in ten minutes.",
    "Calvin: I'm learning to bake sourdough bread.",
    "Dave: Our team won the bowling league final.",
    "Calvin: I watched a documentary about deep sea fish yesterday.",
]
QUESTION = "What does Calvin usually watch on his TV?"
ANSWER = TURNS[5]


def _conversation(path, sessions: bool):
    mem = echo_duck.open(path, agent_id="a")  # the default embedder: the real model
    mem.remember_many([dict(content=t, type="environment", source_session="conv-2" if sessions else None,
                            observed_at=datetime(2026, 3, 1)) for t in TURNS])
    mem.remember_many([dict(content=t, type="environment", source_session="conv-1" if sessions else None,
                            observed_at=datetime(2026, 2, 1)) for t in EARLIER])
    return mem


def _rank(hits, content: str) -> int:
    return [h.memory.content for h in hits].index(content)


def test_the_turn_after_a_matching_question_is_lifted_by_it(tmp_path):
    with _conversation(tmp_path / "sessions.duckdb", sessions=True) as mem:
        hits = mem.recall(QUESTION, 5, explain=True, reinforce=False)
        e = hits[_rank(hits, ANSWER)].explanation
        asked = hits[_rank(hits, TURNS[4])].explanation  # "What do you usually watch on it?", the turn before
        # the asking turn holds the question's words, and mostly asks: it keeps asking_weight of its score
        assert _rank(hits, ANSWER) == 0 and _rank(hits, TURNS[4]) == 1 and asked.asking_weight == fusion.ASKING_WEIGHT
        assert e.session_credit == fusion.FOLLOW_WEIGHT * asked.relevance > e.bm25_score  # earned, not its words
        assert e.relevance == e.session_credit and hits[1].score < hits[0].score
    said = CliRunner().invoke(cli, ["--db", str(tmp_path / "sessions.duckdb"), "--agent", "a", "recall", QUESTION,
                                    "-k", "3", "--explain", "--no-reinforce"])
    assert said.exit_code == 0, said.output
    lines = said.output.splitlines()
    lifted = [i for i, line in enumerate(lines) if line.endswith("lifted by the memory before it in its session")]
    # the explain line under its hit; the third hit answers the turn that asked about the TV, and is lifted by it too
    assert [lines[i - 1].strip()[:26] for i in lifted] == ["Calvin: Mostly music video", "Calvin: Yes, a big one, mo"]
    asking = [i for i, line in enumerate(lines) if line.endswith(f"it mostly asks (score × {fusion.ASKING_WEIGHT:g})")]
    assert len(asking) == 1 and "What do you usually watch on it?" in lines[asking[0] - 1]
    with _conversation(tmp_path / "loose.duckdb", sessions=False) as mem:  # the same turns, no source session
        hits = mem.recall(QUESTION, 5, explain=True, reinforce=False)
        assert _rank(hits, ANSWER) >= 3  # below two other turns about TVs and watching
        assert all(h.explanation.session_credit is None for h in hits)


def test_credit_passes_only_between_one_owners_memories_the_caller_may_see(tmp_path):
    """Bob's private question and Alice's public answer in one source session. Alice's recall knows nothing of Bob's
    turn; in Bob's, who sees both, her answer is not lifted by his question either: another agent cannot ride on a
    relevant memory by writing into its session. Bob's own later turn is lifted by his question."""
    path = tmp_path / "shared.duckdb"
    question = "Bob: Where do we keep the deploy key for the staging cluster?"
    answer = "Alice: In the vault, under ops/staging; it is rotated every quarter."
    thanks = "Bob: Thanks, I will keep the key safe."
    ask = "where is the staging deploy key kept?"
    with echo_duck.open(path, agent_id="host", admin=True) as host:
        host.grant_right("alice", "publish:public")
    with echo_duck.open(path, agent_id="bob") as bob:
        bob.remember(question, type="environment", source_session="standup")
    with echo_duck.open(path, agent_id="alice") as alice:
        alice.remember(answer, type="environment", source_session="standup", scope="public")
        alice.remember_many([dict(content=t, type="environment") for t in EARLIER])
        mine = alice.recall(ask, 3, explain=True, reinforce=False)
    assert question not in [h.memory.content for h in mine]
    assert mine[0].memory.content == answer and mine[0].explanation.session_credit is None
    with echo_duck.open(path, agent_id="bob") as bob:
        bob.remember(thanks, type="environment", source_session="standup")
        both = {h.memory.content: h.explanation for h in bob.recall(ask, 10, explain=True, reinforce=False)}
    assert {question, answer, thanks} <= both.keys()
    assert both[answer].session_credit is None  # Alice's turn: another owner
    assert both[thanks].session_credit == pytest.approx(fusion.FOLLOW_WEIGHT * both[question].relevance)
    assert both[thanks].relevance == both[thanks].session_credit  # more than "key" alone earns it
