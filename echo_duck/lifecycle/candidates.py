"""The pairs a new memory's contradiction check reads (contradictions.py's verifier decides each).

Candidates (sql/queries/contradictions.sql ``contradiction_candidates``): memories of the same owner or scope that both
authors may see (``may_dispute``), active and no episodes, with a similar key (Jaro-Winkler >= 0.9), a shared tag, a
vector among the new memory's nearest at ``contradiction_similarity`` or above, or among its best keyword matches
whose vectors are at least KEYWORD_SIMILARITY close.
"""

from __future__ import annotations

from typing import Any

from ..index.indexing import Indexer
from ..index.keyword import query_text
from ..models import PERSISTED_TIERS
from ..storage.db import Db, uuid_list

CANDIDATE_LIMIT = 20
# The vector neighbours are sought among the memories the new one may dispute (contradiction_candidates: active, both
# authors may see the other's): the nearest CANDIDATE_LIMIT of the whole store let memories its writer cannot see
# (another agent's private notes) crowd out the visible ones, and whether a dispute was found then told the writer
# they exist; an agent's own private near-copies of its claim did the same to a teammate's fact. So the search reads
# the nearest NEIGHBOUR_CAP (a search costs one scan of the matrix whatever n is; only those above the similarity
# threshold are kept), and the query reads another author's memories first. The cap bounds the query's cost (it
# matches the list against every memory: 200 ids, ~80 ms at 100k memories, when 200 pass the threshold); a writer
# would need that many hidden near-copies around its claim to notice them.
NEIGHBOUR_CAP = 200
# The best keyword matches of a new memory are candidates too (_keyword_neighbours): this many of other authors', and
# as many of its author's own, among the active memories the author may see that are no episodes ...
KEYWORD_NEIGHBOURS = 50
# ... if their vectors are at least this close. Two sentences sharing a word and nothing else (a place named in a note
# about a design job, and "moved from that place to another") read as "changed from X, still says X" to the
# heuristic. On the own recall sets' ~3,000 notes written one at a time (eight sets, session 54), the vector route
# alone recorded no contradiction; the keyword route without a floor recorded 16, 9 of them false and retiring a true
# note by recency, at similarities 0.21-0.53 (its true finds at 0.33-0.41); with this floor it records 2: one true
# ("I live in Shenzhen" / "Xiaoyu moved from Shenzhen to Xiamen") and one false, left pending (two chat fillers).
# The single-value changes outside reviewers wrote sit at 0.51-0.69 with the default model.
KEYWORD_SIMILARITY = 0.5


class CandidateFinder:
    def __init__(self, db: Db, indexer: Indexer, recaller: Any = None):
        self.db = db
        self.indexer = indexer
        self.recaller = recaller  # recall.hybrid.Recaller: the keyword route reads as the writer's recall does

    def candidates(self, me: dict, threshold: float, together: str) -> list[dict]:
        """The memories ``me`` (a memories row) may contradict (same key or tag, one of its NEIGHBOUR_CAP nearest at
        ``threshold`` or above, or one of its best keyword matches), at most CANDIDATE_LIMIT, other authors'
        first, then the nearest. ``together``: the ids written with it, which it is not checked against."""
        close = self._neighbours(str(me["id"]), threshold) + self._keyword_neighbours(me)
        return self.db.dicts("contradiction_candidates", id=me["id"], neighbours="[" + ",".join(dict.fromkeys(close))
                             + "]", limit=CANDIDATE_LIMIT, apart=together)

    def _neighbours(self, memory_id: str, threshold: float) -> list[str]:
        """The ids of the NEIGHBOUR_CAP nearest memories at ``threshold`` or above, nearest first."""
        index = self.indexer.vectors
        if index is None:
            return []
        vector = self.db.scalar("vector_of", id=memory_id, model_id=index.model_id)
        if vector is None:
            return []
        import numpy as np

        ids, sims = index.search(np.asarray(vector, dtype=np.float32), NEIGHBOUR_CAP)
        return [i for i, s in zip(ids, sims) if s >= threshold and i != str(memory_id)]

    def _keyword_neighbours(self, me: dict) -> list[str]:
        """The memories that best match ``me``'s words (BM25), best first, whose vectors are at least
        KEYWORD_SIMILARITY close (when the store has a model): the KEYWORD_NEIGHBOURS best of other authors', then
        of its author's own. A value change moves a short sentence's vector far: "The user's manager is Alice
        Chen" / "… is Bob Li" score 0.66 with the default model, 用户住在上海 / 用户住在北京 0.64, under
        contradiction_similarity; their shared words find them.

        The search reads as the author's recall would: its statistics count only the memories the author may see,
        and only active memories it may see that are no episodes can be returned (a word in another agent's hidden
        note moved the cut, and told the writer the word was there), other authors' apart from its own (its own
        notes matching better kept a teammate's fact out of the cut)."""
        eligibility = getattr(self.recaller, "eligibility", None)
        if eligibility is None or self.db.in_transaction:  # the in-process copy is not read inside a transaction
            return []
        author = me["agent_id"]
        teams, tenants, _ = self.recaller.caller_context(author)
        if me["by_host"]:  # the host sees every memory: a fact it wrote meets whatever its scope reaches
            teams, tenants = self._every("team_id"), self._every("tenant_id")
        who = dict(p_caller_agent=author, p_caller_session=None, p_caller_teams=teams, p_caller_tenants=tenants)
        query, tiers = query_text(me["content"]), [t for t in PERSISTED_TIERS if t != "episodic"]
        found, counted = [], eligibility.counted("keyword", who)
        for half in ({"other_than": author}, {"author": author}):
            keep = eligibility.keyword_keep(who=who, include_superseded=False, filters={"tiers": tiers, **half})
            arm = self.indexer.keyword_search.search(query, KEYWORD_NEIGHBOURS + 1, keep=keep, counted=counted)
            found += [i for i in arm.ids if i != str(me["id"])][:KEYWORD_NEIGHBOURS]
        index = self.indexer.vectors
        if not found or index is None or self.db.scalar("vector_of", id=me["id"], model_id=index.model_id) is None:
            return found
        close = {str(r["memory_id"]) for r in self.db.dicts("similar_among", id=me["id"], ids=uuid_list(found),
                                                            model_id=index.model_id, threshold=KEYWORD_SIMILARITY)}
        return [i for i in found if i in close]

    def _every(self, column: str) -> list[str]:
        """Every team (or tenant) a live memory names."""
        return [r[0] for r in self.db.run(f"every_{column.removesuffix('_id')}").fetchall()]
