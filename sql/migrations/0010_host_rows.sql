-- 0010_host_rows: which memories the host application wrote itself.
-- Run once, inside one transaction with its schema_version row. Never edit after release.
--
-- A row's agent_id names its owner, and an agent handle may carry any agent id, the host's own included, so
-- agent_id cannot say whether the host or an agent wrote a row. by_host is set on the rows an admin handle
-- writes through the API or the CLI (remember, remember_many, update, restore): the host's word. Imports,
-- consolidation, tools and every agent handle write false, whatever they claim. Recall serves the host's rows
-- first among other authors' (sql/macros/40_recall.sql, the shared step), so members' notes cannot take their
-- places. Rows written before this migration are false: nothing recorded who wrote them. (DuckDB cannot add a
-- column with a constraint; every insert names it, and readers take NULL as false.)

ALTER TABLE memories ADD COLUMN by_host BOOLEAN DEFAULT false;
