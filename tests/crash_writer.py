"""The writer the crash harness (tests/test_crash.py) kills with SIGKILL.

It loops forever doing a seeded random mix of writes on one store and appends a JSON line to a
journal (flushed and fsynced) AFTER each write returned, so the harness knows exactly which writes
it may demand back. Status lines ("ready", "archive-start", "reembed-start") go to stdout.

Started once as a fork server (``--zygote``): importing echo_duck costs ~1 s, so the harness asks
this process to fork a fresh writer per run ("run <db> <journal> <seed> <mode> <embedder>") and to
reap it after the kill ("wait <pid>"), which keeps 50 kills within CI time.
"""

from __future__ import annotations

import json
import os
import random
import sys
from datetime import datetime, timedelta

import echo_duck
from echo_duck.errors import EchoDuckError

T0 = datetime(2026, 1, 1, 12, 0, 0)
# Byte-exact round trips of mixed scripts, quotes, SQL metacharacters, combining marks and emoji;
# nothing the write scanner refuses (no injections, secrets or invisible characters).
WORDS = ["tea", "coffee", "build", "deploy", "日志", "数据库", "café", "naïve", "e\u0301", "🦆", "🚀", "O'Brien",
         'say "hi"', "50%", "a_b", "back\\slash", "tab\there", "line\nbreak", "Ünïcödé", "ключ", "שלום", "x"]
US = "user_stated"  # the writer's facts outrank consolidation's: no ProvenanceConflict by design
KEYS = [f"k{i}" for i in range(12)]
DRINKS = ["tea", "coffee", "matcha", "cocoa", "water"]


class Journal:
    def __init__(self, path: str):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def log(self, **entry) -> None:
        os.write(self.fd, (json.dumps(entry, ensure_ascii=False) + "\n").encode())
        os.fsync(self.fd)


def say(line: str) -> None:
    print(line, flush=True)


class Run:
    def __init__(self, db: str, journal: str, seed: int, embedder: str):
        self.rng = random.Random(seed)
        self.seed = seed
        self.now = T0
        self.mem = echo_duck.open(db, agent_id="crash", embedder=embedder, now=lambda: self.now, admin=True)
        # Carry the clock on from the last run, so time never goes backwards across restarts.
        last = self.mem.sql("SELECT greatest((SELECT max(updated_at) FROM memories), (SELECT max(occurred_at) FROM memory_events),"
                            " (SELECT max(last_message_at) FROM sessions), (SELECT max(created_at) FROM archive_exports))").item()
        self.now = max(T0, last or T0) + timedelta(minutes=1)
        self.journal = Journal(journal)
        self.n = 0

    def text(self) -> str:
        self.n += 1
        words = " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(1, 8)))
        return f"{words} #{self.seed}-{self.n}"

    def live_id(self):
        ids = self.mem.sql("SELECT id::VARCHAR AS id FROM memories WHERE status = 'active' AND agent_id = 'crash' "
                           "ORDER BY hash(id, $s) LIMIT 1", {"s": self.rng.random()})
        return ids["id"][0] if len(ids) else None

    # -- operations: each journals only after the library call returned ----------------------

    def remember(self):
        content = self.text()
        m = self.mem.remember(content, type="environment", importance=self.rng.uniform(0.1, 0.9))
        # a restatement of a live memory returns the memory that stands (compression): journal what came back
        self.journal.log(op="remember", id=str(m.id), content=m.content)

    def supersede(self):
        content, key = self.text(), self.rng.choice(KEYS)
        m = self.mem.remember(content, type="environment", key=key, provenance=US)
        self.journal.log(op="remember", id=str(m.id), content=content, key=key)

    def remember_many(self):
        contents = [self.text() for _ in range(self.rng.randint(2, 40))]
        stored = self.mem.remember_many([{"content": c, "type": "environment"} for c in contents])
        for m, c in zip(stored, contents):
            self.journal.log(op="remember", id=str(m.id), content=c)

    def update(self):
        target = self.live_id()
        if target is None:
            return self.remember()
        content = self.text()
        m = self.mem.update(target, content, provenance=US)  # may target a consolidated fact
        self.journal.log(op="update", old=target, id=str(m.id), content=content, status=m.status)

    def forget(self):
        target = self.live_id()
        if target is not None:
            self.mem.forget(target, "crash test")
            self.journal.log(op="forget", id=target)

    def consolidate(self):
        session = f"s-{self.seed}-{self.n}"
        self.n += 1
        contents = [f"I prefer {self.rng.choice(DRINKS)} over {self.rng.choice(DRINKS)} #{self.seed}-{self.n}",
                    f"we deploy with {self.rng.choice(WORDS)} on fridays"]
        for role, content in zip(("user", "assistant"), contents):
            self.mem.add_message(session, role, content)
        self.journal.log(op="messages", session=session, contents=contents)
        self.mem.consolidate(session)
        self.journal.log(op="consolidate", session=session)

    def decay(self):
        self.now += timedelta(days=self.rng.uniform(20, 150))
        report = self.mem.decay()
        self.journal.log(op="decay", archived=report.archived)

    def archive(self):
        say("archive-start")
        report = self.mem.archive(older_than_days=0)
        self.journal.log(op="archive", exported=report.exported)

    def switching_models(self) -> bool:
        """True when this run's embedder is not the store's model (the harness switched models)."""
        stored = self.mem.sql("SELECT value FROM store_info WHERE name = 'embedding_model'")["value"].to_list()
        return bool(stored) and stored[0] != self.mem.indexer.vectors.model_id

    def reembed(self):
        say("reembed-start")
        report = self.mem.reembed(batch_size=self.rng.randint(5, 60))
        self.journal.log(op="reembed", embedded=report.embedded, remaining=report.remaining)

    def recall(self):
        self.mem.recall(self.rng.choice(WORDS), k=5)  # reinforcement is a write too

    def loop(self):
        ops = [(self.remember, 15), (self.supersede, 12), (self.remember_many, 12), (self.update, 15),
               (self.forget, 7), (self.consolidate, 6), (self.decay, 7), (self.archive, 7), (self.reembed, 4),
               (self.recall, 5)]
        funcs, weights = zip(*ops)
        while True:
            self.now += timedelta(seconds=self.rng.uniform(1, 600))
            self.rng.choices(funcs, weights)[0]()


