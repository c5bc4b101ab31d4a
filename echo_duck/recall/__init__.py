"""Recall: from a question to ranked memories, and the prompt snapshot.

``hybrid`` runs a recall (both arms, eligibility, fusion, rerank, bookkeeping); ``hits`` holds what it is
asked and returns (RecallQuery, Hit, Explanation); ``eligibility`` keeps the candidates a caller may see over
an in-process copy (``decay_terms``: each one's decay and time terms), ``fusion`` repeats ``recall_fused``'s
arithmetic in process (tested bit-equal to the SQL, which stays the definition), ``recall_log`` writes
reinforcement and the recall log behind the recall, ``rerank`` is the optional rerank of the fused top hits
and ``cross_encoder`` the models it can run (the shipped English one among them); ``snapshot`` renders what an
agent sees every turn; ``vector_text`` is the question as the vector arm embeds it (without the words most of
the store holds), ``bridge_arm`` the coverage of its dictionary translations for the candidates written in
the other language.
May import: ``storage``, ``index``, ``write``, ``text``, ``embed``, ``errors``, ``models``.
"""
