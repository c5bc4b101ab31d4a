"""Part-of-speech tags for Chinese text (jieba's posseg) at a cost bounded by the text's length.

posseg finds words its dictionary lacks with an HMM whose cost per character is the product of the tag states of
the character and the one before it. A character it has no statistics for may take any of ~250 states, so a run of
such characters costs ~3.6 ms each (a 2,500-character message of random rare Han characters took 9 s to summarise,
the 1,000,000 characters a message may hold about an hour), against ~0.04 ms for ordinary text. Such runs are
tagged as the symbols they are: each of their characters is replaced by a space of the same length before posseg
reads the text, so positions stay. A single unknown character between known ones (a rare character in a name)
costs ~250 × the few states around it and is kept.
"""

from __future__ import annotations

import logging
import re

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def tagged(text: str) -> list[tuple[str, str]]:
    """``(word, flag)`` pairs in order, their lengths adding up to ``len(text)``, as ``jieba.posseg.cut`` gives
    them for ``text`` with runs of two or more characters posseg has no statistics for blanked out."""
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    known = jieba.posseg.char_state_tab.P
    text = _HAN.sub(lambda m: _blank_unknown_runs(m.group(), known), text)
    return [(p.word, p.flag) for p in jieba.posseg.cut(text)]


def _blank_unknown_runs(run: str, known) -> str:
    out, i = [], 0
    while i < len(run):
        j = i
        while j < len(run) and run[j] not in known:
            j += 1
        if j - i >= 2:
            out.append(" " * (j - i))
        else:
            out.append(run[i:j])
        if j < len(run):
            out.append(run[j])
        i = j + 1
    return "".join(out)
