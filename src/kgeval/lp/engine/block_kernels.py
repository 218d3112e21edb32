"""Compiled kernels of the CPU block reduction: the counts of a block's queries and its rows' top-k lists.

Written by hand (compiled with numba) because no maintained library fuses these reductions: numpy and torch make one
pass over a block per comparison, write a mask and count it in another, and copy a row for every extra query that
shares it. Here each query's row is read once for both comparisons, with no mask and no copy, and each row's top-k
list takes one vectorized pass for group maxima, then searches only the groups whose maximum reaches the k-th largest
of them. On one thread of an Intel Xeon, ranking FB15k-237, the counts (with ties and row copies) took a third of
their earlier time and the top-k lists half (``benchmarks/results/ranking_phases.tsv``). Both kernels release the
GIL, so the engine's worker threads run them side by side.

Every result is exact: counts are integers and top-k values are copies of scores. Comparisons follow IEEE 754 (a NaN
compares false with everything), as numpy's do; no ``fastmath``.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["TOPK_GROUP", "count_queries", "topk_rows"]

#: strided groups per row of the top-k lists' first pass. Its own constant, not :data:`kgeval.lp.engine.topk.TOPK_GROUP`
#: (the torch path's, free to differ): numba compiles a global into the cached kernel and notices a change only in
#: this file
TOPK_GROUP = 16


@numba.njit(nogil=True, cache=True, boundscheck=False)
def count_queries(
    rows: np.ndarray,
    local: np.ndarray,
    thresholds: np.ndarray,
    true: np.ndarray,
    greater: np.ndarray,
    greater_equal: np.ndarray,
    equal_before: np.ndarray,
) -> None:  # pragma: no cover - compiled; tested through its results
    """For each query ``i`` of row ``rows[local[i]]`` with threshold ``t = thresholds[i]`` and true candidate
    ``c = true[i]``: the candidates scored ``> t`` and ``>= t``, and those ``== t`` with an ID below ``c``.

    The ties before ``c`` are counted in a second pass over the row's first ``c`` entries only where another
    candidate ties with the true one (rare with real scores). NaN scores (filtered entries) count nowhere. (One loop
    with both comparisons vectorizes; the same loop split at ``c`` ran at half the speed.)

    :param rows: shape: (b, C) float32, C-contiguous
    :param local: shape: (q,) row of each query in ``rows``
    :param thresholds: shape: (q,) float32
    :param true: shape: (q,) true candidate of each query, in ``[0, C)``
    :param greater: shape: (q,) int64, written
    :param greater_equal: shape: (q,) int64, written
    :param equal_before: shape: (q,) int64, written
    """
    C = rows.shape[1]
    for i in range(local.shape[0]):
        row = rows[local[i]]
        t = thresholds[i]
        above = 0
        at_least = 0
        for j in range(C):
            s = row[j]
            above += s > t
            at_least += s >= t
        greater[i] = above
        greater_equal[i] = at_least
        c = true[i]
        before = 0
        if at_least - above - (row[c] == t) > 0:  # a candidate other than the true one ties with it
            for j in range(c):
                before += row[j] == t
        equal_before[i] = before


@numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
def _insert(best: np.ndarray, p: int, s: float) -> None:  # pragma: no cover - compiled
    """Put ``s`` into the descending ``best[:p + 1]`` whose place ``p`` is free, shifting smaller ones down."""
    while p > 0 and best[p - 1] < s:
        best[p] = best[p - 1]
        p -= 1
    best[p] = s


@numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
def _group_maxima(row: np.ndarray, m: int, maxima: np.ndarray) -> bool:  # pragma: no cover - compiled
    """``maxima[j]``: the largest of ``row[j], row[j + m], ...`` (``TOPK_GROUP`` of them) for ``j < m``, then the lone
    scores ``row[m * TOPK_GROUP:]``; returns whether the row holds a NaN. Vectorized: one slice of ``m`` at a time."""
    nan = False
    for j in range(m):
        s = row[j]
        maxima[j] = s
        nan |= s != s
    for g in range(1, TOPK_GROUP):
        base = g * m
        for j in range(m):
            s = row[base + j]
            maxima[j] = s if s > maxima[j] else maxima[j]
            nan |= s != s
    main = m * TOPK_GROUP
    for j in range(main, row.shape[0]):
        s = row[j]
        maxima[m + j - main] = s
        nan |= s != s
    return nan


@numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
def _kth_largest(maxima: np.ndarray, best: np.ndarray) -> float:  # pragma: no cover - compiled
    """The ``k``-th largest of ``maxima`` (``k = len(best)``, found by insertion into ``best``); ``-inf`` if fewer."""
    k = best.shape[0]
    filled = min(k, maxima.shape[0])
    for j in range(filled):
        _insert(best, j, maxima[j])
    for j in range(filled, maxima.shape[0]):
        if maxima[j] > best[k - 1]:
            _insert(best, k - 1, maxima[j])
    return best[k - 1] if filled == k else -np.inf


@numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
def _reaching(
    row: np.ndarray, m: int, maxima: np.ndarray, tau: float, found_ids: np.ndarray, found: np.ndarray
) -> int:  # pragma: no cover - compiled
    """Collect the columns scored ``>= tau`` into ``found_ids`` and ``found``, searching only the groups and lone
    scores whose maximum reaches ``tau``; returns how many."""
    main = m * TOPK_GROUP
    n = 0
    for j in range(maxima.shape[0]):
        if maxima[j] < tau:
            continue
        if j >= m:  # a lone score
            found_ids[n] = main + j - m
            found[n] = maxima[j]
            n += 1
            continue
        for g in range(TOPK_GROUP):
            s = row[g * m + j]
            if s >= tau:
                found_ids[n] = g * m + j
                found[n] = s
                n += 1
    return n


@numba.njit(nogil=True, cache=True, boundscheck=False)
def topk_rows(
    rows: np.ndarray, k: int, ids: np.ndarray, values: np.ndarray
) -> np.ndarray:  # pragma: no cover - compiled; tested through its results
    """Each row's ``k`` best candidates, best first, ties by ascending ID (also at the ``k``-th place).

    Exact: the row's columns are split into ``m = C // TOPK_GROUP`` strided groups ``{j, j + m, ...}`` and the last
    ``C - m * TOPK_GROUP`` columns stand alone; the ``k``-th largest of the group maxima and lone scores is a lower
    bound ``τ`` of the row's ``k``-th largest score (``k`` distinct columns reach it), so the top ``k`` are among the
    columns scored ``>= τ``, which are collected from the groups whose maximum reaches ``τ`` and ordered (``τ = -inf``
    where there are fewer than ``k`` groups and lone scores).

    A row holding a NaN is not done here (NaN has no place in ``>=``): its flag is set and its lists left unwritten.

    :param rows: shape: (b, C) float32, C-contiguous, ``k <= C``
    :param ids: shape: (b, k) int64, written
    :param values: shape: (b, k) float32, written
    :return: shape: (b,) bool, the rows holding a NaN
    """
    b, C = rows.shape
    m = C // TOPK_GROUP
    has_nan = np.zeros(b, dtype=np.bool_)
    maxima = np.empty(m + C - m * TOPK_GROUP, dtype=np.float32)
    best = np.empty(k, dtype=np.float32)
    found_ids = np.empty(C, dtype=np.int64)
    found = np.empty(C, dtype=np.float32)
    for r in range(b):
        row = rows[r]
        if _group_maxima(row, m, maxima):
            has_nan[r] = True
            continue
        n = _reaching(row, m, maxima, _kth_largest(maxima, best), found_ids, found)
        # the k best of the n found: by score, ties by the smaller ID; swap each into place
        for p in range(k):
            top = p
            for q in range(p + 1, n):
                if found[q] > found[top] or (found[q] == found[top] and found_ids[q] < found_ids[top]):
                    top = q
            found[p], found[top] = found[top], found[p]
            found_ids[p], found_ids[top] = found_ids[top], found_ids[p]
            ids[r, p] = found_ids[p]
            values[r, p] = found[p]
    return has_nan

def _load() -> None:
    """Compile both kernels (or load them from numba's cache) for the engine's argument types, on tiny arrays.

    Done on import, so that the fork server, which preloads this module, hands the compiled code to every job.
    """
    rows = np.zeros((2, 3 * TOPK_GROUP), dtype=np.float32)
    index = np.zeros(2, dtype=np.int64)
    count_queries(rows, index, np.zeros(2, dtype=np.float32), index, index.copy(), index.copy(), index.copy())
    topk_rows(rows, 1, np.zeros((2, 1), dtype=np.int64), np.zeros((2, 1), dtype=np.float32))


_load()
