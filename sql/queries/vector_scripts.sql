-- Scripts of stored memories (content_script in sql/macros/20_ranking.sql) for the in-process vector matrix
-- (echo_duck/index/vectors.py): the vector arm judges a similarity against the memories of the same script.

-- Each vector's script (content_script), for the in-process matrix (echo_duck/index/vectors.py).
-- name: vector_scripts_of_model
SELECT v.memory_id::VARCHAR AS memory_id, content_script(m.content)::TINYINT AS script
FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
WHERE v.model_id = $model_id;

-- The script of each of these memories (content_script), for vectors added without their texts.
-- name: scripts_of_memories
SELECT id::VARCHAR AS memory_id, content_script(content)::TINYINT AS script
FROM memories WHERE id IN (SELECT unnest($ids::VARCHAR::UUID[]));
