"""Plug-in for the shared evaluator: drives echo_duck through its public API only.

    python3 ../shared/bench/eval_retrieval.py ../shared/bench/locomo \
        --retriever echo_duck/bench/locomo_adapter.py:retrieve
"""

from __future__ import annotations

import echo_duck
from echo_duck.bench.locomo import stored_pairs, turn_content

_stores: dict[str, tuple[echo_duck.EchoDuck, dict[str, str]]] = {}


def index(conv_id, memories):
    store = echo_duck.open(":memory:", agent_id="locomo", admin=True)
    records = [dict(content=turn_content(m), type="environment", tier="episodic", source_session=m["session"],
                    observed_at=m.get("timestamp")) for m in memories]
    by_id = {memory.id: m["mem_id"] for memory, m in stored_pairs(store.remember_many(records), memories)}  # no key=
    _stores[conv_id] = (store, by_id)


def retrieve(conv_id, question, k):
    store, by_id = _stores[conv_id]
    return [by_id[hit.id] for hit in store.recall(question, k, reinforce=False)]


def reset():
    for store, _ in _stores.values():
        store.close()
    _stores.clear()
