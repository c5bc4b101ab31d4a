-- 50_snapshot: which memories go into the prompt snapshot (SPEC R12), in order. The renderer
-- (echo_duck/recall/snapshot.py) fills each section up to its character budget in this order.
--
-- snapshot_candidates(p_caller_agent, p_caller_session, p_min_confidence) -> live, non-archived,
-- visible memories with confidence >= p_min_confidence: pinned first, then USER, then the rest by
-- confidence and recency. section: 'user' | 'rules' (procedures) | 'environment' (environment, self).
CREATE OR REPLACE MACRO snapshot_candidates(p_caller_agent, p_caller_session, p_min_confidence) AS TABLE
    SELECT m.*,
           CASE m.type WHEN 'user' THEN 'user' WHEN 'procedure' THEN 'rules' ELSE 'environment' END AS section
    FROM memories m
    WHERE m.status = 'active' AND m.tier <> 'archival'
      AND m.confidence >= p_min_confidence
      AND can_see(m.scope, m.agent_id, m.team_id, m.tenant_id, m.source_session, m.tags, m.sensitivity,
                  p_caller_agent, p_caller_session)
    ORDER BY m.pinned DESC, (m.type = 'user') DESC, m.confidence DESC,
             coalesce(m.last_accessed, m.updated_at) DESC, m.id;
