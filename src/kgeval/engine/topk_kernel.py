"""Compiled helpers of a row's top-k search by strided groups, shared by the ranking engine's block reduction
(:mod:`kgeval.lp.engine.block_kernels`) and the nearest-neighbour kernels (:mod:`kgeval.engine.nearest_kernel`).

A row of ``C`` scores is split into ``m = C // TOPK_GROUP`` strided groups ``{j, j + m, ...}`` and the last
``C - m * TOPK_GROUP`` scores, which stand alone. :func:`group_maxima` takes each group's maximum in one vectorized
pass; :func:`kth_largest` finds the ``k``-th largest of those maxima, a lower bound of the row's ``k``-th largest
score; :func:`reaching` collects the scores at or above a bound, searching only the groups whose maximum reaches it.
Written by hand (compiled with numba) because no maintained library searches a row this way inside a compiled loop.
Exact: every value is a copy of a score; comparisons follow IEEE 754 (a NaN compares false with everything).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["TOPK_GROUP", "group_maxima", "kth_largest", "reaching"]

#: strided groups per row of the top-k lists' first pass. Its own constant, not :data:`kgeval.lp.engine.topk.TOPK_GROUP`
#: (the torch path's, free to differ). numba compiles a global into each cached kernel that uses it and checks only
#: the kernel's own file for changes: after changing it, clear the cache of every module that imports it
TOPK_GROUP = 16


@numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
def _insert(best: np.ndarray, p: int, s: float) -> None:  # pragma: no cover - compiled
    """Put ``s`` into the descending ``best[:p + 1]`` whose place ``p`` is free, shifting smaller ones down."""
    while p > 0 and best[p - 1] < s:
        best[p] = best[p - 1]
        p -= 1
    best[p] = s


@numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
def group_maxima(row: np.ndarray, m: int, maxima: np.ndarray) -> bool:  # pragma: no cover - compiled
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
def kth_largest(maxima: np.ndarray, best: np.ndarray) -> float:  # pragma: no cover - compiled
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
def reaching(
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
