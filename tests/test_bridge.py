"""The dictionary bridge (echo_duck/text/bridge.py): an English question's words in Chinese and the reverse,
and what recall does with them (recall_fused's bridge step): a memory the vector arm ranked, written in the
other script than the question, is credited with the share of the bridged words' information it holds;
nothing else moves.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

import echo_duck
from echo_duck.text.bridge import bridged_query

T0 = datetime(2026, 1, 1, 12)


def test_bridged_words_cross_the_language_line_both_ways():
    assert "咖啡" in bridged_query("How does Mei Chen take her coffee?").split()
    assert "allergic" in bridged_query("陈美对什么过敏？").split()
    assert "database" in bridged_query("预发环境用的什么数据库？").split()
    assert "数据库" in bridged_query("Which database does the project use?").split()
    assert bridged_query("How does she take it?") == ""  # stop words, and "take" glosses too many words to bridge


def test_inflections_read_the_nearest_base_form():
    assert "代码" in bridged_query("Where are the codes kept?").split()  # code, not cod (鳕鱼)
    assert "鳕鱼" not in bridged_query("Where are the codes kept?").split()
    assert "老鼠" not in bridged_query("What rates does the gym charge?").split()  # rate, not rat


def test_english_names_and_lone_characters_are_not_bridged():
    assert bridged_query("Does Rose like Amber?") == ""  # capitalised inside the question: names, not flowers
    assert "玫瑰" in bridged_query("which rose does she like?").split()
    assert "deploy" in bridged_query("谁负责 onyx 的部署").split()  # its Chinese words bridge to English
    assert all(len(w) >= 2 for w in bridged_query("Who is the driver of the truck?").split())


def test_a_damaged_cache_file_is_read_again_from_the_dictionary(tmp_path):
    import marshal

    from echo_duck.text import bridge

    path = tmp_path / "cedict.marshal"
    path.write_bytes(marshal.dumps(({"咖啡": ("coffee",)}, {"coffee": "咖啡"})))  # a str where a tuple belongs
    assert bridge._read_cache(path) is None
    path.write_bytes(marshal.dumps(({"咖啡": ("coffee",)}, {"coffee": ("咖啡",)})))
    assert bridge._read_cache(path) == ({"咖啡": ("coffee",)}, {"coffee": ("咖啡",)})


def test_a_chinese_name_is_not_translated():
    words = bridged_query("陈美的姐姐住在哪个城市？").split()
    assert "sister" in words and "city" in words
    assert not {"chen", "lay", "beautiful", "americas"} & set(words)  # 陈 and 美 are a name here, not words


def test_the_analysts_recall_hits_bridges_as_recall_does(tmp_path):
    """recall_hits computes the bridge in SQL (keyword_candidates over p_bridge); recall reads it in process."""
    from echo_duck.index.keyword import query_text
    from echo_duck.recall.vector_text import vector_question
    from echo_duck.text.when import asks_when, text_script

    with echo_duck.open(tmp_path / "hits.duckdb", embedder="hash", now=T0, admin=True) as mem:
        mem.remember_many([dict(content=c, type="user") for c in [
            "陈美每天早上喝一杯不加糖的黑咖啡。", "办公室的咖啡机在三楼。", "陈美周末在社区图书馆做志愿者。",
            "Mei Chen takes her tea with oat milk.", "Mei Chen takes the 7:40 bus to work.",
            "The project database is PostgreSQL 15.", "项目的数据库每天凌晨两点备份。"]])
        credited = 0
        for question in ["How does Mei Chen take her coffee?", "When is the database backed up?", "陈美喝什么茶？",
                         "Which 数据库 does the project use?"]:
            hits = mem.recall(question, 7, reinforce=False, explain=True)
            credited += sum(1 for h in hits if h.explanation.bridge_coverage)
            common = [w for (w,) in mem.sql("SELECT word FROM bm25_common_words($q)", {"q": query_text(question)}).rows()]
            qvec = mem.indexer.vectors.embed_question(vector_question(question, common))
            rows = mem.sql(
                "SELECT id::VARCHAR AS id, score, bridge_coverage FROM recall_hits($q, $qvec, $model, 'default', NULL, 7, "
                "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, $now, p_bridge := $bridge, "
                "p_query_script := $script, p_asks_when := $asks_when)",
                {"q": query_text(question), "qvec": "[" + ",".join(repr(float(x)) for x in qvec) + "]",
                 "model": mem.indexer.vectors.model_id, "now": mem.now(), "bridge": bridged_query(question) or None,
                 "script": text_script(question), "asks_when": asks_when(question)}).rows()
            assert [h.id for h in hits] == [r[0] for r in rows], question
            assert [h.explanation.bridge_coverage for h in hits] == pytest.approx([r[2] for r in rows]), question
            assert [h.score for h in hits] == pytest.approx([r[1] for r in rows], rel=1e-6)  # float32 similarities, as test_keyword_search, question
        assert credited >= 3  # the comparison covers credited hits, not only uncredited ones


@pytest.fixture
def store(tmp_path):
    with echo_duck.open(tmp_path / "bridge.duckdb", embedder="hash", now=T0) as mem:
        mem.remember_many([dict(content=c, type="user") for c in [
            "陈美每天早上喝一杯不加糖的黑咖啡。", "陈美周末在社区图书馆做志愿者。",
            "Mei Chen takes her tea with oat milk.", "Mei Chen takes the 7:40 bus to work."]])
        yield mem


def test_only_a_memory_in_the_other_script_that_holds_a_translation_takes_bridge_coverage(store):
    hits = {h.content: h.explanation for h in store.recall("How does Mei Chen take her coffee?", 4, explain=True,
                                                            reinforce=False)}
    assert hits["陈美每天早上喝一杯不加糖的黑咖啡。"].bridge_coverage > 0
    assert not hits["陈美周末在社区图书馆做志愿者。"].bridge_coverage
    assert hits["Mei Chen takes her tea with oat milk."].bridge_coverage is None  # the question's script: no bridge
    coffee = hits["陈美每天早上喝一杯不加糖的黑咖啡。"]
    assert coffee.relevance >= 0.5 * coffee.bridge_coverage  # coverage_weight × bridge_coverage is in it


def test_without_the_keyword_arm_nothing_is_bridged(store):
    hits = store.recall("How does Mei Chen take her coffee?", 4, explain=True, reinforce=False, arms=["vector"])
    assert all(h.explanation.bridge_coverage is None for h in hits)


@pytest.fixture(scope="module")
def model_available():
    from echo_duck.embed.embedder import default_embedder

    if default_embedder() is None:
        pytest.skip("the default embedding model is not installed")


def test_a_translated_rare_word_outranks_an_english_fact_sharing_only_common_words(tmp_path, model_available):
    """The keyword arm alone puts the tea fact first for the coffee question (it shares "takes her"), and before
    the bridge the hybrid ranked the Chinese coffee fact third. Its bridged word 咖啡 is the question's rarest
    information: it comes first."""
    with echo_duck.open(tmp_path / "real.duckdb", now=T0) as mem:
        mem.remember_many([dict(content=c, type="user") for c in [
            "陈美每天早上喝一杯不加糖的黑咖啡。", "Mei Chen takes the 7:40 bus to work.",
            "Mei Chen takes her tea with oat milk.", "陈美对花生过敏。", "Mei Chen is sensitive to loud noise in the office.",
            "陈美的生日是十一月十二日。", "Mei Chen's anniversary is in March.",
            "The project uses pnpm to manage dependencies.", "项目的数据库是 PostgreSQL 15。",
            "The staging server runs on port 8080."]])
        question = "How does Mei Chen take her coffee?"
        keyword_only = mem.recall(question, 10, reinforce=False, arms=["keyword"])
        assert keyword_only[0].content == "Mei Chen takes her tea with oat milk."
        hits = mem.recall(question, 10, reinforce=False, explain=True)
        assert hits[0].content == "陈美每天早上喝一杯不加糖的黑咖啡。" and hits[0].explanation.bridge_coverage > 0
        for question, answer in [("What is Mei Chen allergic to?", "陈美对花生过敏。"),
                                 ("Which database does the project use?", "项目的数据库是 PostgreSQL 15。"),
                                 ("项目用什么管理依赖？", "The project uses pnpm to manage dependencies.")]:
            assert mem.recall(question, 10, reinforce=False)[0].content == answer, question


def test_a_filtered_recall_inside_a_transaction_bridges_as_the_in_process_one_does(store):
    """Inside a transaction a filtered recall runs recall_keywords_in_sql (the bridge through keyword_candidates
    in SQL); outside, the in-process copy reads it (KeywordSearcher.covered). Same ranking, same credit."""
    question = "How does Mei Chen take her coffee?"
    outside = store.recall(question, 4, types=["user"], explain=True, reinforce=False)
    with store.db.transaction("a filtered recall in SQL"):
        inside = store.recall(question, 4, types=["user"], explain=True, reinforce=False)
    assert [h.id for h in inside] == [h.id for h in outside]
    assert [h.explanation.bridge_coverage for h in inside] == [h.explanation.bridge_coverage for h in outside]
    assert any(h.explanation.bridge_coverage for h in inside)


def test_an_as_of_recall_bridges_as_recall_does(tmp_path):
    clock = [T0]
    with echo_duck.open(tmp_path / "asof.duckdb", embedder="hash", now=lambda: clock[0]) as mem:
        mem.remember_many([dict(content=c, type="user") for c in [
            "陈美每天早上喝一杯不加糖的黑咖啡。", "Mei Chen takes her tea with oat milk."]])
        clock[0] = T0 + timedelta(hours=2)
        mem.remember("陈美最近改喝燕麦拿铁咖啡。", type="user")  # written after the instant asked about
        then = mem.recall("How does Mei Chen take her coffee?", 4, as_of=T0 + timedelta(hours=1), explain=True,
                          reinforce=False)
        credited = {h.content: h.explanation.bridge_coverage for h in then}
        assert set(credited) == {"陈美每天早上喝一杯不加糖的黑咖啡。", "Mei Chen takes her tea with oat milk."}
        assert credited["陈美每天早上喝一杯不加糖的黑咖啡。"] > 0 and credited["Mei Chen takes her tea with oat milk."] is None


def test_the_knowledge_base_bridges_as_memories_do(tmp_path):
    """A chunk in the other script than the question takes bridge_coverage (kb_search_hits, as recall_fused), so
    recall(include_kb=True) merges memories and chunks on one scale."""
    with echo_duck.open(tmp_path / "kb.duckdb", embedder="hash", now=T0) as mem:
        mem.kb_add("陈美每天早上喝一杯不加糖的黑咖啡，办公室的咖啡机在三楼茶水间。", source="zh-notes")
        mem.kb_add("Mei Chen takes her tea with oat milk, and the office kettle is on the third floor.", source="en-notes")
        hits = mem.kb_search("How does Mei Chen take her coffee?", 5, explain=True)
        credited = {h.chunk.content: h.explanation.bridge_coverage for h in hits}
        assert len(credited) == 2
        assert [v for c, v in credited.items() if "咖啡" in c][0] > 0
        assert [v for c, v in credited.items() if "tea" in c][0] is None
