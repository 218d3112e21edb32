"""The compiled kernel of the CPU block reduction: a block's true scores, query counts and rows' top-k lists.

Written by hand (compiled with numba) because no maintained library fuses these reductions: numpy and torch make one
pass over a block per comparison, write a mask and count it in another, and copy a row for every extra query that shares
it; their fancy indexing (filtering, restoring, top-k exclusions) holds the GIL. Here one call does a whole block, row
by row while the row is in cache: its queries' true scores, its filtered entries set to NaN, each query's row read once
for both comparisons (with no mask and no copy), the filtered entries restored, the top-k exclusions set to ``-inf``,
and the row's top-k list in one vectorized pass for group maxima, then a search of only the groups whose maximum reaches
the k-th largest of them. The filters are read in CSR form, as :class:`kgeval.lp.ranking.RowExclusions` holds them, so
no (row, candidate) pairs are built (measured against numpy's reductions: ``benchmarks/results/ranking_phases.tsv``).
The kernel releases the GIL, so the engine's worker threads run it side by side.

Every result is exact: counts are integers and true scores and top-k values are copies of scores. Comparisons follow
IEEE 754 (a NaN compares false with everything), as numpy's do. The one fast-math flag, ``reassoc`` in the counts'
loop (:func:`_count_range`), only regroups additions of ones and zeros, which are exact in any order.
"""

from __future__ import annotations

import numba
import numpy as np

from kgeval.engine.topk_kernel import TOPK_GROUP, group_maxima, kth_largest, reaching

__all__ = ["reduce_rows"]

#: most candidates one float32 count adds up (:func:`_count_range`): every partial sum of at most 2**24 ones is an
#: integer that float32 holds exactly, in whatever order the additions are grouped
COUNT_CHUNK = 2**22


@numba.njit(nogil=True, cache=True, boundscheck=False, fastmath={"reassoc"})
def _count_range(row: np.ndarray, lo: int, hi: int, t: float) -> tuple[int, int]:  # pragma: no cover - compiled
    """The candidates ``lo..hi-1`` of ``row`` scored ``> t`` and ``>= t`` (``hi - lo <= COUNT_CHUNK``).

    Counted as float32 sums of ones and zeros, which the compiler may regroup (``reassoc``, the only fast-math flag:
    comparisons keep IEEE 754's NaN rules) into several vector lanes: faster than int64 counts,
    whose compiled loop widens each comparison's mask to 64-bit lanes. Exact: each partial sum is an integer of at
    most ``COUNT_CHUNK`` (< 2**24), so no addition rounds. Not inlined into its caller (numba's inlining would compile
    it under the caller's flags, without ``reassoc``).
    """
    one, zero = np.float32(1.0), np.float32(0.0)
    above = zero
    at_least = zero
    part = row[lo:hi]  # a loop over range(lo, hi) compiles without vector lanes
    for j in range(part.shape[0]):
        s = part[j]
        above += one if s > t else zero
        at_least += one if s >= t else zero
    return int(above), int(at_least)


@numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
def _count(row: np.ndarray, t: float, c: int, chunk: int) -> tuple[int, int, int]:  # pragma: no cover - compiled
    """The candidates of ``row`` scored ``> t`` and ``>= t``, and those ``== t`` with an ID below ``c``.

    The first two in chunks of at most ``chunk`` candidates (:func:`_count_range`). The ties before ``c`` are counted
    in a second pass over the row's first ``c`` entries only where another candidate ties with the true one ``c``
    (rare with real scores). NaN scores (filtered entries) count nowhere.
    """
    above = 0
    at_least = 0
    for lo in range(0, row.shape[0], chunk):
        a, b = _count_range(row, lo, min(lo + chunk, row.shape[0]), t)
        above += a
        at_least += b
    before = 0
    if at_least - above - (row[c] == t) > 0:  # a candidate other than the true one ties with it
        for j in range(c):
            before += row[j] == t
    return above, at_least, before


@numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
def _topk_row(
    row: np.ndarray,
    m: int,
    maxima: np.ndarray,
    best: np.ndarray,
    found_ids: np.ndarray,
    found: np.ndarray,
    ids: np.ndarray,
    values: np.ndarray,
) -> bool:  # pragma: no cover - compiled
    """The row's ``k = len(ids)`` best candidates into ``ids`` and ``values``, best first, ties by ascending ID (also
    at the ``k``-th place); returns whether the row holds a NaN, in which case nothing is written.

    Exact: the row's columns are split into ``m = C // TOPK_GROUP`` strided groups ``{j, j + m, ...}`` and the last
    ``C - m * TOPK_GROUP`` columns stand alone; the ``k``-th largest of the group maxima and lone scores is a lower
    bound ``τ`` of the row's ``k``-th largest score (``k`` distinct columns reach it), so the top ``k`` are among the
    columns scored ``>= τ``, which are collected from the groups whose maximum reaches ``τ`` and ordered (``τ = -inf``
    where there are fewer than ``k`` groups and lone scores). A NaN has no place in ``>=``, hence the flag.
    """
    if group_maxima(row, m, maxima):
        return True
    n = reaching(row, m, maxima, kth_largest(maxima, best), found_ids, found)
    # the k best of the n found: by score, ties by the smaller ID; swap each into place
    for p in range(ids.shape[0]):
        top = p
        for q in range(p + 1, n):
            if found[q] > found[top] or (found[q] == found[top] and found_ids[q] < found_ids[top]):
                top = q
        found[p], found[top] = found[top], found[p]
        found_ids[p], found_ids[top] = found_ids[top], found_ids[p]
        ids[p] = found_ids[p]
        values[p] = found[p]
    return False


@numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
def _filtered_counts(
    row: np.ndarray, exclusions: tuple, r: int, saved: np.ndarray, first: int, stop: int, true: np.ndarray,
    counts: tuple,
) -> None:  # fmt: skip  # pragma: no cover - compiled
    """The counts (``counts[1:]``) of queries ``first..stop-1`` of ``row``, block row ``r``, with its filtered
    candidates (``exclusions``: starts, lengths, values) set to NaN meanwhile, their scores kept in ``saved``."""
    starts, lengths, values = exclusions
    t, greater, greater_equal, equal_before = counts
    C, start, length = row.shape[0], starts[r], lengths[r]
    for j in range(length):
        c = values[start + j]
        if c < 0 or c >= C:
            raise IndexError("a filtered candidate lies outside 0..C-1")
        saved[j] = row[c]
        row[c] = np.nan
    for p in range(first, stop):
        greater[p], greater_equal[p], equal_before[p] = _count(row, t[p], true[p], COUNT_CHUNK)
    for j in range(length - 1, -1, -1):  # backwards: a repeated candidate gets its first, unfiltered score
        row[values[start + j]] = saved[j]


@numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
def _exclude_from_list(row: np.ndarray, values: np.ndarray, start: int, length: int) -> None:  # pragma: no cover
    """Set the row's top-k exclusions ``values[start:start + length]`` to ``-inf`` (compiled)."""
    C = row.shape[0]
    for j in range(length):
        c = values[start + j]
        if c < 0 or c >= C:
            raise IndexError("a top-k exclusion lies outside 0..C-1")
        row[c] = -np.inf


