"""Segmentation (jieba for Han runs, lower-cased words for the rest) and query entropy."""

from __future__ import annotations

import re

import jieba
import pytest

from echo_duck.text.segment import STOP_WORDS, _cut_han, looks_specific, query_entropy, segment, segment_for_index

FTS_SPLIT = re.compile(r"[\W_]+")  # what fts's ignore='[^\p{L}\p{N}]+' splits on


def test_chinese_sentence_segments_into_words():
    tokens = segment("我喜欢用 pnpm 管理依赖")
    for word in ("喜欢", "pnpm", "管理", "依赖"):
        assert word in tokens


def test_search_mode_adds_dictionary_subwords():
    tokens = segment("中华人民共和国")
    assert tokens[-1] == "中华人民共和国"
    assert {"中华", "人民", "共和国"} <= set(tokens)


def test_mixed_text_splits_on_non_letters_and_lowercases():
    assert segment("Update pnpm-lock.yaml (v1.5.5) snake_case") == [
        "update", "pnpm", "lock", "yaml", "v1", "5", "5", "snake", "case",
    ]
    assert segment("部署失败：端口号写错了, see config.toml") == [
        "部署", "失败", "端口", "口号", "端口号", "写错", "了", "see", "config", "toml",
    ]


@pytest.mark.parametrize("traditional, simplified", [
    ("我每天騎光陽的機車上班", "我每天骑光阳的机车上班"),
    ("日立那台除濕機終於壞了，換了 Panasonic 的", "日立那台除湿机终于坏了，换了 Panasonic 的"),
    ("頭髮剪短了，麵包也戒掉了", "头发剪短了，面包也戒掉了"),
])
def test_traditional_characters_give_the_simplified_tokens(traditional, simplified):
    assert segment(traditional) == segment(simplified)


def test_simplified_text_and_phrase_exceptions_are_kept():
    tokens = segment("乾隆皇帝的著作")  # OpenCC converts by phrase: not 干隆, not 着作
    assert "乾隆" in tokens and "著作" in tokens
    assert segment("干净的头发") == ["干净", "的", "头发"]


def test_nfkc_folds_full_width_forms():
    assert segment("ＰＮＰＭ") == ["pnpm"]
    assert segment("ｎｐｍ　ｒｕｎ　１２３") == ["npm", "run", "123"]


def test_kana_and_hangul_runs_stay_whole_and_accents_are_kept():
    assert segment("テスト 한국어 텍스트 Café") == ["テスト", "한국어", "텍스트", "café"]


@pytest.mark.parametrize("text", ["", "   ", " ,.!? —— 。，、", "\n\t"])
def test_empty_and_punctuation_only_give_no_tokens(text):
    assert segment(text) == []
    assert segment_for_index(text) == ""


def test_segment_for_index_joins_with_spaces_and_fts_would_not_split_further():
    text = "用户偏好用中文回答。Run `pytest -q` in src/echo_duck — ＡＰＩ key 〇 𠀀."
    indexed = segment_for_index(text)
    assert indexed.split(" ") == segment(text)
    for token in segment(text):
        assert FTS_SPLIT.split(token) == [token], token


@pytest.mark.parametrize(
    "run",
    ["中华人民共和国万岁", "我喜欢用管理依赖", "用户偏好用中文回答", "数据库迁移方案是什么", "〇一二三",
     "㐀㐁中国人", "我们上次讨论了数据库迁移方案决定先在测试环境验证", "南京市长江大桥", "研究生命起源"],
)
def test_han_runs_match_jieba_search_mode_without_hmm(run):
    """jieba's search mode, less the inner sub-words that straddle a word's own parts (华人 in 中华人民共和国)."""
    straddling = {"中华人民共和国万岁": ["华人"]}.get(run, [])
    expected = [w for w in jieba.cut_for_search(run, HMM=False) if w not in straddling]
    assert list(_cut_han.__wrapped__(run)) == expected
    assert all(w in jieba.cut_for_search(run, HMM=False) for w in straddling)  # what was dropped was there


@pytest.mark.parametrize(("run", "dropped", "kept"), [
    ("充电桩是国家电网的", "家电", ["国家", "电网", "国家电网"]),  # 家电: household appliances
    ("中华人民共和国", "华人", ["中华", "人民", "共和国"]),
    ("五大连池的矿泉水", "大连", ["五大连池"]),  # 大连: another city
    ("血红蛋白一百零五", "红蛋", ["血红", "蛋白"]),
])
def test_a_sub_word_across_a_words_parts_is_not_indexed(run, dropped, kept):
    search_mode = list(jieba.cut_for_search(run, HMM=False))
    tokens = segment(run)
    assert dropped in search_mode and dropped not in tokens
    assert set(kept) <= set(tokens)


