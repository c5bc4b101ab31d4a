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
    codes = np.frombuffer(f" {fold(text)} ".encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    found = []
    with np.errstate(over="ignore"):
        for n in SIZES:
            if len(codes) < n:
                continue
            h = np.full(len(codes) - n + 1, np.uint64(n))
            for k in range(n):
                h = (h * _MUL) ^ (codes[k:len(codes) - n + 1 + k] * _MIX)
            found.append(h >> np.uint64(64 - BITS))
    return np.unique(np.concatenate(found)).astype(np.int32) if found else np.zeros(0, np.int32)


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
    for i, t in enumerate(texts):
        f = features(t)
        if len(f):
            out[i] = float(table[f].sum()) / np.sqrt(len(f))
    return np.maximum(out, 0.0) if ONE_SIDED else out
