"""Several processes and threads on one file: DuckDB allows one process while it writes."""

import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import echo_duck

HOLDER = textwrap.dedent("""
    import sys, time, echo_duck
    with echo_duck.open(sys.argv[1], admin=True) as mem:
        mem.remember("held by the other process", type="environment")
        print("ready", flush=True)
        time.sleep(float(sys.argv[2]))
""")


def hold(db_path, seconds):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(db_path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


@pytest.mark.slow
def test_second_process_gets_a_clear_database_locked_error(db_path):
    proc = hold(db_path, 30)
    try:
        start = time.monotonic()
        with pytest.raises(echo_duck.DatabaseLocked, match=rf"PID {proc.pid}") as info:
            echo_duck.open(db_path, lock_timeout=0.5, admin=True)
        assert time.monotonic() - start >= 0.5
        assert "lock timeout" in str(info.value)
        with pytest.raises(echo_duck.DatabaseLocked):
            echo_duck.open(db_path, read_only=True, admin=True)
    finally:
        proc.kill()
        proc.wait()
    with echo_duck.open(db_path, admin=True) as mem:  # nothing the holder committed is lost
        assert [m.content for m in mem.find()] == ["held by the other process"]


def test_a_second_handle_through_a_hard_link_is_refused_as_through_the_name(db_path):
    # DuckDB compares names: through another name of the file a second handle opened, both wrote, and the first
    # handle's writes were lost when they closed
    with echo_duck.open(db_path, agent_id="alice", embedder="hash") as alice:
        alice.remember("Alice likes green tea", type="user")
        link = db_path.with_name("hard.duckdb")
        os.link(db_path, link)
        for name in (db_path, link):
            with pytest.raises(echo_duck.DatabaseLocked, match="already open in this process"):
                echo_duck.open(name, agent_id="bob", embedder="hash")
        alice.remember("Alice hikes on Sundays", type="user")
    with echo_duck.open(link, agent_id="alice", embedder="hash") as again:  # closed: either name opens it
        assert len(again.find()) == 2


@pytest.mark.slow
def test_waiting_writer_gets_in_when_the_holder_leaves(db_path):
    proc = hold(db_path, 1.0)
    with echo_duck.open(db_path, lock_timeout=20, admin=True) as mem:
        mem.remember("second writer", type="environment")
        assert {m.content for m in mem.find()} == {"held by the other process", "second writer"}
    proc.wait()


@pytest.mark.slow
def test_readers_share_the_file_when_nobody_writes(db_path):
    with echo_duck.open(db_path, admin=True) as mem:
        mem.remember("shared", type="user")
    code = "import sys, echo_duck; m = echo_duck.open(sys.argv[1], read_only=True); print(m.find()[0].content); import time; time.sleep(1)"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(db_path)], stdout=subprocess.PIPE, text=True) for _ in range(3)]
    assert [p.communicate(timeout=60)[0].strip() for p in procs] == ["shared"] * 3


@pytest.mark.slow
def test_threads_sharing_one_facade_lose_nothing(mem):
    errors = []

    def worker(n):
        try:
            for i in range(20):
                mem.remember(f"thread {n} fact {i}", type="environment", key=f"t{n}-{i}")
                mem.find(limit=5)
        except Exception as e:  # collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert mem.sql("SELECT count(*) FROM memories").item() == 160
    assert mem.sql("SELECT count(*) FROM memory_events").item() == 160
