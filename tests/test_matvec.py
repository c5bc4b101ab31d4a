"""echo_duck/index/matvec.py: products in pieces that stay on the calling thread, with every score's bits."""

from __future__ import annotations

import numpy as np
import pytest

from echo_duck.index import matvec as matvec_module
from echo_duck.index.matvec import matvec

OPENBLAS_THREADS_FROM = 460_800  # elements: below this numpy's OpenBLAS computes a product on one thread


def piece_rows(dim: int) -> int:
    return (1 << 18) // dim // 16 * 16


@pytest.mark.parametrize("dim", [64, 96, 128, 384, 512, 768, 1024])
def test_pieces_give_the_bits_of_one_product_on_one_thread(dim):
    """Sizes around the piece boundaries, each small enough that ``matrix @ vector`` stays on one thread."""
    rng = np.random.default_rng(dim)
    piece = piece_rows(dim)
    sizes = [0, 1, 15, 16, piece - 1, piece, piece + 1, piece + 15, piece + 16, piece + 17, piece + 40,
             2 * piece + 3, 2 * piece + 16]
    for rows in (s for s in sizes if s * dim < OPENBLAS_THREADS_FROM):
        matrix = rng.standard_normal((rows, dim)).astype(np.float32)
        vector = rng.standard_normal(dim).astype(np.float32)
        got = matvec(matrix, vector)
        assert got.dtype == np.float32 and got.shape == (rows,)
        assert np.array_equal(got, matrix @ vector), rows


def test_large_products_agree_with_numpy_to_float32_rounding():
    """Past the threshold numpy splits the product between threads, which may group rows differently."""
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((20_011, 512)).astype(np.float32)
    vector = rng.standard_normal(512).astype(np.float32)
    np.testing.assert_allclose(matvec(matrix, vector), matrix @ vector, rtol=1e-5, atol=1e-5)


def test_a_slice_of_a_larger_matrix_is_scored_in_place():
    """VectorIndex passes a slice of its matrix: rows outside it are neither read into the result nor written."""
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((5_000, 512)).astype(np.float32)
    before = matrix.copy()
    vector = rng.standard_normal(512).astype(np.float32)
    got = matvec(matrix[1_003:4_999], vector)
    assert len(got) == 3_996
    np.testing.assert_allclose(got, matrix[1_003:4_999] @ vector, rtol=1e-5, atol=1e-5)
    assert np.array_equal(matrix, before)


def test_every_piece_stays_under_the_threshold(monkeypatch):
    """The pieces are what keeps the product on the calling thread: at most 2^18 elements each, whole
    groups of 16 rows but the last, and no last piece shorter than 16 rows."""
    seen = []
    real = np.matmul

    def spy(a, b, out=None):
        seen.append(a.shape[0])
        return real(a, b, out=out)

    monkeypatch.setattr(matvec_module.np, "matmul", spy)
    for rows in (10_000, 10_247, 10_255):
        seen.clear()
        matvec(np.ones((rows, 512), np.float32), np.ones(512, np.float32))
        assert sum(seen) == rows and all(n * 512 <= (1 << 18) + 15 * 512 for n in seen)
        assert all(n == 512 for n in seen[:-1]) and seen[-1] >= 16
