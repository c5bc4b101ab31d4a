"""What a scan computes per text, remembered: the layers read the same text's view, folded form and secrets several
times in one scan, and a bulk scan reads all of its texts before any rule runs.

``per_text(fn)`` remembers ``fn``'s result for the last 4,096 texts of up to SHORT characters (with the texts
themselves at most ~65 MB, ~16 MB of ASCII) and the last 32 longer ones; ``remember`` registers another cache
(an lru_cache of the same kind). ``forget()`` drops every remembered result: a benchmark times the scan, not the
cache.
"""

from __future__ import annotations

import functools
from typing import Callable, TypeVar

T = TypeVar("T")
SHORT = 2000  # characters
_caches: list = []


def per_text(fn: Callable[[str], T]) -> Callable[[str], T]:
    short = functools.lru_cache(maxsize=4096)(fn)
    long = functools.lru_cache(maxsize=32)(fn)
    _caches.extend((short, long))

    @functools.wraps(fn)
    def remembered(text: str) -> T:
        return short(text) if len(text) <= SHORT else long(text)

    return remembered


def remember(cache: Callable[[str], T]) -> Callable[[str], T]:
    _caches.append(cache)
    return cache


def forget() -> None:
    for cache in _caches:
        cache.cache_clear()
