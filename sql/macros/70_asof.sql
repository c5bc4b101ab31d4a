-- 70_asof: time travel (SPEC X, issue 20): every memory as it was at an instant, rebuilt from the event
-- log alone, so versions already exported to the Parquet archive (or removed by gc) come back too.
-- Each change to a memory is an event whose `after` holds the row (create, supersede, forget, restate …)
-- or just the columns it changed (feedback: counts and confidence; reinforce: access_count and
-- last_accessed; archive: tier). A column's value at p_ts is the one in the latest event at or before
-- p_ts that names it, except who may see it: a version whose chain was narrowed since (a later version made it
-- sensitive, or no longer shared: Writer.narrow_history) reads as the narrowest of then, its latest event and its
-- live row, as the live table does. A purged memory's events keep no content, so it never comes back.
--
-- memories_as_of(p_ts) -> the memories columns of every memory that existed at p_ts, as it was then.
CREATE OR REPLACE MACRO memories_as_of(p_ts) AS TABLE
    WITH events AS (  -- each event's row parsed once: its keys (a partial event names only what it changed) and values
        SELECT e.memory_id, e.event_id, json_keys(e.after) AS keys,
               json_transform(e.after, '{"agent_id": "VARCHAR", "type": "VARCHAR", "tier": "VARCHAR", "key": "VARCHAR", "content": "VARCHAR", "tags": "VARCHAR[]", "entities": "VARCHAR[]", "scope": "VARCHAR", "team_id": "VARCHAR", "tenant_id": "VARCHAR", "source_session": "VARCHAR", "source_refs": "VARCHAR[]", "created_at": "TIMESTAMP", "updated_at": "TIMESTAMP", "observed_at": "TIMESTAMP", "importance": "DOUBLE", "confidence": "DOUBLE", "access_count": "INTEGER", "last_accessed": "TIMESTAMP", "helpful_count": "INTEGER", "unhelpful_count": "INTEGER", "episode_id": "UUID", "version": "INTEGER", "supersedes": "UUID", "superseded_by": "UUID", "provenance": "TINYINT", "pinned": "BOOLEAN", "sensitivity": "VARCHAR", "status": "VARCHAR", "by_host": "BOOLEAN"}') AS row
        FROM memory_events e
        WHERE e.memory_id IS NOT NULL AND e.after IS NOT NULL AND e.occurred_at <= p_ts
    ),
    folded AS (
        SELECT e.memory_id AS id,
           arg_max_null(e.row.agent_id, e.event_id) FILTER (WHERE list_contains(e.keys, 'agent_id')) AS agent_id,
           arg_max_null(e.row.type, e.event_id) FILTER (WHERE list_contains(e.keys, 'type')) AS type,
           arg_max_null(e.row.tier, e.event_id) FILTER (WHERE list_contains(e.keys, 'tier')) AS tier,
           arg_max_null(e.row.key, e.event_id) FILTER (WHERE list_contains(e.keys, 'key')) AS key,
           arg_max_null(e.row.content, e.event_id) FILTER (WHERE list_contains(e.keys, 'content')) AS content,
           arg_max_null(e.row.tags, e.event_id) FILTER (WHERE list_contains(e.keys, 'tags')) AS tags,
           arg_max_null(e.row.entities, e.event_id) FILTER (WHERE list_contains(e.keys, 'entities')) AS entities,
           arg_max_null(e.row.scope, e.event_id) FILTER (WHERE list_contains(e.keys, 'scope')) AS scope,
           arg_max_null(e.row.team_id, e.event_id) FILTER (WHERE list_contains(e.keys, 'team_id')) AS team_id,
           arg_max_null(e.row.tenant_id, e.event_id) FILTER (WHERE list_contains(e.keys, 'tenant_id')) AS tenant_id,
           arg_max_null(e.row.source_session, e.event_id) FILTER (WHERE list_contains(e.keys, 'source_session')) AS source_session,
           arg_max_null(e.row.source_refs, e.event_id) FILTER (WHERE list_contains(e.keys, 'source_refs')) AS source_refs,
           arg_max_null(e.row.created_at, e.event_id) FILTER (WHERE list_contains(e.keys, 'created_at')) AS created_at,
           arg_max_null(e.row.updated_at, e.event_id) FILTER (WHERE list_contains(e.keys, 'updated_at')) AS updated_at,
           arg_max_null(e.row.observed_at, e.event_id) FILTER (WHERE list_contains(e.keys, 'observed_at')) AS observed_at,
           arg_max_null(e.row.importance, e.event_id) FILTER (WHERE list_contains(e.keys, 'importance')) AS importance,
           arg_max_null(e.row.confidence, e.event_id) FILTER (WHERE list_contains(e.keys, 'confidence')) AS confidence,
           arg_max_null(e.row.access_count, e.event_id) FILTER (WHERE list_contains(e.keys, 'access_count')) AS access_count,
           arg_max_null(e.row.last_accessed, e.event_id) FILTER (WHERE list_contains(e.keys, 'last_accessed')) AS last_accessed,
           arg_max_null(e.row.helpful_count, e.event_id) FILTER (WHERE list_contains(e.keys, 'helpful_count')) AS helpful_count,
           arg_max_null(e.row.unhelpful_count, e.event_id) FILTER (WHERE list_contains(e.keys, 'unhelpful_count')) AS unhelpful_count,
           arg_max_null(e.row.episode_id, e.event_id) FILTER (WHERE list_contains(e.keys, 'episode_id')) AS episode_id,
           arg_max_null(e.row.version, e.event_id) FILTER (WHERE list_contains(e.keys, 'version')) AS version,
           arg_max_null(e.row.supersedes, e.event_id) FILTER (WHERE list_contains(e.keys, 'supersedes')) AS supersedes,
           arg_max_null(e.row.superseded_by, e.event_id) FILTER (WHERE list_contains(e.keys, 'superseded_by')) AS superseded_by,
           arg_max_null(e.row.provenance, e.event_id) FILTER (WHERE list_contains(e.keys, 'provenance')) AS provenance,
           arg_max_null(e.row.pinned, e.event_id) FILTER (WHERE list_contains(e.keys, 'pinned')) AS pinned,
           arg_max_null(e.row.sensitivity, e.event_id) FILTER (WHERE list_contains(e.keys, 'sensitivity')) AS sensitivity,
           arg_max_null(e.row.status, e.event_id) FILTER (WHERE list_contains(e.keys, 'status')) AS status,
           arg_max_null(e.row.by_host, e.event_id) FILTER (WHERE list_contains(e.keys, 'by_host')) AS by_host
        FROM events e
        GROUP BY e.memory_id
    ),
    latest AS (  -- who may see each memory now: a version narrowed since (a 'narrow' event) reads narrowed then too
        SELECT e.memory_id AS id,
           arg_max_null(CAST(e.after -> 'tags' AS VARCHAR[]), e.event_id) FILTER (WHERE json_exists(e.after, '$.tags')) AS tags,
           arg_max_null(CAST(e.after ->> 'sensitivity' AS VARCHAR), e.event_id) FILTER (WHERE json_exists(e.after, '$.sensitivity')) AS sensitivity
        FROM memory_events e
        WHERE e.memory_id IS NOT NULL AND e.after IS NOT NULL
        GROUP BY e.memory_id
    )
    SELECT f.* REPLACE (
        CASE WHEN (l.tags IS NOT NULL AND NOT list_contains(l.tags, 'share:personal'))
                  OR (n.id IS NOT NULL AND NOT list_contains(n.tags, 'share:personal'))
             THEN list_filter(coalesce(f.tags, []), t -> t <> 'share:personal') ELSE coalesce(f.tags, []) END AS tags,
        ['normal', 'personal', 'sensitive'][greatest(list_position(['normal', 'personal', 'sensitive'], f.sensitivity),
                                                     coalesce(list_position(['normal', 'personal', 'sensitive'], l.sensitivity), 1),
                                                     coalesce(list_position(['normal', 'personal', 'sensitive'], n.sensitivity), 1))]
            AS sensitivity,
        coalesce(f.entities, []) AS entities, coalesce(f.source_refs, []) AS source_refs)
    FROM folded f LEFT JOIN latest l ON l.id = f.id
    LEFT JOIN memories n ON n.id = f.id  -- and the live row (a store narrowed before 'narrow' events were logged)
    WHERE f.content IS NOT NULL AND f.created_at IS NOT NULL AND f.created_at <= p_ts;

