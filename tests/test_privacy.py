"""Privacy deletion (SPEC L5, seed 001): forget(purge=True) removes the content everywhere — every
version, derived memories, source messages, episodes, Parquet copies — and keeps only content-free
events. Proved by scanning every table of the file and every Parquet file (test_trust_erasure.py
also greps the bytes of every file of the store). A neighbour in the session never held the text:
each memory is indexed with its own text only (issue 18)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

import echo_duck
from echo_duck import MemoryNotFound

SECRET = "Kumquatvale"  # the private detail: it must vanish from the whole store
SESSION = "sess-private-1"


def open_store(path, clock):
    return echo_duck.open(path, now=clock, embedder="hash", admin=True)


def tables_containing(mem, needle: str) -> dict[str, int]:
    """{table: rows whose text contains needle} over every table of the store's catalog."""
    tables = mem.sql("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'mem'").to_dicts()
    assert {"memories", "memory_events", "messages", "episodes", "bm25_docs"} <= {t["table_name"] for t in tables}
    found = {}
    for t in tables:
        name = f'mem."{t["schema_name"]}"."{t["table_name"]}"'
        n = mem.sql(f"SELECT count(*) AS n FROM {name} t WHERE CAST(t AS VARCHAR) ILIKE ?", [f"%{needle}%"])["n"][0]
        if n:
            found[t["table_name"]] = n
    return found


def parquet_files_containing(root: Path, needle: str) -> list[str]:
    hits = []
    for f in sorted(root.rglob("*.parquet")):
        if needle.lower() in str(pq.read_table(f).to_pylist()).lower():
            hits.append(str(f.relative_to(root)))
    return hits


def term_postings(mem, word: str) -> int:
    """Live postings of a word's BM25 term (postings hold hashes, not text)."""
    return mem.sql("SELECT count(*) AS n FROM bm25_postings WHERE term = hash(stem(lower(?), 'porter')) "
                   "AND doc NOT IN (SELECT doc FROM bm25_dead)", [word])["n"][0]


def build(mem, clock, *, archived_copy: bool) -> dict:
    """A store where the secret reached every place a memory's content can reach."""
    out = {}
    msgs = [
        mem.add_message(SESSION, "user", "Hi! Can you help me plan a birthday gift for my sister?"),
        mem.add_message(SESSION, "user", f"Remember that my sister lives at 17 {SECRET} Road."),
        mem.add_message(SESSION, "assistant", "Happy to help with the gift."),
        mem.add_message(SESSION, "user", "I prefer pnpm over npm."),
    ]
    out["message"] = msgs[1]
    clock.advance(seconds=1)
    v1 = mem.remember(f"The user's sister lives at 17 {SECRET} Road", type="user", key="family:sister_address",
                      provenance="user_stated", source_session=SESSION, source_refs=[f"message:{msgs[1].id}"],
                      sensitivity="personal")
    clock.advance(seconds=1)
    # The next memory of the session: indexed with its own text only, never with the secret as context.
    out["neighbour"] = mem.remember("The user's sister likes orchids", type="user", key="family:sister_flowers",
                                    source_session=SESSION, provenance="user_stated")
    clock.advance(days=1)
    v2 = mem.update("family:sister_address", f"The user's sister lives at 17 {SECRET} Road, flat 2",
                    provenance="user_stated")
    if archived_copy:
        clock.advance(days=100)
        assert mem.archive().exported == 1  # v1, superseded 100 days ago, now lives in Parquet only
        assert v1.id not in mem.sql("SELECT id::VARCHAR AS id FROM memories")["id"].to_list()
        assert parquet_files_containing(mem.archive_dir, SECRET)
    clock.advance(days=1)
    v3 = mem.update("family:sister_address", f"The user's sister lives at 19 {SECRET} Road, flat 2",
                    provenance="user_stated")
    out["versions"] = [v1, v2, v3]
    clock.advance(seconds=1)
    out["procedure"] = mem.remember(f"Ship gifts for the user's sister to {SECRET} Road by courier",
                                    type="procedure", source_refs=[f"memory:{v3.id}"])
    clock.advance(seconds=1)
    out["unrelated"] = mem.remember("The CI pipeline runs on Buildkite", type="environment", importance=0.9)
    clock.advance(minutes=5)
    report = mem.consolidate(SESSION)[0]
    assert report.episode_id is not None
    out["episode_id"] = report.episode_id
    out["episodic"] = mem.find(key=f"episode:{SESSION}", tier="episodic")[0]
    assert SECRET in out["episodic"].content
    # Facts consolidated from the secret's message (other facts of the session share its episode).
    out["consolidated"] = [m for m in mem.find(limit=1000) if m.provenance_name == "consolidated"
                           and m.tier != "episodic" and SECRET in m.content]
    assert out["consolidated"]
    # Preconditions: the secret really is everywhere it can be.
    where = tables_containing(mem, SECRET)
    assert {"memories", "memory_events", "messages", "episodes", "bm25_docs"} <= set(where), where
    neighbour_doc = mem.sql("SELECT tokens FROM bm25_docs WHERE memory_id = ?", [out["neighbour"].id])["tokens"][0]
    assert SECRET.lower() not in neighbour_doc and "orchid" in neighbour_doc
    assert term_postings(mem, SECRET) > 0
    out["neighbour_vector"] = mem.sql("SELECT vector FROM memory_vectors WHERE memory_id = ?",
                                      [out["neighbour"].id])["vector"].to_list()[0]
    return out


