"""Embeddings: the ``Embedder`` protocol, the packaged ONNX models (found inside other PyPI packages,
loaded lazily, once per process) and a hash embedder for tests. May import: ``errors``.
"""
