"""The search indexes a memory is found by, kept in step with the memories table inside each write.

``keyword`` keeps the BM25 postings (``bm25_postings``), ``keyword_search`` scores them over an
in-process copy; ``vectors`` keeps one vector per memory and its exact search (``quantised_scan``: an
int8 first pass; ``matvec``: float32 products kept on the calling thread; ``growing``: numpy columns
that grow by appends); ``indexing.Indexer`` ties both to a write.
May import: ``storage``, ``text``, ``embed``, ``errors``, ``models``.
"""
