"""Fusion in process: what ``recall_fused`` (sql/macros/40_recall.sql) does after its ``eligible`` step,
for a recall whose two arms were computed in process.

The candidates the caller may see (``can_see_as``) and asked for (the filters) arrive with their
decay terms (``effective_importance``, archived and feedback weights) and time (``at_us``, ``active``),
as ``recall_eligible`` and the macro's filters keep them (eligibility.py computes them over an
in-process copy, tested equal); the settings come as they are stored. What is left is arithmetic over a
few hundred rows: each arm's rank among the eligible, the pool cuts, the calibrated relevance
(``calibrated_score``), the time terms, the gate labels, the final score. Planning and running the
macro for it cost ~40 ms at 100k rows; a DuckDB plan that complex has a floor Python does not. Each
step names the macro step it mirrors, with the same operations in the same order, so the two agree to
the last bit; tests hold them equal (ids, order, scores, every explain value). The macro stays the
definition: the analysts' ``recall_hits`` and filtered recalls inside a transaction run it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Callable, Mapping, Sequence

from ..index.keyword_search import KeywordArm
from ..models import memory_author
from .decay_terms import micros

KEPT = "kept"
COMMON_ONLY = "ranked last: only common keywords"
WEAK_MEANING = "ranked last: weak meaning match"
OUTRANKED = "ranked last: disputed by a fact that stands (yours, the host's or one of higher provenance)"
CROWDED = "ranked last: half the list is kept for your own"

# sql/macros/20_ranking.sql calibration_constants(): fitted on LoCoMo conversations 0-4 and LongMemEval
# (dev) questions 0-49 only. A test holds the two equal.
COVERAGE_WEIGHT = 0.5
VECTOR_WEIGHT = 0.2
GAP_SCALE = 2.0
RECENCY_WEIGHT = 0.5
TIME_WEIGHT = 0.5
PRIOR_ROWS = 10.0
PRIOR_MEAN = 0.1
PRIOR_SD = 0.1
FOLLOW_WEIGHT = 0.8
UPDATE_SIMILARITY = 0.5
ASKING_WEIGHT = 0.7


@dataclass(frozen=True)
class Fused:
    """One ranked candidate with the values recall_fused returns besides the memory row."""

    memory_id: str
    bm25_rank: int | None
    bm25_score: float | None
    rarest_df_ratio: float | None
    vec_rank: int | None
    similarity: float | None
    keyword_conf: float | None
    vector_conf: float | None
    coverage: float | None
    similarity_z: float | None
    script_credit: float | None
    bridge_coverage: float | None
    session_credit: float | None
    update_credit: float | None
    relevance: float
    recency_boost: float
    time_boost: float
    asking_weight: float
    gate: str
    effective_importance: float
    tier_weight: float
    feedback_weight: float
    decay_factor: float
    score: float


@dataclass(frozen=True)
class VectorArm:
    """The vector candidates in rank order with each one's script, the query's similarity statistics
    per script (``calibration_stats``: [mean_0, sd_0, mean_1, sd_1]) and the query's own script
    (text/when.py text_script; None: no credit for memories in another script)."""

    ids: Sequence[str] = ()
    sims: Sequence[float] = ()
    scripts: Sequence[int] = ()
    stats: Sequence[float] | None = None
    query_script: int | None = None
    model_id: str | None = None  # the model of these vectors: update_credit links memories by their vectors of it

    def as_sql(self) -> dict[str, Any]:
        if not self.ids:
            return dict(p_vec_ids=None, p_vec_sims=None, p_vec_scripts=None, p_vec_stats=None,
                        p_vec_query_script=None, p_upd_model=None)
        return dict(p_vec_ids="[" + ",".join(self.ids) + "]", p_vec_sims=_floats(float(s) for s in self.sims),
                    p_vec_scripts="[" + ",".join(str(int(s)) for s in self.scripts) + "]",
                    p_vec_stats=None if self.stats is None else _floats(self.stats),
                    p_vec_query_script=self.query_script, p_upd_model=self.model_id)


NO_VECTORS = VectorArm()


@dataclass(frozen=True)
class TimeTerms:
    """What the question says about time: the recency weight when it asks for the current state (None
    otherwise), the window it names and whether it asks when (text/when.py), as recall_fused's p_recency,
    p_time_from/to and p_asks_when."""

    recency: float | None = None
    window: tuple[datetime, datetime] | None = None
    asks_when: bool = False

    def as_sql(self) -> dict[str, Any]:
        start, end = self.window if self.window is not None else (None, None)
        return dict(p_recency=self.recency, p_time_from=start, p_time_to=end, p_asks_when=self.asks_when)


NO_TIME = TimeTerms()


def calibration_stats(n0: float, sum0: float, sumsq0: float, n1: float, sum1: float, sumsq1: float) -> list[float]:
    """sql/macros/20_ranking.sql calibration_stats(): [mean_0, sd_0, mean_1, sd_1] from each script's
    count, sum and sum of squares of the similarities, each script leaning on the store, the store on
    the prior (PRIOR_ROWS pseudo-rows each)."""
    g_mean = (sum0 + sum1 + PRIOR_ROWS * PRIOR_MEAN) / (n0 + n1 + PRIOR_ROWS)
    g_square = (sumsq0 + sumsq1 + PRIOR_ROWS * (PRIOR_SD * PRIOR_SD + PRIOR_MEAN * PRIOR_MEAN)) / (n0 + n1 + PRIOR_ROWS)
    out = []
    for n, total, squares in ((n0, sum0, sumsq0), (n1, sum1, sumsq1)):
        mean = (total + PRIOR_ROWS * g_mean) / (n + PRIOR_ROWS)
        square = (squares + PRIOR_ROWS * g_square) / (n + PRIOR_ROWS)
        out += [mean, math.sqrt(max(square - mean * mean, 1e-12))]
    return out


def fuse(keyword: KeywordArm, vector: VectorArm, eligible: Mapping[str, dict[str, Any]], settings: dict[str, float],
         k: int, time: TimeTerms = NO_TIME, min_score: float | None = None, bridge: KeywordArm | None = None,
         inner_products: Callable[[str, Sequence[str]], Sequence[float | None]] | None = None, *,
         caller: str | None = None, asked: int | None = None, caller_host: bool = False) -> list[Fused]:
    """The best ``k`` candidates: kept ones first, then gated, each by score, then id. ``eligible`` maps
    each candidate the caller may see to its recall_eligible row (read only for the candidates that make
    a pool: eligibility.py computes the decay terms on demand), ``settings`` the settings table by name;
    ``bridge`` the keyword arm over the question's bridged words (text/bridge.py), None: none;
    ``inner_products(id, others)``: the inner products of a memory's vector of ``vector.model_id`` with others'
    (None where one has none), as recall_fused's update link reads memory_vectors (None: no update_credit);
    ``caller``: the agent recalling (None: no share), ``asked``: the hits asked for (None: ``k``), half of which is
    kept for the caller's own kept candidates (_crowd); ``caller_host``: the caller is an admin handle, whose own are
    the rows the host wrote (memory_author)."""
    if not eligible:
        return []
    rows = eligible

    # eligible: each arm ranked among the candidates the caller may see (score or similarity, then id;
    # the keyword arm comes in that order, the exact vector scan breaks ties by matrix row)
    keyword_hits = [(i, s, r, c) for i, s, r, c in zip(keyword.ids, keyword.scores, keyword.rarest, keyword.covered)
                    if i in rows]
    vector_hits = sorted(((i, float(s), int(sc)) for i, s, sc in zip(vector.ids, vector.sims, vector.scripts)
                          if i in rows), key=lambda h: (-h[1], h[0]))
    vector_arm_ran = bool(vector_hits)
    rarest = {i: r for i, _, r, _ in keyword_hits}  # kept past the pool cut, as the macro's pooled step keeps it

    # pooled: each arm's best keyword_pool / vector_pool of each author group; a candidate outside both is dropped
    kw_pool, vec_pool = int(settings["keyword_pool"]), int(settings["vector_pool"])
    me = None if caller is None else (caller, bool(caller_host))
    kw_ranked = _pool(keyword_hits, kw_pool, rows, me)
    in_keyword = {i: (rank, s, c) for rank, (i, s, _, c) in kw_ranked}
    stats = vector.stats
    vec_ranked = _pool(vector_hits, vec_pool, rows, me)
    in_vector = {i: (rank, s, (s - stats[2 * sc]) / stats[1 + 2 * sc]) if stats is not None else (rank, s, None)
                 for rank, (i, s, sc) in vec_ranked}
    script_of = {i: sc for _, (i, _, sc) in vec_ranked}
    pooled = in_keyword.keys() | in_vector.keys()

    # arms: each arm's confidence over the candidates the caller may see, and their time span
    idf_all = keyword.query_idf_all
    bm25_max = max((s for _, s, _ in in_keyword.values()), default=None)
    keyword_conf = None
    if in_keyword and idf_all is not None:
        keyword_conf = max(c for _, _, c in in_keyword.values()) / idf_all
    zs = sorted((z for _, _, z in in_vector.values() if z is not None), reverse=True)
    vector_conf = min(1.0, (zs[0] - zs[min(10, len(zs)) - 1]) / GAP_SCALE) if zs else None
    z_top = zs[0] if zs else None
    times = [rows[i]["at_us"] for i in pooled]
    at_min, at_max = (min(times), max(times)) if times else (0, 0)
    arms = (bm25_max, keyword_conf, vector_conf, z_top, vector.query_script, at_min, at_max)
    # bridge: the share of the bridged words' information a memory holds (bridge_coverage, for the other script)
    bridged = {} if bridge is None or not bridge.ids else dict(zip(bridge.ids, bridge.covered))

    out = []
    for memory_id in pooled:
        bm25_rank, bm25_score, covered = in_keyword.get(memory_id, (None, None, None))
        vec_rank, similarity, z = in_vector.get(memory_id, (None, None, None))
        fused = _fused(settings, rows[memory_id], memory_id, bm25_rank, bm25_score, covered, rarest.get(memory_id),
                       vec_rank, similarity, z, script_of.get(memory_id), idf_all, arms, vector_arm_ran, time,
                       bridged.get(memory_id), None if bridge is None else bridge.query_idf_all)
        out.append(fused)
    updates = _updates(out, rows, time, vector.model_id and inner_products)
    out = [f for f in _followed(out, rows, updates) if min_score is None or f.relevance >= min_score]
    out.sort(key=lambda f: (f.gate != KEPT, -f.score, f.memory_id))  # canonical uuid texts sort as DuckDB's UUIDs
    if caller is not None and _crowd(out, rows, memory_author(caller, caller_host), k if asked is None else asked):
        out.sort(key=lambda f: (f.gate != KEPT, -f.score, f.memory_id))
    return out[:k]


def outranked(pending: Sequence[tuple[str, str]], stored: Mapping[str, Mapping[str, Any]],
              others: Mapping[str, Mapping[str, Any]], caller: str) -> set[str]:
    """recall_fused's outranked step: the winners (``stored`` rows by id) whose pending dispute (``pending``: (winner,
    other) pairs, the other visible to the caller) is with a live fact (``others`` rows by id) that stands against
    them, as dispute_stands says: of higher provenance by the winner's own author, else the caller's own (authors and
    ``caller`` as memory_author names them); the host's over an agent's under its agent id, whatever their
    provenance."""
    def author(row: Mapping[str, Any]) -> str:
        return memory_author(row["agent_id"], row.get("by_host"))

    def outranks(o: Mapping[str, Any], me: Mapping[str, Any]) -> bool:
        if o["agent_id"] == me["agent_id"] and bool(o.get("by_host")) != bool(me.get("by_host")):
            return bool(o.get("by_host"))
        if author(o) == author(me):
            return o["provenance"] > me["provenance"]
        return author(o) == caller  # between authors the caller's own stands, whatever the other claims
    return {side for side, other in pending if other in others and others[other]["status"] == "active"
            and outranks(others[other], stored[side])}


def _pool(hits: list[tuple], size: int, rows: Mapping[str, dict[str, Any]], caller: tuple | None) -> list[tuple]:
    """recall_fused's pooled step for one arm: (rank among all, hit) of the hits (in the arm's order, each hit's id
    first) that are among the best ``size`` of their pool group (pool_group: the caller's own by author, ``caller``
    (agent, admin); the host's rows; every other author's; None: one group). One member's near-copies of a fact must
    not push the caller's own, or the host's, answer out of the pool before the share (_crowd) can keep a place."""
    if caller is None or len(hits) <= size:
        return list(enumerate(hits[:size], start=1))
    ids = [hit[0] for hit in hits]
    if hasattr(rows, "owners"):  # EligibleRows: without computing every hit's decay terms
        owners = rows.owners(ids)
        if owners is None:  # one author wrote every hit (a store of one agent): the best of all
            return list(enumerate(hits[:size], start=1))
    else:
        owners = [(rows[i]["agent"], bool(rows[i]["by_host"])) for i in ids]
    taken = [0, 0, 0]
    out = []
    for rank, (hit, owner) in enumerate(zip(hits, owners), start=1):
        group = 0 if owner == caller else 1 if owner[1] else 2
        if taken[group] < size:
            taken[group] += 1
            out.append((rank, hit))
    return out


def _crowd(ranked: list[Fused], rows: Mapping[str, dict[str, Any]], caller: str, asked: int) -> bool:
    """recall_fused's shared step (authors and ``caller`` as memory_author names them): half the ``asked`` hits,
    rounded up, is kept for the caller's own kept candidates as far as there are that many; the rest goes to other
    authors' kept candidates, each author's best first, then in ``ranked``'s order, and those past it take the gate
    CROWDED, in place. Whether any did. One member's (or two members') paraphrases of a question must not push the
    caller's own answer, nor the host's team fact, out."""
    kept = [p for p, f in enumerate(ranked) if f.gate == KEPT]
    authors = [memory_author(rows[ranked[p].memory_id]["agent"], rows[ranked[p].memory_id]["by_host"]) for p in kept]
    past = past_share(authors, caller, asked, [rows[ranked[p].memory_id]["by_host"] for p in kept])
    for j in past:
        ranked[kept[j]] = replace(ranked[kept[j]], gate=CROWDED)
    return bool(past)


def past_share(authors: Sequence[str], caller: str, asked: int, by_host: Sequence[bool] | None = None) -> list[int]:
    """Of the kept candidates, in rank order (``authors``: who wrote each; ``by_host``: which the host wrote itself,
    memories.by_host), the positions past the share: half the ``asked`` hits, rounded up, is kept for the caller's
    own as far as there are that many, and the rest goes to the other authors: the host's rows first, then each
    other author's best, then in order (recall_fused's shared step; _crowd, hybrid._crowded)."""
    room = asked - min(sum(a == caller for a in authors), (asked + 1) // 2)
    host = [False] * len(authors) if by_host is None else by_host
    seen: set[str] = set()
    hosts, firsts, rest = [], [], []
    for position, (author, by) in enumerate(zip(authors, host)):
        if author != caller:
            (hosts if by else rest if author in seen else firsts).append(position)
            seen.add(author)
    return (hosts + firsts + rest)[room:]


def _fused(cfg: dict, row: dict, memory_id: str, bm25_rank, bm25_score, covered, rarest_df_ratio, vec_rank,
           similarity, z, script, idf_all, arms: tuple, vector_arm_ran: bool, time: TimeTerms,
           bridge_covered: float | None = None, bridge_idf_all: float | None = None) -> Fused:
    bm25_max, keyword_conf, vector_conf, z_top, query_script, at_min, at_max = arms
    # fused: script_credit, then calibrated_score (sql/macros/20_ranking.sql), each NULL term 0
    coverage = None if covered is None else covered / idf_all
    script_credit = None
    other_script = query_script is not None and script is not None and script != query_script
    bridge_coverage = bridge_covered / bridge_idf_all if other_script and bridge_covered is not None else None
    if keyword_conf is not None and z is not None and z_top > 0:
        script_credit = keyword_conf * ((1 + COVERAGE_WEIGHT) if other_script else 1.0) * max(z, 0) / z_top
    words = ((0.0 if bm25_score is None else keyword_conf * bm25_score / bm25_max)
             + COVERAGE_WEIGHT * (0.0 if coverage is None else coverage))
    relevance = ((max(words, 0.0 if script_credit is None else script_credit)
                  + (0.0 if z is None or vector_conf is None else VECTOR_WEIGHT * vector_conf * max(z, 0)))
                 + COVERAGE_WEIGHT * (0.0 if bridge_coverage is None else bridge_coverage))
    share = (row["at_us"] - at_min) / (at_max - at_min) if row["active"] and at_max > at_min else 0
    recency_boost = 1 + (0.0 if time.recency is None else float(time.recency)) * share
    in_window = time.window is not None and micros(time.window[0]) <= row["at_us"] < micros(time.window[1])
    time_boost = (1.0 + (TIME_WEIGHT if in_window else 0.0)) * (1.0 + (TIME_WEIGHT if time.asks_when
                                                                        and row["states_time"] else 0.0))
    asking_weight = ASKING_WEIGHT if row["mostly_asks"] else 1.0

    # gate: labels; the gated are ranked after the kept
    gate = KEPT
    if vec_rank is None and rarest_df_ratio is not None and rarest_df_ratio > cfg["gate_df_ratio"] and vector_arm_ran:
        gate = COMMON_ONLY
    elif bm25_rank is None and similarity is not None and similarity < cfg["vector_min_similarity"]:
        gate = WEAK_MEANING

    # score: relevance × boosts × (floor + (1 - floor) × effective importance) × archived weight × feedback weight
    floor = cfg["importance_floor"]
    decay_factor = floor + (1 - floor) * row["effective_importance"]
    score = _score(relevance, recency_boost, time_boost, asking_weight, decay_factor, row["tier_weight"],
                   row["feedback_weight"])
    return Fused(memory_id, bm25_rank, bm25_score, rarest_df_ratio, vec_rank, similarity, keyword_conf, vector_conf,
                 coverage, z, script_credit, bridge_coverage, None, None, relevance, recency_boost, time_boost,
                 asking_weight, gate,
                 row["effective_importance"], row["tier_weight"], row["feedback_weight"], decay_factor, score)


def _updates(fused: list[Fused], rows: Mapping[str, dict[str, Any]], time: TimeTerms,
             inner_products: Callable[[str, Sequence[str]], Sequence[float | None]] | None) -> dict[str, float]:
    """recall_fused's updates step: on a question about the current state, a kept candidate that states a change
    takes the (own) relevance of the most relevant kept, older candidate (at_us, then created_us, then id) of the
    same owner, of no higher provenance, whose vector's inner product with its own is at least UPDATE_SIMILARITY."""
    if time.recency is None or inner_products is None:
        return {}
    kept = [f for f in fused if f.gate == KEPT]
    order = {f.memory_id: (rows[f.memory_id]["at_us"], rows[f.memory_id]["created_us"], f.memory_id) for f in kept}
    credit: dict[str, float] = {}
    for b in kept:
        new = rows[b.memory_id]
        if not new["states_change"]:
            continue
        older = [a for a in kept if a.memory_id != b.memory_id and rows[a.memory_id]["agent"] == new["agent"]
                 and rows[a.memory_id]["provenance"] <= new["provenance"] and order[a.memory_id] < order[b.memory_id]]
        if older:
            products = inner_products(b.memory_id, [a.memory_id for a in older])
            linked = [a.relevance for a, p in zip(older, products) if p is not None and p >= UPDATE_SIMILARITY]
            if linked:
                credit[b.memory_id] = max(linked)
    return credit


