"""The exact vector top-n, with an int8 first pass that tells which rows need their float32 score.

Scoring every row in float32 reads the whole matrix per query: 7 ms at 100k × 512 on two cores, as
fast as memory goes. So the matrix is cut into blocks of ``BLOCK_ROWS`` rows; once a block is full,
its rows are quantised to int8 (a scale per row) and handed, up to ``SEGMENT_BLOCKS`` blocks to a
session, to onnxruntime's MatMulInteger as a constant, which it packs once for its int8 kernels: a
query then takes ~1-2 ms at 100k (packing costs ~0.1 s per block, at the first search after a load
or once a block fills).

An int8 score differs from the float32 one by at most a bound known per row (Cauchy-Schwarz on the
two rounding errors, below). A row whose int8 score plus its bound falls below the n-th best lower
bound cannot be in the top n, so only the rest are scored in float32: for the 200 a recall asks
for, 210-950 of the bench's 100k rows (330 at the median). The result is the exact top-n of the
float32 scan, not an approximation. Rows after the last full block, and rows rewritten after their
block was packed, are scored in float32 directly.

On a CPU whose int8 kernel clips (AVX2 without VNNI; ``query_quantisation`` probes it once) queries take 7 bits
instead of 8, and about twice as many rows are re-scored: in ``bench perf`` on such a host (2026-12-03 16:28) the
vector stage took 5.8 ms of 17.9 at 100k, about the same share of a recall as on the VNNI host of 05:31 (3.1 of 10.2).
"""

from __future__ import annotations

import functools

import numpy as np

from .matvec import matvec

BLOCK_ROWS = 16_384  # rows become packable a full block at a time
SEGMENT_BLOCKS = 8  # blocks per onnxruntime session (131k rows)
SESSION_THREADS = 2  # 1.8 ms at 100k against 3.8 with one
# Queries go in as uint8 around a zero point, rows as int8 (±127): the u8 × s8 kernels. Without VNNI (AVX2 alone) those
# kernels add pairs of u8 × s8 products in int16 with saturation (vpmaddubsw): a query byte of 255 beside a row code of
# 127 would clip and break the bound. So the kernel is probed once (query_quantisation): where it is exact, queries
# take 8 bits (128 ± 127); where it clips, 7 (64 ± 63: 127 × 127 × 2 = 32,258 stays below 32,767), at about twice
# the rows re-scored in float32.
_EIGHT_BITS, _SEVEN_BITS = (128, 127), (64, 63)
# Float32 rounding in the exact scores and in the int8 scores' scaling, relative to |q|·|x|: far
# above what 512 terms can accumulate (~3e-5 at worst), far below the bounds (~1e-2).
_ROUNDING = 1e-4


