"""A model of the user's own from a folder (embed/onnx_folder.py), with the real MiniLM graph laid out as
sentence-transformers writes a model: no mocks, the vectors are checked against onnxruntime run by hand."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import echo_duck
from echo_duck.embed.embedder import MiniLMEmbedder, OnnxEmbedder, embedder_by_name
from echo_duck.embed.models import MINILM_FILE, locate
from echo_duck.errors import InvalidInput
from echo_duck.store.doctor import diagnose

TOKENIZER = Path(echo_duck.__file__).parent / "resources" / "minilm" / "tokenizer.json"
TEXTS = ["The user prefers pnpm over npm", "用户喜欢深色模式", "ok"]


@pytest.fixture(scope="module")
def graph() -> Path:
    path, problem = locate(MINILM_FILE)
    if path is None:
        pytest.skip(f"minilm: {problem}")
    return path


def folder(tmp_path: Path, graph: Path, where: str = "onnx/model.onnx", files: dict | None = None) -> Path:
    """A model folder: the graph (linked), tokenizer.json, and sentence-transformers' JSON files by path."""
    root = tmp_path / "my-model"
    (root / where).parent.mkdir(parents=True, exist_ok=True)
    (root / where).symlink_to(graph)
    shutil.copy(TOKENIZER, root / "tokenizer.json")
    for name, content in (files or {}).items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(content), encoding="utf-8")
    return root