def main(db: str, journal: str, seed: int, mode: str, embedder: str) -> None:
    run = Run(db, journal, seed, embedder)
    from echo_duck.write.scan import scan

    scan("the scanner's model loads on the first write: load it before the kill window opens")
    say("ready")
    if mode == "reembed" or run.switching_models():  # a store switches models only by re-embedding
        run.reembed()
    if mode == "archive":  # every live row decays to the archival tier, then an export to kill
        run.now += timedelta(days=400)
        run.decay()
        run.archive()
    run.loop()


def warm_up() -> None:
    """Load once in the fork server what would otherwise load lazily in every writer: jieba's
    dictionary (2 s), pyarrow.dataset, the extractor's patterns. No DuckDB here: a fork must not
    inherit a database instance's threads."""
    import importlib

    from echo_duck.lifecycle import extract
    from echo_duck.text import segment as text
    from echo_duck.embed.embedder import HashEmbedder

    importlib.import_module("pyarrow.dataset")
    text.segment_for_index("数据库 日志 warm up")
    extract.extract_facts([("user", "I prefer tea over coffee")])
    HashEmbedder(64).embed(["warm up"])


def zygote() -> None:
    """Fork a writer per "run" command; reap it on "wait". The harness kills the writers itself."""
    warm_up()
    for line in sys.stdin:
        cmd, *args = line.split()
        if cmd == "run":
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                try:
                    main(args[0], args[1], int(args[2]), args[3], args[4])
                except BaseException as e:  # the harness treats any exit of its own as a failure
                    print(f"writer-error {type(e).__name__}: {e}", flush=True)
                    if not isinstance(e, EchoDuckError):
                        import traceback
                        traceback.print_exc()
                finally:
                    os._exit(1)
            say(f"pid {pid}")
        elif cmd == "wait":
            _, status = os.waitpid(int(args[0]), 0)
            say(f"exited {args[0]} {status}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--zygote"]:
        zygote()
    else:
        main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