def quantise_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Int8 codes with a scale per row (x ≈ scale · codes), and per row |x - scale · codes| and |x|.
    In slices of 1,024 rows, whose temporaries stay in cache (3× faster than whole blocks here)."""
    rows = np.asarray(rows, dtype=np.float32)
    codes = np.empty(rows.shape, np.int8)
    scale, residual, norm = (np.empty(len(rows), np.float32) for _ in range(3))
    for start in range(0, len(rows), 1024):
        part = rows[start: start + 1024]
        peak = np.abs(part).max(axis=1)
        inverse = np.divide(np.float32(127), peak, out=np.zeros_like(peak), where=peak > 0)
        steps = np.rint(part * inverse[:, None])  # within ±127: |x| <= peak
        codes[start: start + 1024] = steps
        scale[start: start + 1024] = peak / np.float32(127)
        residual[start: start + 1024] = _norms(part - steps * scale[start: start + 1024, None])
        norm[start: start + 1024] = _norms(part)
    return codes, scale, residual * np.float32(1 + 1e-5), norm


def _norms(rows: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ij,ij->i", rows, rows))


def quantise_query(query: np.ndarray) -> tuple[np.ndarray, float, float, float]:
    """The query as uint8 around the zero point (query_quantisation), its scale, |q̂| and |q - q̂|."""
    query = query.astype(np.float64)
    zero_point, most = query_quantisation()
    scale = float(np.abs(query).max()) / most
    steps = np.clip(np.rint(query / scale), -most, most) if scale > 0 else np.zeros_like(query)
    approx = scale * steps
    return ((steps + zero_point).astype(np.uint8)[None, :], scale, float(np.linalg.norm(approx)),
            float(np.linalg.norm(query - approx)))


class PackedSegment:
    """Consecutive full blocks as int8 codes that one onnxruntime session holds packed, and each row's
    scale and bounds. A session per segment, not per block: one call and one thread wake-up per
    query, 1.8 ms for 100k rows against 5.7 for six sessions of one block (measured side by side)."""

    def __init__(self, rows: np.ndarray):
        codes, self.scale, self.residual, self.norm = quantise_rows(rows)
        self.rows = len(rows)
        self._session = _session(_transposed(codes), query_quantisation()[0], SESSION_THREADS)

    def scores(self, query_codes: np.ndarray) -> np.ndarray:
        """Σ (query code - zero point) · row code, per row (int32)."""
        return self._session.run(None, {"query": query_codes})[0][0]


class QuantisedScan:
    """The packed segments of one matrix, and which of their rows were rewritten since."""

    def __init__(self, block_rows: int | None = None):
        self.block_rows = block_rows or BLOCK_ROWS  # read now: tests make blocks small
        self.segment_rows = self.block_rows * SEGMENT_BLOCKS
        self._segments: list[PackedSegment] = []
        self._rewritten: set[int] = set()
        self._scale = self._residual = self._norm = np.zeros(0)

    @property
    def sealed(self) -> int:
        """Rows packed: every full block. All segments but the last hold segment_rows rows."""
        return sum(segment.rows for segment in self._segments)

    def rewritten(self, row: int) -> None:
        """Row ``row`` of the matrix was overwritten: its packed codes no longer describe it."""
        if row < self.sealed:
            self._rewritten.add(row)
            if len(self._rewritten) > self.block_rows // 4:  # a quarter of a block's worth: pack again
                self._segments = self._segments[: min(self._rewritten) // self.segment_rows]
                self._rewritten = set()
                self._concatenate()

    def top(self, matrix: np.ndarray, count: int, query: np.ndarray, n: int,
            keep: np.ndarray | None = None, scripts: np.ndarray | None = None, counted: np.ndarray | None = None):
        """The exact top-n (rows, float32 similarities, best first, ties by row) of ``matrix[:count] @
        query`` among the rows where ``keep`` (bool per row, or None for all) is true. Given ``scripts``
        (0 or 1 per row), also the count, sum and sum of squares of the similarity per script of every row
        ``counted`` marks (bool per row, or None for all), kept or not (script_sums): exact for the rows
        scored in float32, the int8 scores for the packed rows (within ~1e-3 of each, and the errors average out)."""
        query = query.astype(np.float32, copy=False)
        if n <= 0 and scripts is None:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        self._pack(matrix, count)
        sealed = self.sealed
        direct = np.arange(sealed, count)  # the rows no block holds, and rows rewritten since packing
        direct_sims = matvec(matrix[sealed:count], query)  # a slice: no copy of the rows
        if self._rewritten:
            rewritten = np.fromiter(sorted(self._rewritten), np.int64, len(self._rewritten))
            direct = np.concatenate([rewritten, direct])
            direct_sims = np.concatenate([matvec(matrix[rewritten], query), direct_sims])
        approx = slack = None
        if sealed:
            approx, slack = self.approximate(query)
        sums = None
        if scripts is not None:
            every = np.empty(count, np.float32)
            if sealed:
                every[:sealed] = approx
            every[direct] = direct_sims
            if counted is None:
                sums = script_sums(every, scripts[:count])
            else:
                sums = script_sums(np.compress(counted, every), np.compress(counted, scripts[:count]))
        if keep is not None:
            wanted = keep[direct]
            direct, direct_sims = direct[wanted], direct_sims[wanted]
        if n <= 0:
            found = np.zeros(0, np.int64), np.zeros(0, np.float32)
        elif sealed == 0:
            found = _best(direct, direct_sims, n)
        else:
            packed = self._possible_rows(approx, slack, keep, direct_sims, n)
            if len(packed) > sealed // 8:  # a query the bounds cannot narrow (all zeros, say): scan it all
                packed_sims = matvec(matrix[:sealed], query)[packed]
            else:
                packed_sims = matvec(matrix[packed], query)
            found = _best(np.concatenate([packed, direct]), np.concatenate([packed_sims, direct_sims]), n)
        return found if scripts is None else (*found, sums)

    def approximate(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each packed row's int8 score and how far its float32 score can be from it (Cauchy-Schwarz):
        q·x = q̂·x̂ + q̂·(x - x̂) + (q - q̂)·x, so |q·x - q̂·x̂| <= |q̂|·|x - x̂| + |q - q̂|·|x|."""
        codes, scale, q_norm_approx, q_residual = quantise_query(query)
        approx = np.concatenate([part.scores(codes) for part in self._segments]).astype(np.float32)  # < 2^24: exact
        approx *= np.float32(scale) * self._scale
        slack = (q_norm_approx * self._residual + (q_residual + _ROUNDING * float(np.linalg.norm(query))) * self._norm
                 + np.float32(1e-7))
        return approx, slack

    def _possible_rows(self, approx, slack, keep, direct_sims, n) -> np.ndarray:
        """The packed rows (kept, not rewritten) whose float32 score could reach the top n."""
        sealed = self.sealed
        eligible = None if keep is None else keep[:sealed].copy()
        if self._rewritten:
            if eligible is None:
                eligible = np.ones(sealed, bool)
            eligible[list(self._rewritten)] = False
        lower = approx - slack
        floors = np.concatenate([lower if eligible is None else np.compress(eligible, lower), direct_sims])
        if len(floors) <= n:  # every row left is in the top n
            return np.arange(sealed) if eligible is None else np.flatnonzero(eligible)
        threshold = np.partition(floors, len(floors) - n)[len(floors) - n]  # <= the n-th best float32 score
        possible = approx + slack >= threshold
        return np.flatnonzero(possible if eligible is None else possible & eligible)

    def _pack(self, matrix: np.ndarray, count: int) -> None:
        """Pack the blocks that filled up since the last call: the last segment, if it has room, is
        packed again with them (its rows' codes are then current: they leave the rewritten set)."""
        full = count // self.block_rows * self.block_rows
        if full <= self.sealed:
            return
        if self._segments and self._segments[-1].rows < self.segment_rows:
            self._segments.pop()
        start = self.sealed
        self._rewritten = {row for row in self._rewritten if row < start}
        while start < full:
            end = min(start + self.segment_rows, full)
            self._segments.append(PackedSegment(matrix[start:end]))
            start = end
        self._concatenate()

    def _concatenate(self) -> None:
        parts = self._segments
        self._scale = np.concatenate([p.scale for p in parts]) if parts else np.zeros(0, np.float32)
        self._residual = np.concatenate([p.residual for p in parts]) if parts else np.zeros(0, np.float32)
        self._norm = np.concatenate([p.norm for p in parts]) if parts else np.zeros(0, np.float32)


