"""The knowledge base: external documents kept apart from memories.

``documents`` stores documents and chunks with their postings and vectors and searches them;
``sources`` reads files, folders and raw texts (and holds an agent handle to the files it may read);
``chunking`` cuts them at headings and screens each chunk; ``masking`` masks secrets in a whole document,
a chunk and a path; ``rendering`` renders found chunks for a prompt; ``records`` holds the dataclasses a
search or an add returns.
May import: ``storage``, ``index``, ``write``, ``text``, ``embed``, ``errors``, ``models``.
"""
