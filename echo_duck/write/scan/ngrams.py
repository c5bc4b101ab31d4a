"""Character n-grams: the classifier's evidence where the embedding model is blind.

The default model knows 16 languages; in Hindi, Persian, Hebrew, Thai, Vietnamese, Ukrainian, pinyin or Cantonese
its vectors mostly say which language a note is in, so the nearest exemplars of an attack there are notes in the same
language, hostile or not. The words still carry the intent (पासवर्ड, نادیده بگیر, סיסמאות, ignore…): a naive-Bayes
log-count ratio over hashed character 2-, 3- and 4-grams of the folded text, fitted on the same training notes,
adds that evidence to the score (classifier.py), one-sided: words can make a note look hostile, never make an attack
look harmless. It is linear in the text (numpy over code points) and its table is
2^18 weights (int8 in the shipped npz).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .normalise import fold

BITS = 18
DIM = 1 << BITS
SIZES = (2, 3, 4)
# Only evidence for an attack, never against one: held out whole, an attack family whose words the table never saw
# (injection, when only exfiltration was trained on) reads as benign words, and two-sided scores then hid 11 points of
# it (family split 54.7% -> 43.8%); one-sided kept it (53.7%) and kept the gain on held-out groups (82.8% -> 84.8%).
ONE_SIDED = True
_MUL = np.uint64(0x9E3779B97F4A7C15)  # odd 64-bit multipliers: a cheap, well-mixed hash of each n-gram
_MIX = np.uint64(0xC2B2AE3D27D4EB4F)


def features(text: str) -> np.ndarray:
    """The distinct hashed n-grams of ``text`` (folded, with a space at each end), as indices into the table."""
    return _features_of(_codes(text))


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(f" {fold(text)} ".encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)


def _hashes(codes: np.ndarray, n: int) -> np.ndarray:
    """The hash of every n-gram of ``codes`` (one per start position), as indices into the table."""
    h = np.full(len(codes) - n + 1, np.uint64(n))
    with np.errstate(over="ignore"):
        for k in range(n):
            h = (h * _MUL) ^ (codes[k:len(codes) - n + 1 + k] * _MIX)
    return h >> np.uint64(64 - BITS)


def _features_of(codes: np.ndarray) -> np.ndarray:
    found = [_hashes(codes, n) for n in SIZES if len(codes) >= n]
    return np.unique(np.concatenate(found)).astype(np.int32) if found else np.zeros(0, np.int32)


def features_many(texts: Sequence[str]) -> list[np.ndarray]:
    """``features`` of each text, hashed in one pass over all of them: n-grams that would cross from one text into
    the next are dropped, so each text gets exactly its own n-grams, sorted and distinct as ``features`` gives them."""
    codes = [_codes(t) for t in texts]
    if not codes:
        return []
    lengths = np.array([len(c) for c in codes])
    joined = np.concatenate(codes)
    owner = np.repeat(np.arange(len(codes)), lengths)  # the text each code point belongs to
    keys = []
    for n in SIZES:
        if len(joined) < n:
            continue
        h = _hashes(joined, n).astype(np.int64)
        pos = np.arange(len(h))
        inside = owner[pos] == owner[pos + n - 1]  # the n-gram starts and ends in one text
        keys.append(owner[pos][inside] * DIM + h[inside])
    if not keys:
        return [np.zeros(0, np.int32) for _ in texts]
    ordered = np.sort(np.concatenate(keys))  # by text, then by n-gram
    distinct = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]  # each text's own np.unique
    cuts = np.searchsorted(distinct, np.arange(len(codes) + 1) * DIM)
    grams = (distinct % DIM).astype(np.int32)
    return [grams[cuts[i]:cuts[i + 1]] for i in range(len(codes))]


def log_ratio(texts: Sequence[str], labels: Sequence[int],
              feats: Callable[[str], np.ndarray] = features) -> np.ndarray:
    """Per n-gram: log P(gram | attack) - log P(gram | benign), counts smoothed by one (float32, DIM). ``feats``: a
    cached ``features`` when one fit reads the same texts many times (the bench)."""
    attack, benign = np.ones(DIM), np.ones(DIM)
    for t, y in zip(texts, labels):
        np.add.at(attack if y else benign, feats(t), 1.0)
    ratio = np.log(attack / attack.sum()) - np.log(benign / benign.sum())
    ratio[attack + benign == 2] = 0.0  # never seen in training: no evidence (not the prior of the class sizes)
    return ratio.astype(np.float32)


def scores(table: np.ndarray, texts: Sequence[str]) -> np.ndarray:
    """Each text's summed log ratios over its distinct n-grams, divided by the square root of their number."""
    out = np.zeros(len(texts))
    for i, f in enumerate(features_many(texts)):
        if len(f):
            out[i] = float(table[f].sum()) / np.sqrt(len(f))
    return np.maximum(out, 0.0) if ONE_SIDED else out
