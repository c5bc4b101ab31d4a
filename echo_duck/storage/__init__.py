"""Storage: the DuckDB file and everything that touches it directly.

``connection`` opens a file (extensions first, lock retries, DuckDB errors translated to echo_duck's),
``extensions`` loads the vss/fts wheels offline, ``schema`` runs the numbered migrations and the macro
and view files (``catalog`` says whether the file's still are this echo_duck's), ``sqlfiles`` finds and parses ``sql/``, ``agent_files`` says which files an agent handle may
read and write, and ``db.Db`` is a connection plus the named queries behind one re-entrant lock.
May import: ``errors``, ``models``, ``text`` (its ``marshal_cache``). Nothing above it.
"""
