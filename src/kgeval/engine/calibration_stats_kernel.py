"""Compiled passes of :meth:`kgeval.studies.s5.statistics.CalibrationData.add_negatives`: streamed negatives folded
into the sufficient statistics of the calibration fits, with the values of its numpy pass.

For each negative score ``x`` the statistics need the gap among the sorted distinct positive scores ``v`` that holds
it (``g``: the number of ``v`` strictly below ``x``, numpy's ``searchsorted(v, x, side="left")``), whether ``x`` equals
``v[g]`` (a tie), and its bin in the negatives' histogram; then the tie count of ``v[g]``, or the count, minimum and
maximum of gap ``g``, and the bin's count are updated in place. Written by hand (compiled with numba) because no
maintained library counts values into the gaps of a sorted array together with their per-gap extremes; numpy needs
a pass per step and the unbuffered ``np.minimum.at``. Two passes give the same statistics:

**Sorted (:func:`accumulate_sorted`, chunks whose scores count once).** The caller sorts the chunk (numpy's sort);
the scores of one gap, or tied with one positive, then form a run, found by a doubling search from the previous
run's end: a gap's count is its run's length, its minimum and maximum the run's ends, and the histogram's bins come
in runs too. Every access is sequential, so the cost is mostly the sort's.

**Grid lookup (:func:`accumulate`, chunks with counts).** Per score in the chunk's order: :func:`gap_table` lays a
uniform grid of cells over ``[v[0], v[-1]]`` and stores, per cell ``c``, how many ``v`` lie in cells below ``c``. A
value's cell is ``clip(floor((x - lo) * inv), 0, top)``, computed by the same IEEE operations for the positives and
for the scores. Each operation rounds monotonically, so a ``v`` in a lower cell than ``x`` is below ``x`` and one in
a higher cell is above it: ``g`` lies between the counts of ``x``'s cell and of the next one, and a binary search
between them (over the few positives of one cell) finds it exactly. A degenerate range (one distinct positive, or a
span so small that its cells per unit overflow) puts every value in cell 0: a binary search over all positives. The
updates land at random places of the statistics, which is why sorting first pays where many gaps receive scores
(``benchmarks/s5_statistics.py`` times both).

**The histogram.** Its range must cover the chunk before the chunk is counted (it grows by doubling,
:class:`kgeval.studies.s5.statistics.StreamingHistogram`): the caller takes the chunk's minimum and maximum (the
sorted chunk's ends, or :func:`score_range`) and grows the histogram first; both passes bin each score as numpy
does: ``clip((x - lo) * inv_width, 0, num_bins - 1)`` truncated, in float64.

**Exactness.** Counts are integer sums (exact below ``2**63``; numpy's weighted bincount sums in float64, exact
below ``2**53``). Minima and maxima are selections, made as ``np.minimum.at`` and ``np.maximum.at`` make them in the
order of the scores: an equal value replaces the current one, which only tells ``-0.0`` from ``0.0``; the sorted
pass, which loses that order, takes the sign of the chunk's last zero. float32 scores are widened to float64
exactly, one at a time. NaN and infinite scores are the caller's to reject: :func:`score_range` returns NaN for a
chunk with a NaN, and numpy sorts NaN last.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["accumulate", "accumulate_sorted", "gap_table", "score_range"]

#: grid cells per distinct positive score in :func:`gap_table`, and at most :data:`MAX_CELLS` cells (the table's
#: memory); a binary search covers the positives of one cell, so these trade the table's size against its steps
CELLS_PER_POSITIVE = 4
MAX_CELLS = 2**18


@numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
def _cell(x: float, lo: float, inv: float, top: int) -> int:  # pragma: no cover - compiled
    """``clip(floor((x - lo) * inv), 0, top)``: monotone in ``x``; for finite ``x``, ``lo`` and ``inv > 0`` the
    bin of ``StreamingHistogram``'s numpy pass; a NaN product (``inv == 0`` and an infinite difference) goes to 0."""
    t = (x - lo) * inv
    if not t > 0.0:
        return 0
    if t >= top:
        return top
    return int(t)


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _fill_table(values: np.ndarray, lo: float, inv: float, table: np.ndarray) -> None:  # pragma: no cover - compiled
    """``table[c]``: how many ``values`` lie in cells below ``c`` (``c`` up to ``num_cells``, ``len(table) - 1``)."""
    top = table.shape[0] - 2
    table[:] = 0
    for k in range(values.shape[0]):
        table[_cell(values[k], lo, inv, top) + 1] += 1
    for c in range(1, table.shape[0]):
        table[c] += table[c - 1]


