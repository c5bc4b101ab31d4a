-- Recall (echo_duck/recall/hybrid.py): the macro call with every parameter bound, and its bookkeeping.

-- name: setting_value
SELECT setting($name);

-- The caller's current teams and tenants, the rows caller_groups(agent) lists (recall.py splits them by
-- kind: planning the macro's filtered list aggregates cost ~1 ms per recall).
-- name: caller_memberships
SELECT kind, group_id FROM memberships WHERE agent_id = $caller_agent AND revoked_at IS NULL ORDER BY group_id;

-- The vector arm computed exactly in SQL over the filtered rows: ids, similarities and scripts, best first.
-- name: exact_vector_candidates
SELECT coalesce(list(memory_id::VARCHAR ORDER BY similarity DESC, memory_id), []) AS ids,
       coalesce(list(similarity ORDER BY similarity DESC, memory_id), []) AS sims,
       coalesce(list(script ORDER BY similarity DESC, memory_id), []) AS scripts
FROM exact_vector_candidates(
    $p_qvec::VARCHAR, $p_model::VARCHAR, $p_n, $p_caller_agent, $p_caller_session::VARCHAR,
    $p_caller_teams::VARCHAR[], $p_caller_tenants::VARCHAR[], $p_types::VARCHAR[], $p_tiers::VARCHAR[],
    $p_tags::VARCHAR[], $p_entities::VARCHAR[], $p_since::TIMESTAMP, $p_until::TIMESTAMP, $p_session::VARCHAR,
    $p_include_superseded);

-- The query's similarity statistics per script over the caller's counted vectors of the model, in SQL (a filtered
-- recall inside a transaction; the in-process scan gets them from its int8 first pass).
-- name: query_similarity_stats
SELECT stats FROM query_similarity_stats($p_qvec::VARCHAR, $p_model::VARCHAR, $p_caller_agent, $p_caller_session::VARCHAR,
                                         $p_caller_teams::VARCHAR[], $p_caller_tenants::VARCHAR[]);

-- name: recall
SELECT * FROM recall_fused(
    $p_kw_ids::VARCHAR, $p_kw_scores::VARCHAR, $p_kw_rarest::VARCHAR, $p_kw_covered::VARCHAR, $p_kw_idf_all::DOUBLE,
    $p_vec_ids::VARCHAR, $p_vec_sims::VARCHAR, $p_vec_scripts::VARCHAR, $p_vec_stats::VARCHAR,
    $p_vec_query_script::INTEGER, $p_caller_agent, $p_caller_session::VARCHAR, $p_caller_teams::VARCHAR[], $p_caller_tenants::VARCHAR[], $p_k,
    $p_recency::DOUBLE, $p_time_from::TIMESTAMP, $p_time_to::TIMESTAMP, $p_min_score::DOUBLE,
    $p_types::VARCHAR[], $p_tiers::VARCHAR[], $p_tags::VARCHAR[], $p_entities::VARCHAR[],
    $p_since::TIMESTAMP, $p_until::TIMESTAMP, $p_session::VARCHAR, $p_include_superseded, $p_now::TIMESTAMP,
    p_br_ids := $p_br_ids::VARCHAR, p_br_covered := $p_br_covered::VARCHAR, p_br_idf_all := $p_br_idf_all::DOUBLE,
    p_asks_when := $p_asks_when::BOOLEAN, p_upd_model := $p_upd_model::VARCHAR, p_asked := $p_asked::INTEGER,
    p_caller_host := $p_caller_host::BOOLEAN);

-- The ranking tunables, as they are: the in-process fusion reads them by name (a pivot like
-- ranking_settings() costs ~2.5 ms of planning per recall).
-- name: ranking_settings_plain
SELECT name, value FROM settings;

