"""Moving memories in and out of a store: ``importers`` (echo_duck exports and other agents' files,
every record through the write path; ``import_files`` parses the files, ``import_trust`` keeps their
provenance, usage and version chains), ``exporters`` (JSONL and Parquet of what a caller may see)
and ``scaleout`` (a shared team catalog on DuckLake).
May import: ``storage``, ``write``, ``errors``, ``models``.
"""
