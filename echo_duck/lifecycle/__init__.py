"""The lifecycle of stored memories: forgetting and what comes after a write.

``decay`` (effective importance, archiving by decay, restore), ``archive`` (Parquet cold archive), ``returning`` (a
memory restored from it), ``privacy`` (purge cascade), ``contradictions`` with ``candidates`` and ``verify`` (the
pairs it reads, the verifier), ``consolidate`` with ``extract`` (``extract_llm``: an LLM in its place) and
``summary`` (sessions to episodes and facts).
May import: ``storage``, ``index``, ``write``, ``text``, ``embed``, ``errors``, ``models``.
"""
