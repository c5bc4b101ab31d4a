"""Part-of-speech tags for Chinese text (jieba's posseg) at a bounded cost, whatever the text.

posseg finds words its dictionary lacks with an HMM whose cost per character is the product of the tag states of
the character and the one before it. A character it has no statistics for may take any of ~250 states, so a run of
such characters costs ~3.6 ms each (a 2,500-character message of random rare Han characters took 9 s to summarise,
the 1,000,000 characters a message may hold about an hour), against ~0.04 ms for ordinary text; one such character
between common ones with ~50 states each costs about half that. So posseg reads such characters as blanks (a space
of the same length, positions kept), except the first KEPT_UNKNOWN ones standing alone between known characters
(a rare character in a name: 张喆), which bound the extra cost to well under a second per text. Known characters
with many states, ordered so that no two form a word, still cost ~0.5 ms each (~14 times ordinary text), so posseg
reads the first TAGGED_CHARS characters of a text only (the rest is one untagged piece): at most ~5 s on such text,
~0.4 s on ordinary text, whatever a message holds.
"""

from __future__ import annotations

import logging
import re

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


KEPT_UNKNOWN = 20
TAGGED_CHARS = 10_000


def tagged(text: str) -> list[tuple[str, str]]:
    """``(word, flag)`` pairs in order, their lengths adding up to ``len(text)``, as ``jieba.posseg.cut`` gives
    them for ``text`` with the characters posseg has no statistics for blanked (see above)."""
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    known = jieba.posseg.char_state_tab.P
    kept = [KEPT_UNKNOWN]
    head, rest = text[:TAGGED_CHARS], text[TAGGED_CHARS:]
    head = _HAN.sub(lambda m: _blank_unknown(m.group(), known, kept), head)
    return [(p.word, p.flag) for p in jieba.posseg.cut(head)] + ([(rest, "x")] if rest else [])


def _blank_unknown(run: str, known, kept: list[int]) -> str:
    """``run`` with its unknown characters blanked: all of a run of two or more, a lone one once ``kept[0]``
    lone ones were kept (counted down across the runs of one text)."""
    out = []
    for i, c in enumerate(run):
        if c in known:
            out.append(c)
            continue
        alone = (i == 0 or run[i - 1] in known) and (i + 1 == len(run) or run[i + 1] in known)
        if alone and kept[0] > 0:
            kept[0] -= 1
            out.append(c)
        else:
            out.append(" ")
    return "".join(out)
