-- 0002_recall: what hybrid recall needs: an incrementally maintained BM25 index, the retrieval log,
-- outcome feedback, text-valued store facts (current embedding model) and the ranking tunables.
-- Run once, inside one transaction with its schema_version row. Never edit after release.

-- Text facts about the store, e.g. which embedding model its vectors should come from.
CREATE TABLE store_info (
    name  VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);
COMMENT ON TABLE store_info IS 'Text-valued facts about the store (embedding_model, keyword_index_signature)';

-- BM25 over segmented text, scoring exactly like fts's match_bm25 (k1 1.2, b 0.75, porter) but
-- fresh after every write: a write appends postings; a delete only marks its doc dead until compaction.
CREATE TABLE bm25_stopwords (sw VARCHAR PRIMARY KEY);
COMMENT ON TABLE bm25_stopwords IS 'Bilingual stop words: never indexed; also the stopwords= table for fts';

CREATE SEQUENCE bm25_doc_seq START 1;
CREATE TABLE bm25_docs (
    doc       BIGINT  NOT NULL,
    memory_id UUID    PRIMARY KEY,
    len       INTEGER NOT NULL,
    tokens    VARCHAR NOT NULL
);
COMMENT ON TABLE bm25_docs IS 'One row per indexed memory: its doc number, length in terms, and the segmented text that was indexed (content plus conversational context)';
COMMENT ON COLUMN bm25_docs.tokens IS 'space-separated tokens (jieba for Chinese, lower-cased words otherwise); build an fts index over this column to use match_bm25';

CREATE TABLE bm25_postings (
    term      UBIGINT NOT NULL,
    doc       BIGINT  NOT NULL,
    memory_id UUID    NOT NULL,
    tf        INTEGER NOT NULL,
    doc_len   INTEGER NOT NULL
);
COMMENT ON TABLE bm25_postings IS 'term = hash(stem(token, porter)); compaction drops dead docs and sorts by term';

CREATE TABLE bm25_dead (doc BIGINT NOT NULL);
COMMENT ON TABLE bm25_dead IS 'Doc numbers removed since the last compaction; searches skip them';

-- What each recall returned: the retrieval log analysts query.
CREATE SEQUENCE recall_log_seq START 1;
CREATE TABLE recall_log (
    id           BIGINT PRIMARY KEY DEFAULT nextval('recall_log_seq'),
    occurred_at  TIMESTAMP NOT NULL,
    agent_id     VARCHAR NOT NULL,
    session_id   VARCHAR,
    query        VARCHAR NOT NULL,
    k            INTEGER NOT NULL,
    model_id     VARCHAR,
    memory_ids   UUID[] NOT NULL,
    scores       DOUBLE[] NOT NULL,
    reinforced   BOOLEAN NOT NULL,
    include_archived BOOLEAN NOT NULL DEFAULT false
);
COMMENT ON TABLE recall_log IS 'Every recall: who asked what, which memories came back with which scores';

CREATE SEQUENCE memory_feedback_seq START 1;
CREATE TABLE memory_feedback (
    id          BIGINT PRIMARY KEY DEFAULT nextval('memory_feedback_seq'),
    occurred_at TIMESTAMP NOT NULL,
    agent_id    VARCHAR NOT NULL,
    memory_id   UUID NOT NULL,
    recall_id   BIGINT,
    helpful     BOOLEAN NOT NULL
);
COMMENT ON TABLE memory_feedback IS 'Outcome feedback on recalled memories (helpful or not)';

INSERT INTO settings VALUES
    ('rrf_k', 60, 'k of reciprocal rank fusion: score = sum of weight / (k + rank)'),
    ('keyword_pool', 50, 'BM25 candidates taken into fusion'),
    ('vector_pool', 50, 'vector candidates taken into fusion'),
    ('vector_weight_low', 0.2, 'weight of the vector arm for a specific (low-entropy) query; BM25 weighs 1'),
    ('vector_weight_high', 0.8, 'weight of the vector arm for a broad (high-entropy) query'),
    ('keyword_score_power', 1, 'BM25 term of the fusion × min(score / query_idf, 1)^power: how much of the query matched; 0 = plain RRF'),
    ('vector_score_power', 1, 'vector term × clamp((similarity - vector_min_similarity) / (vector_strong_similarity - vector_min_similarity))^power; 0 = plain RRF'),
    ('vector_strong_similarity', 0.6, 'cosine similarity at which a vector match counts in full (paraphrases and translations score 0.6-0.8)'),
    ('gate_df_ratio', 0.5, 'a keyword-only candidate whose rarest matched term is in more than this share of rows is dropped'),
    ('vector_min_similarity', 0.2, 'a vector-only candidate below this cosine similarity is dropped'),
    ('archived_weight', 0.5, 'score multiplier for archival-tier rows'),
    ('importance_floor', 0.5, 'score multiplier = floor + (1 - floor) * effective importance'),
    ('unhelpful_penalty', 0.2, 'each net unhelpful mark multiplies the score by (1 - penalty)'),
    ('context_neighbors', 1, 'earlier memories of the same source session indexed with a memory (BM25)');
