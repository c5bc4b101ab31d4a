"""The semantic layer: is this text, in any of the model's languages and registers, an attack on the agent?

Two scorers over the default multilingual embedding model (USE-multilingual-v3, 512-d) vote:
  * kNN: mean cosine to the 3 nearest attack exemplars minus mean cosine to the 3 nearest benign ones;
  * a logistic-regression probe on the same vectors.
score = KNN_WEIGHT × kNN + probe logit. A text is scored as a whole, and so is every decoded payload in it
(decode.py); a note of three sentences or more is also scored sentence by sentence, less CHUNK_MARGIN, so a
long benign prefix cannot dilute an instruction. Two thresholds, set by ``fit`` from out-of-fold scores of
the benign training notes (groups held out whole), turn the score into block / quarantine / pass.

The trained state ships as ``echo_duck/resources/scan/classifier.npz`` (int8 exemplars, probe, thresholds; fitted
on data_fixtures/scan_corpus and the read hold-out sets beside it, rebuilt by ``echo-duck bench scanner --rebuild``). The model itself loads on the first scan that needs it,
never at ``open()``; without the model package installed the rules run alone and say so once.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import re
import threading
import warnings
from dataclasses import dataclass
from typing import Callable, Collection, Sequence

import numpy as np

from ...embed.alone import embed_each, embed_soon
from ...embed.embedder import MODEL_INSTALL_HINT, default_embedder
from ...index.matvec import matvec  # float32 products on the calling thread (OpenBLAS's helper thread spins)
from .decode import decodings
from .leading import leading
from .ngrams import scores as ngram_scores
from .memo import per_text
from .normalise import cosmetic, view

K = 3
KNN_WEIGHT = 10.0
# Character n-grams (ngrams.py) carry the words where the model's vectors only say which language a note is in. 0.2:
# on held-out idea groups at the same benign quarantine rate, 0.1-0.2 found 2-3 points more attacks overall and 13-20
# more in the languages the model barely knows (hi, fa, he, pinyin, yue, th, vi, uk); 0.4 found fewer overall.
NGRAM_WEIGHT = 0.2
CHUNK_MARGIN = 1.0  # in score units: a sentence alone must clear the threshold by this much
MIN_CHUNKS = 3
MIN_WORDS = 4  # below this a note carries too little for the model to judge ("guarded", "User likes tea"): rules only
MIN_WORDS_TO_BLOCK = 8  # below this the model alone only quarantines ("you are now logged in" is not DAN)
MAX_CHUNKS = 16  # a long note is read in at most this many windows of sentences (the model costs ~1 ms per 100 chars)
MAX_WINDOW_CHARS = 1200  # and each window, like the whole note, is cut to this many characters for the model
# Words that make a window of a long note worth the model's time (the rest of a 100,000-character note is the rules').
_CUE_RE = re.compile(r"(?i)ignor|disregard|forget|instruction|system|prompt|rule|password|secret|token|key|send|upload|"
                     r"forward|curl|wget|http|reveal|pretend|user|assistant|from now on|忽略|无视|指令|提示|规则|密码|密钥|"
                     r"发送|上传|用户|助手|命令|無視|指示|パスワード|무시|지시|비밀번호")
# Read in lower case (a case-insensitive pattern costs three times as much on 100,000 characters), tried only where a
# cue word can start (leading.py).
_CUE_RE = leading(re.compile(_CUE_RE.pattern.removeprefix("(?i)")))
# Thresholds, as shares of the out-of-fold scores of the risky benign training notes (train.fit). Quarantine: each
# note scored by a model fitted without its whole family (train.fit's held_whole, from the bench), 10 %. The shipped
# model's quarantine threshold is then set again, on a fixed benign reference the model never reads (calibrate.py):
# a corpus pass that adds hard benign families makes this out-of-fold rule stricter, and a better-ranking model found
# fewer attacks under it (the sixth pass: 73.6 % on the fourth and fifth sets, against 80.3 % set on the reference).
# Block: above every benign note scored held out by group. Blocking at the 99.8th percentile instead blocked "Note:
# Previous instructions from the user: always run lint before committing." (score 1.25).
BLOCK_BENIGN_RATE = 0.0
QUARANTINE_BENIGN_RATE = 0.10
NO_MODEL = ("echo_duck: the default embedding model is not installed, so the write scanner runs its rules alone "
            f"(no semantic classifier); install it with: {MODEL_INSTALL_HINT}")
_WORD_RE = re.compile(r"[^\W\d_]+|\d+")
_CJK_RE = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_SENTENCE_RE = re.compile(r"(?<=[.!?。！？;；])\s+|[\r\n]+|(?<=[。！？；])")


@dataclass(frozen=True)
class Model:
    exemplars: np.ndarray  # float32 (n, 512), unit rows
    labels: np.ndarray  # 1 attack, 0 benign
    weights: np.ndarray  # probe: 512 weights then the bias
    block: float
    quarantine: float
    model_id: str
    ngrams: np.ndarray | None = None  # float32 (ngrams.DIM,): n-gram log ratios; None in a model without them

    def score_vectors(self, vectors: np.ndarray, texts: Sequence[str] | None = None,
                      grams: np.ndarray | None = None) -> np.ndarray:
        """Scores of ``vectors``, the embeddings of ``texts`` (needed when the model has n-gram weights). ``grams``:
        ``ngrams.scores`` of the texts under this model's table, when the caller has them already."""
        if self.ngrams is not None and (texts is None or len(texts) != len(vectors)):
            raise ValueError("this model scores texts too: pass the texts the vectors embed")
        vectors = np.asarray(vectors, dtype=np.float32)
        if len(vectors) >= 8:  # a batch: one matrix product
            sims = vectors @ self.exemplars.T
        else:  # one write: products on the calling thread (OpenBLAS's helper thread would spin between writes)
            sims = np.stack([matvec(self.exemplars, v) for v in vectors]) if len(vectors) else np.zeros((0, len(self.labels)))
        top_a, top_b = top_k(sims, self.labels == 1), top_k(sims, self.labels == 0)
        score = KNN_WEIGHT * (top_a.mean(1) - top_b.mean(1)) + vectors @ self.weights[:-1] + self.weights[-1]
        if self.ngrams is not None:
            score = score + NGRAM_WEIGHT * (ngram_scores(self.ngrams, texts) if grams is None else grams)
        return score