@numba.njit(nogil=True, cache=True, boundscheck=False)
def reduce_rows(
    rows: np.ndarray,
    first_row: int,
    queries: tuple[np.ndarray, np.ndarray],
    exclusions: tuple[np.ndarray, np.ndarray, np.ndarray],
    topk_exclusions: tuple[np.ndarray, np.ndarray, np.ndarray],
    k: int,
    counts: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    lists: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:  # pragma: no cover - compiled; tested through its results
    """The whole reduction of a block of ``b`` score rows, row by row, in place.

    For each row ``r`` with queries: the true score ``t[i] = rows[r, true[i]]`` of each of its queries ``i`` (read
    before filtering), its filtered candidates ``ex_values[ex_starts[r]:ex_starts[r] + ex_lengths[r]]`` set to NaN,
    per query the candidates scored ``> t[i]`` and ``>= t[i]`` and those ``== t[i]`` with an ID below ``true[i]``
    (:func:`kgeval.lp.engine.device_batch.count_torch`'s definitions; a NaN counts nowhere), then the filtered
    entries restored. For each row when ``k > 0``: its top-k exclusions (``tk_*``, same form) set to ``-inf`` and its
    ``k`` best candidates written to ``ids[r]`` and ``values[r]``, best first, ties by ascending ID. A row holding a
    NaN after that (a diverged model), and every row when ``k > C``, gets no list here: it is flagged for the torch
    path (:func:`kgeval.lp.engine.topk.topk`, which ranks NaN first).

    :param rows: shape: (b, C) float32, C-contiguous; the block's rows ``first_row..first_row + b - 1`` of the batch,
        modified (filtered entries restored, top-k exclusions ``-inf``)
    :param first_row: the batch row of ``rows[0]``
    :param queries: ``(query_rows, true)``: the batch row of each query, ascending, all within the block; the true
        candidate of each query, in ``[0, C)``; each shape (q,)
    :param exclusions: ``(ex_starts, ex_lengths, ex_values)``: each row's filtered candidates, a range of the shared
        ``ex_values`` (candidate IDs in ``[0, C)``, unique within a row); starts and lengths of shape (b,)
    :param topk_exclusions: ``(tk_starts, tk_lengths, tk_values)``, the top-k exclusions in the same form (read only
        if ``k > 0``)
    :param k: length of the top-k lists (0: none)
    :param counts: ``(t, greater, greater_equal, equal_before)``, each (q,), float32 and int64, written
    :param lists: ``(ids, values)``, each (b, k), int64 and float32, written except in flagged rows
    :return: shape: (b,) bool, the rows whose top-k list is left to the torch path
    """
    query_rows, true = queries
    t, ids, values = counts[0], lists[0], lists[1]
    tk_starts, tk_lengths, tk_values = topk_exclusions
    b, C = rows.shape
    num_queries = query_rows.shape[0]
    listed = 0 < k <= C
    m = C // TOPK_GROUP
    maxima = np.empty(m + C - m * TOPK_GROUP, dtype=np.float32)
    best = np.empty(k if listed else 0, dtype=np.float32)
    found_ids = np.empty(C if listed else 0, dtype=np.int64)
    found = np.empty(C if listed else 0, dtype=np.float32)
    saved = np.empty(np.max(exclusions[1]) if b else 0, dtype=rows.dtype)
    flagged = np.zeros(b, dtype=np.bool_)
    i = 0
    for r in range(b):
        row = rows[r]
        first = i
        while i < num_queries and query_rows[i] - first_row == r:
            c = true[i]
            if c < 0 or c >= C:
                raise IndexError("a true candidate lies outside 0..C-1")
            t[i] = row[c]
            i += 1
        if i > first:
            _filtered_counts(row, exclusions, r, saved, first, i, true, counts)
        if k:
            _exclude_from_list(row, tk_values, tk_starts[r], tk_lengths[r])
            flagged[r] = _topk_row(row, m, maxima, best, found_ids, found, ids[r], values[r]) if listed else True
    if i != num_queries:
        raise ValueError("the queries are not sorted by row or lie outside the block")
    return flagged


def _load() -> None:
    """Compile the kernel (or load it from numba's cache) for the engine's argument types, on tiny arrays.

    Done on import, so that the fork server, which preloads this module, hands the compiled code to every job.
    """
    rows = np.zeros((2, 3 * TOPK_GROUP), dtype=np.float32)
    index = np.zeros(2, dtype=np.int64)
    counts = [np.zeros(2, dtype=np.int64) for _ in range(3)]
    lists = np.zeros((2, 1), dtype=np.int64), np.zeros((2, 1), dtype=np.float32)
    ranges = (index, index, index)
    reduce_rows(rows, 0, (index, index), ranges, ranges, 1, (np.zeros(2, dtype=np.float32), *counts), lists)


_load()
