"""The BM25 arm (echo_duck/index/keyword.py, sql/macros/30_bm25.sql): parity with fts, words in both
languages, freshness after every write, the index signature, and contextual indexing."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest

import echo_duck
from echo_duck.index.keyword import query_text
from echo_duck.text.segment import STOP_WORDS

OURS = "SELECT memory_id::VARCHAR AS memory_id, score FROM bm25_scores($q)"
FTS = ("SELECT memory_id::VARCHAR AS memory_id, fts_main_bm25_docs.match_bm25(memory_id, $q) AS score "
       "FROM bm25_docs WHERE score IS NOT NULL")

_EN_SUBJECTS = ["The user", "Our CI job", "The staging cluster", "My manager", "The billing service", "Alice",
                "The data team", "The mobile app", "Bob from ops", "The nightly backup"]
_EN_VERBS = ["prefers", "needs", "runs", "deploys", "depends on", "was moved to", "reviews", "rejects",
             "stores", "migrated to"]
_EN_OBJECTS = ["answers in Chinese", "a nightly backup of the DuckDB file", "short replies without emojis",
               "the Frankfurt region", "Python 3.11 and pytest", "pnpm instead of npm", "dark mode in the editor",
               "the API key rotation procedure", "vector search over long-term memories", "Postgres 16",
               "the café near the office", "Kubernetes 1.29 with ArgoCD", "pnpm-lock.yaml in the repo root",
               "weekly standups on Friday", "Grafana dashboards for latency", "a résumé in PDF"]
_EN_TAILS = ["", "", ".", " since last March.", " because the old one kept failing.", " (confirmed twice).",
             " every Tuesday at 09:30.", " — see ticket OPS-4412."]
_ZH_SUBJECTS = ["用户", "项目", "我们的团队", "运维组", "后端服务", "数据库", "测试环境", "产品经理"]
_ZH_VERBS = ["喜欢", "需要", "使用", "依赖", "每周五执行", "迁移到", "拒绝", "部署在"]
_ZH_OBJECTS = ["用中文回答问题", "pnpm 管理依赖", "每周五的例会", "上海的服务器", "数据库备份", "深色主题",
               "长期记忆的向量检索", "自动化测试流水线", "新的监控告警规则", "东京机房"]
_ZH_TAILS = ["", "。", "，以后也一样。", "，已经确认过两次。", "（见工单 OPS-4412）"]


def _corpus(n: int, seed: int = 20260101) -> list[str]:
    """``n`` distinct, memory-like texts: English, Chinese and both mixed in one text."""
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        kind = rng.random()
        en = f"{rng.choice(_EN_SUBJECTS)} {rng.choice(_EN_VERBS)} {rng.choice(_EN_OBJECTS)}{rng.choice(_EN_TAILS)}"
        zh = f"{rng.choice(_ZH_SUBJECTS)}{rng.choice(_ZH_VERBS)}{rng.choice(_ZH_OBJECTS)}{rng.choice(_ZH_TAILS)}"
        text = en if kind < 0.45 else zh if kind < 0.8 else f"{en} {zh}"
        if rng.random() < 0.2:  # repeated words make term frequencies above 1
            text = f"{text} {rng.choice(_EN_OBJECTS)} {rng.choice(_ZH_OBJECTS)}"
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


PARITY_QUERIES = [
    "backup", "nightly backup of the DuckDB file", "pnpm", "pnpm-lock.yaml", "npm", "dark mode",
    "Python 3.11", "pytest", "Kubernetes ArgoCD", "Frankfurt", "cafe", "café", "resume", "Grafana latency",
    "OPS-4412", "Tuesday 09:30", "Alice prefers Chinese", "the billing service deploys", "Bob ops",
    "依赖管理", "数据库备份", "用中文回答", "上海服务器", "监控告警", "东京机房", "深色主题", "自动化测试",
    "长期记忆", "项目使用 pnpm 管理依赖", "which team reviews the rotation procedure?", "例会 standups",
    "migrated migrating migrate", "zzz-no-such-word",
]


def _assert_parity(mem) -> int:
    """Our postings and fts's match_bm25 agree on every query (none has a stop word that stems like a content word:
    bm25_scores drops the query's stop words, fts stems them); returns the number of matches seen."""
    mem.indexer.keyword.build_fts_index()
    total = 0
    for raw in PARITY_QUERIES:
        q = query_text(raw)
        ours = dict(mem.sql(OURS, {"q": q}).select("memory_id", "score").rows())
        ref = dict(mem.sql(FTS, {"q": q}).rows())
        assert set(ours) == set(ref), f"match sets differ for {raw!r} ({q!r})"
        for memory_id, score in ref.items():
            assert ours[memory_id] == pytest.approx(score, rel=0, abs=1e-9), f"score differs for {raw!r}"
        total += len(ref)
    return total


