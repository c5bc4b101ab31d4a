"""text/pos.py: jieba's part-of-speech tags at a cost bounded by the text's length (session 55, reviewer Z: a
message of random rare Han characters cost posseg's HMM ~3.6 ms a character to summarise)."""

from __future__ import annotations

import random

import jieba.posseg

from echo_duck.lifecycle.summary import entities
from echo_duck.text.pos import KEPT_UNKNOWN, TAGGED_CHARS, tagged

NATURAL = "我和林小薇上周去了厦门，她说下个月要搬到深圳工作，顺便看看王建国的新公司。Alice 也去了。"


def test_ordinary_text_is_tagged_as_posseg_tags_it():
    assert tagged(NATURAL) == [(p.word, p.flag) for p in jieba.posseg.cut(NATURAL)]
    assert entities(NATURAL)[:4] == ["林小薇", "厦门", "深圳", "王建国"]


def test_runs_of_characters_posseg_has_no_statistics_for_are_blanked_and_positions_kept():
    known = jieba.posseg.char_state_tab.P
    rng = random.Random(7)
    rare = "".join(c for c in (chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(3000)) if c not in known)[:400]
    text = f"王建国说{rare}，然后去了厦门"
    pairs = tagged(text)
    assert sum(len(w) for w, _ in pairs) == len(text)
    assert not any(c in w for w, _ in pairs for c in rare)  # the HMM never read them
    assert {"王建国", "厦门"} <= {w for w, f in pairs if f in ("nr", "ns")}


def test_a_single_rare_character_between_known_ones_is_kept():
    known = jieba.posseg.char_state_tab.P
    assert "喆" not in known
    assert "".join(w for w, _ in tagged("我认识张喆吗")) == "我认识张喆吗"


def test_lone_unknown_characters_beyond_the_first_few_are_blanked_too():
    # reviewer AC: one unknown character between common ones of ~50 states each, alternating, cost ~4 ms each
    known = jieba.posseg.char_state_tab.P
    rare = [chr(c) for c in range(0x4E00, 0x9FD6) if chr(c) not in known][:KEPT_UNKNOWN + 30]
    text = "".join(c + "大" for c in rare)
    read = "".join(w for w, _ in tagged(text))
    assert len(read) == len(text)
    assert sum(c in read for c in rare) == KEPT_UNKNOWN  # the first ones (a name's rare character) only
    assert all(c in read for c in rare[:KEPT_UNKNOWN])


def test_posseg_reads_a_bounded_prefix_of_a_long_text():
    # reviewer AE: known characters with many states, ordered so no two form a word, cost ~0.5 ms each
    text = "王建国去了厦门。" * (TAGGED_CHARS // 8 + 100)
    pairs = tagged(text)
    assert sum(len(w) for w, _ in pairs) == len(text)
    assert pairs[-1] == (text[TAGGED_CHARS:], "x")
    assert ("王建国", "nr") in pairs[:10]
