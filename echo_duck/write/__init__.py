"""The one write path every public route takes (API, CLI, import, consolidation, tools, KB).

``validate`` checks and normalises values, ``scan`` (with ``scan_rules``) refuses injected
instructions, exfiltration, secrets and invisible characters, ``writer`` runs the provenance guard
and the versioned upsert with its event, ``bulk`` writes a batch set-based, and ``sessions`` stores
raw conversations. May import: ``storage``, ``index``, ``text``, ``embed``, ``errors``, ``models``.
"""
