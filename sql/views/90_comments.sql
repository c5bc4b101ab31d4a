-- 90_comments: COMMENT ON for every macro, view column and table column that its own file does not
-- document, so that the catalog (duckdb_functions(), duckdb_views(), duckdb_columns()) describes the
-- whole SQL interface and `echo-duck docs sql` can render sql/REFERENCE.md from it.
--
-- Loaded last (views/90_ sorts after every macro and view file), on every (re)install of macros and
-- views. CREATE OR REPLACE drops an object's comments, so they must be applied after the objects:
-- here. Every statement is idempotent (a comment is simply set again). COMMENT ON has no IF EXISTS:
-- renaming or dropping an object means editing this file too (every test that opens a store fails
-- until then). Tables are commented in their migrations; this file adds only column comments the
-- migrations lack (a test checks that it never overrides a comment a migration sets).
-- memories_all is not here: archive.py recreates it on every writable open (its columns are those of
-- memories, plus storage).

-- ============================================================================================
-- Macros (sql/macros/*.sql and the table macros behind the views)
-- ============================================================================================

-- 10_scope
COMMENT ON MACRO can_see IS 'can_see(scope, agent_id, team_id, tenant_id, source_session, tags, sensitivity, caller_agent, caller_session) -> BOOLEAN: may the caller see this memory row? private: the owner agent; session: the owner inside source_session (or tagged global); team/tenant: current members (memberships); public: everyone; and whatever the scope, a sensitive memory only its owner, a personal one only its owner unless tagged share:personal. Every read path uses it';
COMMENT ON MACRO another_agent_may_see IS 'another_agent_may_see(sensitivity, tags) -> BOOLEAN: may agents other than the owner see this row at all? normal: yes; personal: only when the owner tagged it share:personal; sensitive: never';
COMMENT ON MACRO can_see_as IS 'can_see with the caller''s current team and tenant ids passed as lists (from caller_groups), so the recall query plans no subqueries';
COMMENT ON MACRO TABLE caller_groups IS 'caller_groups(caller_agent) -> one row (teams VARCHAR[], tenants VARCHAR[]): the groups the agent belongs to now (memberships not revoked)';
COMMENT ON MACRO approval_never_given IS 'approval_never_given(id) -> BOOLEAN: did the write scanner hold this row (created quarantined) with no person approving it since, whatever its status now (rejected, forgotten, flagged)?';
COMMENT ON MACRO barred_from IS 'barred_from(id, status, agent_id, caller_agent) -> BOOLEAN: is this row text the write scanner held from the caller? Another agent''s quarantined row, or one approval_never_given; its writer and an admin read it';
COMMENT ON MACRO TABLE visible_memories IS 'visible_memories(caller_agent, caller_session) -> every memories row (any status) the caller may see; another agent''s rows the scanner held and nobody approved stay hidden (barred_from). Example: SELECT * FROM visible_memories(''coder'', NULL) WHERE status = ''active''';
COMMENT ON MACRO TABLE counted_memories IS 'counted_memories(caller_agent, caller_session, caller_teams, caller_tenants) -> (id): the memories a caller''s recall statistics count (BM25 document count, lengths and term frequencies, the query''s similarity mean and spread): the rows it may see, as visible_memories, so no score tells what another agent''s hidden memories hold';
COMMENT ON MACRO same_scope_owner IS 'same_scope_owner(scope, a_agent, a_session, a_team, a_tenant, b_agent, b_session, b_team, b_tenant) -> BOOLEAN: do two memories of this scope have the same owner, so that one key names one fact?';
COMMENT ON MACRO may_dispute IS 'may_dispute(o_scope, o_agent, o_team, o_tenant, o_session, o_tags, o_sensitivity, m_scope, m_agent, m_team, m_tenant, m_session, m_tags, m_sensitivity, o_by_host := false, m_by_host := false) -> BOOLEAN: may memories o and m meet in a contradiction check? One agent''s own memories in any two scopes, or two authors'' in the same scope, team or tenant; and each author may see the other''s memory (the host, a row''s by_host, sees every one).';

-- 20_ranking
COMMENT ON MACRO setting IS 'setting(name) -> DOUBLE: the value of a tunable in the settings table, e.g. setting(''archive_threshold'')';
COMMENT ON MACRO half_life_days IS 'half_life_days(access_count, base_days) -> DOUBLE: max(base_days, 1) × (1 + log2(1 + access_count)); every review lengthens the half-life (SPEC L1)';
COMMENT ON MACRO days_between IS 'days_between(t0, t1) -> DOUBLE: days from t0 to t1, never negative';
COMMENT ON MACRO effective_importance IS 'effective_importance(importance, type, pinned, access_count, last_touch, now_ts, base_days) -> DOUBLE: importance × 0.5^(days since last_touch / half-life); user and procedure memories and pinned rows are exempt (SPEC L1; behaviour rules apply every turn while active)';
COMMENT ON MACRO rrf IS 'rrf(rank, k := 60) -> DOUBLE: the reciprocal rank fusion term 1 / (k + rank); a NULL rank contributes 0 (SPEC R3)';
COMMENT ON MACRO vector_arm_weight IS 'vector_arm_weight(entropy, low, high) -> DOUBLE: weight of the vector arm, from low (specific, low-entropy queries) to high (broad ones); the BM25 arm weighs 1 (SPEC R7)';
COMMENT ON MACRO query_entropy IS 'query_entropy(spec, stop_share, length_share, code_share) -> DOUBLE in [0, 1]: how broad a query is (1 broad, 0 specific), from how rare its indexed terms are (spec, from bm25_scores) and its share of stop words, length and code-like tokens (measured in Python, echo_duck.text.segment.query_shape); steers vector_arm_weight';
COMMENT ON MACRO TABLE ranking_settings IS 'ranking_settings() -> one row with every ranking tunable of the settings table as a column (rrf_k, keyword_pool, vector_pool, …)';
COMMENT ON MACRO content_script IS 'content_script(text) -> INTEGER: 1 when Han characters are at least a third of the text''s letters (8 × Han >= Latin letters, and at least one Han character), else 0; recall judges a vector similarity against the stored memories of the same script';
COMMENT ON MACRO states_time IS 'states_time(text) -> BOOLEAN: whether the text states when something happens (a digit, a month or weekday name, yesterday, last week, 3 days ago, 昨天, 上周, 三月, 八点, 三天前, …); a question asking when (recall_hits asks_when) gives such memories time_weight more';
COMMENT ON MACRO states_change IS 'states_change(text) -> BOOLEAN: whether the text says something changed (switched, moved, sold, replaced, no longer, instead, 换, 改, 不再, 搬, 卖了, 辞职, 不去了, …); on a question about the current state such a memory takes the relevance of an older one of the same owner it updates (recall_hits update_credit)';
COMMENT ON MACRO mostly_asks IS 'mostly_asks(text) -> BOOLEAN: whether at least half of the text (in characters, after a leading "Name: " label) is in questions that say nothing of the one asking (no I, me, my, we, us, our, 我): "What kind of yoga is it?", 你最近在读什么书？; recall gives such a memory asking_weight of its score (a question is not its own answer)';
COMMENT ON MACRO calibration_constants IS 'calibration_constants() -> STRUCT (SELECT unnest(calibration_constants()) for columns): the constants of the calibrated fusion (coverage_weight 0.5, vector_weight 0.2, gap_scale 2, recency_weight 0.5, time_weight 0.5, prior_rows 10, prior_mean 0.1, prior_sd 0.1, follow_weight 0.8, update_similarity 0.5, asking_weight 0.7), fitted on LoCoMo conversations 0-4 and LongMemEval (dev) questions 0-49';
COMMENT ON MACRO calibrated_score IS 'calibrated_score(bm25_score, bm25_max, covered_idf, query_idf_all, keyword_conf, similarity_z, vector_conf, coverage_weight, vector_weight, script_credit) -> DOUBLE: max(keyword_conf × bm25_score / bm25_max + coverage_weight × covered_idf / query_idf_all, script_credit) + vector_weight × vector_conf × max(similarity_z, 0); a missing arm (or credit) contributes 0';
COMMENT ON MACRO script_credit IS 'script_credit(script, query_script, keyword_conf, similarity_z, z_top, coverage_weight) -> DOUBLE or NULL: the keyword credit a memory''s meaning earns (the keyword arm cannot see a translation or a paraphrase): keyword_conf × (1 + coverage_weight) × max(similarity_z, 0) / z_top for a memory in another script than the question, keyword_conf × max(similarity_z, 0) / z_top in the question''s script, z_top the best similarity_z of the recall; NULL without keyword matches or outside the vector arm';
COMMENT ON MACRO calibration_stats IS 'calibration_stats(n0, sum0, sumsq0, n1, sum1, sumsq1) -> DOUBLE[4] [mean_0, sd_0, mean_1, sd_1]: a query''s similarity mean and spread per script from each script''s count, sum and sum of squares, each script leaning on the whole store and the store on a prior (prior_rows pseudo-rows each)';

-- 30_bm25 (stem() comes from the fts extension: load it before calling these)
COMMENT ON MACRO bm25_tokens IS 'bm25_tokens(text) -> VARCHAR[]: fts''s tokenizer for pre-segmented text (lower-cased, accents stripped, split on spaces)';
COMMENT ON MACRO bm25_idf IS 'bm25_idf(n, df) -> DOUBLE: fts''s IDF of a term held by df of n documents, log10(((n - df) + 0.5) / (df + 0.5) + 1)';
COMMENT ON MACRO bm25_rsj IS 'bm25_rsj(n, df) -> DOUBLE: the RSJ weight coverage counts a term by, log10((max(n, 2 df + 1) - df + 0.5) / (df + 0.5)): near 0 for a term in half the documents';
COMMENT ON MACRO bm25_saturation IS 'bm25_saturation(tf, doc_len, avgdl) -> DOUBLE: BM25''s term-frequency part (k1 1.2, b 0.75)';
COMMENT ON MACRO TABLE bm25_doc_terms IS 'bm25_doc_terms(text) -> (term, tf): the stemmed terms of a segmented text with their counts, stop words dropped; what bm25_postings holds for a memory. Needs fts (stem)';
COMMENT ON MACRO TABLE bm25_scores IS 'bm25_scores(q) -> (memory_id, score, rarest_df_ratio, query_idf, query_spec, covered_idf, query_idf_all) for every indexed memory matching a term of the segmented query q; scores equal fts match_bm25 (k1 1.2, b 0.75, log10 IDF); covered_idf / query_idf_all is the share of the query''s IDF mass the memory matches (terms no memory has count at the largest IDF). Needs fts (stem)';
COMMENT ON MACRO TABLE bm25_search IS 'bm25_search(q, n) -> the n best (memory_id, score) by BM25 for the segmented query q, ties by id. Needs fts (stem). Example: SELECT m.content, s.score FROM bm25_search(''pnpm'', 5) s JOIN memories m ON m.id = s.memory_id';
COMMENT ON MACRO TABLE bm25_token_df IS 'bm25_token_df(q) -> (token, df, n_docs) for each distinct token of the segmented query q: how common each word is (feeds the query entropy). Needs fts (stem)';
COMMENT ON MACRO TABLE bm25_common_words IS 'bm25_common_words(q) -> (word): the words of the segmented query q that more than half of the indexed memories hold (every memory: the analyst''s view; a recall counts the memories its caller may see, keyword_common_words). Needs fts (stem)';

-- 40_recall
COMMENT ON MACRO TABLE exact_vector_candidates IS 'exact_vector_candidates(qvec, model, n, caller…, filters…) -> (memory_id, similarity, script): the n nearest visible rows of embedding model `model` that pass the filters, by exact inner product, with each memory''s content_script';
COMMENT ON MACRO TABLE keyword_bm25 IS 'keyword_bm25(q, caller_agent, caller_session, caller_teams, caller_tenants) -> bm25_scores(q) over the memories the caller may see (counted_memories): only they match, and the document count, average length and each term''s df are theirs, as the caller''s recall ranks. Needs fts (stem)';
COMMENT ON MACRO TABLE keyword_common_words IS 'keyword_common_words(q, caller_agent, caller_session, caller_teams, caller_tenants) -> (word): bm25_common_words over the memories the caller may see (counted_memories); the caller''s recall embeds the question without them. Needs fts (stem)';
COMMENT ON MACRO TABLE keyword_candidates IS 'keyword_candidates(query, all, caller_agent, caller_session, caller_teams, caller_tenants) -> one row (ids, scores, rarest, covered, query_idf_all): the caller''s BM25 matches (keyword_bm25) in rank order (UUID[] and DOUBLE[] lists), as recall_fused takes them; all of them when `all`, else the best 10 × keyword_pool';
COMMENT ON MACRO TABLE query_similarity_stats IS 'query_similarity_stats(qvec, model, caller_agent, caller_session, caller_teams, caller_tenants) -> one row (stats DOUBLE[4]): the query''s similarity mean and spread over the stored vectors of the model of the memories the caller may see (counted_memories), per content_script (calibration_stats): what recall_fused''s vec_stats means. Example: SELECT stats FROM query_similarity_stats(''[0.1, …]'', ''use-multilingual-v3-int8'', ''default'', NULL, [], [])';
COMMENT ON MACRO TABLE eligibility_rows IS 'eligibility_rows() -> per memory (every status): id, row_version and the operands of recall''s eligible step (status, scope columns, global tag, exempt from decay, archival, importance, access_count, last touch in epoch µs, unhelpful minus helpful marks, and the filter columns: type, tier, observed-or-created time in epoch µs, tags, entities); what the in-process copy behind recall holds';
COMMENT ON MACRO TABLE recall_fused IS 'The body of hybrid recall given both arms'' candidates (keyword lists as keyword_candidates returns them; vector ids, similarities and scripts in rank order with the query''s similarity statistics per script, query_similarity_stats, and the query''s own content_script; lists may be ''[…]'' texts): visibility and filters, the calibrated relevance (calibrated_score, script_credit, bridge_coverage: the share of the question''s dictionary translations a memory in the other script holds, from the optional br_ids/br_covered/br_idf_all lists), the recency and time-window boosts, gate labels (the gated ranked last), session_credit (a kept candidate scores at least follow_weight × the nearest earlier kept candidate of the same owner and source session), asking_weight (a memory that mostly asks, mostly_asks), decay; see sql/macros/40_recall.sql for every parameter';
COMMENT ON MACRO TABLE recall_hits IS 'recall_hits(query, qvec, model, caller_agent, caller_session, k, recency, time_from, time_to, types, tiers, tags, entities, since, until, session, include_superseded, now, p_bridge := NULL, p_query_script := NULL, p_asks_when := NULL, p_asked := NULL, p_caller_host := NULL, p_min_score := NULL) -> the k best memories for the segmented query and the query vector qvec (''[f, …]'' text of model `model`, or NULL for keywords only; the agent''s recall passes echo_duck.embed.question_axis.as_question of the question''s vector), as the agent''s recall ranks them, with every memories column and the explain columns (bm25_rank, similarity, keyword_conf, vector_conf, coverage, similarity_z, bridge_coverage, session_credit, update_credit, relevance, recency_boost, time_boost, asking_weight, gate, decay terms, score). recency: NULL or a weight (0.5) for questions about the current state; time_from/time_to: the window a question names, or NULL; bridge: the question''s words in the other language (echo_duck.text.bridge.bridged_query, as the agent''s recall passes them) or NULL; query_script: 0 Latin, 1 Han, the question''s script as asked (echo_duck.text.when.text_script), NULL: content_script(query); asks_when: true when the question asks when (echo_duck.text.when.asks_when): memories that state a time (states_time) score time_weight more. With a recency weight, a memory that states a change (states_change) takes the relevance of an older candidate of the same owner whose vector of `model` is at least update_similarity close (and whose provenance is no higher): update_credit. A memory that mostly asks (mostly_asks) keeps asking_weight of its score. caller_host: the caller is an admin handle (the host), whose facts count as its own against a claim (memory_author). min_score: recall(min_score=), applied before the k best are taken. Needs fts (stem)';

-- 50_snapshot
COMMENT ON MACRO dispute_stands IS 'dispute_stands(agent, provenance, other_agent, other_provenance, caller_agent) -> whether a side of a pending contradiction stays in the caller''s snapshot (agents as memory_author names them): the higher provenance between one agent''s memories; between two agents every side but one set against the caller''s own';
COMMENT ON MACRO dispute_loss IS 'dispute_loss(pending, stands, winner, id, by_host, provenance) -> INTEGER: how trusted a side of a contradiction is (10 for the host''s own, then its provenance) when the dispute took it out of the caller''s prompt (pending: it does not stand; resolved: the newer fact replaced it), else NULL; the Conflicts block''s first order';
COMMENT ON MACRO pool_group IS 'pool_group(agent_id, by_host, caller_agent, caller_host) -> INTEGER: the group a recall candidate is pooled in (0 the caller''s own by author, memory_author; 1 the rows the host wrote itself; 2 every other author''s): recall_fused takes each arm''s best keyword_pool / vector_pool of each group, so one member''s near-copies cannot push the caller''s own or the host''s answer out before the shared step';
COMMENT ON MACRO memory_author IS 'memory_author(agent_id, by_host) -> VARCHAR: who wrote a memory, as the snapshot''s disputes count authors: its agent, or the host for what the host wrote itself (the host''s rows and an agent''s under the host''s agent id are two authors)';
COMMENT ON MACRO TABLE snapshot_candidates IS 'snapshot_candidates(caller_agent, caller_session, min_confidence, self_threshold, p_caller_host := NULL) -> live, visible, non-episodic memories for the prompt snapshot with their block (profile | user | rules | environment | self), in order: the host''s own (by_host), then provenance, pinned, confidence, recency; every active procedure; SELF only at or above self_threshold; sides of a pending contradiction left out, but for the side that stands (dispute_stands; caller_host: the caller is an admin handle, the host)';
COMMENT ON MACRO TABLE snapshot_conflicts IS 'snapshot_conflicts(caller_agent, caller_session, p_caller_host := NULL) -> conflicts for the snapshot, those touching the caller''s own words (the host''s on an admin handle) first, then newest first: pending contradictions between two live memories, and ones resolved by recency nobody reviewed yet, one side the caller''s own; both contents, sources, provenances, pins and host marks, and which side stands';
COMMENT ON MACRO memory_source IS 'memory_source(source_session, source_refs, agent_id) -> VARCHAR: where a memory came from: its source session, else its first source ref, else ''agent <id>''';

-- 60_kb
COMMENT ON MACRO TABLE kb_bm25_scores IS 'kb_bm25_scores(q) -> (chunk_id, score, rarest_df_ratio, query_idf, covered_idf, query_idf_all): bm25_scores over the knowledge base. Needs fts (stem)';
COMMENT ON MACRO TABLE kb_counted_chunks IS 'kb_counted_chunks(caller_agent, caller_session) -> (id): the knowledge-base chunks a caller''s search statistics count, those of the documents it may see (can_see), as counted_memories for memories';
COMMENT ON MACRO TABLE kb_keyword_bm25 IS 'kb_keyword_bm25(q, caller_agent, caller_session) -> kb_bm25_scores(q) over the chunks the caller may see (kb_counted_chunks): only they match, and their count, lengths and term frequencies make the scores, as kb_search_hits ranks. Needs fts (stem)';
COMMENT ON MACRO TABLE kb_bm25_token_df IS 'kb_bm25_token_df(q) -> (token, df, n_docs): bm25_token_df over the knowledge base. Needs fts (stem)';
COMMENT ON MACRO TABLE kb_search_hits IS 'kb_search_hits(query, vec_ids, vec_sims, vec_stats, qvec, model, k, sources, tags, caller_agent, caller_session, p_bridge := NULL, p_query_script := NULL, p_asks_when := NULL, p_caller_host := NULL) -> the top k knowledge-base chunks (never memories) of documents the caller may see (can_see on the document''s owner, scope and sensitivity), with their document''s source, path, title and tags and the explain columns; ranked as recall_fused ranks memories (calibrated relevance with script_credit and bridge_coverage, bridge being the question''s dictionary translations, × time_boost when asks_when and the chunk states a time, × kb_weight; chunks have no session, so no session_credit), so the two lists merge by score; half the k is kept for the caller''s own chunks (its agent id, and the host''s mark when caller_host: an admin handle), the rest goes to the host''s documents first, then each other author''s best. Needs fts (stem)';

-- 10_memory_views and 20_audit (the table macros behind the views)
COMMENT ON MACRO utc_now IS 'utc_now() -> TIMESTAMP: the current time as naive UTC, the store''s convention (now()::TIMESTAMP would be local time)';
COMMENT ON MACRO TABLE memory_decay_at IS 'memory_decay_at(ts) -> memory_decay as of ts: every live memory''s days since access, half-life, effective importance and whether it is below archive_threshold. Example: SELECT key, effective_importance FROM memory_decay_at(TIMESTAMP ''2026-03-01'')';
COMMENT ON MACRO TABLE stale_vectors_now IS 'stale_vectors_now() -> what the stale_vectors view shows: memories without a vector from the store''s current embedding model';
COMMENT ON MACRO TABLE each_recalled_memory IS 'each_recalled_memory() -> what the recall_hits_log view shows: recall_log unnested, one row per (recall, returned memory) with rank and score';
COMMENT ON MACRO seen_by IS 'seen_by(id, scope, agent_id, team_id, tenant_id, source_session, tags, sensitivity, status, agent, session) -> BOOLEAN: does the audit count this row for the agent? agent NULL counts every row (the store-wide views); else can_see, without the rows the scanner held from it (barred_from, as visible_memories)';
COMMENT ON MACRO TABLE visible_memory_counts IS 'visible_memory_counts(agent, session) -> memory_counts over what the agent may see (NULL: the whole store, the memory_counts view); audit() on an agent handle';
COMMENT ON MACRO TABLE visible_provenance_coverage IS 'visible_provenance_coverage(agent, session) -> provenance_coverage over what the agent may see (NULL: the whole store)';
COMMENT ON MACRO TABLE visible_decay_histogram IS 'visible_decay_histogram(agent, session) -> decay_histogram over what the agent may see (NULL: the whole store)';
COMMENT ON MACRO TABLE visible_blocked_writes IS 'visible_blocked_writes(agent) -> blocked_writes_by_reason for the agent''s own refused writes (NULL: every agent''s)';
COMMENT ON MACRO TABLE visible_memory_health IS 'visible_memory_health(agent, session) -> memory_health over what the agent may see and its own recalls, refused writes and jobs (NULL: the whole store, the memory_health view): a count over every row would move when another agent wrote a note this one may not read';
COMMENT ON MACRO TABLE stale_recalls_all IS 'stale_recalls_all() -> what the stale_recalls view shows: recalls that returned a memory already superseded, forgotten, pending or flagged at the time';
COMMENT ON MACRO TABLE leaked_recalls_all IS 'leaked_recalls_all() -> what the leaked_recalls view shows: recalls that returned a memory outside the caller''s visibility at that time (judged by the memberships valid then)';

-- ============================================================================================
-- Bookkeeping tables created by echo_duck/storage/schema.py (not by a migration)
-- ============================================================================================
COMMENT ON TABLE schema_version IS 'Which numbered migrations (sql/migrations) ran on this file, with their checksums; a version above what the code knows means the file is from a newer echo_duck';
COMMENT ON COLUMN schema_version.version IS 'migration number (0001_core.sql is 1)';
COMMENT ON COLUMN schema_version.name IS 'migration file name without number and extension';
COMMENT ON COLUMN schema_version.checksum IS 'sha256 of the migration file as applied';
COMMENT ON COLUMN schema_version.applied_at IS 'when it ran (local time of the process)';
COMMENT ON TABLE schema_objects IS 'Checksums of the installed macro and view files (sql/macros, sql/views); they are reinstalled when the files change';
COMMENT ON COLUMN schema_objects.checksum IS 'sha256 over every macro and view file, in load order';
COMMENT ON COLUMN schema_objects.applied_at IS 'when they were installed (local time of the process)';

-- ============================================================================================
-- Table columns the migrations leave undocumented
-- ============================================================================================

-- memories
COMMENT ON COLUMN memories.content IS 'the fact itself, as written (scanned before it was stored)';
COMMENT ON COLUMN memories.tags IS 'labels for filtering; the tag global makes a session-scoped memory visible in every session of its owner';
COMMENT ON COLUMN memories.entities IS 'names of people, projects, tools the memory is about (recall filter entities=)';
COMMENT ON COLUMN memories.team_id IS 'owning team for scope team (members: memberships)';
COMMENT ON COLUMN memories.tenant_id IS 'owning tenant for scope tenant (members: memberships)';
COMMENT ON COLUMN memories.source_session IS 'session the memory was learned in (sessions.id); scope session limits visibility to it';
COMMENT ON COLUMN memories.created_at IS 'when this version was written (naive UTC)';
COMMENT ON COLUMN memories.updated_at IS 'last change of this row: status, tier, counters (naive UTC)';
COMMENT ON COLUMN memories.observed_at IS 'when the fact was observed, if known (e.g. the message time); recall''s since/until filter on coalesce(observed_at, created_at)';
COMMENT ON COLUMN memories.access_count IS 'how often recall returned it (a review; reinforcement lengthens the half-life)';
COMMENT ON COLUMN memories.last_accessed IS 'last time recall returned it; decay counts from coalesce(last_accessed, created_at)';
COMMENT ON COLUMN memories.helpful_count IS 'outcome feedback: times marked helpful (memory_feedback)';
COMMENT ON COLUMN memories.unhelpful_count IS 'outcome feedback: times marked unhelpful; each net unhelpful mark lowers its score';
COMMENT ON COLUMN memories.episode_id IS 'the episode this memory was consolidated from, if any (episodes.id)';
COMMENT ON COLUMN memories.version IS 'version number within its key: 1, 2, … (history follows supersedes / superseded_by)';
COMMENT ON COLUMN memories.pinned IS 'pinned memories never decay and come first in prompt snapshots';
COMMENT ON COLUMN memories.sensitivity IS 'normal | personal | sensitive';
COMMENT ON COLUMN memories.by_host IS 'the host application wrote this version itself (an admin handle, API or CLI); false for agents, tools, imports and consolidation, and for rows written before 0010. Recall serves these first among other authors'' rows';

-- memory_vectors
COMMENT ON COLUMN memory_vectors.memory_id IS 'the memory (memories.id)';
COMMENT ON COLUMN memory_vectors.model_id IS 'embedding model that made the vector; another model than store_info.embedding_model means stale (see stale_vectors)';
COMMENT ON COLUMN memory_vectors.dim IS 'number of dimensions';
COMMENT ON COLUMN memory_vectors.vector IS 'unit-length embedding of the memory in its conversational context';
COMMENT ON COLUMN memory_vectors.embedded_at IS 'when it was embedded (naive UTC)';

-- sessions, messages, episodes
COMMENT ON COLUMN sessions.id IS 'session id, one id space per agent (resumable by id or unique suffix)';
COMMENT ON COLUMN sessions.agent_id IS 'agent whose conversation it is';
COMMENT ON COLUMN sessions.title IS 'optional title, given with the first message';
COMMENT ON COLUMN sessions.started_at IS 'time of the first message (naive UTC)';
COMMENT ON COLUMN sessions.last_message_at IS 'time of the latest message (naive UTC)';
COMMENT ON COLUMN sessions.ended_at IS 'when end_session() closed it; NULL while open';
COMMENT ON COLUMN sessions.consolidated_at IS 'when its messages were last consolidated into an episode and facts; NULL if never';
COMMENT ON COLUMN sessions.consolidated_seq IS 'the last message (messages.seq) a finished consolidation read: the next reads facts only from later ones; NULL if never';
COMMENT ON COLUMN messages.id IS 'message id (source_refs name it as message:<id>)';
COMMENT ON COLUMN messages.agent_id IS 'agent whose session it is (sessions.agent_id)';
COMMENT ON COLUMN messages.session_id IS 'the session (sessions.id of that agent)';
COMMENT ON COLUMN messages.seq IS 'position in the session, from 1';
COMMENT ON COLUMN messages.role IS 'user | assistant | system | tool';
COMMENT ON COLUMN messages.content IS 'the message text';
COMMENT ON COLUMN messages.created_at IS 'when it was added (naive UTC)';
COMMENT ON COLUMN episodes.id IS 'episode id (source_refs name it as episode:<id>)';
COMMENT ON COLUMN episodes.agent_id IS 'agent whose session it summarises';
COMMENT ON COLUMN episodes.session_id IS 'the session (sessions.id)';
COMMENT ON COLUMN episodes.session_key IS 'key of the session chunk it covers';
COMMENT ON COLUMN episodes.summary IS 'extractive summary of the messages (at most 500 characters)';
COMMENT ON COLUMN episodes.first_seq IS 'first message seq covered';
COMMENT ON COLUMN episodes.last_seq IS 'last message seq covered';
COMMENT ON COLUMN episodes.entities IS 'entities mentioned in the messages';
COMMENT ON COLUMN episodes.importance IS '0..1, how much the episode matters';
COMMENT ON COLUMN episodes.started_at IS 'time of its first message';
COMMENT ON COLUMN episodes.ended_at IS 'time of its last message';
COMMENT ON COLUMN episodes.created_at IS 'when consolidation wrote it';
COMMENT ON COLUMN episodes.status IS 'active | flagged (derived from deleted content) | forgotten';

-- contradictions
COMMENT ON TABLE pending_checks IS 'The contradiction checks writes still owe: a write records its new rows in its own transaction, the check deletes them, a writable open runs what a crash left owed, and approve() what a held row owes';
COMMENT ON COLUMN pending_checks.memory_id IS 'the new row to check (memories.id)';
COMMENT ON COLUMN pending_checks.owed_at IS 'when the write committed (naive UTC)';
COMMENT ON COLUMN pending_checks.kind IS 'the check owed: full (remember, update), apart (an import: not against the rows written with it), bulk (remember_many)';
COMMENT ON TABLE reasons_not_held IS 'Create events written before migration 0014 whose reason starts with quarantined though the row was not held (an update''s free-text reason): approval_never_given leaves them out; no caller''s reason may start so since';
COMMENT ON COLUMN reasons_not_held.event_id IS 'the create event (memory_events.event_id)';
COMMENT ON TABLE contradiction_decisions IS 'Every decision on a contradiction (by provenance, by recency, a user''s decision or review), appended: contradictions holds the current one, as-of reads the last one made by their instant (contradictions_as_of)';
COMMENT ON COLUMN contradiction_decisions.seq IS 'order of the decisions (two at one instant: the later one counts)';
COMMENT ON COLUMN contradiction_decisions.contradiction_id IS 'the contradiction decided (contradictions.id)';
COMMENT ON COLUMN contradiction_decisions.decided_at IS 'when (naive UTC)';
COMMENT ON COLUMN contradiction_decisions.resolution IS 'higher_provenance | newer | user | dismissed';
COMMENT ON COLUMN contradiction_decisions.winner IS 'the memory that stayed true by this decision (NULL: dismissed)';
COMMENT ON COLUMN contradictions.id IS 'contradiction id (resolve(id, winner))';
COMMENT ON COLUMN contradictions.memory_a IS 'one side (memories.id)';
COMMENT ON COLUMN contradictions.memory_b IS 'the other side (memories.id)';
COMMENT ON COLUMN contradictions.description IS 'what conflicts, in the verifier''s words';
COMMENT ON COLUMN contradictions.confidence IS '0..1, how sure the verifier was';
COMMENT ON COLUMN contradictions.detected_by IS 'which verifier found it (heuristic, llm, provenance_guard, …)';
COMMENT ON COLUMN contradictions.detected_at IS 'when it was found (naive UTC)';
COMMENT ON COLUMN contradictions.status IS 'pending (returned by recall with conflicts_with, waits for the user) | resolved';
COMMENT ON COLUMN contradictions.resolution IS 'higher_provenance | newer | user | dismissed (not a contradiction)';
COMMENT ON COLUMN contradictions.winner IS 'the memory that stays true; the loser is superseded and archived';
COMMENT ON COLUMN contradictions.resolved_at IS 'when it was resolved';

-- memory_events, blocked_writes
COMMENT ON COLUMN memory_events.event_id IS 'increasing event number: the order of changes';
COMMENT ON COLUMN memory_events.occurred_at IS 'when (naive UTC)';
COMMENT ON COLUMN memory_events.actor IS 'who: agent id, cli, consolidation, tool, …';
COMMENT ON COLUMN memory_events.action IS 'create | supersede | forget | restore | archive (decayed) | export (to Parquet) | purge | gc | mark (feedback) | reinforce (a batch of recalls) | grant | revoke | grant_right | revoke_right | setting | sql (a statement an admin ran with write=True) | …';
COMMENT ON COLUMN memory_events.memory_id IS 'the memory changed (NULL for store-wide events: gc, memberships, rights, settings, sql, reinforcement batches)';
COMMENT ON COLUMN memory_events.reason IS 'why, as given by the caller or the job';
COMMENT ON COLUMN memory_events.before IS 'the row (or the changed fields) before, as JSON; NULL after a privacy purge redacted the event';
COMMENT ON COLUMN memory_events.after IS 'the row (or the changed fields) after, as JSON; NULL after a privacy purge redacted the event';
COMMENT ON COLUMN blocked_writes.id IS 'increasing id';
COMMENT ON COLUMN blocked_writes.occurred_at IS 'when the write was refused (naive UTC)';
COMMENT ON COLUMN blocked_writes.actor IS 'who tried: agent id, cli, import, …';
COMMENT ON COLUMN blocked_writes.agent_id IS 'agent the write was for';
COMMENT ON COLUMN blocked_writes.path IS 'write path: api | cli | import | consolidation | tool';
COMMENT ON COLUMN blocked_writes.field IS 'which field matched: content, key, tags, entities';
COMMENT ON COLUMN blocked_writes.reason IS 'scanner reason: invisible_unicode, prompt_injection, exfiltration, secret, …';
COMMENT ON COLUMN blocked_writes.detail IS 'what matched (secrets redacted)';
COMMENT ON COLUMN blocked_writes.excerpt IS 'a short redacted excerpt of the refused text, never the full payload';

-- memberships, settings, store_info
COMMENT ON COLUMN agent_rights.agent_id IS 'the agent holding the right';
COMMENT ON COLUMN agent_rights."right" IS 'publish:public | publish:team:<team id> | publish:tenant:<tenant id> (''*'' for any group the agent belongs to)';
COMMENT ON COLUMN agent_rights.granted_at IS 'when an admin granted it';
COMMENT ON COLUMN agent_rights.granted_by IS 'the admin handle that granted it (actor)';
COMMENT ON COLUMN agent_rights.revoked_at IS 'when it was taken away; NULL while it holds';
COMMENT ON COLUMN pending_purges.memory_id IS 'a purged memory whose file rewrite is still due';
COMMENT ON COLUMN pending_purges.requested_at IS 'when the purge committed';
COMMENT ON COLUMN kb_documents.team_id IS 'team of a team-scoped document';
COMMENT ON COLUMN kb_documents.tenant_id IS 'tenant of a tenant-scoped document';
COMMENT ON COLUMN kb_documents.by_host IS 'the host application added this document itself (an admin handle, API or CLI; adding it again claims a copy an agent added first or one added before 0011); false for agents. Only an admin handle may replace, relabel or remove it';
COMMENT ON COLUMN memberships.agent_id IS 'the member agent';
COMMENT ON COLUMN memberships.kind IS 'team | tenant';
COMMENT ON COLUMN memberships.group_id IS 'team or tenant id (memories.team_id / tenant_id)';
COMMENT ON COLUMN memberships.granted_at IS 'start of this membership period';
COMMENT ON COLUMN memberships.revoked_at IS 'end of it; NULL while current. A revocation hides the group''s memories on the next query';
COMMENT ON COLUMN settings.name IS 'tunable name, read with setting(name)';
COMMENT ON COLUMN settings.value IS 'its value';
COMMENT ON COLUMN settings.note IS 'what it controls';
COMMENT ON COLUMN store_info.name IS 'embedding_model | keyword_index_signature | event_chain_head | memories_all_definition | …';
COMMENT ON COLUMN store_info.value IS 'its value';

-- recall_log, memory_feedback
COMMENT ON COLUMN recall_log.id IS 'recall id (memory_feedback.recall_id, recall_hits_log.recall_id)';
COMMENT ON COLUMN recall_log.occurred_at IS 'when (naive UTC)';
COMMENT ON COLUMN recall_log.agent_id IS 'agent that asked';
COMMENT ON COLUMN recall_log.session_id IS 'its session at the time, if any';
COMMENT ON COLUMN recall_log.query IS 'the query text as asked (blanked if a purged memory was among the results)';
COMMENT ON COLUMN recall_log.k IS 'how many results were asked for';
COMMENT ON COLUMN recall_log.model_id IS 'embedding model of the vector arm; NULL when recall ran on keywords only';
COMMENT ON COLUMN recall_log.memory_ids IS 'memories returned, best first (recall_hits_log unnests them)';
COMMENT ON COLUMN recall_log.scores IS 'their final scores, same order';
COMMENT ON COLUMN recall_log.reinforced IS 'whether the hits were counted as reviews (access_count + 1)';
COMMENT ON COLUMN recall_log.include_archived IS 'whether superseded versions were asked for';
COMMENT ON COLUMN memory_feedback.id IS 'increasing id';
COMMENT ON COLUMN memory_feedback.occurred_at IS 'when (naive UTC)';
COMMENT ON COLUMN memory_feedback.agent_id IS 'agent that gave the feedback';
COMMENT ON COLUMN memory_feedback.memory_id IS 'the memory judged';
COMMENT ON COLUMN memory_feedback.recall_id IS 'the recall it came from (recall_log.id), if known';
COMMENT ON COLUMN memory_feedback.helpful IS 'true: it helped; false: it did not';

-- archive_exports, archive_export_rows, consolidation_jobs
COMMENT ON COLUMN archive_exports.id IS 'export id (part of the Parquet file names)';
COMMENT ON COLUMN archive_exports.created_at IS 'when the export started (naive UTC)';
COMMENT ON COLUMN archive_exports.status IS 'staged (files written, rows live) | moved (files in the archive, rows live) | done (rows left the live tables) | abandoned; staged or moved after a crash is finished or undone on the next writable open';
COMMENT ON COLUMN archive_exports.rows IS 'number of memories exported';
COMMENT ON COLUMN archive_exports.files IS 'Parquet files written';
COMMENT ON COLUMN archive_exports.finished_at IS 'when it reached done';
COMMENT ON COLUMN archive_export_rows.export_id IS 'the export (archive_exports.id)';
COMMENT ON COLUMN archive_export_rows.memory_id IS 'a memory it carried';
COMMENT ON COLUMN consolidation_jobs.session_id IS 'session to consolidate: one job per session of an agent';
COMMENT ON COLUMN consolidation_jobs.agent_id IS 'its agent';
COMMENT ON COLUMN consolidation_jobs.status IS 'pending | running | done';
COMMENT ON COLUMN consolidation_jobs.attempts IS 'tries so far (a failure is retried with backoff, never dropped)';
COMMENT ON COLUMN consolidation_jobs.requested_at IS 'when it was queued';
COMMENT ON COLUMN consolidation_jobs.next_attempt_at IS 'earliest time of the next try';
COMMENT ON COLUMN consolidation_jobs.started_at IS 'when the current or last try started (a running job past its lease is taken again)';
COMMENT ON COLUMN consolidation_jobs.finished_at IS 'when it finished';
COMMENT ON COLUMN consolidation_jobs.last_error IS 'error of the last failed try';
COMMENT ON COLUMN consolidation_jobs.result IS 'the consolidation report as JSON (facts stored, pending, rejected, …)';

-- keyword index internals
COMMENT ON COLUMN bm25_stopwords.sw IS 'a stop word (English or Chinese)';
COMMENT ON COLUMN bm25_docs.doc IS 'doc number in bm25_postings';
COMMENT ON COLUMN bm25_docs.memory_id IS 'the memory (memories.id)';
COMMENT ON COLUMN bm25_docs.len IS 'length in terms, for BM25 length normalisation';
COMMENT ON COLUMN bm25_postings.term IS 'hash(stem(token, ''porter''))';
COMMENT ON COLUMN bm25_postings.doc IS 'doc number (bm25_docs.doc)';
COMMENT ON COLUMN bm25_postings.memory_id IS 'the memory (memories.id)';
COMMENT ON COLUMN bm25_postings.tf IS 'term frequency in the doc';
COMMENT ON COLUMN bm25_postings.doc_len IS 'the doc''s length in terms';
COMMENT ON COLUMN bm25_dead.doc IS 'doc number to skip until compaction';

-- knowledge base
COMMENT ON COLUMN kb_documents.id IS 'document id';
COMMENT ON COLUMN kb_documents.title IS 'the highest-level markdown heading, else the file name (or source for a raw text)';
COMMENT ON COLUMN kb_documents.tags IS 'tags given at ingest; kb search can require them';
COMMENT ON COLUMN kb_documents.added_at IS 'first ingest (naive UTC)';
COMMENT ON COLUMN kb_documents.updated_at IS 'last ingest that changed it';
COMMENT ON COLUMN kb_chunks.id IS 'chunk id';
COMMENT ON COLUMN kb_chunks.document_id IS 'its document (kb_documents.id)';
COMMENT ON COLUMN kb_chunks.content IS 'the chunk text (invisible and bidi characters removed, then flagged)';
COMMENT ON COLUMN kb_vectors.chunk_id IS 'the chunk (kb_chunks.id)';
COMMENT ON COLUMN kb_vectors.model_id IS 'embedding model that made the vector (see kb_stale_vectors)';
COMMENT ON COLUMN kb_vectors.dim IS 'number of dimensions';
COMMENT ON COLUMN kb_vectors.vector IS 'unit-length embedding of heading trail + content';
COMMENT ON COLUMN kb_vectors.embedded_at IS 'when it was embedded (naive UTC)';
COMMENT ON COLUMN kb_bm25_docs.doc IS 'doc number in kb_bm25_postings';
COMMENT ON COLUMN kb_bm25_docs.chunk_id IS 'the chunk (kb_chunks.id)';
COMMENT ON COLUMN kb_bm25_docs.len IS 'length in terms';
COMMENT ON COLUMN kb_bm25_postings.term IS 'hash(stem(token, ''porter''))';
COMMENT ON COLUMN kb_bm25_postings.doc IS 'doc number (kb_bm25_docs.doc)';
COMMENT ON COLUMN kb_bm25_postings.chunk_id IS 'the chunk (kb_chunks.id)';
COMMENT ON COLUMN kb_bm25_postings.tf IS 'term frequency in the doc';
COMMENT ON COLUMN kb_bm25_postings.doc_len IS 'the doc''s length in terms';
COMMENT ON COLUMN kb_bm25_dead.doc IS 'doc number to skip until compaction';

-- ============================================================================================
-- View columns
-- ============================================================================================

-- memory_decay (and memory_decay_at(ts), same columns)
COMMENT ON COLUMN memory_decay.id IS 'memory id';
COMMENT ON COLUMN memory_decay.agent_id IS 'owner agent';
COMMENT ON COLUMN memory_decay.type IS 'user | environment | procedure | self';
COMMENT ON COLUMN memory_decay.tier IS 'episodic | semantic | archival';
COMMENT ON COLUMN memory_decay.key IS 'semantic key';
COMMENT ON COLUMN memory_decay.importance IS 'stored importance, 0..1';
COMMENT ON COLUMN memory_decay.access_count IS 'reviews so far';
COMMENT ON COLUMN memory_decay.pinned IS 'pinned rows never decay';
COMMENT ON COLUMN memory_decay.last_touch IS 'coalesce(last_accessed, created_at): decay counts from here';
COMMENT ON COLUMN memory_decay.days_since_access IS 'days from last_touch to now';
COMMENT ON COLUMN memory_decay.half_life_days IS 'importance_decay_days × (1 + log2(1 + access_count))';
COMMENT ON COLUMN memory_decay.exempt IS 'user memories and pinned rows do not decay';
COMMENT ON COLUMN memory_decay.effective_importance IS 'importance × 0.5^(days_since_access / half_life_days), or importance when exempt';
COMMENT ON COLUMN memory_decay.below_threshold IS 'not exempt and effective_importance < archive_threshold: the decay job moves such a row to the archival tier (a row already there waits for the archive export)';

-- stale_vectors
COMMENT ON COLUMN stale_vectors.memory_id IS 'memory to re-embed';
COMMENT ON COLUMN stale_vectors.vector_model IS 'model of its current vector; NULL when it has none';
COMMENT ON COLUMN stale_vectors.current_model IS 'the store''s embedding model (store_info.embedding_model)';

-- memory_counts, provenance_coverage
COMMENT ON COLUMN memory_counts.tier IS 'episodic | semantic | archival';
COMMENT ON COLUMN memory_counts.type IS 'user | environment | procedure | self';
COMMENT ON COLUMN memory_counts.provenance IS '3 user_stated, 2 consolidated, 1 model_inferred, 0 legacy';
COMMENT ON COLUMN memory_counts.scope IS 'private | session | team | tenant | public';
COMMENT ON COLUMN memory_counts.status IS 'active | pending | superseded | forgotten | flagged';
COMMENT ON COLUMN memory_counts.memories IS 'number of rows';
COMMENT ON COLUMN provenance_coverage.type IS 'memory type';
COMMENT ON COLUMN provenance_coverage.provenance IS '3 user_stated, 2 consolidated, 1 model_inferred, 0 legacy';
COMMENT ON COLUMN provenance_coverage.memories IS 'live memories';
COMMENT ON COLUMN provenance_coverage.with_source_refs IS 'of which with source_refs';
COMMENT ON COLUMN provenance_coverage.with_any_source IS 'of which with source_refs or a source_session';
COMMENT ON COLUMN provenance_coverage.coverage IS 'with_any_source / memories';

-- open_contradictions
COMMENT ON COLUMN open_contradictions.id IS 'contradiction id (resolve(id, winner))';
COMMENT ON COLUMN open_contradictions.detected_at IS 'when it was found';
COMMENT ON COLUMN open_contradictions.confidence IS 'verifier confidence';
COMMENT ON COLUMN open_contradictions.description IS 'what conflicts';
COMMENT ON COLUMN open_contradictions.detected_by IS 'which verifier found it';
COMMENT ON COLUMN open_contradictions.memory_a IS 'one side';
COMMENT ON COLUMN open_contradictions.content_a IS 'its content';
COMMENT ON COLUMN open_contradictions.provenance_a IS 'its provenance (3 user_stated … 0 legacy)';
COMMENT ON COLUMN open_contradictions.source_a IS 'its source session';
COMMENT ON COLUMN open_contradictions.memory_b IS 'the other side';
COMMENT ON COLUMN open_contradictions.content_b IS 'its content';
COMMENT ON COLUMN open_contradictions.provenance_b IS 'its provenance (3 user_stated … 0 legacy)';
COMMENT ON COLUMN open_contradictions.source_b IS 'its source session';

-- recall_hits_log, stale_recalls, leaked_recalls (one row per returned memory)
COMMENT ON COLUMN recall_hits_log.recall_id IS 'the recall (recall_log.id)';
COMMENT ON COLUMN recall_hits_log.occurred_at IS 'when (naive UTC)';
COMMENT ON COLUMN recall_hits_log.agent_id IS 'agent that asked';
COMMENT ON COLUMN recall_hits_log.session_id IS 'its session, if any';
COMMENT ON COLUMN recall_hits_log.query IS 'the query text';
COMMENT ON COLUMN recall_hits_log.include_archived IS 'whether superseded versions were asked for';
COMMENT ON COLUMN recall_hits_log.memory_id IS 'a memory it returned';
COMMENT ON COLUMN recall_hits_log.score IS 'its final score';
COMMENT ON COLUMN recall_hits_log.rank IS 'its position, from 1';
COMMENT ON COLUMN stale_recalls.recall_id IS 'the recall (recall_log.id)';
COMMENT ON COLUMN stale_recalls.occurred_at IS 'when';
COMMENT ON COLUMN stale_recalls.agent_id IS 'agent that asked';
COMMENT ON COLUMN stale_recalls.session_id IS 'its session, if any';
COMMENT ON COLUMN stale_recalls.query IS 'the query text';
COMMENT ON COLUMN stale_recalls.include_archived IS 'always false here';
COMMENT ON COLUMN stale_recalls.memory_id IS 'the stale memory returned';
COMMENT ON COLUMN stale_recalls.score IS 'its score';
COMMENT ON COLUMN stale_recalls.rank IS 'its position';
COMMENT ON COLUMN stale_recalls.status IS 'its status now (superseded, forgotten, pending, flagged)';
COMMENT ON COLUMN stale_recalls.status_since IS 'when it got that status (updated_at), before the recall';
COMMENT ON COLUMN leaked_recalls.recall_id IS 'the recall (recall_log.id)';
COMMENT ON COLUMN leaked_recalls.occurred_at IS 'when';
COMMENT ON COLUMN leaked_recalls.agent_id IS 'agent that asked';
COMMENT ON COLUMN leaked_recalls.session_id IS 'its session, if any';
COMMENT ON COLUMN leaked_recalls.query IS 'the query text';
COMMENT ON COLUMN leaked_recalls.include_archived IS 'whether superseded versions were asked for';
COMMENT ON COLUMN leaked_recalls.memory_id IS 'the memory it should not have seen';
COMMENT ON COLUMN leaked_recalls.score IS 'its score';
COMMENT ON COLUMN leaked_recalls.rank IS 'its position';
COMMENT ON COLUMN leaked_recalls.scope IS 'the memory''s scope';
COMMENT ON COLUMN leaked_recalls.owner_agent IS 'the memory''s owner agent';
COMMENT ON COLUMN leaked_recalls.team_id IS 'the memory''s team';
COMMENT ON COLUMN leaked_recalls.tenant_id IS 'the memory''s tenant';

-- memory_utility, decay_histogram, blocked_writes_by_reason
COMMENT ON COLUMN memory_utility.id IS 'memory id';
COMMENT ON COLUMN memory_utility.type IS 'memory type';
COMMENT ON COLUMN memory_utility.key IS 'semantic key';
COMMENT ON COLUMN memory_utility.content IS 'the fact';
COMMENT ON COLUMN memory_utility.helpful_count IS 'times marked helpful';
COMMENT ON COLUMN memory_utility.unhelpful_count IS 'times marked unhelpful';
COMMENT ON COLUMN memory_utility.net_helpful IS 'helpful_count - unhelpful_count';
COMMENT ON COLUMN memory_utility.access_count IS 'times recalled';
COMMENT ON COLUMN decay_histogram.bucket_from IS 'lower bound of the effective-importance bucket (0.0, 0.1, … 0.9)';
COMMENT ON COLUMN decay_histogram.memories IS 'live memories in the bucket';
COMMENT ON COLUMN decay_histogram.exempt IS 'of which exempt from decay (user, pinned)';
COMMENT ON COLUMN blocked_writes_by_reason.reason IS 'scanner reason';
COMMENT ON COLUMN blocked_writes_by_reason.path IS 'write path';
COMMENT ON COLUMN blocked_writes_by_reason.attempts IS 'refused writes';
COMMENT ON COLUMN blocked_writes_by_reason.last_seen IS 'latest one';

-- memory_health (one row)
COMMENT ON COLUMN memory_health.live_memories IS 'memories with status active';
COMMENT ON COLUMN memory_health.archived IS 'of which in the archival tier and not yet exported to Parquet (exported rows: memories_all)';
COMMENT ON COLUMN memory_health.superseded IS 'old versions kept for history in the memories table (exported ones: memories_all)';
COMMENT ON COLUMN memory_health.provenance_coverage IS 'share of live memories with a recorded source';
COMMENT ON COLUMN memory_health.open_contradictions IS 'contradictions waiting for a decision';
COMMENT ON COLUMN memory_health.contradiction_rate IS 'share of recalled memories (recall_log, history reads aside) that had an unresolved contradiction when recalled (seed 001: 检索结果中未处理冲突的比例), 0..1';
COMMENT ON COLUMN memory_health.stale_recalls IS 'recalls that returned a superseded or forgotten memory: must be 0';
COMMENT ON COLUMN memory_health.leaked_recalls IS 'recalls that returned a memory the caller could not see: must be 0';
COMMENT ON COLUMN memory_health.helpful_share IS 'helpful marks / all outcome marks';
COMMENT ON COLUMN memory_health.due_for_archive IS 'live memories below archive_threshold now and not yet in the archival tier (echo-duck decay moves them there)';
COMMENT ON COLUMN memory_health.blocked_writes IS 'refused writes in the quarantine';
COMMENT ON COLUMN memory_health.stale_vectors IS 'memories to re-embed (echo-duck reembed)';
COMMENT ON COLUMN memory_health.pending_jobs IS 'consolidation jobs not done (echo-duck consolidate --pending)';

-- kb_overview, kb_stale_vectors
COMMENT ON COLUMN kb_overview.id IS 'document id';
COMMENT ON COLUMN kb_overview.source IS 'collection name';
COMMENT ON COLUMN kb_overview.path IS 'file path; NULL for a raw text';
COMMENT ON COLUMN kb_overview.title IS 'document title';
COMMENT ON COLUMN kb_overview.tags IS 'document tags';
COMMENT ON COLUMN kb_overview.size IS 'characters';
COMMENT ON COLUMN kb_overview.content_hash IS 'sha256 of the text';
COMMENT ON COLUMN kb_overview.added_at IS 'first ingest';
COMMENT ON COLUMN kb_overview.updated_at IS 'last change';
COMMENT ON COLUMN kb_overview.status IS 'always active here';
COMMENT ON COLUMN kb_overview.chunks IS 'number of chunks';
COMMENT ON COLUMN kb_overview.flagged_chunks IS 'of which flagged by the scanner';
COMMENT ON COLUMN kb_overview.agent_id IS 'agent that added the document (empty: added before documents had owners)';
COMMENT ON COLUMN kb_overview.scope IS 'visibility: private | session | team | tenant | public';
COMMENT ON COLUMN kb_overview.team_id IS 'team of a team-scoped document';
COMMENT ON COLUMN kb_overview.tenant_id IS 'tenant of a tenant-scoped document';
COMMENT ON COLUMN kb_overview.sensitivity IS 'normal | personal | sensitive';
COMMENT ON COLUMN kb_overview.by_host IS 'the host application added this document itself (kb_documents.by_host)';
COMMENT ON COLUMN kb_stale_vectors.chunk_id IS 'chunk to re-embed';
COMMENT ON COLUMN kb_stale_vectors.document_id IS 'its document';
COMMENT ON COLUMN kb_stale_vectors.vector_model IS 'model of its current vector; NULL when it has none';
COMMENT ON COLUMN kb_stale_vectors.current_model IS 'the store''s embedding model';
COMMENT ON MACRO TABLE memories_as_of IS 'memories_as_of(ts) -> every memory that existed at ts as it was then (content, status, tier, confidence, importance, pins, counts, versions), rebuilt from memory_events alone: versions exported to Parquet or removed by gc come back, purged ones never. Who may see a version is the narrower of then and now (a later version that made it sensitive or unshared it narrows it at every instant). Example: SELECT key, content, status FROM memories_as_of(TIMESTAMP ''2026-01-01'')';
COMMENT ON MACRO TABLE snapshot_candidates_as_of IS 'snapshot_candidates_as_of(caller_agent, caller_session, min_confidence, self_threshold, ts, p_caller_host := NULL) -> snapshot_candidates over the memories and contradictions as they were at ts';
COMMENT ON MACRO TABLE contradictions_as_of IS 'contradictions_as_of(ts) -> the contradictions found by ts as they stood then: status, resolution, winner and resolved_at from the last decision made by ts (contradiction_decisions), pending while none was';
COMMENT ON MACRO TABLE snapshot_conflicts_as_of IS 'snapshot_conflicts_as_of(caller_agent, caller_session, ts, p_caller_host := NULL) -> snapshot_conflicts as they stood at ts';
COMMENT ON MACRO exported_under_key IS 'exported_under_key(m, fact) -> BOOLEAN: is row m (a memories_all row as a struct) one its writer (agent and host mark) exported to Parquet under keyed row fact''s key in the same scope (and session), active or superseded: the same fact, though written again after the export it starts at version 1; history, forget and purge of the key reach it';
COMMENT ON MACRO exported_by IS 'exported_by(id, ts) -> BOOLEAN: was the memory in the Parquet archive at ts (its latest export, restore or forget event by then an export)? find, recall and the snapshot as of ts leave such a row out, as their live twins do; get and history as of ts reach it';
