"""Fitting the classifier: exemplars, probe, and thresholds from out-of-fold scores (groups held out whole).

``fit`` is what ``echo-duck bench scanner`` runs on each training split and what builds the shipped model
from the whole corpus. Thresholds never see the notes they are applied to: each benign note's score comes
from a model fitted without its group (translations of one idea share a group).
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from .ngrams import features as ngram_features, log_ratio
from .classifier import BLOCK_BENIGN_RATE, CHUNK_MARGIN, K, QUARANTINE_BENIGN_RATE, Model, Views, embed_alone, views_of

FOLDS = 5
L2 = 10.0  # 1.0 let the probe call short ordinary notes hostile ("User likes tea": 2.6 logits)
NEWTON_STEPS = 8


def probe(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """L2-regularised logistic regression by Newton's method; 512 weights then the bias."""
    x = np.hstack([x.astype(np.float64), np.ones((len(x), 1))])
    w = np.zeros(x.shape[1])
    reg = L2 * np.r_[np.ones(x.shape[1] - 1), 0.0]
    for _ in range(NEWTON_STEPS):
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + reg * w
        xs = x * np.sqrt(p * (1 - p))[:, None]
        hess = xs.T @ xs + np.diag(reg)  # A.T @ A: numpy runs it as one symmetric product (half the work)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-7:  # converged (Newton: quadratically)
            break
    return w


@functools.lru_cache(maxsize=65536)
def _views(text: str) -> Views:
    """views_of, remembered: the bench fits a model per held-out split on mostly the same texts."""
    return views_of(text)


@functools.lru_cache(maxsize=65536)
def _grams(text: str) -> np.ndarray:
    """ngrams.features, remembered (like _views): every split's fit counts the same texts' n-grams."""
    return ngram_features(text)


def _model(vec: dict[str, np.ndarray], views: Sequence[Views], labels: np.ndarray, groups: np.ndarray, rows: np.ndarray,
           model_id: str) -> Model:
    texts, ys, gs = [], [], []
    for i in rows:
        for t in dict.fromkeys([views[i].whole, *(d for _, d in views[i].decoded)]):
            texts.append(t)
            ys.append(labels[i])
            gs.append(groups[i])
    x = np.stack([vec[t] for t in texts]).astype(np.float32)
    y = np.array(ys, dtype=np.float64)
    # The n-grams and the probe read every training text; editing is about the kNN's exemplars only (a probe fitted
    # on the edited exemplars found 90.1 % of the attacks of the three hold-out sets on average, not 91.5 %).
    table = log_ratio(texts, ys, _grams)
    weights = probe(x, y)
    keep = edited(x, y, np.array(gs))
    return Model(x[keep], y[keep].astype(np.int8), weights, np.inf, np.inf, model_id, table)


def edited(x: np.ndarray, y: np.ndarray, groups: np.ndarray, k: int = K) -> np.ndarray:
    """Wilson editing of the attack exemplars: keep those nearer to attacks of other groups than to benign notes
    (leave-one-group-out kNN). An attack whose visible text is harmless (a grocery list carrying tag characters,
    "the user likes short answers" with a hidden payload) is caught by other layers; as an exemplar it would make
    harmless notes look hostile, and its translations in the same group would vouch for it."""
    keep = np.ones(len(y), dtype=bool)
    attack, benign = np.where(y == 1)[0], np.where(y == 0)[0]
    for start in range(0, len(attack), 512):
        rows = attack[start:start + 512]
        sims = x[rows] @ x.T
        sims[groups[rows][:, None] == groups[None, :]] = -np.inf  # leave its own group out
        sims[np.isclose(sims, 1.0, atol=1e-6)] = -np.inf  # and its duplicates
        top_a = -np.partition(-sims[:, attack], k - 1, axis=1)[:, :k]
        top_b = -np.partition(-sims[:, benign], k - 1, axis=1)[:, :k]
        keep[rows] = top_a.mean(1) >= top_b.mean(1)
    return keep


