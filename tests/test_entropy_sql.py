"""The recall macro computes query entropy in SQL from the postings it reads; it must agree with
echo_duck.text.segment.query_entropy, the documented reference."""

import pytest

import echo_duck
from echo_duck.text import segment as text
from echo_duck.index.keyword import query_text


@pytest.mark.parametrize("query", ["pnpm lock file", "what database does the billing service use", "deploy atlas",
                                   "pnpm-lock.yaml", "数据库 迁移"])
def test_sql_entropy_matches_the_python_reference(tmp_path, query):
    with echo_duck.open(tmp_path / "m.duckdb", embedder="hash", admin=True) as mem:
        mem.remember_many([{"content": c, "type": "environment"} for c in [
            "the billing service uses PostgreSQL 15", "deploy atlas with make deploy", "pnpm lock file is committed",
            "数据库迁移在周末进行", "the user likes tea", "atlas runs on kubernetes", "pnpm is the package manager",
            "file uploads go to S3", "the database of atlas is MySQL", "数据库 备份 每天"]])
        hits = mem.recall(query, k=1, explain=True, reinforce=False)
        tokens = text.segment(query)
        rows = mem.sql("SELECT token, df, n_docs FROM bm25_token_df($q)", {"q": query_text(query)}).rows()
        expected = text.query_entropy(query, {t: df for t, df, _ in rows}, rows[0][2] if rows else 0)
        assert hits, query
        assert hits[0].explanation.entropy == pytest.approx(expected, abs=1e-9), (query, tokens)