-- What the in-process copy (echo_duck/recall/eligibility.py) computes for a recall, kept as its definition (tests
-- compare the two; recall inside a transaction runs this one): of the candidates
-- both arms found, those the caller may see (recall_fused's `eligible` step), each with the decay terms
-- recall_fused computes, through the same macros, and what its time terms read (active, at_us). The tunables come
-- as parameters (ranking_settings_plain).
-- $p_reviews (JSON [{id, n, at}]) are reviews still queued behind earlier recalls (echo_duck/recall/recall_log.py):
-- counted as if written, so the ranking is the one of writing every recall at once.
-- name: recall_eligible
WITH reviews AS (
    SELECT r.id, r.n, r.at
    FROM (SELECT unnest(from_json($p_reviews::JSON, '[{"id": "UUID", "n": "INTEGER", "at": "TIMESTAMP"}]'),
                        recursive := true)) r
)
SELECT m.id::VARCHAR AS memory_id,
       effective_importance(m.importance, m.type, m.pinned,
                            least(m.access_count::BIGINT + coalesce(r.n, 0), 2147483647),
                            coalesce(r.at, m.last_accessed, m.created_at), $p_now::TIMESTAMP,
                            $p_decay_days::DOUBLE) AS effective_importance,
       CASE WHEN m.tier = 'archival' THEN $p_archived_weight::DOUBLE ELSE 1.0 END AS tier_weight,
       pow(1 - $p_unhelpful_penalty::DOUBLE, greatest(m.unhelpful_count - m.helpful_count, 0)) AS feedback_weight,
       m.status = 'active' AS active, epoch_us(coalesce(m.observed_at, m.created_at)) AS at_us,
       m.agent_id AS agent, m.source_session AS session, epoch_us(m.created_at) AS created_us,
       states_time(m.content) AS states_time, states_change(m.content) AS states_change,
       mostly_asks(m.content) AS mostly_asks,
       m.provenance::BIGINT AS provenance, coalesce(m.by_host, false) AS by_host
FROM memories m LEFT JOIN reviews r ON r.id = m.id
WHERE m.id IN (SELECT unnest($p_ids::VARCHAR::UUID[]))
  AND (m.status = 'active' OR ($p_include_superseded AND m.status = 'superseded'))
  AND can_see_as(m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity,
                 $p_caller_agent, $p_caller_session::VARCHAR, $p_caller_teams::VARCHAR[], $p_caller_tenants::VARCHAR[]);

-- The in-process copy of what recall_eligible reads (echo_duck/recall/eligibility.py): how to tell that it is
-- behind (a row count that disagrees: deletes; a higher row_version: inserts and updates), and the rows.
-- name: eligibility_state
SELECT count(*) AS n_rows, max(row_version) AS newest FROM memories;

-- name: eligibility_rows
SELECT * FROM eligibility_rows();

-- name: eligibility_rows_after
SELECT * FROM eligibility_rows() WHERE row_version > $after;

-- The winners' rows after the in-process fusion; recall.py puts them back in rank order and adds their
-- pending contradictions (recall_conflicts): two plain queries, where one joining the two cost ~1.3 ms
-- more at 100k rows.
-- name: recall_rows
SELECT m.* FROM memories m WHERE m.id IN (SELECT unnest($ids::VARCHAR::UUID[]));

-- The open contradictions touching these memories, either side: pending ones, and ones settled by
-- recency that nobody reviewed yet (resolution 'newer'). recall.py lists each side's others as
-- recall_fused does (detected_at, then the other's id). Without a UNION ALL and ORDER BY here it costs
-- ~0.8 ms at 100k rows where the query that did both cost ~1.3, even with nothing pending.
-- name: recall_conflicts
SELECT memory_a, memory_b, detected_at, status = 'pending' AS pending
FROM contradictions
WHERE (status = 'pending' OR resolution = 'newer')
  AND (list_contains($ids::VARCHAR::UUID[], memory_a) OR list_contains($ids::VARCHAR::UUID[], memory_b));

-- Every open contradiction recall_conflicts would pick from, for the in-process copy (echo_duck/recall/store_reads.py),
-- at most $limit of them.
-- name: open_conflicts
SELECT memory_a, memory_b, detected_at, status = 'pending' AS pending FROM contradictions
WHERE status = 'pending' OR resolution = 'newer' LIMIT $limit;

-- A filtered recall inside a transaction keeps its keyword arm in SQL: every match goes on to the filters,
-- and a common word can match a third of the store (passing them all as text cost ~100 ms at 1M rows).
-- name: recall_keywords_in_sql
WITH kw AS MATERIALIZED (SELECT * FROM keyword_candidates($p_query, true, $p_caller_agent, $p_caller_session::VARCHAR,
                                                         $p_caller_teams::VARCHAR[], $p_caller_tenants::VARCHAR[])),
br AS MATERIALIZED (SELECT * FROM keyword_candidates($p_bridge::VARCHAR, true, $p_caller_agent, $p_caller_session::VARCHAR,
                                                     $p_caller_teams::VARCHAR[], $p_caller_tenants::VARCHAR[])
                    WHERE $p_bridge::VARCHAR IS NOT NULL)
SELECT * FROM recall_fused(
    (SELECT ids FROM kw), (SELECT scores FROM kw), (SELECT rarest FROM kw), (SELECT covered FROM kw),
    (SELECT query_idf_all FROM kw), $p_vec_ids::VARCHAR, $p_vec_sims::VARCHAR, $p_vec_scripts::VARCHAR,
    $p_vec_stats::VARCHAR, $p_vec_query_script::INTEGER, $p_caller_agent, $p_caller_session::VARCHAR,
    $p_caller_teams::VARCHAR[],
    $p_caller_tenants::VARCHAR[], $p_k, $p_recency::DOUBLE, $p_time_from::TIMESTAMP, $p_time_to::TIMESTAMP,
    $p_min_score::DOUBLE, $p_types::VARCHAR[], $p_tiers::VARCHAR[], $p_tags::VARCHAR[], $p_entities::VARCHAR[],
    $p_since::TIMESTAMP, $p_until::TIMESTAMP, $p_session::VARCHAR, $p_include_superseded, $p_now::TIMESTAMP,
    p_br_ids := (SELECT ids FROM br), p_br_covered := (SELECT covered FROM br),
    p_br_idf_all := (SELECT query_idf_all FROM br), p_asks_when := $p_asks_when::BOOLEAN,
    p_upd_model := $p_upd_model::VARCHAR, p_asked := $p_asked::INTEGER, p_caller_host := $p_caller_host::BOOLEAN);

-- Recall bookkeeping, written behind the recall for every queued recall at once (echo_duck/recall/recall_log.py).
-- name: next_recall_id
SELECT nextval('recall_log_seq');

-- The next $n recall ids, ascending: recall_log.py hands them out one per recall (one query per $n
-- recalls, where a nextval per recall cost ~0.3 ms of each).
-- name: next_recall_ids
SELECT nextval('recall_log_seq') AS id FROM range($n) ORDER BY id;

-- A hit is a review (SPEC R10): the forgetting curve restarts and lengthens. $reviews is JSON, one
-- {id, n, at} per memory (as recall_eligible's $p_reviews): how many queued recalls returned it and
-- the last one's time, as if they had been written one by one.
-- The count saturates at INT32's maximum (the column's type): no stored value can make the batch fail, which would
-- keep it queued and fail every later use of the store (echo_duck/recall/recall_log.py).
-- name: reinforce_recalled
UPDATE memories SET access_count = least(access_count::BIGINT + r.n, 2147483647)::INTEGER, last_accessed = r.at,
                    row_version = nextval('memory_row_version_seq')
FROM (SELECT unnest(from_json($reviews::JSON, '[{"id": "UUID", "n": "INTEGER", "at": "TIMESTAMP"}]'),
                    recursive := true)) r
WHERE memories.id = r.id
RETURNING memories.id::VARCHAR, memories.access_count, memories.last_accessed, memories.row_version;

-- $entries is JSON, one object per recall with recall_log's columns.
-- name: log_recalls
INSERT INTO recall_log (id, occurred_at, agent_id, session_id, query, k, model_id, memory_ids, scores, reinforced,
                        include_archived, reinforced_ids)
SELECT e.id, e.occurred_at, e.agent_id, e.session_id, e.query, e.k, e.model_id, e.memory_ids, e.scores, e.reinforced,
       e.include_archived, e.reinforced_ids
FROM (SELECT unnest(from_json($entries::JSON,
                              '[{"id": "BIGINT", "occurred_at": "TIMESTAMP", "agent_id": "VARCHAR", "session_id": "VARCHAR",
                                 "query": "VARCHAR", "k": "INTEGER", "model_id": "VARCHAR", "memory_ids": ["UUID"],
                                 "scores": ["DOUBLE"], "reinforced": "BOOLEAN", "include_archived": "BOOLEAN",
                                 "reinforced_ids": ["UUID"]}]'),
                    recursive := true)) e;

-- One 'reinforce' event per reviewed hit of each queued recall ($entries as log_recalls takes them), with
-- the access count and last access before and after, as if the recalls had been written one by one.
-- Run before reinforce_recalled, which it reads the stored counts of.
-- name: log_reinforce_events
INSERT INTO memory_events (occurred_at, actor, action, memory_id, reason, before, after)
WITH e AS (
    SELECT x.id AS recall_id, x.occurred_at, x.agent_id, unnest(x.reinforced_ids) AS memory_id
    FROM (SELECT unnest(from_json($entries::JSON, '[{"id": "BIGINT", "occurred_at": "TIMESTAMP", "agent_id": "VARCHAR",
                                                     "reinforced_ids": ["UUID"]}]'), recursive := true)) x
),
n AS (
    SELECT e.*, row_number() OVER w AS k, lag(e.occurred_at) OVER w AS previous
    FROM e WINDOW w AS (PARTITION BY e.memory_id ORDER BY e.occurred_at, e.recall_id)
)
SELECT n.occurred_at, 'agent:' || n.agent_id, 'reinforce', n.memory_id, 'recalled (recall ' || n.recall_id || ')',
       json_object('access_count', least(m.access_count::BIGINT + n.k - 1, 2147483647),
                   'last_accessed', coalesce(n.previous, m.last_accessed)),
       json_object('access_count', least(m.access_count::BIGINT + n.k, 2147483647), 'last_accessed', n.occurred_at)
FROM n JOIN memories m ON m.id = n.memory_id
ORDER BY n.occurred_at, n.recall_id, n.memory_id;

-- Outcome feedback (SPEC R13), applied by echo_duck/lifecycle/self_knowledge.py: counts steer ranking;
-- $confidence is the new confidence it computed (SELF memories earn theirs; see that module).
-- name: insert_feedback
INSERT INTO memory_feedback (occurred_at, agent_id, memory_id, recall_id, helpful, session_id, counted)
VALUES ($now, $agent_id, $id, $recall_id, $helpful, $session_id, $counted);

-- name: apply_feedback
UPDATE memories
SET helpful_count = helpful_count + CASE WHEN $helpful THEN 1 ELSE 0 END,
    unhelpful_count = unhelpful_count + CASE WHEN $helpful THEN 0 ELSE 1 END,
    confidence = $confidence,
    row_version = nextval('memory_row_version_seq')
WHERE id = $id;

-- Was this recall's hit of $id already marked so ($helpful)? Marking it again counts nothing.
-- name: marked_in_recall
SELECT count(*) > 0 FROM memory_feedback WHERE memory_id = $id AND recall_id = $recall_id AND helpful = $helpful;

-- Has a helpful mark from this session (NULL: marks without a session) already counted for $id?
-- name: helpful_from_session
SELECT count(*) > 0 FROM memory_feedback
WHERE memory_id = $id AND helpful AND coalesce(counted, true) AND session_id IS NOT DISTINCT FROM $session_id;

-- Has a helpful mark without a session counted for $id in [$start, $end)? (a procedure's, once a day)
-- name: helpful_sessionless_between
SELECT count(*) > 0 FROM memory_feedback
WHERE memory_id = $id AND helpful AND coalesce(counted, true) AND session_id IS NULL
  AND occurred_at >= $start AND occurred_at < $end;

-- Confidence $id gained from feedback events in [$start, $end).
-- name: confidence_gained_between
SELECT sum(greatest(CAST(after ->> 'confidence' AS DOUBLE) - CAST(before ->> 'confidence' AS DOUBLE), 0))
FROM memory_events
WHERE memory_id = $id AND action = 'feedback' AND occurred_at >= $start AND occurred_at < $end;

-- The prompt snapshot's memories (block by block, in order) and its conflicts (sql/macros/50_snapshot.sql).
-- name: snapshot_candidates
-- Only what a block can show: every profile section and rule (up to 100: a 2,000-character block holds
-- fewer), the first $limit of the others; counted apart for the caller's own memories and other agents'
-- (those go to the separate shared block: they must not crowd out the caller's own).
SELECT * EXCLUDE (block_rank, author_turn) FROM (
    -- the caller's own: what the host wrote itself first (an agent handle may carry the host's agent id: twenty pinned
    -- user_stated rules of such a handle filled the host's rules block), then by rank; within a turn, other agents'
    -- memories the host's first (by_host), then by when they were written (their provenance and pin are their
    -- authors' claims: two members claiming pinned user_stated took the host's earlier rule's place)
    SELECT *, row_number() OVER (PARTITION BY block, agent_id = $caller_agent
                                 ORDER BY CASE WHEN agent_id = $caller_agent THEN NOT coalesce(by_host, false) END,
                                          author_turn, CASE WHEN agent_id <> $caller_agent THEN NOT coalesce(by_host, false) END,
                                          CASE WHEN agent_id <> $caller_agent THEN created_at END,
                                          provenance DESC, pinned DESC, confidence DESC,
                                          coalesce(last_accessed, updated_at) DESC, id) AS block_rank
    FROM (
        -- other agents take turns (each one's first, then seconds …): one author's many memories cannot fill the
        -- shared block's share alone (for the caller's own memories the turn is the rank itself); what the host
        -- wrote itself takes its own turns, whatever agent id an agent handle carries
        SELECT c.*, row_number() OVER (PARTITION BY c.block, c.agent_id, coalesce(c.by_host, false)
                                       ORDER BY c.provenance DESC, c.pinned DESC, c.confidence DESC,
                                                coalesce(c.last_accessed, c.updated_at) DESC, c.id) AS author_turn
        FROM snapshot_candidates($caller_agent, $caller_session::VARCHAR, $min_confidence,
                                 setting('self_snapshot_threshold'), p_caller_host := $caller_host::BOOLEAN) c
        -- each author's first few per block are all the outer ranking can take (and all it has to sort)
        QUALIFY author_turn <= CASE WHEN c.block IN ('profile', 'rules') THEN 100 ELSE $limit END
    )
)
WHERE block_rank <= CASE WHEN block IN ('profile', 'rules') THEN 100 ELSE $limit END
ORDER BY coalesce(by_host, false) DESC, provenance DESC, pinned DESC, confidence DESC, coalesce(last_accessed, updated_at) DESC, id;

-- name: snapshot_conflicts
SELECT * FROM snapshot_conflicts($caller_agent, $caller_session::VARCHAR, p_caller_host := $caller_host::BOOLEAN)
LIMIT $limit;

-- Whose recall $id was (NULL: collected by gc, or an id no recall used; the journal refuses one not handed out yet):
-- mark(recall_id=) names one of the caller's own recalls.
-- name: recall_log_agent
SELECT agent_id FROM recall_log WHERE id = $id;
