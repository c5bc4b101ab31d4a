import pytest

import echo_duck
from echo_duck.store.working import HEADER, WorkingMemory


def test_ring_buffer_keeps_the_last_twenty():
    wm = WorkingMemory()
    for i in range(25):
        wm.add(f"item {i}")
    assert len(wm) == 20 and wm.items()[0].content == "item 5"


def test_render_drops_least_important_first_and_keeps_order():
    wm = WorkingMemory()
    wm.add("low", importance=0.1)
    wm.add("high", importance=0.9)
    wm.add("mid", importance=0.5)
    full = wm.render(10_000)
    assert full == HEADER + "- low\n- high\n- mid\n"
    tight = wm.render(len(HEADER) + len("- high\n- mid\n"))
    assert tight == HEADER + "- high\n- mid\n"


@pytest.mark.parametrize("budget", [1, 10, 30, 100, 1000])
def test_render_never_exceeds_budget(budget):
    wm = WorkingMemory()
    for i in range(20):
        wm.add(("长内容" * 50) + str(i), importance=(i % 7) / 7)
    assert len(wm.render(budget)) <= budget


def test_working_memory_is_never_persisted(mem):
    mem.working.add("scratch thought", importance=0.9)
    assert mem.sql("SELECT count(*) FROM memories").item() == 0
    assert mem.working.drain()[0].content == "scratch thought" and len(mem.working) == 0


def test_bad_working_input():
    with pytest.raises(echo_duck.InvalidInput):
        WorkingMemory().add("", importance=0.5)
    with pytest.raises(echo_duck.InvalidInput):
        WorkingMemory().add("x", importance=2)
