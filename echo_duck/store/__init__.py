"""The facade: ``facade.EchoDuck`` (returned by ``echo_duck.open``) owns the connection and wires the
layers below into verbs; ``read_verbs``, ``session_verbs``, ``lifecycle_verbs``, ``kb_verbs`` and
``admin_verbs`` are its mixins (``opening`` runs what a writable open recovers); ``working`` is the
in-process working memory; ``tools`` exposes the verbs as agent tools (``profile_tool`` holds the profile section
tool); ``doctor`` checks an install and a store (``doctor_store`` holds the store checks, ``doctor_report`` what it
reports); ``docs`` renders the SQL reference.
May import: ``recall``, ``lifecycle``, ``kb``, ``io``, ``write``, ``index``, ``storage``, ``embed``, ``text``,
``errors``, ``models``.
"""
