"""Benchmarks, run through ``echo-duck bench``: retrieval quality (``locomo``), speed against other
stores (``perf`` with ``peers*`` and ``report``), the lifecycle jobs, and the notebooks' tour store.

May import: ``store``, ``recall``, ``lifecycle``, ``kb``, ``io``, ``write``, ``index``, ``storage``, ``embed``,
``text``, ``errors``, ``models``.
"""
