"""Time travel (SPEC X, issue 20 item 7): get, find, history, recall and snapshot as of a past instant.

The state at ``as_of`` is rebuilt from the event log by ``memories_as_of`` (sql/macros/70_asof.sql):
content, status, tier, confidence, importance, pins, counts, versions — including versions exported to
the Parquet archive or removed by gc since (their events stay), never a purged memory. Visibility is the
caller's now: losing access to a memory also hides its past.

An as-of recall ranks like recall (fusion.py, the same formulas) over the memories as they were: both
arms search today's indexes (every version keeps its postings and vector while it is in the live
table); a memory active then whose vector left with a Parquet export is embedded again for the
query's vector arm (its postings are gone: it is found by meaning only). It reinforces nothing and
logs nothing: reading the past does not change it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np

from ..index.keyword import query_text
from ..models import Event, History, Memory, memory_author
from ..storage.db import Db, uuid_list
from ..text import when
from ..text.when import text_script
from ..write.writer import Caller
from . import bridge_arm, fusion
from .hits import Hit, RecallQuery, hit_from_row
from .rerank import fetched, reranked
from .hybrid import OVERFETCH, Recaller, _conflicts_by_side

MAX_REEMBEDDED = 2000  # exported memories embedded again for one as-of recall


class TimeTravel:
    def __init__(self, db: Db, recaller: Recaller):
        self.db = db
        self.recaller = recaller

    def get(self, caller: Caller, memory_id: Any, ts: datetime) -> Memory | None:
        with self.db.reading():
            row = self.db.dict("visible_memory_as_of", id=memory_id, ts=ts, **_who(caller))
        return None if row is None else Memory.from_row(row)

    def find(self, caller: Caller, params: dict[str, Any], ts: datetime) -> list[Memory]:
        with self.db.reading():
            return [Memory.from_row(r) for r in self.db.dicts("find_memories_as_of", ts=ts, **params, **_who(caller))]

    def chain(self, caller: Caller, memory_id: str, ts: datetime) -> list[str] | None:
        """The ids of the versions the caller may see of the fact ``memory_id`` belonged to at ``ts``, read from
        the events (so also once gc removed the rows); None when the caller could not see it then."""
        start = self.get(caller, memory_id, ts)
        if start is None:
            return None
        ids, seen = [start.id], {start.id}
        for link in ("supersedes", "superseded_by"):
            step = getattr(start, link)
            while step is not None and step not in seen:
                row = self.get(caller, step, ts)
                if row is None:
                    break
                seen.add(row.id)
                ids.append(row.id)
                step = getattr(row, link)
        return ids

    def history(self, chain: list[str], ts: datetime) -> History:
        """The versions of a chain (its ids, today: memories_all keeps exported ones) as they were at ``ts``:
        later versions did not exist yet, earlier ones had the status, confidence … they had then."""
        with self.db.reading():
            rows = self.db.dicts("rows_as_of", ids=uuid_list(chain), ts=ts)
            versions = [Memory.from_row(r) for r in sorted(rows, key=lambda r: (r["version"], r["created_at"]))]
            events = [Event.from_row(r) for r in
                      self.db.dicts("events_for_memories_as_of", ids=[v.id for v in versions], ts=ts)]
        return History(tuple(versions), tuple(events))

    def snapshot_rows(self, caller: Caller, limit: int, min_confidence: float, ts: datetime) -> tuple[list, list]:
        """The snapshot's candidate rows and conflicts as they were at ``ts`` (the facade renders them)."""
        with self.db.reading():
            rows = self.db.dicts("snapshot_candidates_as_of", min_confidence=min_confidence, limit=limit, ts=ts,
                                 caller_host=caller.admin, **_who(caller))
            conflicts = self.db.dicts("snapshot_conflicts_as_of", limit=50, ts=ts, caller_host=caller.admin,
                                      **_who(caller))
        return rows, conflicts

    def recall(self, caller: Caller, query: RecallQuery, ts: datetime, *, explain: bool = False,
               query_vector: Any = None) -> list[Hit]:
        vectors = self.recaller.indexer.vectors if "vector" in query.arms else None
        with self.db.reading():
            teams, tenants, settings = self.recaller.caller_context(caller.agent_id)
        who = dict(p_caller_agent=caller.agent_id, p_caller_session=caller.session_id, p_caller_teams=teams,
                   p_caller_tenants=tenants)
        counted = self.recaller.eligibility.counted("keyword", who)  # today's visibility, as for the rows
        keyword = self.recaller.indexer.keyword_search.search(query_text(query.text), None, counted=counted) \
            if "keyword" in query.arms else _no_keywords()
        vector = fusion.NO_VECTORS
        v_text = None
        arm = "disabled by the caller" if "vector" not in query.arms else "unavailable: no embedding model installed"
        if vectors is not None:
            v_text = None if query_vector is not None else self.recaller.vector_text(query.text, who)  # as recall does
            qvec = vectors.embed_question(v_text) if v_text is not None else np.asarray(query_vector, np.float32)
            pool = int(settings["vector_pool"]) * OVERFETCH * 4
            counted_vectors = self.recaller.eligibility.counted("vector", who)
            ids, sims, scripts, sums = vectors.search_with_stats(qvec, pool, counted=counted_vectors)
            vec_ids, vec_sims, vec_scripts = list(ids), [float(s) for s in sims], list(scripts)
            with self.db.reading():
                gone = self.db.dicts("active_without_vector_as_of", ts=ts, limit=MAX_REEMBEDDED)
            if gone:  # exported to Parquet since: embedded again, found by meaning
                matrix = vectors.embed([g["content"] for g in gone])
                vec_ids += [g["id"] for g in gone]
                vec_sims += [float(x) for x in matrix @ qvec]
                vec_scripts += [text_script(g["content"]) for g in gone]
            vector = fusion.VectorArm(vec_ids, vec_sims, vec_scripts, fusion.calibration_stats(*sums),
                                      text_script(query.text), vectors.model_id)
            arm = "exact (in-process, as of)"
        candidates = list(dict.fromkeys([*keyword.ids, *vector.ids]))
        if not candidates:
            return []
        filters = dict(p_types=_list(query.types), p_tiers=_list(query.tiers), p_tags=_list(query.tags),
                       p_entities=_list(query.entities), p_since=query.since, p_until=query.until,
                       p_session=query.session, p_include_superseded=query.include_archived)
        with self.db.reading():
            eligible = {r["memory_id"]: r for r in self.db.dicts(
                "recall_eligible_as_of", ts=ts, **filters, **_who(caller), p_decay_days=settings["importance_decay_days"],
                p_archived_weight=settings["archived_weight"], p_unhelpful_penalty=settings["unhelpful_penalty"])}
        eligible = {i: eligible[i] for i in candidates if i in eligible}
        time = fusion.TimeTerms(fusion.RECENCY_WEIGHT if when.wants_current(query.text) else None,
                                when.time_window(query.text, ts),  # "now" is the instant asked about
                                when.asks_when(query.text))
        words = bridge_arm.bridged_words(query.text, vector) if "keyword" in query.arms else None
        bridged = (bridge_arm.bridge_coverage(words, vector, self.recaller.indexer.keyword_search, counted)
                   if words else None)
        reranker, rerank_settings = self.recaller.reranker, self.recaller.rerank_settings
        ranked = fusion.fuse(keyword, vector, eligible, settings, fetched(query.k, reranker, rerank_settings), time,
                             query.min_score, bridged, None if vectors is None else vectors.inner_products,
                             caller=caller.agent_id, asked=query.k, caller_host=caller.admin)
        if not ranked:
            return []
        winners = uuid_list([f.memory_id for f in ranked])
        with self.db.reading():
            stored = {str(r["id"]): {**r, "conflicts_with": None} for r in self.db.dicts("rows_as_of", ids=winners, ts=ts)}
            pairs = _conflicts_by_side(self.db.run("conflicts_as_of", ids=winners, ts=ts).fetchall(), stored)
            # the other sides it may see now, live or exported to Parquet since (a reviewed loser is archived)
            seen = {str(r["id"]) for r in self.db.dicts("visible_of_ids", ids=uuid_list([str(o) for _, o, _ in pairs]),
                                                        **_who(caller))}
            for side, other in ((s, o) for s, o, _ in pairs if str(o) in seen):
                stored[side]["conflicts_with"] = [*(stored[side]["conflicts_with"] or []), other]
            pending = [(s, str(o)) for s, o, p in pairs if p and str(o) in seen]
            others = {str(r["id"]): r for r in self.db.dicts("rows_as_of", ts=ts,
                                                              ids=uuid_list(list({o for _, o in pending})))}
        # recall's outranked step, as things stood at ts: the claim its snapshot then names as a claim ranks last
        if out := fusion.outranked(pending, stored, others, memory_author(caller.agent_id, caller.admin)):
            ranked = sorted((replace(f, gate=fusion.OUTRANKED) if f.gate == fusion.KEPT and f.memory_id in out else f
                             for f in ranked), key=lambda f: (f.gate != fusion.KEPT, -f.score, f.memory_id))
        rows = [{**stored[f.memory_id], **vars(f)} for f in ranked if f.memory_id in stored]
        hits = [hit_from_row(row, arm, explain, v_text if v_text != query.text else None, time.window) for row in rows]
        gated = {str(row["id"]) for row in rows if row["gate"] != fusion.KEPT}
        return reranked(query.text, hits, reranker, rerank_settings, gated)[: query.k]


def _who(caller: Caller) -> dict[str, Any]:
    return dict(caller_agent=caller.agent_id, caller_session=caller.session_id)


def _list(values):
    return None if values is None else list(values)


def _no_keywords():
    from ..index.keyword_search import NO_MATCH

    return NO_MATCH