-- exported_by(p_id, p_ts) -> BOOLEAN: was memory p_id in the Parquet archive at p_ts? Its latest export, restore or
-- forget event by then is an export (a restore and a forget bring an exported row back to the live table). The live
-- reads (find, recall, the snapshot) never see an exported row, so their time-travelling twins leave it out too;
-- get(as_of=) and history(as_of=) still reach it.
CREATE OR REPLACE MACRO exported_by(p_id, p_ts) AS
    coalesce((SELECT arg_max(e.action, e.event_id) FROM memory_events e
              WHERE e.memory_id = p_id AND e.occurred_at <= p_ts AND e.action IN ('export', 'restore', 'forget'))
             = 'export', false);

-- contradictions_as_of(p_ts) -> the contradictions found by p_ts as they stood then: status, resolution, winner and
-- resolved_at from the last decision made by p_ts (contradiction_decisions, migration 0012: a later review must not
-- change what an earlier instant reads), pending while none was.
CREATE OR REPLACE MACRO contradictions_as_of(p_ts) AS TABLE
    SELECT c.* REPLACE (CASE WHEN d.decided_at IS NULL THEN 'pending' ELSE 'resolved' END AS status,
                        d.resolution AS resolution, d.winner AS winner, d.decided_at AS resolved_at)
    FROM contradictions c
    LEFT JOIN (SELECT * FROM contradiction_decisions WHERE decided_at <= p_ts
               QUALIFY row_number() OVER (PARTITION BY contradiction_id ORDER BY decided_at DESC, seq DESC) = 1) d
           ON d.contradiction_id = c.id
    WHERE c.detected_at <= p_ts;

