-- Benchmark fixtures (echo_duck/bench): synthetic rows written straight into the tables, so a
-- lifecycle job can be timed at a million rows without embedding a million texts first.

-- $n memories of agent 'bench', last touched 0-365 days before $now, importance 0.05-0.95,
-- a tenth USER, a fiftieth pinned, access counts 0-7.
-- name: bench_fill_memories
INSERT INTO memories (id, agent_id, type, tier, key, content, created_at, updated_at, importance, confidence,
                      access_count, last_accessed, provenance, pinned)
SELECT uuid(), 'bench',
       CASE WHEN i % 10 = 0 THEN 'user' ELSE 'environment' END, 'semantic', NULL,
       'synthetic memory ' || i,
       $now - to_days((hash(i) % 365)::INTEGER), $now - to_days((hash(i) % 365)::INTEGER),
       0.05 + (hash(i * 7) % 90) / 100.0, 0.8, (hash(i * 13) % 8)::INTEGER, NULL, 1, i % 50 = 0
FROM range($n) t(i);

-- The BM25 part of the recall macro on its own, for the per-stage breakdown of `bench perf`.
-- name: bench_bm25_alone
SELECT count(*) FROM bm25_scores($q);
