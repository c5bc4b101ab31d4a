-- Compression (echo_duck/lifecycle/compress.py, SPEC L7): which memories may fold, their vectors, and
-- the in-place reinforcement of a memory that was restated.

-- Live, keyless, semantic memories: the ones restatements can fold into (keyed facts are versioned by key).
-- name: compressible_memories
SELECT * FROM memories
WHERE status = 'active' AND tier = 'semantic' AND key IS NULL;

-- name: compressible_by_ids
SELECT * FROM memories
WHERE id IN (SELECT unnest($ids::VARCHAR::UUID[])) AND status = 'active' AND tier = 'semantic' AND key IS NULL;

-- name: vectors_for
SELECT memory_id::VARCHAR, vector FROM memory_vectors
WHERE model_id = $model_id AND memory_id IN (SELECT unnest($ids::VARCHAR::UUID[]));

-- A restatement reviews the memory it restates (SPEC R10) and adds its sources; importance and pinning
-- only ever grow by it. $refs is the merged source_refs list.
-- name: restate_memory
UPDATE memories
SET source_refs = $refs::VARCHAR[], access_count = least(access_count::BIGINT + 1, 2147483647)::INTEGER,
    last_accessed = $now,
    importance = $importance, pinned = $pinned, updated_at = greatest(updated_at, $now),
    row_version = nextval('memory_row_version_seq')
WHERE id = $id;
