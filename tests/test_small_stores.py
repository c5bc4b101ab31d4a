"""Small stores with the real model (USE-multilingual): what a newcomer tries first must put the right
memory first. The README quickstart, the demo's recalls, a store of a few English and Chinese facts,
and a user profile half in English and half in Chinese asked about in the other language (issue 21:
0 of 10 right before, the user's name outranking the answer).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

import echo_duck
from echo_duck.cli.demo import run_demo

T0 = datetime(2026, 1, 1, 12)


@pytest.fixture(scope="module")
def model_available():
    from echo_duck.embed.embedder import default_embedder

    if default_embedder() is None:
        pytest.skip("the default embedding model is not installed")


def test_readme_quickstart_puts_the_newest_pnpm_fact_first(tmp_path, model_available):
    with echo_duck.open(tmp_path / "agent.duckdb", agent_id="coder", now=T0) as mem:
        mem.remember("User prefers answers in Chinese", type="user", key="reply_language",
                     provenance="user_stated", pinned=True)
        mem.remember("The project uses pnpm to manage dependencies", type="environment",
                     key="package_manager", tags=["node"])
        mem.remember("The project uses pnpm 9; the lockfile is pnpm-lock.yaml", type="environment",
                     key="package_manager")
        hits = mem.recall("which package manager does the project use?", k=3)
        assert hits[0].content == "The project uses pnpm 9; the lockfile is pnpm-lock.yaml"
        assert len(hits) == 2  # the superseded version stays out; the other memory comes after


def test_a_tiny_bilingual_store_answers_in_either_language(tmp_path, model_available):
    with echo_duck.open(tmp_path / "tiny.duckdb", now=T0) as mem:
        mem.remember_many([
            dict(content="项目使用 pnpm 管理依赖，不要用 npm", type="environment"),
            dict(content="User prefers answers in Chinese", type="user"),
            dict(content="测试用 pytest -q 运行", type="procedure"),
            dict(content="The staging database is PostgreSQL 15", type="environment"),
        ])
        for question, expected in [("which package manager?", "项目使用 pnpm 管理依赖，不要用 npm"),
                                   ("which package manager should I use?", "项目使用 pnpm 管理依赖，不要用 npm"),
                                   ("how do I run the tests?", "测试用 pytest -q 运行"),
                                   ("预发环境用的什么数据库？", "The staging database is PostgreSQL 15"),
                                   ("用户希望用什么语言回答？", "User prefers answers in Chinese")]:
            hits = mem.recall(question, k=4, reinforce=False)
            assert hits and hits[0].content == expected, (question, [h.content for h in hits])
            assert len(hits) == 4  # a small store returns every memory, the best guess first


def test_the_demo_puts_the_right_memory_first(model_available):
    steps = dict(run_demo().steps)
    firsts = {title: text.splitlines()[0] for title, text in steps.items() if title.startswith("recall(")}
    assert len(firsts) == 3
    for title, first in firsts.items():
        if "package manager" in title:
            assert "pnpm 9" in first, first
        elif "语言" in title:
            assert "User prefers answers in Chinese" in first, first
        else:
            assert "pytest" in first, first


PROFILE = [  # (fact, question in the other language)
    ("Mei Chen works as a data engineer at Harbor Analytics in Singapore.", "陈美在哪家公司工作？"),
    ("Mei Chen is allergic to peanuts.", "陈美对什么过敏？"),
    ("Mei Chen runs 10 km along the river every Sunday morning.", "陈美周日早上做什么运动？"),
    ("Mei Chen's cat is called Mochi and is four years old.", "陈美的猫叫什么名字？"),
    ("Mei Chen prefers meetings after 10 am; she is not a morning person.", "陈美喜欢几点以后开会？"),
    ("Mei Chen drives a white Tesla Model 3.", "陈美开什么车？"),
    ("Mei Chen is learning Japanese and takes a class on Tuesday evenings.", "陈美在学哪门外语？"),
    ("Mei Chen's favourite dish is laksa from the hawker centre near her flat.", "陈美最喜欢吃什么？"),
    ("Mei Chen uses a split ergonomic keyboard because of wrist pain.", "陈美为什么用人体工学键盘？"),
    ("Mei Chen's sister lives in Vancouver and works as a nurse.", "陈美的姐姐住在哪个城市？"),
    ("陈美每天早上喝一杯不加糖的黑咖啡。", "How does Mei Chen take her coffee?"),
    ("陈美的生日是十一月十二日。", "When is Mei Chen's birthday?"),
    ("陈美正在装修新家，预算是十五万新币。", "What is Mei Chen's renovation budget?"),
    ("陈美不喜欢香菜，点菜时要提醒不要放。", "Which herb does Mei Chen dislike?"),
    ("陈美周末在社区图书馆做志愿者。", "Where does Mei Chen volunteer on weekends?"),
    ("陈美去年考下了 AWS 解决方案架构师认证。", "Which certification did Mei Chen get last year?"),
    ("陈美习惯用 Notion 记笔记，不用纸质本子。", "What app does Mei Chen take notes in?"),
    ("陈美的父母住在槟城，她每年春节回去。", "Where do Mei Chen's parents live?"),
    ("陈美晚上十一点前一定睡觉。", "When does Mei Chen go to bed?"),
    ("陈美养了三盆多肉植物，放在阳台上。", "What plants does Mei Chen keep on her balcony?"),
]


def test_a_bilingual_profile_asked_about_in_the_other_language(tmp_path, model_available):
    """20 facts about one named user, half English, half Chinese; each asked about in the other language.
    The name is in every fact of its language, so it must count for (almost) nothing: before issue 21 it
    decided the ranking and 2 of 20 came first. Incidental keyword matches on same-language facts ("what
    app", 周日) then still put 8 first; a fact in the other script now takes script_credit for the keyword
    terms (the keyword arm cannot see a translation), and the hybrid does at least as well as the vector
    arm alone, first places and MRR (13 first, MRR 0.80 with this model; the hybrid 14 and 0.81, and 15 and 0.86
    with the dictionary bridge, text/bridge.py; in the top 3 19 and 19)."""
    with echo_duck.open(tmp_path / "profile.duckdb", now=T0) as mem:
        stored = mem.remember_many([dict(content=fact, type="user", observed_at=T0 - timedelta(days=30 - i))
                                    for i, (fact, _) in enumerate(PROFILE)])
        ranks = {}
        for arms in (["keyword", "vector"], ["vector"]):
            ranks[arms[0]] = []
            for memory, (_, question) in zip(stored, PROFILE):
                hits = mem.recall(question, k=20, reinforce=False, arms=arms, explain=True)
                ranks[arms[0]].append([h.id for h in hits].index(memory.id) + 1)
                if arms[0] == "keyword" and hits[0].id == memory.id and hits[0].explanation.bm25_rank is None:
                    assert hits[0].explanation.script_credit > 0  # what put it first: not a keyword match
        hybrid, vector = ranks["keyword"], ranks["vector"]
        assert sum(r == 1 for r in hybrid) >= max(12, sum(r == 1 for r in vector)), (hybrid, vector)
        mrr = {name: sum(1 / r for r in found) / len(found) for name, found in (("hybrid", hybrid), ("vector", vector))}
        assert mrr["hybrid"] >= mrr["vector"] and sum(r <= 3 for r in hybrid) >= 17, (hybrid, vector)


def test_a_name_in_half_the_rows_carries_almost_no_keyword_weight(tmp_path):
    """bm25_scores' coverage weights a term by its RSJ information: about 0 for a term in half the rows."""
    with echo_duck.open(tmp_path / "names.duckdb", embedder="hash", now=T0) as mem:
        mem.remember_many([dict(content=f"Mei Chen likes {thing}" if i % 2 else f"the {thing} is blue", type="user")
                           for i, thing in enumerate(["tea", "jazz", "chess", "rain", "trains", "maps", "kites", "owls",
                                                      "figs", "moss"])])
        hits = mem.recall("what does Mei Chen think about zebras", k=10, explain=True, reinforce=False)
        covered = [h.explanation.coverage for h in hits if h.explanation.bm25_rank is not None]
        assert covered and max(covered) < 0.06  # "Mei Chen" is in half the rows; think, zebras in none
        hits = mem.recall("Mei Chen chess", k=10, explain=True, reinforce=False)
        assert "chess" in hits[0].content and hits[0].explanation.coverage > 0.8
