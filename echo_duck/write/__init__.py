"""The one write path every public route takes (API, CLI, import, consolidation, tools, KB). ``validate`` checks
and normalises values, ``scan`` (a package, one module per layer) refuses or quarantines injected
instructions, exfiltration, secrets and invisible characters, ``spec`` says what a write is (Caller,
NewMemory, prepare), ``guards`` who may write what (ownership, provenance, publish rights), ``targets`` which
stored memory a target names, ``writer`` runs
the provenance guard and the versioned upsert with its event, ``narrowing`` hides a fact's earlier versions
when a new one is shown to fewer agents, ``review`` approves or rejects quarantined memories, ``bulk`` writes
a batch set-based, ``sessions`` stores raw conversations, and ``quoting`` finds the episode summaries a
forgotten fact's words live on in. May import: ``storage``, ``index``, ``text``, ``embed``, ``errors``,
``models``.
"""