def gap_table(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The grid that :func:`accumulate` finds gaps with.

    :param values: shape: (n,) float64, strictly ascending, finite, ``n >= 1``
    :return: ``(table, grid)``: shape (num_cells + 1,) counts of ``values`` below each cell (int32; int64 for
        ``n >= 2**31``); and ``[lo, inv]``, the grid's origin and cells per unit
    """
    num_cells = int(min(max(CELLS_PER_POSITIVE * len(values), 1), MAX_CELLS))
    lo = float(values[0])
    span = float(values[-1]) - lo
    inv = num_cells / span if span > 0 else 0.0
    if not np.isfinite(inv):
        inv = 0.0
    table = np.empty(num_cells + 1, dtype=np.int32 if len(values) < 2**31 else np.int64)
    _fill_table(values, lo, inv, table)
    return table, np.array([lo, inv])


@numba.njit(nogil=True, cache=True, boundscheck=False)
def score_range(scores: np.ndarray) -> tuple[float, float]:  # pragma: no cover - compiled
    """``(min, max)`` of ``scores`` (shape: (k,), ``k >= 1``) as float64; ``(nan, nan)`` if one is NaN."""
    low = np.float64(scores[0])
    high = low
    nan = False
    for i in range(scores.shape[0]):
        x = np.float64(scores[i])
        low = x if x < low else low
        high = x if x > high else high
        nan |= x != x
    if nan:
        return np.nan, np.nan
    return low, high


@numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
def _gap(x: float, values: np.ndarray, table: np.ndarray, lo: float, inv: float) -> int:  # pragma: no cover
    """How many ``values`` lie strictly below ``x``: a binary search between the counts below ``x``'s cell and
    below the next cell."""
    c = _cell(x, lo, inv, table.shape[0] - 2)
    a = table[c]
    b = table[c + 1]
    while a < b:
        mid = (a + b) >> 1
        if values[mid] < x:
            a = mid + 1
        else:
            b = mid
    return a


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _count(
    scores: np.ndarray,
    counts: np.ndarray,
    values: np.ndarray,
    table: np.ndarray,
    grid: np.ndarray,
    records: np.ndarray,
    hist: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """The loop of :func:`accumulate` on its working copies: per gap ``g`` the record ``records[g]`` (gap count, tie
    count, and the bits of the minimum and the maximum, which share a cache line), and the histogram's counts."""
    bounds = records.view(np.float64)
    lo, inv, hist_lo, hist_inv = grid[0], grid[1], grid[2], grid[3]
    n = values.shape[0]
    top_bin = hist.shape[0] - 1
    weighted = counts.shape[0] > 0
    for i in range(scores.shape[0]):
        x = np.float64(scores[i])
        c = counts[i] if weighted else 1
        g = _gap(x, values, table, lo, inv)
        if g < n and values[g] == x:
            records[g, 1] += c
        else:
            records[g, 0] += c
            if c > 0:
                if x <= bounds[g, 2]:
                    bounds[g, 2] = x
                if x >= bounds[g, 3]:
                    bounds[g, 3] = x
        hist[_cell(x, hist_lo, hist_inv, top_bin)] += c


@numba.njit(nogil=True, cache=True, boundscheck=False)
def accumulate(
    scores: np.ndarray, counts: np.ndarray, values: np.ndarray, table: np.ndarray, grid: np.ndarray, stats: tuple
) -> None:  # pragma: no cover - compiled
    """Fold a chunk of negative scores into the statistics, in place.

    The loop works on copies that keep the cache lines it touches per score few: one record per gap, and int32
    histogram counts when the chunk's total count fits (added to the int64 counts afterwards).

    :param scores: shape: (k,) float32 or float64, finite, C-contiguous
    :param counts: shape: (k,) int64 non-negative multiplicities, or shape (0,) for "each once"
    :param values: shape: (n,) float64 the distinct positive scores, ascending
    :param table: :func:`gap_table` of ``values``
    :param grid: float64 ``[lo, inv, hist_lo, hist_inv]``: :func:`gap_table`'s grid, then the histogram's origin
        and ``1 / width`` (its range covers the chunk)
    :param stats: ``(tie_counts, gap_counts, gap_min, gap_max, hist_counts)``: int64 (n,), int64 (n + 1,),
        float64 (n + 1,), float64 (n + 1,), int64 (num_bins,); updated
    """
    tie_counts, gap_counts, gap_min, gap_max, hist = stats
    n = values.shape[0]
    records = np.zeros((n + 1, 4), dtype=np.int64)
    bounds = records.view(np.float64)
    records[:, 0] = gap_counts
    records[:n, 1] = tie_counts
    bounds[:, 2] = gap_min
    bounds[:, 3] = gap_max
    total = float(scores.shape[0])
    if counts.shape[0] > 0:
        total = 0.0  # in float64, which cannot wrap around
        for i in range(counts.shape[0]):
            total += counts[i]
    if total < 2**31:
        local = np.zeros(hist.shape[0], dtype=np.int32)
        _count(scores, counts, values, table, grid, records, local)
        hist += local
    else:
        _count(scores, counts, values, table, grid, records, hist)
    gap_counts[:] = records[:, 0]
    tie_counts[:] = records[:n, 1]
    gap_min[:] = bounds[:, 2]
    gap_max[:] = bounds[:, 3]


@numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
def _first_past(ordered: np.ndarray, start: int, bound: float, strict: bool) -> int:  # pragma: no cover - compiled
    """The first index ``i >= start`` of the ascending ``ordered`` with ``ordered[i] >= bound`` (``> bound`` if
    ``strict``), ``len(ordered)`` if none: steps doubling from ``start``, then a binary search."""
    k = ordered.shape[0]
    low = start  # every index in [start, low) is before the bound
    high = start
    step = 1
    while high < k and (ordered[high] <= bound if strict else ordered[high] < bound):
        low = high + 1
        high = low + step
        step *= 2
    high = min(high, k)
    while low < high:
        mid = (low + high) >> 1
        if ordered[mid] <= bound if strict else ordered[mid] < bound:
            low = mid + 1
        else:
            high = mid
    return low


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _last_zero(scores: np.ndarray) -> float:  # pragma: no cover - compiled
    """The last score equal to zero, with its sign (``0.0`` if none)."""
    for i in range(scores.shape[0] - 1, -1, -1):
        if scores[i] == 0:
            return np.float64(scores[i])
    return 0.0


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _count_sorted_bins(ordered: np.ndarray, lo: float, inv: float, hist: np.ndarray) -> None:  # pragma: no cover
    """Histogram counts of the ascending ``ordered``: the bins come in runs, each added once."""
    top = hist.shape[0] - 1
    current = _cell(np.float64(ordered[0]), lo, inv, top)
    run = 0
    for i in range(ordered.shape[0]):
        b = _cell(np.float64(ordered[i]), lo, inv, top)
        if b != current:
            hist[current] += run
            current = b
            run = 0
        run += 1
    hist[current] += run


@numba.njit(nogil=True, cache=True, boundscheck=False)
def accumulate_sorted(
    ordered: np.ndarray, scores: np.ndarray, values: np.ndarray, hist_lo: float, hist_inv: float, stats: tuple
) -> None:  # pragma: no cover - compiled
    """Fold a chunk of negative scores, each counted once, into the statistics, in place, from the chunk sorted.

    The scores of a gap or tied with a positive form one run of ``ordered``, found by a doubling search from the
    previous run's end: a gap's count is its run's length, its minimum and maximum the run's ends. Those are
    the values of :func:`accumulate`; their bits too, since equal floats have equal bits except ``-0.0`` and
    ``0.0``: a run end equal to zero is replaced by the last zero of ``scores`` in their order, the one that
    ``np.minimum.at`` keeps (all zeros lie in one gap).

    :param ordered: shape: (k,) float32 or float64, ``k >= 1``: ``np.sort(scores)``, finite
    :param scores: the chunk in its order (the same dtype and values)
    :param values: shape: (n,) float64 the distinct positive scores, ascending
    :param hist_lo: the histogram's origin (its range covers the chunk)
    :param hist_inv: ``1 / width`` of the histogram's bins
    :param stats: as :func:`accumulate`'s; updated
    """
    tie_counts, gap_counts, gap_min, gap_max, hist = stats
    n = values.shape[0]
    start = 0
    zero = np.nan  # the last zero of ``scores``, found when first needed
    for j in range(n + 1):
        end = _first_past(ordered, start, values[j], False) if j < n else ordered.shape[0]
        if end > start:
            gap_counts[j] += end - start
            low, high = np.float64(ordered[start]), np.float64(ordered[end - 1])
            if (low == 0 or high == 0) and zero != zero:
                zero = _last_zero(scores)
            low = zero if low == 0 else low
            high = zero if high == 0 else high
            if low <= gap_min[j]:
                gap_min[j] = low
            if high >= gap_max[j]:
                gap_max[j] = high
        if j < n:
            start = _first_past(ordered, end, values[j], True)
            tie_counts[j] += start - end
    _count_sorted_bins(ordered, hist_lo, hist_inv, hist)


def _load() -> None:
    """Compile (or load from numba's cache) every pass for float32 and float64 scores, on tiny arrays; done on
    import, so that the fork server, which preloads this module, hands the compiled code to every job."""
    values = np.array([0.0, 1.0])
    table, grid = gap_table(values)
    grid = np.concatenate([grid, [0.0, 1.0]])
    for dtype in (np.float32, np.float64):
        scores = np.array([0.5], dtype=dtype)
        score_range(scores)
        for counts in (np.zeros(0, dtype=np.int64), np.ones(1, dtype=np.int64)):
            stats = (
                np.zeros(2, dtype=np.int64),
                np.zeros(3, dtype=np.int64),
                np.full(3, np.inf),
                np.full(3, -np.inf),
                np.zeros(2, dtype=np.int64),
            )
            accumulate(scores, counts, values, table, grid, stats)
        accumulate_sorted(scores, scores, values, 0.0, 1.0, stats)


_load()
