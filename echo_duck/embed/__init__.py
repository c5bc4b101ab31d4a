"""Embeddings: the ``Embedder`` protocol, the packaged ONNX models (found inside other PyPI packages,
loaded lazily, once per process), a hash embedder for tests, and the default model's direction of asking,
which a question's vector loses before recall searches with it (``question_axis``).
May import: ``errors``.
"""
