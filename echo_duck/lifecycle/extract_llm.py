"""The extraction adapter for any ``complete(prompt) -> str`` callable (an LLM): the facts of a session asked for as
JSON and parsed tolerantly; the rule-based ``extract.extract_facts`` answers whenever the LLM's answer is unusable.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence

from .extract import TYPES, Candidate, _pairs, extract_facts

__all__ = ["llm_extractor"]

_PROMPT = """Extract long-term memories for an AI assistant from the conversation below.
Answer with ONLY a JSON list of {{"content": str, "type": "user"|"environment"|"procedure"|"self", "key": str|null,
"tags": [str], "importance": 0..1, "confidence": 0..1, "source_index": int}}.
- user: who the user is and what they prefer ("User prefers pnpm over npm"); environment: project facts, tools,
  paths; procedure: rules for the assistant ("Always answer in Chinese"); self: the assistant's own abilities.
- Only what is explicitly stated: no guesses, no questions, nothing negated or taken back. user and procedure
  facts come only from the user's messages. Keep the language the fact was stated in.
- key: a stable semantic key such as "preference:package_manager", "identity:name", "rule:reply_language".
- source_index: the [number] of the message the fact comes from. Answer [] if nothing is worth remembering.

Conversation:
{conversation}
"""


def _parse_json(answer: str):
    """The first JSON list or object in ``answer``; code fences, prose around it and trailing commas are fine."""
    text = re.sub(r",\s*([\]}])", r"\1", re.sub(r"```[a-zA-Z]*", "", answer))
    for m in re.finditer(r"[\[{]", text):
        try:
            return json.JSONDecoder().raw_decode(text, m.start())[0]
        except ValueError:
            continue
    raise ValueError("no JSON list or object in the answer")


def _unit(value, default: float) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return default
    return min(1.0, max(0.0, value)) if math.isfinite(value) else default


def _candidate(item, pairs: list[tuple[str, str]]) -> Candidate | None:
    """One item of the LLM's answer as a Candidate, or None when it is unusable."""
    if not isinstance(item, dict):
        return None
    content, type_, index = item.get("content"), str(item.get("type", "")).lower(), item.get("source_index")
    index = int(index) if isinstance(index, str) and index.strip().isdigit() else index
    if (not isinstance(content, str) or not content.strip() or type_ not in TYPES or isinstance(index, bool)
            or not isinstance(index, int) or not 0 <= index < len(pairs)):
        return None
    if type_ in ("user", "procedure") and pairs[index][0] not in ("user", "human"):
        return None  # the assistant cannot state the user's preferences or rules
    key, tags, evidence, message = item.get("key"), item.get("tags"), item.get("evidence"), pairs[index][1]
    tags = [tags] if isinstance(tags, str) else tags if isinstance(tags, list) else []
    return Candidate(
        content.strip(), type_, key.strip() if isinstance(key, str) and key.strip() else None,
        tuple(dict.fromkeys(str(t).strip() for t in tags if isinstance(t, (str, int)) and str(t).strip())),
        _unit(item.get("importance"), 0.5), _unit(item.get("confidence"), 0.8), index,
        evidence if isinstance(evidence, str) and evidence and evidence in message else message.strip()[:200])


def llm_extractor(complete: Callable[[str], str]) -> Callable[[Sequence[tuple[str, str]]], list[Candidate]]:
    """An extractor that asks ``complete(prompt) -> str`` (any LLM) for the facts, parsed tolerantly.

    Unusable items are skipped. If ``complete`` raises, its answer holds no JSON list or object, or every
    item is unusable, ``extract_facts`` answers instead: an LLM failure never fails consolidation. Malformed
    ``messages`` still raise InvalidInput (a caller's bug, not the LLM's).
    """
    def llm_extractor(messages: Sequence[tuple[str, str]]) -> list[Candidate]:
        pairs = _pairs(messages)
        conversation = "\n".join(f"[{i}] {role}: {content}" for i, (role, content) in enumerate(pairs))
        try:
            items = _parse_json(complete(_PROMPT.format(conversation=conversation)))
            if isinstance(items, dict):
                items = next((items[k] for k in ("facts", "memories", "items") if isinstance(items.get(k), list)), [items])
        except Exception:  # whatever the LLM or its client did: fall back
            return extract_facts(pairs)
        out = [c for c in (_candidate(item, pairs) for item in items) if c is not None]
        return out if out or not items else extract_facts(pairs)

    return llm_extractor
