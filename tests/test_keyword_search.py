"""The in-process keyword arm (echo_duck/index/keyword_search.py) against its definition, bm25_scores in SQL.

The agent's recall ranks with BM25 computed over an in-memory copy of the postings; analysts' recall_hits
computes it in SQL. These tests hold the two equal (same matches, same order, same scores and stats),
and check that the copy follows every way the postings change: new writes, purges, compaction, a
rebuild, raw SQL, and a transaction that rolled back after the copy had seen it.
"""

from __future__ import annotations

from datetime import datetime

import uuid

import numpy as np
import pytest

import echo_duck
from echo_duck.bench import synthetic
from echo_duck.index.keyword import query_text
from echo_duck.index.keyword_search import KeywordArm
from echo_duck.recall.vector_text import vector_question
from echo_duck.text.bridge import bridged_query

QUERIES = ["deploy borealis", "which database does atlas run on", "部署 流程", "吴婷 负责", "postgres port",
           "the", "nothing-matches-this-zzzz", "atlas 数据库 backup", "", "borealis zzunseenzz qqunknownqq 完全陌生的词"]


def sql_arm(mem, query: str) -> list[tuple]:
    return mem.sql("SELECT memory_id::VARCHAR AS id, score, rarest_df_ratio, query_idf, query_spec, covered_idf, "
                   "query_idf_all FROM bm25_scores($q) ORDER BY score DESC, memory_id", {"q": query_text(query)}).rows()


def unpack(arm: KeywordArm) -> list[tuple]:
    return [(i, s, r, arm.query_idf, arm.query_spec, c, arm.query_idf_all)
            for i, s, r, c in zip(arm.ids, arm.scores, arm.rarest, arm.covered)]


def assert_same(mem, query: str, top=None) -> None:
    expected = sql_arm(mem, query)[:top]
    got = unpack(mem.indexer.keyword_search.search(query_text(query), top))
    assert [g[0] for g in got] == [e[0] for e in expected], query
    if expected:
        # the same operations as DuckDB's; only the order SQL sums a doc's terms in may differ (1e-15)
        np.testing.assert_allclose([g[1:] for g in got], [e[1:] for e in expected], rtol=1e-14, err_msg=query)


@pytest.fixture
def store(db_path):
    with echo_duck.open(db_path, agent_id="bench", embedder="hash", admin=True) as m:
        m.remember_many(synthetic.memories(600))
        yield m


@pytest.mark.parametrize("top", [None, 5, 50])
def test_matches_sql_bm25(store, top):
    for query in QUERIES:
        assert_same(store, query, top)


@pytest.mark.parametrize("top", [1, 5, 40])
def test_a_filtered_search_is_the_best_kept_matches_then_the_kept_ones_asked_for(store, top):
    """keep/also (a filtered recall): the ``top`` best of the rows kept, then every other kept match named in
    ``also``, in rank order: exactly what filtering the whole ranking gives."""
    searcher, rng = store.indexer.keyword_search, np.random.default_rng(7)
    for query in QUERIES:
        everything = unpack(searcher.search(query_text(query), None))
        kept_ids = {row[0] for row in everything if rng.random() < 0.4}
        also = [row[0] for row in everything if rng.random() < 0.2] + [str(uuid.uuid4())]
        seen = []

        def keep(doc_ids, generation):
            seen.append(generation)
            return np.array([i in kept_ids for i in doc_ids])

        got = unpack(searcher.search(query_text(query), top, keep=keep, also=also))
        kept = [row for row in everything if row[0] in kept_ids]
        assert got == kept[:top] + [row for row in kept[top:] if row[0] in also], query
        assert seen in ([], [searcher.generation]), "asked once, in the searcher's current row numbering"


def test_follows_writes_purges_compaction_and_raw_sql(store):
    for query in QUERIES:
        assert_same(store, query)
    store.remember_many([{"content": f"borealis deploy step {i} 部署", "type": "procedure"} for i in range(40)])
    assert_same(store, "deploy borealis")  # new docs: appended
    victim = unpack(store.indexer.keyword_search.search(query_text("deploy borealis"), 1))[0][0]
    store.forget(victim, purge=True)  # the privacy purge removes docs and compacts in one transaction
    assert victim not in [row[0] for row in sql_arm(store, "deploy borealis")]
    assert_same(store, "deploy borealis")
    store.indexer.keyword.compact()
    assert_same(store, "部署 流程")
    store.sql("UPDATE bm25_postings SET tf = tf + 1 WHERE doc % 3 = 0", write=True)  # behind the copy's back
    assert_same(store, "deploy borealis")
    store.sql("DELETE FROM store_info WHERE name = 'keyword_index_signature'", write=True)
    store.indexer.keyword.ensure_ready()  # a full rebuild renumbers every doc
    for query in QUERIES:
        assert_same(store, query)


