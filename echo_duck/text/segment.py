"""Segmentation and query statistics for mixed Chinese/English memory text.

`segment` turns text into the tokens that both the fts index (through `segment_for_index`) and the
discriminative-token gate see: jieba's search-mode words for runs of Han characters, kana and hangul
runs kept whole, and lower-cased letter/number words for everything else. Every token consists only
of letters and numbers, so DuckDB fts (``ignore='[^\\p{L}\\p{N}]+'``) never splits one further: after
fts's own lower(strip_accents(...)), splitting the joined text on ' ' gives exactly fts's tokens
(checked on every code point), which lets SQL skip fts's costly Unicode-class regex.

`query_entropy` says how broad a query is, so recall can lean on vectors (broad) or BM25 (specific).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import math
import re
import threading
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from . import marshal_cache

__all__ = ["STOP_WORDS", "segment", "segment_for_index", "query_entropy", "query_shape", "looks_specific"]

_HAN = "\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_KANA = "\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
_HANGUL = "\u1100-\u11ff\u3131-\u318e\ua960-\ua97f\uac00-\ud7a3\ud7b0-\ud7ff"
# One pass: a Han run, a kana run, a hangul run, or a run of other letters/numbers (\w minus "_").
_TOKEN_RE = re.compile(f"([{_HAN}]+)|([{_KANA}]+)|([{_HANGUL}]+)|([^\\W_{_HAN}{_KANA}{_HANGUL}]+)")
_ASCII_WORD_RE = re.compile(r"[a-z0-9]+")

_EN_STOP = """
a about above after again against all am an and any are as at be been before being below between
both but by can could did do does doing down during each either few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me might
mine more most must my myself neither no nor not of off on once only or other our ours ourselves
out over own same shall she should so some such than that the their theirs them themselves then
there these they this those through to too under until up upon us very was we were what when where
whether which while who whom whose why will with within without would yet you your yours yourself
yourselves s t d ll m re ve doesn didn isn aren wasn weren wouldn shouldn couldn
""".split()
_ZH_STOP = """
的 了 是 在 和 与 及 或 而 并 且 我 你 您 他 她 它 们 我们 你们 他们 她们 它们 咱们 自己 这 那 这个 那个
这些 那些 这里 那里 这样 那样 吗 呢 吧 啊 呀 哦 嘛 么 也 都 就 还 又 再 才 要 会 能 可以 有 没有 没 不 不是
一个 一些 什么 怎么 怎样 为什么 哪 哪个 哪里 谁 被 把 给 对 从 向 往 于 以 之 其 等 着 过 很 太 更 最 得 地
但 但是 而且 因为 所以 如果 虽然 然后 或者 还是 就是 只是 已经 一下 一样 时候 请 让 啦
""".split()
STOP_WORDS: frozenset[str] = frozenset(_EN_STOP + _ZH_STOP)
"""Bilingual function words: the fts stop-word table and the discriminative-token gate use it."""

_LOGP: dict[str, float] | None = None  # word -> log(freq / total) over jieba's dictionary
_PREFIXES: Collection[str] = frozenset()  # every word of jieba's dictionary and every prefix of one
_MAXLEN = 0
_MISS = 0.0  # log(1 / total): jieba's score for a character not in the dictionary
_init_lock = threading.Lock()
_CACHE_FORMAT = "1"


def _dictionary() -> dict[str, float]:
    """Load jieba's dictionary once per process, quietly (its loader logs at DEBUG to stderr). The words,
    their log-probabilities and the prefix set are kept in a cache file beside the user's other caches
    (marshal; ~3× faster to read than jieba's own load and the log-probabilities it needs)."""
    global _LOGP, _PREFIXES, _MAXLEN, _MISS
    if _LOGP is None:
        with _init_lock:
            if _LOGP is None:
                path = _cache_path()
                loaded = _read_cache(path) if path is not None else None
                if loaded is None:
                    loaded = _from_jieba()
                    if path is not None:
                        _write_cache(path, loaded)
                logp, prefixes, maxlen, miss = loaded
                _PREFIXES, _MAXLEN, _MISS = prefixes, maxlen, miss
                _LOGP = logp
    return _LOGP


def word_log_frequency(word: str) -> float:
    """The word's log-probability in jieba's dictionary (how common it is), -inf for a word it does not list."""
    return _dictionary().get(word, -math.inf)


def _from_jieba() -> tuple[dict[str, float], frozenset, int, float]:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    logtotal = math.log(jieba.dt.total)
    logp = {w: math.log(f) - logtotal for w, f in jieba.dt.FREQ.items() if f}
    return logp, frozenset(jieba.dt.FREQ), max(map(len, logp)), -logtotal


def _cache_path() -> Path | None:
    """A cache file named after jieba's dictionary file (size, mtime): a new jieba means a new file."""
    try:
        spec = importlib.util.find_spec("jieba")
        return marshal_cache.path_for("jieba", Path(spec.origin).parent / "dict.txt", _CACHE_FORMAT)
    except (AttributeError, TypeError, ValueError, OSError):
        return None


def _read_cache(path: Path) -> tuple[dict[str, float], frozenset, int, float] | None:
    try:
        logp, prefixes, maxlen, miss = marshal_cache.load(path)
    except (ValueError, TypeError):  # None, or not four values
        return None
    ok = isinstance(logp, dict) and isinstance(prefixes, frozenset) and isinstance(maxlen, int) and isinstance(miss, float)
    return (logp, prefixes, maxlen, miss) if ok and logp else None


def _write_cache(path: Path, loaded: tuple) -> None:
    marshal_cache.save(path, loaded)  # a read-only home: load from jieba every time


_preloading: threading.Thread | None = None


def preload() -> None:
    """Load jieba's dictionary in a daemon thread (once per process), off the query and write paths: it
    takes 1-3 s, and the first text with a Han character would otherwise wait for it. A segment() that
    comes before the load is done waits for the rest of it."""
    global _preloading
    if _LOGP is None and _preloading is None:
        with _init_lock:
            if _preloading is None:
                _preloading = threading.Thread(target=_dictionary, name="echo_duck-jieba-load", daemon=True)
                _preloading.start()


_t2s = None


@functools.lru_cache(maxsize=16384)
def simplified(run: str) -> str:
    """A run of Han characters in simplified characters (OpenCC's t2s tables, phrase by phrase: 乾衣 → 干衣 but
    乾隆 stays), so traditional and simplified writing of a word match in the keyword index. Simplified text
    comes back as it is."""
    global _t2s
    if _t2s is None:
        import opencc

        _t2s = opencc.OpenCC("t2s")
    return _t2s.convert(run)


@functools.lru_cache(maxsize=16384)
def _cut_han(run: str) -> tuple[str, ...]:
    """`jieba.cut_for_search(run, HMM=False)` for a run of Han characters, about 1.7x faster.

    Same algorithm and tie-breaking as jieba (max-probability route over the word DAG, then the
    dictionary 2- and 3-grams inside longer words), without its generic per-block machinery, and without
    the inner grams that straddle the word's own parts (`_sub_words`: no 家电 inside 国家电网).
    No HMM: unknown words fall apart into characters the same way in documents and queries.
    """
    logp = _dictionary()
    n = len(run)
    if n == 1:
        return (run,)
    prefixes, miss, get = _PREFIXES, _MISS, logp.get
    best, nxt = [0.0] * (n + 1), [0] * n
    for i in range(n - 1, -1, -1):
        score, end = get(run[i], miss) + best[i + 1], i + 1
        for e in range(i + 2, min(n, i + _MAXLEN) + 1):
            word = run[i:e]
            if word not in prefixes:
                break
            p = get(word)
            if p is not None and p + best[e] >= score:
                score, end = p + best[e], e
        best[i], nxt[i] = score, end
    out: list[str] = []
    i = 0
    while i < n:
        j = nxt[i]
        word = run[i:j]
        if j - i > 2:
            out.extend(_sub_words(word, logp))
        out.append(word)
        i = j
    return tuple(out)


def _sub_words(word: str, logp: dict) -> list[str]:
    """The dictionary 2- and 3-grams inside ``word`` (jieba's search mode), less an inner one that straddles a
    sub-word at the word's start or end: 国家电网 gives 国家 and 电网, not 家电 (a household appliance);
    中华人民共和国 keeps 人民 (inside, straddling nothing) but not 华人; 五大连池 gives no 大连."""
    n = len(word)
    grams = [(k, k + size) for size in (2, 3) if n > size for k in range(n - size + 1) if word[k : k + size] in logp]
    ends = [(a, b) for a, b in grams if a == 0 or b == n]
    return [word[a:b] for a, b in grams
            if a == 0 or b == n or not any(x < a < y < b or a < x < b < y for x, y in ends)]


def segment(text: str) -> list[str]:
    """Split `text` into lower-cased search tokens made only of letters and numbers.

    NFKC first (full-width "ＰＮＰＭ" becomes "pnpm"), then: a run of Han characters is read in simplified
    characters (`simplified`: "機車" and "机车" are one word) and goes through `jieba.cut_for_search` (words
    plus their dictionary sub-words, so "数据库" also yields "数据");
    a kana or hangul run is one token; anything else splits on every non letter/number character
    ("pnpm-lock.yaml" -> pnpm, lock, yaml). Stop words are kept: the index drops them itself.
    """
    if not text:
        return []
    if text.isascii():  # NFKC is the identity on ASCII; skip the Unicode machinery
        return _ASCII_WORD_RE.findall(text.lower())
    text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    for han, kana, hangul, word in _TOKEN_RE.findall(text):
        if han:
            out.extend(_cut_han(simplified(han)))
        elif word:
            out.append(word.lower())
        else:
            out.append(kana or hangul)
    return out


def segment_for_index(text: str | None) -> str:
    """The tokens of `text` joined by single spaces: the value of the column that fts indexes."""
    return " ".join(segment(text)) if text else ""


# A whitespace-separated chunk of the raw query that reads like code, a path, an id or a version:
# a digit, a separator between word characters (a.b, a/b, a_b, a-b, a:b, a=b, a@b, a#b), a flag
# (-x, --name), camelCase, or an all-caps acronym.
_CODE_RE = re.compile(r"\d|\w[./\\_:=@#-]+\w|^--?[A-Za-z]|[a-z][A-Z]|^[A-Z]{2,}\b|[~/\\]\w")


def _code_chunks(query: str) -> tuple[int, int]:
    chunks = unicodedata.normalize("NFKC", query).split()
    return sum(1 for c in chunks if _CODE_RE.search(c)), len(chunks)


def query_entropy(
    query: str | Sequence[str],
    doc_freq: Mapping[str, int] | None = None,
    n_docs: int = 0,
) -> float:
    """How broad a query is, in [0, 1]: near 1 lean on vectors, near 0 lean on BM25.

    `query` is the raw query text (best: code-like chunks are seen before segmentation) or its
    `segment` tokens (then a token with a digit is the only code-like sign). `doc_freq` maps tokens to the number of stored memories containing them and
    `n_docs` is the number of memories; without them the rarity term falls back to 0.5.

    Over the tokens T, the non-stop tokens C and the raw whitespace chunks W::

        idf(t)   = ln(1 + (N - df + 0.5) / (df + 0.5))           # BM25's IDF
        rare(t)  = idf(t) / ln(1 + (N + 0.5) / 0.5)              # 1 for a term in no memory
        spec     = (mean(rare) + max(rare)) / 2  over t in C with df > 0 (else 0.5)
        stop     = (|T| - |C|) / |T|                             # function-word share
        length   = min(1, |C| / 8)                               # long questions are broad
        code     = min(1, n_code(W) / sqrt(|W|))                 # code-like chunks: paths, ids
        entropy  = (0.5 (1 - spec) + 0.3 stop + 0.2 length) * (1 - 0.6 code)

    Terms in no memory do not count as rare (BM25 cannot match them, so they must not pull
    the weight towards it); code-like chunks still lower the entropy. A query of nothing but
    stop words is 1.0; an empty query is 1.0.
    """
    shape = query_shape(query)
    if shape is None:
        return 1.0
    tokens = segment(query) if isinstance(query, str) else list(query)
    content = [t for t in tokens if t not in STOP_WORDS]
    spec = 0.5
    if doc_freq is not None and n_docs > 0:
        top = math.log1p((n_docs + 0.5) / 0.5)
        rare = [
            math.log1p((n_docs - df + 0.5) / (df + 0.5)) / top
            for df in (min(doc_freq.get(t, 0), n_docs) for t in content)
            if df > 0
        ]
        if rare:
            spec = (sum(rare) / len(rare) + max(rare)) / 2
    stop, length, code = shape
    broad = 0.5 * (1 - spec) + 0.3 * stop + 0.2 * length
    return max(0.0, min(1.0, broad * (1 - 0.6 * code)))


def query_shape(query: str | Sequence[str]) -> tuple[float, float, float] | None:
    """The parts of query_entropy that need no statistics: (stop, length, code) as defined there,
    or None when the query has no content token (its entropy is 1.0). The recall macro computes
    spec from the postings it already reads and combines them (sql/macros/20_ranking.sql)."""
    if isinstance(query, str):
        n_code, n_chunks = _code_chunks(query)
        tokens = segment(query)
    else:
        tokens = list(query)
        n_code, n_chunks = sum(1 for t in tokens if any(ch.isdigit() for ch in t)), len(tokens)
    content = [t for t in tokens if t not in STOP_WORDS]
    if not content:
        return None
    stop = (len(tokens) - len(content)) / len(tokens)
    length = min(1.0, len(content) / 8)
    code = min(1.0, n_code / math.sqrt(n_chunks)) if n_chunks else 0.0
    return stop, length, code


def looks_specific(query: str) -> bool:
    """True for a keyword-style query: any code-like chunk, or at most 3 tokens and no stop word.

    "pnpm-lock.yaml", "--force", "v1.5.5", "getUserById", "JWT expiry" are specific; "what did we
    decide about the database?" is not.
    """
    n_code, _ = _code_chunks(query)
    if n_code:
        return True
    tokens = segment(query)
    return 0 < len(tokens) <= 3 and not any(t in STOP_WORDS for t in tokens)