def assert_content_free_events(mem, ids) -> None:
    events = mem.sql("SELECT memory_id::VARCHAR AS id, action, reason, before, after FROM memory_events "
                     "WHERE memory_id::VARCHAR IN (SELECT unnest(?::VARCHAR[]))", [sorted(ids)]).to_dicts()
    assert {e["id"] for e in events} == set(ids)
    for e in events:
        assert e["before"] is None and e["after"] is None, e
    purges = [e for e in events if e["action"] == "purge"]
    assert sorted(e["id"] for e in purges) == sorted(ids)
    assert all(e["reason"] == "privacy request #42" for e in purges)


def run_purge_everywhere(db_path, clock, *, archived_copy: bool) -> None:
    with open_store(db_path, clock) as mem:
        built = build(mem, clock, archived_copy=archived_copy)
        v2 = built["versions"][1]
        report = mem.forget(v2.id, "privacy request #42", purge=True, cascade="purge")
        chain = {v.id for v in built["versions"]}
        derived = {built["procedure"].id, built["episodic"].id} | {m.id for m in built["consolidated"]}
        assert chain <= set(report.purged), "every version of the fact is purged"
        assert derived <= set(report.purged), "everything derived from it is purged"
        assert built["neighbour"].id not in report.purged and built["unrelated"].id not in report.purged
        assert report.flagged == () and report.messages_deleted >= 1
        assert report.episodes == (built["episode_id"],)

        assert tables_containing(mem, SECRET) == {}
        assert parquet_files_containing(mem.archive_dir, SECRET) == []
        assert term_postings(mem, SECRET) == 0
        for memory_id in report.purged:
            with pytest.raises(MemoryNotFound):
                mem.get(memory_id)
        assert mem.sql("SELECT count(*) AS n FROM memories_all WHERE id::VARCHAR IN (SELECT unnest(?::VARCHAR[]))",
                       [list(report.purged)])["n"][0] == 0
        assert mem.sql("SELECT count(*) AS n FROM messages WHERE id = ?", [built["message"].id])["n"][0] == 0
        assert mem.sql("SELECT count(*) AS n FROM episodes WHERE id = ?", [built["episode_id"]])["n"][0] == 0
        # The neighbour stays, with its own index entry (BM25 text and vector) unchanged.
        neighbour = mem.get(built["neighbour"].id)
        assert neighbour.status == "active"
        doc = mem.sql("SELECT tokens FROM bm25_docs WHERE memory_id = ?", [neighbour.id])["tokens"][0]
        assert "orchid" in doc and SECRET.lower() not in doc
        vector = mem.sql("SELECT vector FROM memory_vectors WHERE memory_id = ?", [neighbour.id])["vector"].to_list()[0]
        assert vector == built["neighbour_vector"]
        assert_content_free_events(mem, set(report.purged))
        assert SECRET not in mem.snapshot()
    with open_store(db_path, clock) as mem:  # and after a reopen (WAL replayed, view rebuilt)
        assert tables_containing(mem, SECRET) == {}
        assert parquet_files_containing(mem.archive_dir, SECRET) == []
        # Recall for it returns nothing (these recalls log their own query); the rest still answers.
        assert mem.recall(f"{SECRET} Road", arms=["keyword"]) == []
        assert not any(SECRET in h.content for h in mem.recall(f"sister address {SECRET} Road", k=50))
        assert built["neighbour"].id in [h.id for h in mem.recall("sister orchids", arms=["keyword"])]


def test_purge_cascade_removes_the_content_everywhere(db_path, clock):
    run_purge_everywhere(db_path, clock, archived_copy=False)


def test_purge_cascade_removes_the_content_everywhere_including_the_parquet_archive(db_path, clock):
    """Same, with the oldest version already moved to the Parquet archive by archive()."""
    run_purge_everywhere(db_path, clock, archived_copy=True)