def _followed(fused: list[Fused], rows: Mapping[str, dict[str, Any]], updates: Mapping[str, float]) -> list[Fused]:
    """recall_fused's followed, updates and related steps: a kept candidate with a source session takes
    session_credit, FOLLOW_WEIGHT × the relevance of the nearest earlier kept candidate of the same owner and session
    (at_us, then created_us, then id), and one that updates an older candidate its update_credit (``updates``,
    _updates), as its relevance when that is more; the score follows."""
    by_session: dict[tuple, list[Fused]] = {}
    for f in fused:
        row = rows[f.memory_id]
        if row["session"] is not None:
            by_session.setdefault((row["agent"], row["session"]), []).append(f)
    credit: dict[str, float] = {}
    for members in by_session.values():
        members.sort(key=lambda f: (rows[f.memory_id]["at_us"], rows[f.memory_id]["created_us"], f.memory_id))
        before = None  # the relevance of the last kept candidate so far
        for f in members:
            if f.gate == KEPT:
                if before is not None:
                    credit[f.memory_id] = FOLLOW_WEIGHT * before
                before = f.relevance
    out = []
    for f in fused:
        c, u = credit.get(f.memory_id), updates.get(f.memory_id)
        if c is None and u is None:
            out.append(f)
            continue
        relevance = max(f.relevance, 0.0 if c is None else c, 0.0 if u is None else u)
        score = _score(relevance, f.recency_boost, f.time_boost, f.asking_weight, f.decay_factor, f.tier_weight,
                       f.feedback_weight)
        out.append(replace(f, session_credit=c, update_credit=u, relevance=relevance, score=score))
    return out


def _score(relevance: float, recency_boost: float, time_boost: float, asking_weight: float, decay_factor: float,
           tier_weight: float, feedback_weight: float) -> float:
    """recall_fused's score, its factors multiplied in the macro's order (so the two agree to the last bit)."""
    return relevance * recency_boost * time_boost * asking_weight * decay_factor * tier_weight * feedback_weight


def _floats(values) -> str:
    return "[" + ",".join(map(repr, (float(v) for v in values))) + "]"  # repr: reads back exactly