def test_follows_archiving_then_compaction(store):
    """Archive export marks docs dead without compacting (the copy masks them); compaction then drops
    them from the tables (the copy reloads)."""
    store.sql("UPDATE memories SET tier = 'archival', created_at = created_at - INTERVAL 400 DAY, "
              "updated_at = updated_at - INTERVAL 400 DAY "
              "WHERE content LIKE '%borealis%'", write=True)
    assert_same(store, "deploy borealis")  # the copy, reloaded after the raw write, before the export
    exported = store.archive(older_than_days=30)
    assert exported.exported > 0
    assert store.sql("SELECT count(*) FROM bm25_dead").item() > 0
    assert_same(store, "deploy borealis")
    assert_same(store, "部署 流程")
    store.indexer.keyword.compact()
    assert store.sql("SELECT count(*) FROM bm25_dead").item() == 0
    assert_same(store, "deploy borealis")


def test_a_rolled_back_removal_the_copy_saw_is_undone(store):
    victim = unpack(store.indexer.keyword_search.search(query_text("deploy borealis"), 1))[0][0]
    with pytest.raises(RuntimeError):
        with store.db.transaction("a removal that fails"):
            store.indexer.keyword.remove([victim])
            store.indexer.keyword.add([("00000000-0000-4000-8000-000000000002", "deploy borealis again")])
            seen = [row[0] for row in unpack(store.indexer.keyword_search.search(query_text("deploy borealis"), None))]
            assert victim not in seen
            raise RuntimeError("rolled back")
    assert_same(store, "deploy borealis")
    assert victim in [row[0] for row in sql_arm(store, "deploy borealis")]


def test_a_rolled_back_write_the_copy_saw_is_forgotten(store):
    assert_same(store, "zebra quantum")
    with pytest.raises(RuntimeError):
        with store.db.transaction("a write that fails"):
            store.indexer.keyword.add([("00000000-0000-4000-8000-000000000001", "zebra quantum zebra")])
            seen = unpack(store.indexer.keyword_search.search(query_text("zebra quantum"), None))
            assert [row[0] for row in seen] == ["00000000-0000-4000-8000-000000000001"]
            raise RuntimeError("rolled back")
    assert sql_arm(store, "zebra quantum") == []
    assert_same(store, "zebra quantum")


def sql_common(mem, query: str, agent: str = "bench") -> list[str]:
    return [w for (w,) in mem.sql("SELECT word FROM keyword_common_words($q, $a, NULL, [], [])",
                                  {"q": query_text(query), "a": agent}).rows()]


def caller(mem, agent: str = "bench") -> tuple[dict, object]:
    """An agent's recall parameters (no session, team or tenant) and its counted-rows mask for the keyword copy."""
    who = dict(p_caller_agent=agent, p_caller_session=None, p_caller_teams=[], p_caller_tenants=[])
    return who, mem.recaller.eligibility.counted("keyword", who)


def test_common_words_match_sql_as_the_store_changes(db_path):
    """The words the vector arm leaves out of a question (more than half of the memories hold them): the copy's
    answer equals keyword_common_words after writes, a purge, a compaction and a raw write."""
    queries = ["What did Alice say about the deploy?", "alice alice deploy", "Alice's dog", "the and of", "部署 Alice",
               "Zoë and Alice", "nothing here", ""]
    with echo_duck.open(db_path, agent_id="bench", embedder="hash", admin=True) as m:
        ids = [m.remember(f"Alice note {i}: deploy step {i}", type="user").id for i in range(6)]
        m.remember_many([{"content": f"Bob note {i}: 部署 step", "type": "user"} for i in range(4)])
        search = m.indexer.keyword_search

        def same() -> dict[str, list[str]]:
            got = {q: search.common_words(query_text(q), *caller(m)) for q in queries}
            assert got == {q: sql_common(m, q) for q in queries}
            return got

        assert same()["What did Alice say about the deploy?"] == ["alice", "deploy"]  # 6 of 10: more than half
        assert same()["the and of"] == []  # stop words are never indexed, so never common
        m.forget(ids[0], purge=True)
        m.forget(ids[1], purge=True)  # 4 of 8: not more than half
        assert same()["alice alice deploy"] == []
        m.indexer.keyword.compact()
        m.sql("UPDATE bm25_postings SET tf = tf + 1 WHERE doc % 2 = 0", write=True)
        same()
        with m.db.transaction("inside a transaction the copy asks SQL"):
            m.remember("alice deploy", type="user")
            # the uncommitted doc counts (5 of 9 hold both words): the copy asks SQL on the transaction's connection
            assert search.common_words(query_text("alice deploy"), *caller(m)) == ["alice", "deploy"]
        same()


