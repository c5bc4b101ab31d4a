"""Optional rerank of the fused top hits (SPEC R5), never at the cost of an answer.

A reranker scores (query, text) pairs. It runs on the top ``top_k`` fused hits in a worker thread;
if it fails or takes longer than ``timeout_s`` the fused order is returned unchanged. ``min_score``
drops low-scoring hits but never empties the result. No cross-encoder ships offline on PyPI, so none
is on by default; ``OnnxCrossEncoder`` loads one from a local path.
"""

from __future__ import annotations

import concurrent.futures
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np

from ..errors import EchoDuckError
from ..write import validate


class Reranker(Protocol):
    def score(self, query: str, texts: Sequence[str]) -> Sequence[float]: ...


@dataclass(frozen=True)
class RerankSettings:
    top_k: int = 10
    timeout_s: float = 5.0
    min_score: float | None = None

    def __post_init__(self) -> None:
        validate.positive_int(self.top_k, "rerank_top_k", maximum=1000)
        if isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, (int, float)) or not self.timeout_s > 0:
            raise validate.InvalidInput(f"rerank_timeout_s must be a positive number, got {self.timeout_s!r}")


def rerank(query: str, hits: list, reranker: Reranker, settings: RerankSettings) -> tuple[list, str]:
    """(hits in their new order, what happened: 'reranked' | 'timeout' | 'failed: …')."""
    head, tail = hits[: settings.top_k], hits[settings.top_k:]
    if not head:
        return hits, "reranked"
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="echo-duck-rerank")
    try:
        future = pool.submit(reranker.score, query, [h.content for h in head])
        scores = [float(s) for s in future.result(timeout=settings.timeout_s)]
        if len(scores) != len(head) or any(math.isnan(s) for s in scores):
            raise ValueError(f"reranker returned {len(scores)} scores for {len(head)} texts (or NaN)")
    except concurrent.futures.TimeoutError:
        return hits, f"timeout after {settings.timeout_s:g} s: fused order kept"
    except Exception as e:  # any reranker failure falls back to the fused order
        return hits, f"failed: {type(e).__name__}: {e}: fused order kept"
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    ranked = sorted(zip(head, scores), key=lambda pair: -pair[1])
    if settings.min_score is not None:
        kept = [(h, s) for h, s in ranked if s >= settings.min_score]
        ranked = kept or ranked[:1]  # never empty the result
        tail = tail if kept else []
    return [_with_score(h, s) for h, s in ranked] + tail, "reranked"


def _with_score(hit: Any, score: float) -> Any:
    if hit.explanation is None:
        return hit
    return replace(hit, explanation=replace(hit.explanation, rerank_score=score))


class OnnxCrossEncoder:
    """A local ONNX cross-encoder (e.g. ms-marco-MiniLM exported to ONNX) with its tokenizer.json.

    Inputs input_ids / attention_mask (/ token_type_ids); the first logit of each pair is its score.
    """

    def __init__(self, model_path: str | Path, tokenizer_path: str | Path, *, max_length: int = 512, threads: int = 1):
        import onnxruntime
        from tokenizers import Tokenizer

        model_path, tokenizer_path = Path(model_path), Path(tokenizer_path)
        for path in (model_path, tokenizer_path):
            if not path.is_file():
                raise EchoDuckError(f"cross-encoder file not found: {path}")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        try:
            self.session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
            self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as e:
            raise EchoDuckError(f"cannot load cross-encoder {model_path}: {e}") from e
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.enable_padding()
        self.inputs = {i.name for i in self.session.get_inputs()}

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        encodings = self.tokenizer.encode_batch([(query, t) for t in texts])
        feed = {"input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64)}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        output = np.asarray(self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0])
        # (n, 1) or (n, classes) logits; a model exposing hidden states (n, seq, dim) is scored on its first token.
        flat = output.reshape(output.shape[0], -1)
        return [float(x) for x in flat[:, 0]]