def _row_scores(model: Model, vec: dict[str, np.ndarray], views: Sequence[Views]) -> list[float]:
    """Each note's score as the scanner computes it (whole, decoded, sentences less CHUNK_MARGIN), in one product."""
    texts = list(dict.fromkeys(t for v in views for t in v.texts()))
    if not texts:
        return []
    score = dict(zip(texts, model.score_vectors(np.stack([vec[t] for t in texts]), texts)))
    out = []
    for v in views:
        whole = [score[t] for t in (v.whole, *(d for _, d in v.decoded))]
        out.append(float(max(max(whole), max((score[c] - CHUNK_MARGIN for c in v.chunks), default=-np.inf))))
    return out


def cover_text(text: str) -> bool:
    """An attack carried by tag characters or a bidi override: what is visible is a harmless cover ("the user likes
    short answers"), which the invisible-character layer refuses; as an exemplar it would teach the model that the
    cover is hostile."""
    selectors = sum(1 for ch in text if "\U000e0100" <= ch <= "\U000e01ef" or "\ufe00" <= ch <= "\ufe0f")
    return selectors >= 4 or any("\U000e0000" <= ch <= "\U000e007f" or ch in "\u202d\u202e" for ch in text)


def folds_by_group(groups: Sequence[str], k: int = FOLDS, seed: int = 0) -> np.ndarray:
    names = sorted(set(groups))
    np.random.default_rng(seed).shuffle(names)
    fold = {g: i % k for i, g in enumerate(names)}
    return np.array([fold[g] for g in groups])


def fit(texts: Sequence[str], labels: Sequence[int], groups: Sequence[str], embedder,
        block_rate: float = BLOCK_BENIGN_RATE, quarantine_rate: float = QUARANTINE_BENIGN_RATE,
        calibrate: Sequence[bool] | None = None, held_whole: Sequence[str] | None = None) -> Model:
    """A model trained on all ``texts``; thresholds from out-of-fold scores of its benign ones (only those marked in
    ``calibrate``, when given: everyday chat shapes the model but would pull the thresholds down).

    ``held_whole``: per text, what is held out whole when it is scored out of fold for the *quarantine* threshold
    (default: its group). The bench passes each benign note's family, so the rate is set on kinds of note the model
    never saw, which is what an independently written set brings; held out by group, benign notes score lower than
    new kinds do. The *block* threshold stays above every benign note held out by group: it is the top of the
    scores, which one family most like the attacks (security talk) would set alone, and the model's blocks are
    what the quarantine does not have to catch."""
    calibrate = [True] * len(texts) if calibrate is None else list(calibrate)
    held_whole = list(groups) if held_whole is None else list(held_whole)
    kept = [i for i, (t, y) in enumerate(zip(texts, labels)) if not (y == 1 and cover_text(t))]
    texts, labels, groups = [texts[i] for i in kept], [labels[i] for i in kept], [groups[i] for i in kept]
    held_whole = [held_whole[i] for i in kept]
    calibrating = np.array([calibrate[i] for i in kept])
    labels = np.asarray(labels, dtype=np.int8)
    group_ids = np.asarray(groups)  # what _model's Wilson editing compares; ``groups`` stays a list for the folds
    views = [_views(t) for t in texts]
    unique = list(dict.fromkeys(t for v in views for t in v.texts()))
    vec = dict(zip(unique, embed_alone(embedder, unique)))  # as the scanner will read them: each alone

    def out_of_fold(held: Sequence[str]) -> np.ndarray:
        folds, oof = folds_by_group(held), []
        for f in range(FOLDS):
            train, test = np.where(folds != f)[0], np.where((folds == f) & (labels == 0) & calibrating)[0]
            if len(test) == 0 or len(set(labels[train])) < 2:
                continue
            sub = _model(vec, views, labels, group_ids, train, embedder.model_id)
            oof += _row_scores(sub, vec, [views[i] for i in test if not views[i].too_short])
        return np.array(oof)

    by_group = out_of_fold(groups)
    by_held = by_group if held_whole == groups else out_of_fold(held_whole)
    full = _model(vec, views, labels, group_ids, np.arange(len(texts)), embedder.model_id)
    block = float(np.quantile(by_group, 1 - block_rate)) if len(by_group) else np.inf
    quarantine = float(np.quantile(by_held, 1 - quarantine_rate)) if len(by_held) else np.inf
    return Model(full.exemplars, full.labels, full.weights, block, min(quarantine, block), embedder.model_id, full.ngrams)
