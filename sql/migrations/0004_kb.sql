-- 0004_kb: the knowledge base (SPEC M5): external documents in their own tables, postings and
-- vectors, physically apart from memories so recall never mixes them in unless asked.
-- Run once, inside one transaction with its schema_version row. Never edit after release.

-- One row per ingested document: a file (keyed by its absolute path) or a raw text (path NULL,
-- keyed by its source name). A removed document keeps its row (status 'removed') and loses its chunks.
CREATE TABLE kb_documents (
    id           UUID PRIMARY KEY,
    path         VARCHAR,
    source       VARCHAR NOT NULL CHECK (length(source) BETWEEN 1 AND 200),
    content_hash VARCHAR NOT NULL,
    title        VARCHAR NOT NULL,
    tags         VARCHAR[] NOT NULL DEFAULT [],
    size         BIGINT NOT NULL CHECK (size >= 0),
    added_at     TIMESTAMP NOT NULL,
    updated_at   TIMESTAMP NOT NULL,
    status       VARCHAR NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'removed')),
    CHECK (updated_at >= added_at)
);
COMMENT ON TABLE kb_documents IS 'Knowledge-base documents (files or raw texts); never part of memory recall unless asked';
COMMENT ON COLUMN kb_documents.path IS 'absolute POSIX path of the file; NULL for a raw text (then the source names it)';
COMMENT ON COLUMN kb_documents.source IS 'collection name given at ingest (kb_add(..., source=)); search can filter on it';
COMMENT ON COLUMN kb_documents.content_hash IS 'sha256 of the text: an unchanged file is skipped on re-ingest';
COMMENT ON COLUMN kb_documents.size IS 'characters of the decoded text';
COMMENT ON COLUMN kb_documents.status IS 'active | removed (file deleted or kb_remove; chunks, vectors and postings are gone)';

-- The searchable pieces of a document; content = the document text [start_offset, end_offset),
-- minus any invisible/bidi characters (then flagged).
CREATE TABLE kb_chunks (
    id            UUID PRIMARY KEY,
    document_id   UUID NOT NULL,
    seq           INTEGER NOT NULL CHECK (seq >= 0),
    heading_trail VARCHAR[] NOT NULL DEFAULT [],
    start_offset  INTEGER NOT NULL CHECK (start_offset >= 0),
    end_offset    INTEGER NOT NULL,
    content       VARCHAR NOT NULL CHECK (length(content) >= 1),
    flagged       BOOLEAN NOT NULL DEFAULT false,
    flag_reason   VARCHAR,
    CHECK (end_offset > start_offset),
    CHECK (flagged = (flag_reason IS NOT NULL))
);
COMMENT ON TABLE kb_chunks IS 'Chunks of knowledge-base documents (by heading and paragraph, about 1,200 characters, small overlap)';
COMMENT ON COLUMN kb_chunks.seq IS 'position of the chunk in its document, from 0';
COMMENT ON COLUMN kb_chunks.heading_trail IS 'markdown headings enclosing the chunk, outermost first';
COMMENT ON COLUMN kb_chunks.start_offset IS 'character offset (Python str index) of the chunk in the decoded document text';
COMMENT ON COLUMN kb_chunks.end_offset IS 'exclusive end offset: text[start_offset:end_offset] is the chunk';
COMMENT ON COLUMN kb_chunks.flagged IS 'the write scanner matched (injection example, secret, hidden characters): stored and searchable, rendered as untrusted';
COMMENT ON COLUMN kb_chunks.flag_reason IS 'scanner reason and detail, e.g. prompt_injection: phrase ''ignore previous instructions''';

-- One vector per chunk, stamped with its model: chunks whose vector is from another model are left
-- out of vector search (kb_stale_vectors lists them until kb_reembed).
CREATE TABLE kb_vectors (
    chunk_id    UUID PRIMARY KEY,
    model_id    VARCHAR NOT NULL,
    dim         INTEGER NOT NULL CHECK (dim > 0),
    vector      FLOAT[] NOT NULL USING COMPRESSION uncompressed,  -- ALPRD made exact scans 8x slower
    embedded_at TIMESTAMP NOT NULL,
    CHECK (len(vector) = dim)
);
COMMENT ON TABLE kb_vectors IS 'Embedding of each knowledge-base chunk (heading trail + content), with the model_id and dim that produced it';

-- BM25 over segmented chunk text: the same design and formula as bm25_* for memories (and the same
-- bm25_stopwords), kept fresh by every ingest.
CREATE SEQUENCE kb_bm25_doc_seq START 1;
CREATE TABLE kb_bm25_docs (
    doc      BIGINT  NOT NULL,
    chunk_id UUID    PRIMARY KEY,
    len      INTEGER NOT NULL,
    tokens   VARCHAR NOT NULL
);
COMMENT ON TABLE kb_bm25_docs IS 'One row per indexed chunk: doc number, length in terms, and the segmented heading trail + content';
COMMENT ON COLUMN kb_bm25_docs.tokens IS 'space-separated tokens (jieba for Chinese, lower-cased words otherwise); build an fts index over this column to use match_bm25';

CREATE TABLE kb_bm25_postings (
    term     UBIGINT NOT NULL,
    doc      BIGINT  NOT NULL,
    chunk_id UUID    NOT NULL,
    tf       INTEGER NOT NULL,
    doc_len  INTEGER NOT NULL
);
COMMENT ON TABLE kb_bm25_postings IS 'Knowledge-base postings: term = hash(stem(token, porter)); compaction drops dead docs and sorts by term';

CREATE TABLE kb_bm25_dead (doc BIGINT NOT NULL);
COMMENT ON TABLE kb_bm25_dead IS 'Knowledge-base doc numbers removed since the last compaction; searches skip them';

INSERT INTO settings VALUES
    ('kb_importance', 0.5, 'a knowledge-base hit scores rrf × (importance_floor + (1 - importance_floor) × kb_importance): like a fresh memory of this importance, so recall(include_kb=True) can merge both lists');