@pytest.mark.slow
def test_bm25_scores_equal_fts_match_bm25_after_inserts_updates_and_deletes(db_path):
    texts = _corpus(300)
    with echo_duck.open(db_path, embedder="none", admin=True) as mem:
        records = [dict(content=t, type="environment", key=f"fact_{i}" if i % 5 == 0 else None,
                        source_session=f"s{i % 7}" if i % 3 == 0 else None) for i, t in enumerate(texts)]
        written = mem.remember_many(records)
        assert mem.sql("SELECT count(*) FROM bm25_docs").item() == 300
        assert _assert_parity(mem) > 300  # the queries do match plenty of documents

        rng = random.Random(7)
        for i in rng.sample(range(0, 300, 5), 20):  # new versions of keyed facts
            mem.remember(f"{texts[i]} Updated: now uses Postgres 17 and 数据库备份 twice a day", type="environment",
                         key=f"fact_{i}")
        for m in rng.sample(written, 15):
            mem.forget(m.id)
        live = mem.sql("SELECT id::VARCHAR AS id FROM memories WHERE status = 'active' ORDER BY created_at, id")
        removed = rng.sample(live["id"].to_list(), 15)
        mem.indexer.keyword.remove(removed)
        assert mem.sql("SELECT count(*) FROM bm25_dead").item() == 15
        assert mem.sql("SELECT count(*) FROM bm25_docs").item() == 300 + 20 - 15
        assert _assert_parity(mem) > 300

        report = mem.indexer.keyword.compact()
        assert report["dead_docs_dropped"] == 15
        assert mem.sql("SELECT count(*) FROM bm25_dead").item() == 0
        assert mem.sql("SELECT count(*) FROM bm25_postings WHERE memory_id IN (SELECT unnest($ids::UUID[]))",
                       {"ids": removed}).item() == 0
        assert _assert_parity(mem) > 300


def _bm25_ids(mem, raw: str) -> set[str]:
    return set(mem.sql(OURS, {"q": query_text(raw)})["memory_id"].to_list())


def _keyword_recall(mem, raw: str) -> list:
    """recall() with no embedding model: only the BM25 arm can find anything."""
    return mem.recall(raw, k=10, explain=True, reinforce=False)


@pytest.fixture
def kw(db_path):
    """A store with no embedding model: recall is keyword-only (the warning is tested in test_recall)."""
    with echo_duck.open(db_path, embedder="none", admin=True) as m:
        with pytest.warns(RuntimeWarning):
            m.recall("warm up", reinforce=False)
        _filler(m)
        yield m


def _filler(mem) -> None:
    """Unrelated memories, so a word in one or two test memories is rare enough to pass the gate."""
    mem.remember_many([dict(content=text, type="environment") for text in (
        "Grafana dashboards show p95 latency", "The coffee machine sits on floor three", "新同事下周一入职",
        "Invoices go out quarterly")])


def test_chinese_query_finds_chinese_memory_by_words(kw):
    zh = kw.remember("项目使用 pnpm 管理依赖", type="environment")
    kw.remember("用户喜欢深色主题", type="user")
    kw.remember("The nightly backup runs at 02:00", type="environment")
    hits = _keyword_recall(kw, "依赖管理")  # same words, other order, no space
    assert [h.id for h in hits] == [zh.id]
    assert hits[0].explanation.bm25_rank == 1 and hits[0].explanation.vector_rank is None
    assert _bm25_ids(kw, "依赖管理") == {zh.id}
    assert _bm25_ids(kw, "数据库迁移") == set()  # no shared word


def test_traditional_and_simplified_chinese_find_each_other(kw):
    tw = kw.remember("我每天騎光陽的機車上班，十五分鐘就到學校", type="user")
    cn = kw.remember("冰箱换成了美的十字对开门", type="environment")
    assert [h.id for h in _keyword_recall(kw, "她骑什么机车？")] == [tw.id]  # simplified question
    assert [h.id for h in _keyword_recall(kw, "換成了什麼對開門")] == [cn.id]  # traditional question
    assert _bm25_ids(kw, "機車") == _bm25_ids(kw, "机车") == {tw.id}


