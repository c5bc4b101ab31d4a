"""The int8 first pass of the vector arm (echo_duck/index/quantised_scan.py): the bound it relies on holds
for every row, and the top-n it returns is the float32 scan's, under filters, rewrites and odd vectors.
(Stores with small blocks and the real model: test_vectors.py and test_recall.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from echo_duck.index import quantised_scan
from echo_duck.index.quantised_scan import PackedSegment, QuantisedScan, quantise_query, quantise_rows

DIM = 96
BLOCK = 64


def clustered(rng, n: int, dim: int = DIM) -> np.ndarray:
    """Unit vectors around a few centres, with exact duplicates: many near ties at any cut."""
    centres = rng.standard_normal((8, dim))
    rows = centres[rng.integers(0, 8, n)] + 0.35 * rng.standard_normal((n, dim))
    rows[5::97] = rows[4::97][: len(rows[5::97])]  # duplicates
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def with_room(rows: np.ndarray) -> np.ndarray:
    """The matrix as VectorIndex holds it: spare rows of zeros after the used ones."""
    matrix = np.zeros((len(rows) + 50, rows.shape[1]), np.float32)
    matrix[: len(rows)] = rows
    return matrix


def float32_scan(matrix, count, query, n, keep=None):
    sims = matrix[:count] @ query
    rows = np.arange(count) if keep is None else np.flatnonzero(keep[:count])
    order = np.lexsort((rows, -sims[rows]))[:n]
    return rows[order], sims[rows][order]


def assert_same_top(got, want, matrix, query):
    """The float32 scan's top n. Rows whose similarities are within float32 rounding (1 ulp: the
    re-scored rows go through BLAS in a smaller batch) may swap at the cut, nothing else may differ."""
    (rows, sims), (want_rows, want_sims) = got, want
    assert len(rows) == len(set(rows.tolist())) == len(want_rows)
    np.testing.assert_allclose(sims, want_sims, rtol=0, atol=1e-6)
    np.testing.assert_allclose(sims, matrix[rows] @ query, rtol=0, atol=1e-6)  # each row's own score
    if len(want_rows):
        must = set(want_rows[want_sims > want_sims[-1] + 1e-6].tolist())
        assert must <= set(rows.tolist())
    assert np.all(np.diff(sims) <= 1e-6)  # best first


@pytest.fixture(params=["probed", "7 bits"])
def bits(request, monkeypatch):
    """The query quantisation this CPU's kernel allows (query_quantisation), and the 7-bit one forced, so that
    the form a CPU without VNNI takes is checked on every CPU."""
    if request.param == "7 bits":
        monkeypatch.setattr(quantised_scan, "query_quantisation", lambda: quantised_scan._SEVEN_BITS)
    return request.param


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    rows = clustered(rng, 1000)  # 15 blocks of 64 and 40 rows after them
    queries = [*clustered(rng, 12), rows[3], rows[999], -rows[10]]
    return rows, queries


def test_the_bound_holds_for_every_packed_row(data, bits):
    rows, queries = data
    matrix = with_room(rows)
    scan = QuantisedScan(BLOCK)
    scan.top(matrix, len(rows), queries[0], 1)
    assert scan.sealed == 960
    closest = np.inf
    for query in queries:
        approx, slack = scan.approximate(query)
        exact = matrix[:960] @ query
        gap = slack - np.abs(exact - approx)
        assert gap.min() >= 0, f"the bound fails for row {gap.argmin()}"
        closest = min(closest, float((np.abs(exact - approx) / slack).max()))
    assert closest > 0.1, "the bound is ten times looser than it needs to be: it would pass on too many rows"


def test_the_bound_is_tight_when_the_rounding_lines_up():
    """Rows (1, t) with t half a step between int8 codes, and the query (0, 1): the whole rounding
    error lands on the query, so the true gap is almost exactly the bound, and no smaller bound holds."""
    t = (np.arange(BLOCK) % 100 + 0.4999) / 127
    rows = np.stack([np.ones(BLOCK), t], axis=1)
    rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    scan = QuantisedScan(BLOCK)
    query = np.array([0, 1], np.float32)
    scan.top(with_room(rows), BLOCK, query, 1)
    approx, slack = scan.approximate(query)
    error = np.abs(rows @ query - approx)
    assert np.all(error <= slack)
    assert (error / slack).max() > 0.95


def test_the_int8_kernel_computes_the_integer_product_exactly(data, bits):
    rows, queries = data
    block = PackedSegment(rows[:BLOCK])
    codes = quantise_rows(rows[:BLOCK])[0].astype(np.int64)
    for query in queries:
        query_codes = quantise_query(query)[0]
        want = codes @ (query_codes[0].astype(np.int64) - quantised_scan.query_quantisation()[0])
        assert np.array_equal(block.scores(query_codes), want)


def test_the_int8_kernel_does_not_saturate(bits):
    """Without VNNI (AVX2 alone) onnxruntime's u8 × s8 kernel adds pairs of products in int16 with saturation:
    query bytes and row codes at their extremes, side by side, are where it would clip."""
    dim = 64
    rows = np.ones((BLOCK, dim), np.float32)
    rows[1::2] = -1
    rows[2::4, ::2] = -1  # mixed signs within a row
    block = PackedSegment(rows)
    codes = quantise_rows(rows)[0].astype(np.int64)
    assert np.abs(codes).max() == 127
    for query in (np.ones(dim), -np.ones(dim), np.where(np.arange(dim) % 2, 1.0, -1.0)):
        query_codes = quantise_query(query.astype(np.float32))[0]
        assert np.abs(query_codes.astype(np.int64) - quantised_scan.query_quantisation()[0]).max() > 0
        want = codes @ (query_codes[0].astype(np.int64) - quantised_scan.query_quantisation()[0])
        assert np.array_equal(block.scores(query_codes), want)


@pytest.mark.parametrize("n", [0, 1, 7, 50, 200, 2000])
@pytest.mark.parametrize("kept", ["all", "30%", "0.5%", "one block", "none"])
def test_top_n_is_the_float32_scans(data, n, kept, bits):
    rows, queries = data
    matrix, count = with_room(rows), len(rows)
    keep = {"all": None, "30%": np.random.default_rng(1).random(count) < 0.3,
            "0.5%": np.random.default_rng(2).random(count) < 0.005,
            "one block": np.arange(count) // BLOCK == 3, "none": np.zeros(count, bool)}[kept]
    scan = QuantisedScan(BLOCK)
    for query in queries:
        got = scan.top(matrix, count, query, n, keep)
        assert_same_top(got, float32_scan(matrix, count, query, n, keep), matrix, query)
    assert scan.sealed == (960 if n else 0)  # asked for nothing, it packs nothing


def test_the_first_pass_rescored_far_fewer_rows_than_it_packed(data):
    """Otherwise the packing buys nothing (it is still exact: test above)."""
    rows, queries = data
    scan = QuantisedScan(BLOCK)
    scan.top(with_room(rows), len(rows), queries[0], 1)
    for query in queries:
        possible = scan._possible_rows(*scan.approximate(query), None, np.zeros(0, np.float32), 10)
        assert 10 <= len(possible) < 250


def test_rows_are_packed_as_blocks_fill_and_follow_the_matrix(data):
    rows, queries = data
    matrix = with_room(rows)
    scan = QuantisedScan(BLOCK)
    for count in (10, 63, 64, 65, 500, 1000):
        got = scan.top(matrix, count, queries[1], 20)
        assert scan.sealed == count // BLOCK * BLOCK
        assert_same_top(got, float32_scan(matrix, count, queries[1], 20), matrix, queries[1])


def test_rewritten_rows_are_scored_from_their_new_vectors(data):
    rows, queries = data
    matrix, count = with_room(rows), len(rows)
    scan = QuantisedScan(BLOCK)
    scan.top(matrix, count, queries[0], 5)
    query = queries[2]
    for row in (5, 200, 999):  # two packed rows, one after the blocks
        matrix[row] = query
        scan.rewritten(row)
    got = scan.top(matrix, count, query, 3)
    assert sorted(got[0].tolist()) == [5, 200, 999] and np.allclose(got[1], 1.0, atol=1e-5)
    matrix[7] = -query  # a packed row that was among the best no longer is
    scan.rewritten(7)
    for q in queries:
        assert_same_top(scan.top(matrix, count, q, 30), float32_scan(matrix, count, q, 30), matrix, q)


def test_many_rewrites_repack_their_segment(data):
    rows, queries = data
    matrix, count = with_room(rows), len(rows)
    scan = QuantisedScan(BLOCK)
    scan.top(matrix, count, queries[0], 5)
    assert [s.rows for s in scan._segments] == [512, 448]  # 8 blocks, then the 7 full blocks left
    rng = np.random.default_rng(3)
    for row in range(600, 600 + BLOCK // 4 + 1):  # just past the limit: the second segment is dropped
        matrix[row] = clustered(rng, 1)[0]
        scan.rewritten(row)
    assert scan.sealed == 512 and not scan._rewritten
    for q in queries:
        assert_same_top(scan.top(matrix, count, q, 25), float32_scan(matrix, count, q, 25), matrix, q)
    assert scan.sealed == 960  # packed again from the rewritten rows


def test_a_segment_with_room_is_packed_again_with_the_blocks_that_fill(data):
    rows, queries = data
    matrix = with_room(rows)
    scan = QuantisedScan(BLOCK)
    scan.top(matrix, 600, queries[0], 5)
    assert [s.rows for s in scan._segments] == [512, 64]
    matrix[520] = queries[3]  # rewritten in the second segment, which is packed again below
    scan.rewritten(520)
    assert scan._rewritten == {520}
    got = scan.top(matrix, 1000, queries[3], 5)
    assert [s.rows for s in scan._segments] == [512, 448] and not scan._rewritten
    assert got[0][0] == 520
    assert_same_top(got, float32_scan(matrix, 1000, queries[3], 5), matrix, queries[3])


def test_zero_vectors_and_a_zero_query(data):
    rows, _ = data
    rows = rows.copy()
    rows[100:140] = 0
    matrix, count = with_room(rows), len(rows)
    scan = QuantisedScan(BLOCK)
    zero = np.zeros(DIM, np.float32)
    got = scan.top(matrix, count, zero, 10)
    assert got[0].tolist() == list(range(10)) and not got[1].any()  # all tie at 0: first rows first
    query = rows[0]
    assert_same_top(scan.top(matrix, count, query, 60), float32_scan(matrix, count, query, 60), matrix, query)


def test_script_sums_are_each_scripts_count_sum_and_sum_of_squares():
    rng = np.random.default_rng(3)
    sims = rng.standard_normal(5000).astype(np.float32)
    scripts = (rng.random(5000) < 0.4).astype(np.int8)  # a mixed store: Han rows scattered among Latin ones
    got = quantised_scan.script_sums(sims, scripts)
    values = sims.astype(np.float64)
    want = []
    for script in (0, 1):
        part = values[scripts == script]
        want += [len(part), part.sum(), part @ part]
    assert got == pytest.approx(want, rel=1e-12)
    assert quantised_scan.script_sums(sims, np.zeros(5000, np.int8))[3:] == (0.0, 0.0, 0.0)
