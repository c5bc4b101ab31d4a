-- Memory keys for the keyword index (echo_duck/index/keyword.py): a memory is indexed with its key's
-- words beside its content ("package_manager" -> package manager), so a question in one language finds
-- a fact written in another when its key names it.

-- name: keys_of_memories
SELECT id::VARCHAR AS memory_id, key FROM memories
WHERE key IS NOT NULL AND id IN (SELECT unnest($ids::VARCHAR::UUID[]));

-- name: all_memory_keys
SELECT id::VARCHAR AS memory_id, key FROM memories WHERE key IS NOT NULL;