def test_a_word_made_across_two_parts_of_a_longer_one_does_not_match(kw):
    """家电 (appliance) is 国家电网's second and third characters, across 国家 | 电网: not a word of that memory."""
    grid = kw.remember("许婷家的充电桩是国家电网的，晚上谷电一度才三毛多", type="environment")
    aircon = kw.remember("家里空调坏了，这件家电用了十年", type="environment")
    assert _bm25_ids(kw, "家电") == {aircon.id}
    assert [h.id for h in _keyword_recall(kw, "哪件家电出了故障？")] == [aircon.id]
    assert _bm25_ids(kw, "电网") == _bm25_ids(kw, "国家") == {grid.id}  # its own parts still match


def test_english_query_finds_english_memory(kw):
    en = kw.remember("The nightly backup runs at 02:00 from the staging cluster", type="environment")
    kw.remember("项目使用 pnpm 管理依赖", type="environment")
    kw.remember("User prefers dark mode", type="user")
    hits = _keyword_recall(kw, "when do backups run?")  # stemmed: backups -> backup, run
    assert [h.id for h in hits] == [en.id]


def test_hello_does_not_match_goodbye_moon(kw):
    moon = kw.remember("goodbye moon", type="environment")
    hello = kw.remember("hello world", type="environment")
    assert "hello" not in STOP_WORDS  # fts's default English list has it; ours must not
    assert _bm25_ids(kw, "hello") == {hello.id}
    assert [h.id for h in _keyword_recall(kw, "hello")] == [hello.id]
    assert _bm25_ids(kw, "goodbye") == {moon.id}


def test_stop_words_never_match(kw):
    kw.remember("the backup of the file is done and 我们的数据库备份了 什么都有", type="environment")
    for word in ("the", "of", "and", "is", "的", "了", "我们", "什么"):
        assert word in STOP_WORDS
        assert _bm25_ids(kw, word) == set(), word
        assert _keyword_recall(kw, word) == [], word
    assert len(_bm25_ids(kw, "the backup")) == 1  # the content word still matches


def test_postings_are_fresh_after_every_write(kw):
    """No rebuild between a write and the next recall: remember, update and forget are seen at once."""
    assert _keyword_recall(kw, "zanzibar") == []
    first = kw.remember("Deploys go through zanzibar gateway", type="environment", key="gateway")
    assert [h.id for h in _keyword_recall(kw, "zanzibar")] == [first.id]
    second = kw.remember("Deploys go through timbuktu gateway", type="environment", key="gateway")
    assert [h.id for h in _keyword_recall(kw, "timbuktu")] == [second.id]
    assert _keyword_recall(kw, "zanzibar") == []  # the old version is superseded
    zh = kw.remember("数据库备份每周五执行", type="environment")
    assert [h.id for h in _keyword_recall(kw, "数据库备份")] == [zh.id]
    kw.forget(zh.id)
    assert _keyword_recall(kw, "数据库备份") == []


def test_signature_change_rebuilds_postings_on_open(db_path):
    with echo_duck.open(db_path, embedder="none", admin=True) as mem:
        zh = mem.remember("项目使用 pnpm 管理依赖", type="environment")
        en = mem.remember("The nightly backup runs at 02:00", type="environment")
        _filler(mem)
        before = mem.sql("SELECT term, memory_id::VARCHAR AS m, tf, doc_len FROM bm25_postings ORDER BY ALL").rows()
        signature = mem.sql("SELECT value FROM store_info WHERE name = 'keyword_index_signature'").item()
        mem.sql("DELETE FROM store_info WHERE name = 'keyword_index_signature'", write=True)
        mem.sql("DELETE FROM bm25_postings", write=True)  # a rebuild is the only way back
        assert _bm25_ids(mem, "依赖管理") == set()
    with echo_duck.open(db_path, embedder="none", admin=True) as mem:
        after = mem.sql("SELECT term, memory_id::VARCHAR AS m, tf, doc_len FROM bm25_postings ORDER BY ALL").rows()
        assert after == before
        assert mem.sql("SELECT value FROM store_info WHERE name = 'keyword_index_signature'").item() == signature
        assert _bm25_ids(mem, "依赖管理") == {zh.id}
        with pytest.warns(RuntimeWarning):
            assert [h.id for h in mem.recall("nightly backup", reinforce=False)] == [en.id]