-- snapshot_candidates_as_of(…, p_ts): snapshot_candidates (50_snapshot.sql) over the memories as they were
-- at p_ts and the contradictions open then (found by p_ts, not resolved by p_ts).
CREATE OR REPLACE MACRO snapshot_candidates_as_of(p_caller_agent, p_caller_session, p_min_confidence, p_self_threshold,
                                                  p_ts, p_caller_host := NULL) AS TABLE
    WITH state AS MATERIALIZED (SELECT * FROM memories_as_of(p_ts) WHERE NOT exported_by(id, p_ts)),
    open_conflicts AS (
        SELECT c.memory_a, c.memory_b, a.provenance AS provenance_a, b.provenance AS provenance_b,
               memory_author(a.agent_id, a.by_host) AS agent_a, memory_author(b.agent_id, b.by_host) AS agent_b
        FROM contradictions_as_of(p_ts) c JOIN state a ON a.id = c.memory_a JOIN state b ON b.id = c.memory_b
        WHERE c.status = 'pending' AND a.status = 'active' AND b.status = 'active'
          AND can_see(a.scope, a.agent_id, a.team_id, a.tenant_id, a.source_session, a.tags, a.sensitivity,
                      p_caller_agent, p_caller_session)  -- both sides the caller's to see, as snapshot_candidates
          AND can_see(b.scope, b.agent_id, b.team_id, b.tenant_id, b.source_session, b.tags, b.sensitivity,
                      p_caller_agent, p_caller_session)
    ),
    disputed AS (  -- as snapshot_candidates
        SELECT memory_a AS id FROM open_conflicts
        WHERE NOT dispute_stands(agent_a, provenance_a, agent_b, provenance_b, memory_author(p_caller_agent, p_caller_host))
        UNION SELECT memory_b FROM open_conflicts
        WHERE NOT dispute_stands(agent_b, provenance_b, agent_a, provenance_a, memory_author(p_caller_agent, p_caller_host)))
    SELECT m.*,
           CASE WHEN m.type = 'user' AND starts_with(coalesce(m.key, ''), 'profile:') THEN 'profile'
                WHEN m.type = 'user' THEN 'user'
                WHEN m.type = 'procedure' THEN 'rules'
                WHEN m.type = 'self' THEN 'self'
                ELSE 'environment' END AS block
    FROM state m
    WHERE m.status = 'active' AND (m.tier = 'semantic' OR (m.type = 'procedure' AND m.tier = 'archival'))
      AND m.confidence >= CASE WHEN m.type = 'self' THEN greatest(p_min_confidence, p_self_threshold)
                               ELSE p_min_confidence END
      AND m.id NOT IN (SELECT id FROM disputed)
      AND can_see(m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity,
                  p_caller_agent, p_caller_session)
    ORDER BY coalesce(m.by_host, false) DESC, m.provenance DESC, m.pinned DESC, m.confidence DESC,
             coalesce(m.last_accessed, m.updated_at) DESC, m.id;