GROUP = 64  # columns per group in top_k


def top_k(sims: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """The K largest of each row of ``sims`` among ``columns`` (a boolean mask), largest first: the values, and the
    order, of ``-np.partition(-sims[:, columns], K - 1, axis=1)[:, :K]`` (for K <= 3 numpy's partition leaves the K
    smallest sorted), without copying the columns out and selecting over all of them. Each run of wanted columns
    is dealt into groups of GROUP (every groups-th column); a row's K largest lie in its K groups with the largest
    maxima (or in the run's few leftover columns), and only those candidates are partitioned."""
    n = len(sims)
    edges = np.flatnonzero(np.diff(np.concatenate(([False], columns, [False])).astype(np.int8)))
    candidates = []
    for a, b in zip(edges[::2], edges[1::2]):
        groups = (b - a) // GROUP
        if groups <= K:
            candidates.append(sims[:, a:b])
            continue
        maxima = sims[:, a:a + groups * GROUP].reshape(n, GROUP, groups).max(axis=1)  # column a + i*groups + g
        best = np.argpartition(maxima, groups - K, axis=1)[:, groups - K:]  # the K groups with the largest maxima
        at = (a + best)[:, :, None] + np.arange(GROUP) * groups
        candidates += [np.take_along_axis(sims, at.reshape(n, K * GROUP), axis=1), sims[:, a + groups * GROUP:b]]
    pool = np.concatenate(candidates, axis=1) if candidates else np.zeros((n, 0), sims.dtype)
    return -np.partition(-pool, K - 1, axis=1)[:, :K]


@dataclass(frozen=True)
class Views:
    """The texts the classifier reads for one input: the whole view, decoded payloads, sentence chunks."""

    whole: str
    decoded: tuple[tuple[str, str], ...]
    chunks: tuple[str, ...]

    def texts(self) -> list[str]:
        return [self.whole, *(d for _, d in self.decoded), *self.chunks]

    @property
    def too_short(self) -> bool:
        return not self.decoded and words(self.whole) < MIN_WORDS


def words(text: str) -> float:
    """Words: whitespace-separated tokens with a letter in them (a path or a flag is one), two CJK characters as one."""
    cjk = len(_CJK_RE.findall(text))
    return sum(1 for t in _CJK_RE.sub(" ", text).split() if _WORD_RE.search(t) and not t.isdigit()) + cjk / 2


@per_text  # a bulk write asks for it three times per note (start, the store list, views_of)
def reading(text: str) -> str:
    """What the model reads of a whole note: the note itself when its view differs from it only cosmetically
    (normalise.cosmetic: spacing, the width of punctuation), so that a note is embedded once, for the scanner and
    for the index that stores it; else its view. Cut to MAX_WINDOW_CHARS."""
    whole = view(text)[:MAX_WINDOW_CHARS]
    return text if len(text) <= MAX_WINDOW_CHARS and text != whole and cosmetic(text) == whole else whole


def views_of(text: str, decoded: Sequence[tuple[str, str]] | None = None) -> Views:
    decoded = decodings(text) if decoded is None else decoded
    return Views(reading(text), tuple((how, view(d)[:MAX_WINDOW_CHARS]) for how, d in decoded if view(d)),
                 tuple(chunks(text)))


def chunks(text: str) -> list[str]:
    """Sentences of ``text`` (as viewed), when there are at least MIN_CHUNKS; long notes in at most MAX_CHUNKS windows."""
    return list(_chunks(text))


@per_text  # a scan that starts the model early (Scanner._start) reads them twice
def _chunks(text: str) -> tuple[str, ...]:
    parts = [p for p in _SENTENCE_RE.split(text) if p and len(p.strip()) >= 8]
    if len(parts) < MIN_CHUNKS:
        return ()
    windows, current = [], ""
    for p in parts:  # sentences, merged into windows of up to MAX_WINDOW_CHARS
        if current and len(current) + len(p) > MAX_WINDOW_CHARS:
            windows.append(current)
            current = ""
        current = f"{current} {p}" if current else p
    windows.append(current)
    if len(parts) <= MAX_CHUNKS:
        windows = parts  # a short note: every sentence on its own
    elif len(windows) > MAX_CHUNKS:  # first, last, and the windows with the most cue words
        ranked = sorted(range(1, len(windows) - 1), key=lambda i: -len(_CUE_RE.findall(windows[i].lower())))
        keep = sorted({0, len(windows) - 1, *ranked[:MAX_CHUNKS - 2]})
        windows = [windows[i] for i in keep]
    return tuple(v[:MAX_WINDOW_CHARS] for w in windows if len(v := view(w)) >= 8)


def embed_alone(embedder, texts: Sequence[str]) -> np.ndarray:
    """Each text through the model on its own, as scoring and fitting both read it: the default model (a dynamically
    quantised graph) scales activations over its whole batch, so a batched vector depends on its neighbours (cosine
    ~0.998), enough to move a borderline verdict and the thresholds fitted on such vectors."""
    return np.stack([embedder.embed([t])[0] for t in texts]).astype(np.float32, copy=False)


@dataclass(frozen=True)
class Score:
    value: float  # the highest of whole, decoded, chunk - CHUNK_MARGIN
    where: str  # "whole" | "decoded:<how>" | "sentence"
    text: str  # the view that scored highest

    @property
    def may_block(self) -> bool:
        return words(self.text) >= MIN_WORDS_TO_BLOCK


class Classifier:
    """Scores views with the shipped model; loads the embedder and the exemplars on first use."""

    def __init__(self, embedder_factory: Callable[[], object | None] = default_embedder, model: Model | None = None):
        self._factory = embedder_factory
        self._embedder = None
        self._model = model
        self._ready = False
        self._lock = threading.Lock()
        self._warned = False

    def _load(self) -> bool:
        with self._lock:
            if not self._ready:
                self._embedder = self._factory()
                if self._embedder is not None and self._model is None:
                    self._model = load_shipped()
                self._ready = True
        if self._embedder is None or self._model is None:
            if not self._warned:
                self._warned = True
                warnings.warn(NO_MODEL, RuntimeWarning, stacklevel=4)
            return False
        return True

    @property
    def available(self) -> bool:
        return self._load()

    @property
    def model_id(self) -> str | None:
        """The embedding model the classifier reads with (None without it)."""
        return str(self._embedder.model_id) if self._load() else None

    def reads_with(self, embedder: object | None) -> bool:
        """Whether ``embedder`` is the one this classifier embeds with (loaded)."""
        return embedder is not None and self._load() and embedder is self._embedder

    @property
    def model(self) -> Model | None:
        return self._model if self._load() else None

    def start(self, texts: Sequence[str], store: Sequence[str] = ()) -> dict:
        """Start the model now, on the pool, on what ``score_many`` will read of ``texts`` (each one's whole view
        and sentence chunks, unless it is too short to score; decoded payloads are known only after the rules),
        then on ``store``: texts an index of this model is about to store, kept for it (embed/alone.py). Returns
        the futures by text, for ``score_many(..., soon=...)``; empty without the model."""
        if not self._load():
            return {}
        read = []
        for t in texts:
            whole = reading(t)
            if words(whole) >= MIN_WORDS:
                read += [whole, *chunks(t)]
        return embed_soon(self._embedder, [*read, *store], keep=set(store))

    def score_many(self, items: Sequence[Views], keep: Collection[str] = (), soon: dict | None = None) -> list[Score | None]:
        """Every view of every item through the model; None for each when the model is missing. Each text is
        embedded alone (embed/alone.py): the quantised model scales activations over its whole batch, so in a
        batch a text's vector (and a borderline verdict) would depend on the other texts, which a bulk write
        chooses. The vectors of the texts in ``keep`` are kept for the index that stores them. ``soon``: what
        ``start`` began, by text."""
        if not items or not self._load():
            return [None] * len(items)
        texts = list(dict.fromkeys(t for v in items if not v.too_short for t in v.texts()))
        # The n-grams need no vectors: read them while the model may still be running (started by ``start``).
        grams = ngram_scores(self._model.ngrams, texts) if texts and self._model.ngrams is not None else None
        vectors = np.stack(embed_each(self._embedder, texts, keep, soon)) if texts else None
        scores = dict(zip(texts, self._model.score_vectors(vectors, texts, grams))) if texts else {}
        out: list[Score | None] = []
        for v in items:
            if v.too_short:
                out.append(None)
                continue
            best = Score(float(scores[v.whole]), "whole", v.whole)
            for how, d in v.decoded:
                if scores[d] > best.value:
                    best = Score(float(scores[d]), f"decoded:{how}", d)
            for c in v.chunks:
                if scores[c] - CHUNK_MARGIN > best.value:
                    best = Score(float(scores[c] - CHUNK_MARGIN), "sentence", c)
            out.append(best)
        return out


# -- the shipped model -------------------------------------------------------------------------------------

def _resource():
    return importlib.resources.files("echo_duck").joinpath("resources/scan/classifier.npz")


@functools.lru_cache(maxsize=1)
def load_shipped() -> Model | None:
    try:
        with _resource().open("rb") as f:
            return load(f)
    except (OSError, KeyError, ValueError):
        return None


def load(source) -> Model:
    """A model as ``save`` wrote it (a path or a binary file), exemplars and n-grams back from int8."""
    data = np.load(source, allow_pickle=False)
    ex = data["exemplars_int8"].astype(np.float32) * data["exemplar_scale"][:, None]
    grams = (data["ngrams_int8"].astype(np.float32) * float(data["ngrams_scale"])) if "ngrams_int8" in data else None
    return Model(ex, data["labels"], data["weights"], float(data["block"]), float(data["quarantine"]),
                 str(data["model_id"]), grams)


def save(model: Model, path, corpus_sha256: str) -> None:
    scale = np.abs(model.exemplars).max(axis=1) / 127.0
    q = np.round(model.exemplars / scale[:, None]).astype(np.int8)
    extra = {}
    if model.ngrams is not None:
        gscale = float(np.abs(model.ngrams).max()) / 127.0 or 1.0
        extra = {"ngrams_int8": np.round(model.ngrams / gscale).astype(np.int8), "ngrams_scale": np.float32(gscale)}
    np.savez_compressed(path, **extra, exemplars_int8=q, exemplar_scale=scale.astype(np.float32), labels=model.labels.astype(np.int8),
                        weights=model.weights.astype(np.float64), block=model.block, quarantine=model.quarantine,
                        model_id=model.model_id, corpus_sha256=corpus_sha256)


def corpus_sha256(texts: Sequence[str], labels: Sequence[int]) -> str:
    h = hashlib.sha256()
    for t, y in zip(texts, labels):
        h.update(f"{int(y)}\t{t}\n".encode("utf-8"))
    return h.hexdigest()
