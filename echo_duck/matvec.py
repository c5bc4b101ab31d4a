"""Float32 matrix-vector products that stay on the calling thread.

numpy's bundled OpenBLAS hands a product of more than ~460,000 elements (900 rows of 512) to a second
thread, and that thread then spins waiting for more work. Recalls come every few milliseconds, so it
never slept: in a loop of recalls at 100k rows it used 90% of a core, and a recall cost 60-75 ms of
CPU time for 30-38 ms of wall time; in pieces, 37-41 ms of CPU time (wall time within the noise).
Pieces of at most 2^18 elements stay under OpenBLAS's threshold, and the core stays free for
onnxruntime's and DuckDB's threads, and for the host application's.

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
    piece = max(_GROUP_ROWS, _PIECE_ELEMENTS // max(matrix.shape[1], 1) // _GROUP_ROWS * _GROUP_ROWS)
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