def test_agent_recall_equals_the_analysts_sql_recall(store):
    """recall() (both arms in process) and recall_hits (both arms in SQL) rank the same memories; the analyst
    embeds the question less its common words (keyword_common_words), as recall does."""
    for query in ["deploy borealis", "部署 流程", "atlas backup", "the", "backup database"]:
        for types in (None, ["procedure", "user"]):
            hits = store.recall(query, 10, types=types, reinforce=False, explain=True)
            store.sql("DELETE FROM recall_log", write=True)  # keep access counts and logs out of the comparison
            vtext = vector_question(query, sql_common(store, query))
            assert all(h.explanation.vector_question == (vtext if vtext != query else None) for h in hits)
            qvec = "[" + ",".join(repr(float(x)) for x in store.indexer.vectors.embed_question(vtext)) + "]"
            rows = store.sql(
                "SELECT id::VARCHAR AS id, score FROM recall_hits($q, $qvec, $model, 'bench', NULL, 10, NULL, NULL, "
                "NULL, $types, NULL, NULL, NULL, NULL, NULL, NULL, false, $now, p_bridge := $bridge)",
                {"q": query_text(query), "qvec": qvec, "model": store.indexer.vectors.model_id, "types": types,
                 "now": store.now(), "bridge": bridged_query(query)}).rows()
            assert [h.id for h in hits] == [r[0] for r in rows], (query, types)
            np.testing.assert_allclose([h.score for h in hits], [r[1] for r in rows], rtol=1e-6)


def test_a_query_stop_word_matches_no_content_word_that_shares_its_stem(db_path):
    """'on' is a stop word, never indexed, and porter stems 'one' to 'on'. fts's match_bm25 stems the query's stop
    words too, so 'on' matched 'one' in SQL but not in process: query_idf_all went negative in SQL, every relevance
    there was 0, and recall_hits ranked otherwise than recall() (an outside review's reproducer). A fixed clock: decay
    counts whole seconds, so recall() and recall_hits' $now a second boundary apart scored the same row differently."""
    with echo_duck.open(db_path, agent_id="solo", embedder="hash", admin=True, now=datetime(2026, 1, 1, 12)) as m:
        m.remember("Deploy approvals: production deploys need two approvals from on-call.", type="procedure")
        for i in range(6):
            m.remember(f"Deploy note {i}: production approvals? mallory thinks one is enough {i}", type="environment")
        assert sql_arm(m, "on") == [] and len(sql_arm(m, "one")) == 6
        for query in ["approvals on-call", "on", "one", "is one on"]:
            assert_same(m, query)
        assert all(row[-1] > 0 for row in sql_arm(m, "approvals on-call"))  # query_idf_all
        hits = m.recall("approvals on-call", 5, reinforce=False, arms=("keyword",))
        m.sql("DELETE FROM recall_log", write=True)
        rows = m.sql("SELECT id::VARCHAR, score FROM recall_hits($q, NULL, NULL, 'solo', NULL, 5, NULL, NULL, NULL, "
                     "NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, $now, p_bridge := $bridge)",
                     {"q": query_text("approvals on-call"), "now": m.now(),
                      "bridge": bridged_query("approvals on-call")}).rows()
        assert [h.id for h in hits] == [r[0] for r in rows]
        assert [h.score for h in hits] == [r[1] for r in rows] and rows[0][1] > 1


def test_agent_recall_equals_sql_recall_with_the_real_model(tmp_path):
    with echo_duck.open(tmp_path / "real.duckdb", agent_id="bench", admin=True) as m:
        m.remember_many(synthetic.memories(300))
        for query in ["who owns the borealis deploy", "数据库 备份", "postgres", "which database do we back up"]:
            hits = m.recall(query, 8, reinforce=False, explain=True)
            vtext = vector_question(query, sql_common(m, query))
            qvec = "[" + ",".join(repr(float(x)) for x in m.indexer.vectors.embed_question(vtext)) + "]"
            rows = m.sql("SELECT id::VARCHAR FROM recall_hits($q, $qvec, $model, 'bench', NULL, 8, NULL, NULL, NULL, "
                         "NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, $now, p_bridge := $bridge)",
                         {"q": query_text(query), "qvec": qvec, "model": m.indexer.vectors.model_id,
                          "now": m.now(), "bridge": bridged_query(query)}).rows()
            assert [h.id for h in hits] == [r[0] for r in rows], query
