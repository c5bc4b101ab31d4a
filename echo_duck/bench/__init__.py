"""Benchmarks, run through ``echo-duck bench``: retrieval quality (``locomo``; ``recall_quality`` on every set,
with the ``plain_rankers`` beside it), speed against other
stores (``perf`` with ``perf_system``, ``peers*`` and ``report``; ``summary`` writes the README's table), the
lifecycle jobs, how questions' time expressions are read (``time_windows``) and notes that say something
changed are told (``change_words``), and the notebooks' tour store.

May import: ``store``, ``recall``, ``lifecycle``, ``kb``, ``io``, ``write``, ``index``, ``storage``, ``embed``,
``text``, ``errors``, ``models``.
"""
