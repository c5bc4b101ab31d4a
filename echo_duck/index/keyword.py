"""The BM25 keyword index (SPEC R1): postings kept fresh inside each write's transaction.

fts's own index never follows INSERT/UPDATE/DELETE (a rebuild takes seconds at 100k rows), so
echo_duck keeps ``bm25_postings`` itself and scores them with the same formula as ``match_bm25``
(sql/macros/30_bm25.sql). Texts are segmented in Python (jieba for Chinese) before they reach SQL.
The fts extension stays the reference: ``build_fts_index`` builds it for analysts over the same text.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Iterable, Sequence  # noqa: F401

import pyarrow as pa

from ..storage.db import Db
from ..text import segment as text

# Bump when segmentation changes in a way that alters tokens: stored postings are then rebuilt.
# 2: a memory's key is indexed beside its content.
# 3: Han runs read in simplified characters (segment.simplified); 4: no inner sub-word straddling a word's parts
SEGMENTER_VERSION = "4"
# What a memory is indexed with; "own-text" since neighbour context was dropped (issue 18): a store
# indexed with its session neighbour's text is rebuilt on its next writable open.
INDEX_TEXT = "own-text"
_STAGE = "echo_duck_keyword_stage"


class KeywordIndex:
    def __init__(self, db: Db):
        self.db = db

    def ensure_ready(self) -> None:
        """Rebuild the postings if stop words, segmentation or DuckDB's hash() changed since they were built."""
        signature = self._signature()
        with self.db.reading():
            stored = self.db.scalar("store_info_value", name="keyword_index_signature")
        if stored == signature:
            return
        with self.db.transaction("rebuilding the keyword index"):
            self.db.run("clear_stopwords")
            self.db.con.register(_STAGE, pa.table({"word": sorted(text.STOP_WORDS)}))
            try:
                self.db.run("insert_stopwords_from_stage")
            finally:
                self.db.con.unregister(_STAGE)
            self.db.run("clear_keyword_index")
            rows = self.db.run("all_memory_texts").fetchall()
            keys = dict(self.db.run("all_memory_keys").fetchall())
            self.add([(memory_id, index_text(content, keys.get(str(memory_id)))) for memory_id, content in rows])
            self.compact_in_transaction()
            self.db.run("set_store_info", name="keyword_index_signature", value=signature)

    def add(self, docs: Sequence[tuple[uuid.UUID | str, str]]) -> None:
        """Index (memory_id, segmented text) pairs; call inside the write's transaction."""
        if not docs:
            return
        stage = pa.table({"memory_id": [str(d[0]) for d in docs], "tokens": [d[1] for d in docs]})
        self.db.con.register(_STAGE, stage)
        try:
            self.db.run("insert_keyword_docs_from_stage")
            self.db.run("insert_keyword_postings_from_stage")
        finally:
            self.db.con.unregister(_STAGE)

    def remove(self, memory_ids: Iterable[uuid.UUID | str]) -> None:
        """Forget documents; their postings are skipped until the next compaction."""
        for memory_id in memory_ids:
            self.db.run("mark_keyword_doc_dead", id=memory_id)
            self.db.run("delete_keyword_doc", id=memory_id)

    def compact(self) -> dict:
        """Drop dead postings and sort by term so searches read fewer row groups (a batch job)."""
        with self.db.transaction("compacting the keyword index"):
            return self.compact_in_transaction()

    def compact_in_transaction(self) -> dict:
        dead = self.db.scalar("count_dead_keyword_docs")
        self.db.run("stage_live_postings_sorted")
        try:
            self.db.run("clear_postings")
            self.db.run("insert_postings_from_sorted_stage")
        finally:
            self.db.run("drop_sorted_postings_stage")
        self.db.run("clear_dead_keyword_docs")
        return {"dead_docs_dropped": dead, "postings": self.db.scalar("count_postings")}

    def build_fts_index(self) -> None:
        """(Re)build DuckDB's fts index over bm25_docs.tokens, for analysts who call match_bm25."""
        with self.db.transaction("building the fts index"):
            self.db.run("create_fts_index")

    def _signature(self) -> str:
        with self.db.reading():
            hash_probe = self.db.scalar("hash_probe")
        words = "\n".join(sorted(text.STOP_WORDS))
        return hashlib.sha256(f"{SEGMENTER_VERSION}|{INDEX_TEXT}|{hash_probe}|{words}".encode()).hexdigest()[:16]


def index_text(content: str, key: str | None = None) -> str:
    """What BM25 indexes for a memory: its own content, segmented (no text of any other memory), and its key's
    words ("package_manager" -> package manager): an agent's key names the fact, often in English whatever
    language the fact is in."""
    tokens = text.segment_for_index(content)
    named = text.segment_for_index(key) if key else ""
    return f"{tokens} {named}" if tokens and named else tokens or named


def query_text(query: str) -> str:
    return text.segment_for_index(query)
