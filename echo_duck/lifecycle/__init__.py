"""The lifecycle of stored memories: forgetting and what comes after a write.

``decay`` (effective importance, archiving by decay, restore), ``archive`` (Parquet cold archive),
``privacy`` (purge cascade), ``contradictions`` with ``verify`` (candidates and the verifier),
``consolidate`` with ``extract`` and ``summary`` (sessions to episodes and facts).
May import: ``storage``, ``index``, ``write``, ``text``, ``embed``, ``errors``, ``models``.
"""
