-- 0011_host_documents: which knowledge-base documents the host application added itself.
-- Run once, inside one transaction with its schema_version row. Never edit after release.
--
-- As memories.by_host (0010): a document's agent_id names its owner, and an agent handle may carry any agent id, the
-- host's own included, so agent_id cannot say whether the host added a document. by_host is set on a document an
-- admin handle adds through the API or the CLI (kb_add): the host's word. An agent handle may not replace, relabel
-- or remove such a document (echo_duck/kb/documents.py). Documents added before this migration are false: nothing
-- recorded who added them. (DuckDB cannot add a column with a constraint; every upsert names it, and readers take
-- NULL as false.)

ALTER TABLE kb_documents ADD COLUMN by_host BOOLEAN DEFAULT false;