def test_rebuild_indexes_the_same_text_as_the_write_path(db_path):
    """A signature rebuild must reproduce what the writes indexed, forgotten neighbours included."""
    t0 = datetime(2026, 1, 1, 9)
    with echo_duck.open(db_path, embedder="none", admin=True) as mem:
        a = mem.remember("first we discussed kiwi", type="environment", source_session="s1", observed_at=t0)
        mem.forget(a.id)
        mem.remember("then we discussed mango", type="environment", source_session="s1",
                     observed_at=t0 + timedelta(minutes=1))
        mem.remember("and finally papaya", type="environment", source_session="s1",
                     observed_at=t0 + timedelta(minutes=2))
        before = dict(mem.sql("SELECT memory_id::VARCHAR, tokens FROM bm25_docs").rows())
        mem.sql("DELETE FROM store_info WHERE name = 'keyword_index_signature'", write=True)
    with echo_duck.open(db_path, embedder="none", admin=True) as mem:
        after = dict(mem.sql("SELECT memory_id::VARCHAR, tokens FROM bm25_docs").rows())
    assert after == before


def test_a_key_is_indexed_beside_its_content_and_rebuilt_the_same(db_path):
    """An agent's key names the fact ("package_manager"), often in English whatever the fact's language:
    its words are indexed with the content, by the write path and by a rebuild alike."""
    with echo_duck.open(db_path, embedder="none", admin=True) as mem:
        zh = mem.remember("项目使用 pnpm 管理依赖", type="environment", key="package_manager")
        mem.remember("The nightly backup runs at 02:00", type="environment", key="ops:backup.time")
        _filler(mem)
        assert _bm25_ids(mem, "which package manager?") == {zh.id}
        assert mem.sql("SELECT tokens FROM bm25_docs WHERE memory_id = $id", {"id": zh.id}).item().endswith(
            "package manager")
        before = dict(mem.sql("SELECT memory_id::VARCHAR, tokens FROM bm25_docs").rows())
        mem.sql("DELETE FROM store_info WHERE name = 'keyword_index_signature'", write=True)
    with echo_duck.open(db_path, embedder="none", admin=True) as mem:
        assert dict(mem.sql("SELECT memory_id::VARCHAR, tokens FROM bm25_docs").rows()) == before
        assert _bm25_ids(mem, "ops backup time") - {zh.id}


def _session_pair(mem, t0):
    first = mem.remember("We chose Hetzner for the new servers", type="environment", source_session="s1",
                         observed_at=t0)
    second = mem.remember("It costs 40 euros a month", type="environment", source_session="s1",
                          observed_at=t0 + timedelta(minutes=1))
    other = mem.remember("The staging bill is 90 euros a month", type="environment", source_session="s2",
                         observed_at=t0 + timedelta(minutes=2))
    return first, second, other


def test_each_memory_is_indexed_with_its_own_text_only(kw):
    """Neighbour context is gone (issue 18): a word of the previous memory of the session never finds the
    next one, so index text cannot cross scopes or outlive a forgotten neighbour."""
    first, second, other = _session_pair(kw, datetime(2026, 1, 1, 9))
    assert _bm25_ids(kw, "hetzner") == {first.id}
    assert _bm25_ids(kw, "euros month") == {second.id, other.id}
    assert second.id not in [h.id for h in _keyword_recall(kw, "hetzner")]
    assert "context_neighbors" not in kw.settings()


def test_context_never_comes_from_another_session_or_agent(kw):
    t0 = datetime(2026, 1, 1, 9)
    kw.remember("We chose Hetzner", type="environment", source_session="s1", observed_at=t0)
    spec = echo_duck.write.writer.prepare(kw.caller, "It costs 40 euros", type="environment", source_session="s1",
                                    observed_at=t0 + timedelta(minutes=1))
    other_agent = kw.writer.remember(echo_duck.write.writer.Caller(agent_id="someone-else"), spec)
    mine_elsewhere = kw.remember("It costs 70 euros", type="environment", source_session="s2",
                                 observed_at=t0 + timedelta(minutes=1))
    assert other_agent.id not in _bm25_ids(kw, "hetzner")
    assert mine_elsewhere.id not in _bm25_ids(kw, "hetzner")


@pytest.mark.parametrize("same_time", ["fixed clock", "same observed_at"])
def test_a_batch_of_one_conversation_indexes_each_turn_alone(db_path, clock, same_time):
    """remember_many of one conversation whose turns share a timestamp: each turn's BM25 text is its own."""
    fixed = same_time == "fixed clock"
    when = None if fixed else datetime(2023, 5, 8, 13, 56)
    with echo_duck.open(db_path, embedder="none", now=clock if fixed else None, admin=True) as mem:
        turns = mem.remember_many([dict(content=f"turn about {w}", type="environment", source_session="s1",
                                        observed_at=when) for w in ("apple", "banana", "cherry", "durian")])
        tokens = [mem.sql("SELECT tokens FROM bm25_docs WHERE memory_id = $id", {"id": t.id}).item() for t in turns]
    assert tokens == ["turn about apple", "turn about banana", "turn about cherry", "turn about durian"]