def script_sums(sims: np.ndarray, scripts: np.ndarray) -> tuple[float, float, float, float, float, float]:
    """(n0, sum0, sumsq0, n1, sum1, sumsq1): count, sum and sum of squares of the similarities of the rows
    of script 0 and of script 1, in float64 (sql/macros/20_ranking.sql calibration_stats takes them)."""
    values = np.asarray(sims, dtype=np.float64)
    han = np.asarray(scripts) == 1
    n1 = int(np.count_nonzero(han))
    total, squares = float(values.sum()), float(values @ values)
    if n1 == 0:
        return float(len(values)), total, squares, 0.0, 0.0, 0.0
    of_han = np.compress(han, values)  # values[han], ~8x faster on 100k rows with a mixed mask
    sum1, squares1 = float(of_han.sum()), float(of_han @ of_han)
    return float(len(values) - n1), total - sum1, squares - squares1, float(n1), sum1, squares1


def _best(rows: np.ndarray, sims: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    n = min(n, len(rows))
    if n == 0:
        return rows[:0], sims[:0].astype(np.float32)
    if n < len(rows):  # those above the n-th best, then those tied with it, by row
        cut = np.partition(sims, len(sims) - n)[len(sims) - n]
        above = np.flatnonzero(sims > cut)
        tied = np.flatnonzero(sims == cut)
        pick = np.concatenate([above, tied[np.argsort(rows[tied], kind="stable")][: n - len(above)]])
        rows, sims = rows[pick], sims[pick]
    order = np.lexsort((rows, -sims))
    return rows[order], sims[order]


def _transposed(codes: np.ndarray) -> np.ndarray:
    """codes.T, contiguous: in tiles, ~6× faster than numpy's own copy of an int8 transpose."""
    out = np.empty((codes.shape[1], codes.shape[0]), codes.dtype)
    for i in range(0, codes.shape[0], 64):
        for j in range(0, codes.shape[1], 64):
            out[j: j + 64, i: i + 64] = codes[i: i + 64, j: j + 64].T
    return out


def _session(codes_t: np.ndarray, zero_point: int, threads: int):
    import onnxruntime as ort  # imported when the first block fills: small stores never load it

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # idle between recalls
    options.log_severity_level = 3
    return ort.InferenceSession(_matmul_integer_model(codes_t, zero_point), options, providers=["CPUExecutionProvider"])


@functools.lru_cache(maxsize=1)
def query_quantisation() -> tuple[int, int]:
    """(zero point, largest step) of the query bytes: (128, 127) where this CPU's u8 × s8 kernel computes a
    product that would clip in int16 exactly, else (64, 63). Probed once per process, on 512 × 64 codes."""
    codes_t = np.full((512, 64), 127, np.int8)
    codes_t[:, 1::2] = -127
    query = np.full((1, 512), 255, np.uint8)
    got = _session(codes_t, _EIGHT_BITS[0], 1).run(None, {"query": query})[0][0]
    want = np.where(np.arange(64) % 2, -1, 1) * 127 * 127 * 512
    return _EIGHT_BITS if np.array_equal(got, want) else _SEVEN_BITS


# -- a one-node ONNX model, written as protobuf by hand (the onnx package is not a dependency) --------

_UINT8, _INT8, _INT32 = 2, 3, 6  # TensorProto.DataType


def _matmul_integer_model(codes_t: np.ndarray, zero_point: int) -> bytes:
    """scores[1, rows] = MatMulInteger(query[1, dim] uint8, codes_t[dim, rows] int8 constant, zero_point)."""
    dim, rows = codes_t.shape
    node = _text(1, "query") + _text(1, "codes") + _text(1, "zero_point") + _text(2, "scores") + _text(4, "MatMulInteger")
    graph = [*_message(1, node), *_text(2, "int8_scores"),
             *_message(5, _tensor("codes", _INT8, codes_t)),
             *_message(5, _tensor("zero_point", _UINT8, np.array(zero_point, np.uint8))),
             *_message(11, _value_info("query", _UINT8, (1, dim))),
             *_message(12, _value_info("scores", _INT32, (1, rows)))]
    opset = _message(8, _int(2, 13))  # the default domain, opset 13
    return b"".join([*_int(1, 7), *_message(7, graph), *opset])  # ir_version 7; one copy of the codes


# A message is a list of byte chunks, so the codes are copied once, by the final join.

def _tensor(name: str, data_type: int, values: np.ndarray) -> list:
    dims = [chunk for d in values.shape for chunk in _int(1, d)]
    return [*dims, *_int(2, data_type), *_text(8, name), *_message(9, [memoryview(np.ascontiguousarray(values)).cast("B")])]


def _value_info(name: str, data_type: int, dims: tuple[int, ...]) -> list:
    shape = [chunk for d in dims for chunk in _message(1, _int(1, d))]
    return [*_text(1, name), *_message(2, _message(1, [*_int(1, data_type), *_message(2, shape)]))]


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _int(field: int, value: int) -> list:
    return [_varint(field << 3) + _varint(value)]


def _message(field: int, chunks: list) -> list:
    return [_varint(field << 3 | 2) + _varint(sum(len(c) for c in chunks)), *chunks]


def _text(field: int, value: str) -> list:
    return _message(field, [value.encode()])
