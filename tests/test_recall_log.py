"""A recall's bookkeeping is written behind it (echo_duck/recall/recall_log.py), and nothing is lost or late:
every other read and write, close, a full queue, an idle store and the interpreter's exit write it
first, and the next recall counts what is still queued.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import threading
import time
from datetime import timedelta

import duckdb
import pytest

import echo_duck
from echo_duck.recall.hybrid import reinforced_hits
from echo_duck.recall import recall_log
from echo_duck.bench import synthetic
from echo_duck.errors import EchoDuckError


@pytest.fixture(autouse=True)
def no_idle_writes(monkeypatch, request):
    """Only the idle test lets the background thread write: the others check what is still queued."""
    if "idle" not in request.node.name:
        monkeypatch.setattr(recall_log, "IDLE_S", 3600.0)


@pytest.fixture
def store(db_path, clock):
    with echo_duck.open(db_path, agent_id="a", session_id="s", embedder="hash", now=clock, admin=True) as m:
        m.remember_many(synthetic.memories(200))
        yield m


def raw_log(mem) -> list[tuple]:
    """recall_log as the connection holds it, without the catch-up every facade call does first."""
    with mem.db.lock:
        return mem.db.con.execute("SELECT id, query, memory_ids, scores FROM recall_log ORDER BY id").fetchall()


def test_every_other_read_sees_the_recall_first(store, clock):
    hits = store.recall("deploy borealis", 5)
    assert hits and raw_log(store) == []  # queued, not written: the recall did not wait for it
    rows = store.sql("SELECT id, query, memory_ids::VARCHAR[] AS ids, scores FROM recall_log").rows()
    assert rows == [(hits[0].recall_id, "deploy borealis", [h.id for h in hits], [h.score for h in hits])]
    used = set(reinforced_hits(hits, 0.5, 3))  # the hits the caller plausibly used (hybrid.reinforced_hits)
    assert used and len(used) <= 3
    for h in hits:  # reinforced: one review each, at the recall's time; the near misses are not
        memory = store.get(h.id)
        assert (memory.access_count, memory.last_accessed) == ((1, clock.now) if h.id in used else (0, None))
    logged = store.sql("SELECT reinforced_ids::VARCHAR[] AS ids FROM recall_log")["ids"].to_list()
    assert logged == [[h.id for h in hits if h.id in used]]


def test_queued_recalls_add_up_as_if_written_one_by_one(store, clock):
    first = store.recall("deploy borealis", 5)
    clock.advance(hours=1)
    second = store.recall("deploy borealis", 5)
    clock.advance(hours=1)
    store.recall("deploy borealis", 5, reinforce=False)  # logged, not reinforced
    assert first[0].recall_id < second[0].recall_id
    counts = {h.id: 0 for h in first + second}
    used_first, used_second = set(reinforced_hits(first, 0.5, 3)), set(reinforced_hits(second, 0.5, 3))
    for memory_id in [*used_first, *used_second]:
        counts[memory_id] += 1
    for memory_id, n in counts.items():
        memory = store.get(memory_id)
        assert memory.access_count == n
        if n:
            assert memory.last_accessed == clock.now - timedelta(hours=1 if memory_id in used_second else 2)
    events = store.sql("SELECT count(*) AS n FROM memory_events WHERE action = 'reinforce' AND memory_id IS NOT NULL")
    assert events["n"][0] == len(used_first) + len(used_second)  # one event per review, for time travel
    assert [r[1] for r in raw_log(store)] == ["deploy borealis"] * 3


def test_writes_catch_up_before_they_change_anything(store):
    hits = store.recall("postgres backup", 3)
    store.remember("a new fact about postgres", type="environment")  # a transaction: the queue goes first
    assert [r[0] for r in raw_log(store)] == [hits[0].recall_id]
    marked = store.mark(hits[0], helpful=True)
    assert marked.access_count == 1
    fb = store.sql("SELECT recall_id FROM memory_feedback").rows()
    assert fb == [(hits[0].recall_id,)]


def test_close_writes_the_queue(db_path, clock):
    with echo_duck.open(db_path, agent_id="a", embedder="hash", now=clock, admin=True) as m:
        m.remember_many(synthetic.memories(50))
        hits = m.recall("deploy borealis", 4)
    with duckdb.connect(str(db_path), read_only=True) as raw:
        assert raw.execute("SELECT id FROM recall_log").fetchall() == [(hits[0].recall_id,)]
        assert raw.execute("SELECT sum(access_count) FROM memories").fetchone()[0] == len(reinforced_hits(hits, 0.5, 3))


def test_a_full_queue_is_written_at_once(store):
    for i in range(recall_log.MAX_QUEUED - 1):  # not reinforced: no recall needs an earlier one written
        store.recall(f"deploy borealis {i}", 2, reinforce=False)
    assert raw_log(store) == []
    store.recall("deploy borealis last", 2, reinforce=False)
    assert len(raw_log(store)) == recall_log.MAX_QUEUED


def test_an_idle_store_writes_the_queue_in_the_background(store):
    hits = store.recall("deploy borealis", 3)
    deadline = time.monotonic() + 30  # liveness, not speed: the thread writes IDLE_S after the last recall
    while not raw_log(store) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [r[0] for r in raw_log(store)] == [hits[0].recall_id]


def test_a_purge_scrubs_queries_still_queued(store):
    hits = store.recall("deploy borealis", 3)
    store.forget(hits[0].id, purge=True)  # its transaction writes the queue first, then scrubs it
    assert [r[1] for r in raw_log(store)] == ["[purged]"]


def test_a_failed_write_keeps_the_queue_and_raises_where_it_is_seen(store, monkeypatch):
    hits = store.recall("deploy borealis", 3)
    journal = store.recaller.journal
    real = journal.db.run

    def failing(name, /, **params):
        if name == "log_recalls":
            raise EchoDuckError("disk full (simulated)")
        return real(name, **params)

    monkeypatch.setattr(journal.db, "run", failing)
    with pytest.raises(EchoDuckError, match="disk full"):
        store.find()
    monkeypatch.undo()
    assert raw_log(store) == [] and all(store.get(h.id).access_count == 1 for h in hits)  # get() caught up
    assert [r[0] for r in raw_log(store)] == [hits[0].recall_id]


def test_recalls_from_many_threads_are_all_recorded(store):
    ids, errors = [], []

    def agent(n: int) -> None:
        try:
            for i in range(15):
                ids.append(store.recall(f"deploy borealis {n} {i}", 2)[0].recall_id)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    logged = [r[0] for r in store.sql("SELECT id FROM recall_log ORDER BY id").rows()]
    assert sorted(ids) == logged and len(set(ids)) == 60


def test_recall_ids_come_a_block_at_a_time_in_the_order_of_the_recalls(db_path, clock, monkeypatch):
    """One query takes ID_BLOCK ids; they are handed out in order, match the log, and a reopened store
    goes on above them (ids taken and not used are gaps)."""
    taken = []
    with echo_duck.open(db_path, agent_id="a", embedder="hash", now=clock, admin=True) as m:
        m.remember_many(synthetic.memories(30))
        run = m.db.run

        def counting(name, /, **params):
            taken.append(name)
            return run(name, **params)

        monkeypatch.setattr(m.db, "run", counting)
        ids = [m.recall("deploy borealis", 2)[0].recall_id for _ in range(2 * recall_log.ID_BLOCK + 5)]
        assert ids == sorted(set(ids))  # strictly increasing
        assert taken.count("next_recall_ids") == 3  # 133 recalls: three blocks, not a query each
        assert [r[0] for r in m.sql("SELECT id FROM recall_log ORDER BY id").rows()] == ids
    with echo_duck.open(db_path, agent_id="a", embedder="hash", now=clock, admin=True) as m:
        assert m.recall("deploy borealis", 2)[0].recall_id > max(ids)

def test_read_only_stores_record_nothing(db_path, clock):
    with echo_duck.open(db_path, agent_id="a", embedder="hash", now=clock, admin=True) as m:
        m.remember_many(synthetic.memories(30))
    with echo_duck.open(db_path, agent_id="a", embedder="hash", read_only=True, admin=True) as ro:
        hits = ro.recall("deploy borealis", 3)
        assert hits and all(h.recall_id is None for h in hits)


@pytest.mark.slow
def test_a_store_never_closed_writes_its_queue_as_the_interpreter_exits(db_path):
    with echo_duck.open(db_path, agent_id="a", embedder="hash", admin=True) as m:
        m.remember_many(synthetic.memories(50))
    script = ("import echo_duck, sys\n"
              f"m = echo_duck.open({str(db_path)!r}, agent_id='a', embedder='hash', admin=True)\n"
              "ids = [m.recall('deploy borealis', 3)[0].recall_id for _ in range(3)]\n"
              "print(ids)\n")  # no close(), no with-block
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    recall_ids = ast.literal_eval(out.stdout.strip())
    with echo_duck.open(db_path, agent_id="a", embedder="hash", admin=True) as m:
        assert [r[0] for r in m.sql("SELECT id FROM recall_log ORDER BY id").rows()] == recall_ids
        more = m.recall("deploy borealis", 3)  # ids stay unique after the restart
        assert more[0].recall_id > max(recall_ids)
        assert len(m.sql("SELECT id FROM recall_log").rows()) == 4


@pytest.mark.parametrize("types", [None, ["environment", "procedure"]])  # unfiltered and filtered, both in process
def test_back_to_back_recalls_rank_as_if_each_was_written_at_once(tmp_path, clock, types):
    """A recall counts the queued reviews of its candidates as if they were written."""
    with echo_duck.open(tmp_path / "seed.duckdb", agent_id="a", embedder="hash", now=clock, admin=True) as m:
        m.remember_many(synthetic.memories(300))
    results = []
    for eager in (False, True):
        path = tmp_path / f"copy{eager}.duckdb"
        shutil.copyfile(tmp_path / "seed.duckdb", path)
        day = [clock.now]
        with echo_duck.open(path, agent_id="a", embedder="hash", now=lambda: day[0], admin=True) as m:
            seen = []
            for i, q in enumerate(["deploy borealis", "deploy borealis", "postgres backup", "deploy borealis"] * 3):
                day[0] += timedelta(days=9)
                hits = m.recall(q, 8, types=types, explain=True)
                seen.append([(h.id, h.score, h.explanation.effective_importance, h.memory.access_count) for h in hits])
                if eager:
                    m.sql("SELECT 1")  # any other read writes the queue: the synchronous behaviour
            results.append(seen)
    assert results[0] == results[1]
    assert any(row[3] > 0 for step in results[0] for row in step)  # reviews did feed back into ranking


def test_the_thread_never_writes_in_the_middle_of_a_recall(db_path, clock, monkeypatch):
    """A recall slower than IDLE_S (1M rows) must not find the store 'idle' and wait for the write."""
    monkeypatch.setattr(recall_log, "IDLE_S", 0.05)
    seen_during_recall = []

    class SlowReranker:  # runs inside recall(), after the ranking and outside the store lock
        def score(self, query, texts):
            time.sleep(0.4)  # 8 × IDLE_S
            seen_during_recall.append(len(raw_log(mem)))
            return [0.0] * len(texts)

    with echo_duck.open(db_path, agent_id="a", embedder="hash", now=clock, reranker=SlowReranker(),
                        rerank_timeout_s=30, admin=True) as mem:
        mem.remember_many(synthetic.memories(60))
        mem.recall("deploy borealis", 3)  # queued; the next recall starts at once
        mem.recall("postgres backup", 3)
        deadline = time.monotonic() + 30  # liveness: written once both recalls are over
        while len(raw_log(mem)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen_during_recall == [0, 0] and len(raw_log(mem)) == 2


def test_recalls_inside_a_rolled_back_transaction_keep_the_queue(db_path, clock, monkeypatch):
    """Inside a transaction nothing writes the queue (a filtered recall there is ranked by SQL, and a full
    queue waits), so a rollback cannot take queued bookkeeping with it."""
    monkeypatch.setattr(recall_log, "MAX_QUEUED", 2)
    with echo_duck.open(db_path, agent_id="a", embedder="hash", now=clock, admin=True) as mem:
        mem.remember_many(synthetic.memories(60))
        mem.recall("deploy borealis", 3)  # queued, and written as the transaction begins
        with pytest.raises(RuntimeError, match="roll back"):
            with mem.db.transaction("test"):
                assert len(raw_log(mem)) == 1
                hits = mem.recall("deploy borealis", 3, types=["environment", "procedure"], explain=True)
                assert {h.explanation.vector_arm for h in hits} == {"exact (sql)"}
                mem.recall("postgres backup", 3)  # the second in the queue: it is full
                raise RuntimeError("roll back")
        assert len(raw_log(mem)) == 1  # the two recalls inside are still queued, not rolled back
        mem.sql("SELECT 1")  # any other read writes it
        assert len(raw_log(mem)) == 3
