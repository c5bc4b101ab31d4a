"""The ``echo-duck`` command: a thin click layer, one command per library call, no SQL and no logic.

``main`` is the group and the memory commands; ``common`` the shared options, opening a store and
error mapping; ``output`` renders tables and JSON; the other modules are command groups.
May import: ``store``, ``io``, ``bench`` and the public ``errors`` and ``models``.
"""