def test_stop_words_are_function_words_only():
    assert {"the", "of", "what", "is", "的", "了", "是", "我们", "没有", "一个"} <= STOP_WORDS
    assert not {"hello", "pnpm", "database", "喜欢", "数据库"} & STOP_WORDS
    assert all(w == w.lower() and FTS_SPLIT.split(w) == [w] for w in STOP_WORDS)


def test_entropy_is_lower_for_file_names_and_commands_than_broad_questions():
    broad = query_entropy("what did we decide about the database migration plan?")
    for specific in ("pnpm-lock.yaml", "git rebase -i HEAD~3", "ERR_CONN_RESET", "--force"):
        assert query_entropy(specific) < broad, specific
    assert query_entropy("我们上次讨论的数据库迁移方案是什么") > query_entropy("config.toml 端口")


def test_entropy_uses_document_frequencies():
    n_docs = 10_000
    doc_freq = {"pnpm": 3, "lock": 40, "yaml": 25, "database": 2_000, "plan": 3_000, "decide": 1_500}
    rare = query_entropy("pnpm lock", doc_freq, n_docs)
    common = query_entropy("database plan decide", doc_freq, n_docs)
    assert 0.0 <= rare < common <= 1.0
    # a word in no memory cannot make the query look specific
    assert query_entropy("database zyzzyva", doc_freq, n_docs) >= query_entropy("database pnpm", doc_freq, n_docs)


def test_entropy_bounds_and_token_input():
    assert query_entropy("") == 1.0
    assert query_entropy("the of and 的 了") == 1.0
    assert 0.0 <= query_entropy(["pnpm", "v1", "5"]) <= 1.0
    assert query_entropy(["pnpm", "v1"]) < query_entropy(["how", "should", "i", "write", "good", "tests"])


def test_looks_specific():
    for q in ("pnpm-lock.yaml", "--force", "v1.5.5", "getUserById", "JWT expiry", "~/.ssh/config", "pnpm"):
        assert looks_specific(q), q
    for q in ("what did we decide about the database?", "我们上次讨论了什么", ""):
        assert not looks_specific(q), q


def test_duckdb_splitting_on_spaces_equals_fts_tokenizer():
    """The BM25 SQL splits segment_for_index text on ' '; fts uses its Unicode regex. Same tokens."""
    import duckdb

    texts = ["İstanbul ǅemal ﬁle Ⅻ ½ Café RÉSUMÉ", "用户偏好用中文回答。テスト 한국어", "pnpm-lock.yaml v1.5.5 ＡＰＩ ①②", "नमस्ते дом Ωμέγα"]
    with duckdb.connect() as con:
        for text in texts:
            fts, fast = con.execute(
                r"""SELECT list_filter(string_split_regex(regexp_replace(lower(strip_accents($s)), '[^\p{L}\p{N}]+', ' ', 'g'), '\s+'), x -> len(x) > 0),
                           list_filter(string_split(lower(strip_accents($s)), ' '), x -> len(x) > 0)""",
                {"s": segment_for_index(text)},
            ).fetchone()
            assert fts == fast, text


def test_the_dictionary_cache_round_trips_and_a_damaged_one_is_ignored(tmp_path):
    from echo_duck.text import segment as seg

    path = tmp_path / "jieba-x.marshal"
    loaded = ({"数据": -8.5, "数据库": -9.1}, frozenset({"数", "数据", "数据库"}), 3, -18.0)
    seg._write_cache(path, loaded)
    assert seg._read_cache(path) == loaded
    path.write_bytes(b"\x00garbage")
    assert seg._read_cache(path) is None
    path.write_bytes(__import__("marshal").dumps(("not", "the", "shape", 1)))
    assert seg._read_cache(path) is None
    assert seg._read_cache(tmp_path / "missing.marshal") is None


def test_segmentation_with_the_cached_dictionary_equals_jieba_s_own():
    from echo_duck.text import segment as seg

    seg._dictionary()  # loaded from the cache file when there is one
    logp, prefixes, maxlen, miss = seg._from_jieba()
    assert seg._LOGP == logp and seg._PREFIXES == prefixes and (seg._MAXLEN, seg._MISS) == (maxlen, miss)