def test_purge_flag_cascade_flags_derived_memories_for_review(db_path, clock):
    with open_store(db_path, clock) as mem:
        built = build(mem, clock, archived_copy=False)
        report = mem.forget(built["versions"][2].id, "privacy request #42", purge=True, cascade="flag")
        chain = {v.id for v in built["versions"]}
        derived = {built["procedure"].id} | {m.id for m in built["consolidated"]}
        # the episode's summary quotes the purged message: it is purged whatever the cascade (SPEC T3, T5)
        assert set(report.purged) == chain | {built["episodic"].id}
        assert derived <= set(report.flagged)
        assert not {built["neighbour"].id, built["unrelated"].id} & set(report.flagged)
        derived = set(report.flagged)
        for memory_id in chain | {built["episodic"].id}:
            with pytest.raises(MemoryNotFound):
                mem.get(memory_id)
        for memory_id in derived:
            assert mem.get(memory_id).status == "flagged"
        episode = mem.sql("SELECT status, summary FROM episodes WHERE id = ?", [built["episode_id"]])
        assert episode["status"][0] == "flagged" and SECRET not in episode["summary"][0]
        assert mem.sql("SELECT count(*) AS n FROM messages WHERE id = ?", [built["message"].id])["n"][0] == 0
        assert_content_free_events(mem, chain)
        # The chain's own content is gone from every table; only the flagged rows (kept for review), their
        # index entries and the flagged episode still hold it.
        where = tables_containing(mem, SECRET)
        assert set(where) <= {"memories", "bm25_docs", "memory_events", "episodes"}, where
        assert mem.sql("SELECT count(*) AS n FROM memories WHERE content ILIKE ? AND status <> 'flagged'",
                       [f"%{SECRET}%"])["n"][0] == 0
        # Flagged memories are out of recall (every arm), snapshots and default finds, but listed for review.
        hits = mem.recall(f"ship gifts courier {SECRET} Road", k=50)
        assert not {h.id for h in hits} & (derived | chain)
        assert not {h.id for h in mem.recall("ship gifts courier", arms=["keyword"])} & (derived | chain)
        assert SECRET not in mem.snapshot()
        assert not {m.id for m in mem.find(limit=1000)} & derived
        assert {m.id for m in mem.find(status="flagged", limit=1000)} == derived


def test_purge_refuses_an_unknown_cascade_and_changes_nothing(db_path, clock):
    with open_store(db_path, clock) as mem:
        m = mem.remember(f"Secret detail {SECRET}", type="user")
        with pytest.raises(echo_duck.InvalidInput):
            mem.forget(m.id, "x", purge=True, cascade="delete-everything")
        assert mem.get(m.id).status == "active"


def test_soft_forget_keeps_history_but_purge_does_not(db_path, clock):
    with open_store(db_path, clock) as mem:
        soft = mem.remember(f"Soft {SECRET} detail", type="user", key="soft")
        forgotten = mem.forget(soft.id, "no longer true")
        assert forgotten.status == "forgotten"
        assert "memories" in tables_containing(mem, SECRET)  # a soft delete keeps the row for history
        report = mem.forget(soft.id, "privacy request", purge=True)
        assert report.purged == (soft.id,)
        assert tables_containing(mem, SECRET) == {}


def test_purge_scrubs_the_queries_of_recalls_that_returned_the_purged_memory(db_path, clock):
    """recall_log keeps every query; a recall that found the secret by quoting it must not keep it."""
    with open_store(db_path, clock) as mem:
        m = mem.remember(f"The user's sister lives at 17 {SECRET} Road", type="user")
        hits = mem.recall(f"{SECRET} Road", arms=["keyword"])
        assert [h.id for h in hits] == [m.id]
        mem.forget(m.id, "privacy request", purge=True)
        assert tables_containing(mem, SECRET) == {}


def test_purge_cascade_reaches_memories_derived_from_its_source_message(db_path, clock):
    """The purged memory's source message is deleted as part of the purge; a memory written from that
    same message (source_refs message:<id>) is derived content too and must go with it."""
    with open_store(db_path, clock) as mem:
        message = mem.add_message(SESSION, "user", f"My sister lives at 17 {SECRET} Road; the gift goes there.")
        fact = mem.remember(f"The user's sister lives at 17 {SECRET} Road", type="user",
                            source_refs=[f"message:{message.id}"])
        clock.advance(seconds=1)
        sibling = mem.remember(f"Gift shipping address: 17 {SECRET} Road", type="environment",
                               source_refs=[f"message:{message.id}"])
        report = mem.forget(fact.id, "privacy request #42", purge=True, cascade="purge")
        assert report.messages_deleted == 1
        assert sibling.id in report.purged
        assert tables_containing(mem, SECRET) == {}
