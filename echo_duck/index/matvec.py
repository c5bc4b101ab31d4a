"""Float32 matrix-vector products that stay on the calling thread.

numpy's bundled OpenBLAS hands a product of more than ~460,000 elements (900 rows of 512) to a
second thread, and that thread then spins waiting for more work. Recalls come every few
milliseconds, so it never slept: in a loop of recalls it used 90% of a core, competing with the
recalling thread, onnxruntime's and DuckDB's. Pieces of at most 2^18 elements stay under OpenBLAS's
threshold. Old and new code (with the cheaper recall_conflicts) alternating on copies of one store,
six runs each: CPU time per recall halved (10k rows 27-37 → 14-19 ms, 100k rows 40-57 → 21-34 ms),
the p50 moved within this shared host's noise (10k 13.6-18.7 → 12.6-17.8 ms, 100k 19.8-28.8 →
17.7-29.1 ms). What it costs: below one packed block (quantised_scan.py) the scan runs on one
thread, 1.1-1.2 ms for the top-200 of 10k rows against 0.6-0.75 on two.

Each piece holds a multiple of 16 rows (the last at least 16), so the rows fall into the same groups
as in one product on one thread, and every score has its bits (tests hold them equal for the
embedding sizes in use). A product OpenBLAS splits between threads can differ in the last bit: its
split need not fall on a group boundary.
"""

from __future__ import annotations

import numpy as np

_PIECE_ELEMENTS = 1 << 18
_GROUP_ROWS = 16


def matvec(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` for a 2-D float32 matrix and a vector, computed on the calling thread."""
    per_piece = _PIECE_ELEMENTS // max(matrix.shape[1], 1)
    piece = max(_GROUP_ROWS, per_piece // _GROUP_ROWS * _GROUP_ROWS)
    rows = len(matrix)
    if rows < piece + _GROUP_ROWS:
        return matrix @ vector
    starts = list(range(0, rows, piece))
    if rows - starts[-1] < _GROUP_ROWS:  # a short last piece joins the one before
        starts.pop()
    out = np.empty(rows, np.result_type(matrix, vector))
    for start, end in zip(starts, [*starts[1:], rows]):
        np.matmul(matrix[start:end], vector, out=out[start:end])
    return out
