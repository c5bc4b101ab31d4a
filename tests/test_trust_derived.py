"""Derived text respects its source (SPEC T3, issue 18): what is indexed with a memory comes from that
memory alone, so a teammate never finds a team memory by a word of its author's private memory, and a
forgotten memory's words find nothing. Stores indexed the old way (each memory with the previous memory
of its session prepended) are re-indexed: migration 0006 drops the context vectors (stale until
reembed), and the next writable open rebuilds the BM25 postings.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from conftest import plain_connection

import echo_duck
from echo_duck.storage.schema import current_version


def test_a_private_word_never_finds_a_teammates_view_of_a_team_memory(tmp_path, clock):
    t0 = datetime(2026, 1, 1, 9)
    with echo_duck.open(tmp_path / "m.duckdb", admin=True, embedder="hash", now=clock) as host:
        host.grant(team="red", agent_id="a1", publish=True)
        host.grant(team="red", agent_id="a2")
        a1, a2 = host.for_agent("a1", team_id="red"), host.for_agent("a2", team_id="red")
        private = a1.remember("My salary negotiation codeword is heliotrope", type="user", source_session="s1",
                              observed_at=t0)
        team = a1.remember("The release train leaves on Thursday", type="environment", scope="team",
                           source_session="s1", observed_at=t0 + timedelta(minutes=1))
        assert team.id not in [h.id for h in a2.recall("heliotrope codeword salary", arms=["keyword"])]
        for arms in (["vector"], ["keyword", "vector"]):  # a small store returns its every memory, ranked:
            for hit in a2.recall("heliotrope codeword salary", arms=arms, explain=True):  # never by that word
                assert hit.id != team.id or hit.explanation.bm25_score is None
        assert [h.id for h in a2.recall("release train Thursday", arms=["keyword"])] == [team.id]
        tokens = host.sql("SELECT tokens FROM bm25_docs WHERE memory_id = ?", [team.id]).item()
        assert "heliotrope" not in tokens
        a1.forget(private.id, provenance="user_stated")
        assert a1.recall("heliotrope", arms=["keyword"]) == []




def test_a_store_indexed_with_neighbour_context_is_reindexed(tmp_path, clock):
    path = tmp_path / "old.duckdb"
    t0 = datetime(2026, 1, 1, 9)
    with echo_duck.open(path, admin=True, embedder="hash", now=clock) as mem:
        first = mem.remember("We chose Hetzner for the new servers", type="environment", source_session="s1",
                             observed_at=t0)
        second = mem.remember("It costs 40 euros a month", type="environment", source_session="s1",
                              observed_at=t0 + timedelta(minutes=1))
        alone = mem.remember("The office plant needs water", type="environment")
    # Make it what a store written before migration 0006 looked like: the context in the BM25 text,
    # the setting, an older keyword-index signature, schema version 5.
    con = plain_connection(path)
    con.execute("UPDATE bm25_docs SET tokens = 'we chose hetzner for the new servers ' || tokens WHERE memory_id = ?",
                [second.id])
    con.execute("INSERT INTO settings VALUES ('context_neighbors', 1, 'old')")
    con.execute("UPDATE store_info SET value = 'before-0006' WHERE name = 'keyword_index_signature'")
    con.execute("DELETE FROM schema_version WHERE version = 6")
    for statement in ("DROP TABLE agent_rights", "DROP TABLE pending_purges",
                      *[f"ALTER TABLE memory_events DROP COLUMN {c}" for c in ("salt", "content_digest", "prev_hash", "hash")],
                      *[f"ALTER TABLE kb_documents DROP COLUMN {c}" for c in
                        ("agent_id", "scope", "team_id", "tenant_id", "sensitivity")]):
        con.execute(statement)
    con.execute("DELETE FROM store_info WHERE name = 'event_chain_head'")
    con.close()
    with echo_duck.open(path, admin=True, embedder="hash", now=clock) as mem:
        assert mem.schema_version == current_version()  # 0006 ran late, after 0007 and 0008
        assert "context_neighbors" not in mem.settings()
        # the vector built with context is gone (stale until reembed); the others stay
        stale = set(mem.sql("SELECT memory_id::VARCHAR FROM stale_vectors").to_series().to_list())
        assert stale == {second.id}
        assert mem.sql("SELECT tokens FROM bm25_docs WHERE memory_id = ?", [second.id]).item() == "it costs 40 euros a month"
        assert second.id not in [h.id for h in mem.recall("hetzner", arms=["keyword"])]
        report = mem.reembed()
        assert report.embedded == 1 and report.remaining == 0
        assert {h.id for h in mem.recall("Hetzner servers", k=3)} >= {first.id}
        assert alone.id in [h.id for h in mem.recall("office plant", k=1)]
        assert mem.verify_events().ok  # the old events were adopted into the chain
