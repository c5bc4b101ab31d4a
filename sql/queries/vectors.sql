-- Vector rows (echo_duck/index/vectors.py). Staged vectors come from a registered Arrow table named
-- echo_duck_vector_stage (memory_id VARCHAR, vector FLOAT[]).

-- name: upsert_vectors_from_stage
INSERT OR REPLACE INTO memory_vectors (memory_id, model_id, dim, vector, embedded_at)
SELECT memory_id::UUID, $model_id, $dim, vector::FLOAT[], $now FROM echo_duck_vector_stage;

-- name: delete_vector
DELETE FROM memory_vectors WHERE memory_id = $id;

-- name: vectors_of_model
SELECT memory_id, vector FROM memory_vectors WHERE model_id = $model_id;

-- Memories (except forgotten ones) without a vector from this model.
-- name: count_stale_vectors
SELECT count(*) FROM memories m
WHERE m.status <> 'forgotten'
  AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model_id = $model_id);

-- The next batch to embed, each with its conversational context (the memory before it in its
-- source session), the same text the write path embeds.
-- name: stale_vector_batch
WITH batch AS (
    SELECT m.* FROM memories m
    WHERE m.status <> 'forgotten'
      AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model_id = $model_id)
    ORDER BY m.created_at, m.id
    LIMIT $n
)
SELECT b.id, b.content, ctx.content AS context
FROM batch b
LEFT JOIN LATERAL (
    SELECT p.content FROM memories p
    WHERE setting('context_neighbors') >= 1 AND b.source_session IS NOT NULL
      AND p.agent_id = b.agent_id AND p.source_session = b.source_session AND p.id <> b.id
      AND (coalesce(p.observed_at, p.created_at) < coalesce(b.observed_at, b.created_at)
           OR (coalesce(p.observed_at, p.created_at) = coalesce(b.observed_at, b.created_at) AND p.created_at < b.created_at))
    ORDER BY coalesce(p.observed_at, p.created_at) DESC, p.created_at DESC, p.id DESC
    LIMIT 1
) ctx ON true
ORDER BY b.created_at, b.id;