-- snapshot_conflicts_as_of(…, p_ts): snapshot_conflicts (50_snapshot.sql) as it stood at p_ts.
CREATE OR REPLACE MACRO snapshot_conflicts_as_of(p_caller_agent, p_caller_session, p_ts, p_caller_host := NULL) AS TABLE
    WITH state AS MATERIALIZED (SELECT *, memory_author(agent_id, by_host) AS author FROM memories_as_of(p_ts))
    SELECT c.id, c.status, c.resolution, c.winner, c.detected_at,
           a.id AS memory_a, a.content AS content_a, a.type AS type_a,
           coalesce(c.source_a, memory_source(a.source_session, a.source_refs, a.agent_id)) AS source_a,
           b.id AS memory_b, b.content AS content_b, b.type AS type_b,
           coalesce(c.source_b, memory_source(b.source_session, b.source_refs, b.agent_id)) AS source_b,
           a.provenance AS provenance_a, b.provenance AS provenance_b,
           a.pinned AS pinned_a, b.pinned AS pinned_b, coalesce(a.by_host, false) AS by_host_a,
           coalesce(b.by_host, false) AS by_host_b,
           c.status = 'pending' AND dispute_stands(a.author, a.provenance, b.author, b.provenance, c.caller) AS stands_a,
           c.status = 'pending' AND dispute_stands(b.author, b.provenance, a.author, a.provenance, c.caller) AS stands_b,
           a.author = b.author AS same_agent, a.agent_id = b.agent_id AS same_id, a.agent_id AS agent_a,
           b.agent_id AS agent_b
    FROM (SELECT *, memory_author(p_caller_agent, p_caller_host) AS caller FROM contradictions_as_of(p_ts)) c
    JOIN state a ON a.id = c.memory_a
    JOIN state b ON b.id = c.memory_b
    WHERE ((c.status = 'pending' AND a.status = 'active' AND b.status = 'active')
           OR (c.status = 'resolved' AND c.resolution = 'newer'
               AND (CASE WHEN c.winner = a.id THEN a.status ELSE b.status END) = 'active'))
      AND a.tier <> 'episodic' AND b.tier <> 'episodic'
      AND (a.agent_id = p_caller_agent OR b.agent_id = p_caller_agent)
      AND (c.caller IN (a.author, b.author) OR a.author = b.author)
      AND can_see(a.scope, a.agent_id, a.team_id, a.tenant_id, a.source_session, a.tags, a.sensitivity,
                  p_caller_agent, p_caller_session)
      AND can_see(b.scope, b.agent_id, b.team_id, b.tenant_id, b.source_session, b.tags, b.sensitivity,
                  p_caller_agent, p_caller_session)
    -- as snapshot_conflicts
    ORDER BY greatest(dispute_loss(c.status = 'pending', stands_a, c.winner, a.id, a.by_host, a.provenance),
                      dispute_loss(c.status = 'pending', stands_b, c.winner, b.id, b.by_host, b.provenance))
                 DESC NULLS LAST,
             c.caller IN (a.author, b.author) DESC, a.author = b.author DESC,
             CASE WHEN a.author = b.author THEN least(a.provenance, b.provenance) END DESC NULLS LAST,
             CASE WHEN a.author = b.author THEN greatest(a.provenance, b.provenance) END DESC NULLS LAST,
             coalesce(a.by_host, false) OR coalesce(b.by_host, false) DESC,
             row_number() OVER (PARTITION BY CASE WHEN a.author = c.caller THEN b.author ELSE a.author END
                                ORDER BY c.detected_at DESC, c.id),
             c.detected_at DESC, c.id;

-- exported_under_key(m, fact) -> BOOLEAN: is row m (a memories_all row as a struct) one its writer exported to Parquet
-- under the key of keyed row fact, in the same scope (and session, for session scope), active or superseded? Such a
-- row is the same fact, though a write after the export meets the live table only and starts at version 1 again:
-- history, forget and purge of the key reach it (sql/queries: version_chain, version_chain_all,
-- earlier_versions_to_forget).
CREATE OR REPLACE MACRO exported_under_key(m, fact) AS
    fact.key IS NOT NULL AND m.storage = 'archive' AND m.status IN ('active', 'superseded') AND m.key = fact.key
    AND m.agent_id = fact.agent_id AND coalesce(m.by_host, false) = coalesce(fact.by_host, false)
    AND m.scope = fact.scope AND m.team_id IS NOT DISTINCT FROM fact.team_id
    AND m.tenant_id IS NOT DISTINCT FROM fact.tenant_id
    AND (fact.scope <> 'session' OR m.source_session IS NOT DISTINCT FROM fact.source_session);
