"""Crash safety: SIGKILL a writer (tests/crash_writer.py) at random moments, reopen, check everything.

One store is reused across every kill, so recovery runs again and again on a file that has already
survived earlier crashes. A kill lands anywhere: inside a DuckDB commit, between the steps of a
Parquet archive export, in the middle of a re-embedding run, between a write and its journal line.
After each kill the store must open with ``echo_duck.open`` (no manual repair), hold every write the
journal says returned, and be internally consistent (events, version chains, archive, both search arms).

50 kills by default (about 70 s on 2 cores); ECHO_DUCK_LONG=1 runs 500.
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import echo_duck
from echo_duck.embed.embedder import HashEmbedder
from echo_duck.index.keyword import index_text

LONG = os.environ.get("ECHO_DUCK_LONG") == "1"
KILLS = 500 if LONG else 50
WRITER = Path(__file__).with_name("crash_writer.py")


class Zygote:
    """The fork server of crash_writer.py; its stdout (and its writers') is read by a thread."""

    def __init__(self, stderr_path: Path):
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        self.stderr = open(stderr_path, "w")
        self.proc = subprocess.Popen([sys.executable, str(WRITER), "--zygote"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, text=True, env=env)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("<eof>")

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def expect(self, prefix: str, timeout: float = 60.0) -> str:
        """The next line starting with prefix; a writer error or a silent writer fails the test."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                pytest.fail(f"no {prefix!r} line within {timeout}s")
            if line.startswith("writer-error") or line == "<eof>":
                self.stderr.flush()
                pytest.fail(f"the writer failed on its own: {line}\n{Path(self.stderr.name).read_text()[-3000:]}")
            if line.startswith(prefix):
                return line

    def writer_failed(self) -> str | None:
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                return None
            if line.startswith("writer-error"):
                return line

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.stderr.close()


def read_journal(path: Path) -> list[dict]:
    """Whole lines only; a line the kill cut short is dropped (its write is not claimed)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        path.write_bytes(data)
    return [json.loads(line) for line in data.decode().splitlines() if line]


def rows(con, sql: str, params=None) -> list[tuple]:
    return con.execute(sql, params or []).fetchall()


def verify(db_path: Path, journal: list[dict], rng: random.Random) -> None:
    # embedder=None: checking must not change the store's current model. The open itself runs recovery.
    with echo_duck.open(db_path, agent_id="crash", embedder=None, admin=True) as mem:
        con = mem.db.con
        assert rows(con, "SELECT id, status FROM archive_exports WHERE status IN ('staged', 'moved')") == []
        everything = {str(r[0]): r[1:] for r in rows(con, "SELECT id, content, status, superseded_by, storage FROM memories_all")}
        assert rows(con, "SELECT id FROM memories_all GROUP BY id HAVING count(*) > 1") == []
        live = {str(r[0]) for r in rows(con, "SELECT id FROM memories")}

        # The Parquet archive and the live table never both hold a row; exported rows are in the archive.
        archive_glob = mem.archive_dir / "agent_id=*" / "year=*" / "*.parquet"
        parquet = set()
        if list(mem.archive_dir.glob("agent_id=*/year=*/*.parquet")):
            src = f"read_parquet('{archive_glob}', hive_partitioning = true, union_by_name = true)"
            parquet = {r[0] for r in rows(con, f"SELECT DISTINCT id::VARCHAR FROM {src}")}
            # a crash inside compaction may leave one row in two files, never two different rows
            assert rows(con, f"SELECT id FROM {src} GROUP BY id HAVING count(DISTINCT content) > 1") == []
        assert live & parquet == set(), "a row is both live and archived"
        # ... or back in the live table: forget() brings a fact's exported versions back to forget them (and
        # restore() an exported row), their Parquet copies dropped (lifecycle/returning.py)
        exported = {str(r[0]) for r in rows(con, "SELECT memory_id FROM memory_events WHERE action = 'export'")}
        assert exported <= parquet | live, f"exported rows missing: {sorted(exported - parquet - live)[:5]}"
        done = {str(r[0]) for r in rows(con, "SELECT r.memory_id FROM archive_export_rows r JOIN archive_exports e "
                                              "ON e.id = r.export_id WHERE e.status = 'done'")}
        assert done <= parquet | live
        returned = (exported | done) & live
        assert all(everything[i][1] in ("forgotten", "active") for i in returned), "a returned row neither forgotten nor restored"
        assert set(everything) == live | parquet

        # No half-applied write: every row has its create event; every superseded row its successor.
        created = {str(r[0]) for r in rows(con, "SELECT memory_id FROM memory_events WHERE action = 'create'")}
        assert set(everything) <= created, f"rows without a create event: {sorted(set(everything) - created)[:5]}"
        for memory_id, (_, status, superseded_by, _) in everything.items():
            # a superseded row names its successor; forgetting a fact forgets its earlier versions, which keep theirs
            assert status != "superseded" or superseded_by is not None, memory_id
            assert superseded_by is None or status in ("superseded", "forgotten"), memory_id
            if superseded_by is not None:
                assert str(superseded_by) in everything, f"{memory_id} superseded by a missing row"

        # Every write the journal says returned is there, byte-exact.
        for entry in journal:
            op = entry["op"]
            if op in ("remember", "update"):
                assert entry["id"] in everything, f"lost a returned write: {entry}"
                assert everything[entry["id"]][0] == entry["content"], entry
            if op == "update" and entry.get("status") == "quarantined":  # held for review: the old version stays live
                assert everything[entry["old"]][1] != "superseded" or everything[entry["old"]][2] != entry["id"], entry
            elif op == "update":
                assert str(everything[entry["old"]][2]) == entry["id"], f"old version not superseded: {entry}"
            elif op == "forget":
                assert everything[entry["id"]][1] == "forgotten", entry
            elif op == "messages":
                got = [r[0] for r in rows(con, "SELECT content FROM messages WHERE session_id = ? ORDER BY seq", [entry["session"]])]
                assert got == entry["contents"], entry
            elif op == "consolidate":
                assert rows(con, "SELECT consolidated_at FROM sessions WHERE id = ?", [entry["session"]])[0][0] is not None
                assert rows(con, "SELECT count(*) FROM episodes WHERE session_id = ? AND status = 'active'", [entry["session"]]) == [(1,)]

        # Both search arms agree with the live table: one doc and one vector per row, nothing orphaned.
        # (a row brought back from Parquet only to be forgotten is not indexed: lifecycle/returning.py)
        docs = {str(r[0]) for r in rows(con, "SELECT memory_id FROM bm25_docs")}
        vectors = {str(r[0]) for r in rows(con, "SELECT memory_id FROM memory_vectors")}
        indexed = live - {i for i in returned if everything[i][1] == "forgotten"}
        assert indexed <= docs <= live, f"keyword docs differ: missing {len(indexed - docs)}, orphaned {len(docs - live)}"
        assert indexed <= vectors <= live, f"vectors differ: missing {len(indexed - vectors)}, orphaned {len(vectors - live)}"
        assert rows(con, "SELECT count(*) FROM bm25_postings p LEFT JOIN bm25_docs d ON d.doc = p.doc AND d.memory_id = p.memory_id "
                         "WHERE d.doc IS NULL AND p.doc NOT IN (SELECT doc FROM bm25_dead)") == [(0,)]
        assert rows(con, "SELECT count(*) FROM bm25_docs d WHERE d.len > 0 AND d.doc NOT IN (SELECT doc FROM bm25_postings)") == [(0,)]
        assert rows(con, "SELECT count(*) FROM memory_vectors WHERE len(vector) <> dim "
                         "OR dim <> CASE model_id WHEN 'hash-32' THEN 32 WHEN 'hash-64' THEN 64 END") == [(0,)]
        # ... and each holds its own row's text (and key), never a neighbour's.
        sample = rows(con, "SELECT m.content, m.key, d.tokens, v.vector, v.dim FROM memories m JOIN bm25_docs d ON d.memory_id = m.id "
                           "JOIN memory_vectors v ON v.memory_id = m.id WHERE m.source_session IS NULL "
                           "ORDER BY hash(m.id, ?) LIMIT 150", [rng.random()])
        for content, key, tokens, vector, dim in sample:
            assert tokens == index_text(content, key)  # the key's words are indexed beside the content
            assert np.allclose(vector, HashEmbedder(dim).embed([content])[0], atol=1e-5)


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_no_returned_write(tmp_path):
    rng = random.Random(20261129)
    db_path, journal_path = tmp_path / "crash.duckdb", tmp_path / "journal.jsonl"
    zygote = Zygote(tmp_path / "writers.stderr")
    modes = Counter()
    try:
        embedder = "hash"
        for kill in range(KILLS):
            mode = {2: "open", 4: "archive", 7: "reembed"}.get(kill % 10, "mix")
            modes[mode] += 1
            # reembed: switch to the other model so every vector is stale; otherwise switch at random
            switch = mode == "reembed" or rng.random() < 0.3
            embedder = {"hash": "hash-32", "hash-32": "hash"}[embedder] if switch else embedder
            zygote.send(f"run {db_path} {journal_path} {rng.randrange(10**9)} {mode} {embedder}")
            pid = int(zygote.expect("pid ").split()[1])
            if mode == "open":  # a kill inside open(): recovery, migrations, the view refresh
                time.sleep(rng.uniform(0.05, 0.6))
            elif mode == "mix":
                zygote.expect("ready")
                time.sleep(rng.uniform(0.05, 0.6))
            else:  # a targeted kill: inside the Parquet export or between re-embedding batches
                zygote.expect(f"{mode}-start")
                time.sleep(rng.uniform(0.0, 0.2))
            assert zygote.writer_failed() is None
            os.kill(pid, signal.SIGKILL)
            zygote.send(f"wait {pid}")
            zygote.expect(f"exited {pid}")
            verify(db_path, read_journal(journal_path), rng)
    finally:
        zygote.close()
    journal = read_journal(journal_path)
    ops = Counter(e["op"] for e in journal)
    exported = sum(e.get("exported", 0) for e in journal)
    print(f"\ncrash harness: {KILLS} kills survived ({dict(modes)}), {len(journal)} returned writes verified "
          f"{dict(ops)}, {exported} rows exported to Parquet by completed exports")
    # the harness really exercised the writer (how much each run did depends on timing)
    assert ops["remember"] + ops["update"] >= KILLS // 2 and ops["decay"] and ops["archive"]