def by_hand(graph: Path, texts: list[str], pooling: str, max_tokens: int) -> np.ndarray:
    """The graph run directly with onnxruntime, one text at a time, pooled and normalised here."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    tok.enable_truncation(max_length=max_tokens)
    tok.no_padding()
    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    rows = []
    for text in texts:
        e = tok.encode(text)
        feed = {"input_ids": np.array([e.ids], np.int64), "attention_mask": np.array([e.attention_mask], np.int64),
                "token_type_ids": np.array([e.type_ids], np.int64)}
        hidden = session.run(["last_hidden_state"], feed)[0][0]
        rows.append(hidden[0] if pooling == "cls" else hidden.mean(axis=0))
    out = np.array(rows, np.float64)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_a_folder_reads_like_the_packaged_model_and_like_onnxruntime_by_hand(tmp_path, graph):
    emb = OnnxEmbedder(folder(tmp_path, graph, files={"sentence_bert_config.json": {"max_seq_length": 256}}))
    assert (emb.pooling, emb.max_tokens, emb.dim) == ("mean", 256, 384)
    vectors = emb.embed(TEXTS)
    assert np.array_equal(vectors, MiniLMEmbedder().embed(TEXTS))
    assert np.allclose(vectors, by_hand(graph, TEXTS, "mean", 256), atol=1e-5)
    assert emb.model_id.startswith("onnx-my-model-") and len(emb.model_id) == len("onnx-my-model-") + 12


def test_pooling_prompts_and_dimension_come_from_the_sentence_transformers_files(tmp_path, graph):
    root = folder(tmp_path, graph, where="model.onnx", files={
        "1_Pooling/config.json": {"word_embedding_dimension": 384, "pooling_mode_cls_token": True,
                                   "pooling_mode_mean_tokens": False},
        "config_sentence_transformers.json": {"prompts": {"query": "query: ", "passage": "passage: "}},
        "config.json": {"hidden_size": 384}})
    emb = OnnxEmbedder(root)
    assert (emb.pooling, emb.query_prompt, emb.document_prompt, emb.dim) == ("cls", "query: ", "passage: ", 384)
    assert np.allclose(emb.embed(TEXTS), by_hand(graph, [f"passage: {t}" for t in TEXTS], "cls", 128), atol=1e-5)
    assert np.allclose(emb.embed_queries(TEXTS), by_hand(graph, [f"query: {t}" for t in TEXTS], "cls", 128), atol=1e-5)
    plain = OnnxEmbedder(root, pooling="mean", query_prompt="", document_prompt="")
    assert plain.model_id != emb.model_id  # another vector space: the store must not mix them
    assert OnnxEmbedder(root).model_id == emb.model_id


def test_a_path_is_a_model_name_everywhere_a_name_is(tmp_path, graph):
    root = folder(tmp_path, graph)
    emb = embedder_by_name(str(root))
    assert isinstance(emb, OnnxEmbedder) and embedder_by_name(str(root)) is emb
    with echo_duck.open(tmp_path / "m.duckdb", embedder=str(root)) as mem:
        mem.remember("The user prefers pnpm over npm for every JavaScript project", type="user")
        mem.remember("Deploys to staging happen every Friday afternoon", type="procedure")
        mem.remember("The cat is called Pudding", type="user")
        hits = mem.recall("which package manager for node?", arms="vector")
        assert hits[0].content.startswith("The user prefers pnpm") and hits[0].score > 0
    with echo_duck.open(tmp_path / "m.duckdb") as mem:  # without the folder: keywords only, nothing mixed
        assert mem.recall("which package manager for node?", arms="vector") == []
    check = next(c for c in diagnose(tmp_path / "m.duckdb").checks if c.name == "store model")
    assert (check.status, emb.model_id in check.detail) == ("warn", True)
    assert "embedder=\"<the model's folder>\"" in check.fix


def test_the_cli_takes_the_model_from_ECHO_DUCK_MODEL(tmp_path, graph):
    root = folder(tmp_path, graph)
    db = tmp_path / "cli.duckdb"
    env = {"ECHO_DUCK_MODEL": str(root), "PATH": str(Path(sys.executable).parent)}
    run = [sys.executable, "-m", "echo_duck.cli", "--db", str(db)]
    subprocess.run([*run, "add", "The user prefers pnpm over npm for every JavaScript project", "--type", "user"],
                   env=env, check=True, capture_output=True)
    subprocess.run([*run, "add", "The cat is called Pudding", "--type", "user"], env=env, check=True,
                   capture_output=True)
    out = subprocess.run([*run, "--json", "recall", "which package manager for node?"], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert json.loads(out)[0]["memory"]["content"].startswith("The user prefers pnpm")  # no shared word: the vector arm's
    check = next(c for c in diagnose(db).checks if c.name == "store model")
    assert embedder_by_name(str(root)).model_id in check.detail


@pytest.mark.parametrize("layout, message", [
    ("empty", "no ONNX file in"),
    ("two graphs", "several ONNX files (a.onnx, b.onnx)"),
    ("no tokenizer", "needs its tokenizer.json"),
    ("max pooling", "asks for pooling max; supported: mean, cls"),
    ("not onnx", "is not an .onnx file"),
])
def test_a_folder_that_is_not_a_model_is_refused_by_name(tmp_path, graph, layout, message):
    root = tmp_path / "m"
    root.mkdir()
    target = root
    if layout == "two graphs":
        (root / "a.onnx").symlink_to(graph)
        (root / "b.onnx").symlink_to(graph)
    elif layout == "no tokenizer":
        (root / "model.onnx").symlink_to(graph)
    elif layout == "max pooling":
        root = folder(tmp_path, graph, files={"1_Pooling/config.json": {"pooling_mode_max_tokens": True}})
        target = root
    elif layout == "not onnx":
        target = root / "tokenizer.json"
        shutil.copy(TOKENIZER, target)
    with pytest.raises(InvalidInput, match=message.replace("(", r"\(").replace(")", r"\)")):
        OnnxEmbedder(target)


def test_a_bad_model_folder_is_refused_when_the_store_opens_and_changes_nothing(tmp_path):
    with echo_duck.open(tmp_path / "m.duckdb", embedder="hash") as mem:
        mem.remember("The user prefers pnpm over npm", type="user")
    with pytest.raises(InvalidInput, match="no embedding model at .*missing"):
        echo_duck.open(tmp_path / "m.duckdb", embedder=str(tmp_path / "missing"))
    with echo_duck.open(tmp_path / "m.duckdb", embedder="hash") as mem:  # not locked, nothing changed
        assert [m.content for m in mem.find()] == ["The user prefers pnpm over npm"]
        assert mem.recall("pnpm", arms="vector")[0].content == "The user prefers pnpm over npm"
