"""The knowledge base: external documents kept apart from memories.

``documents`` stores documents and chunks with their postings and vectors and searches them;
``chunking`` reads files, cuts them at headings, screens each chunk and renders found chunks;
``records`` holds the dataclasses a search or an add returns.
May import: ``storage``, ``index``, ``write``, ``text``, ``embed``, ``errors``, ``models``.
"""
