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

-- The next batch to embed: each memory's own text, the same text the write path embeds.
-- name: stale_vector_batch
SELECT m.id, m.content FROM memories m
WHERE m.status <> 'forgotten'
  AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model_id = $model_id)
ORDER BY m.created_at, m.id
LIMIT $n;
