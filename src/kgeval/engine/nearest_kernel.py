"""Compiled kernels of :mod:`kgeval.engine.nearest`: row and column maxima, and rows' largest entries, of a
similarity matrix.

Written by hand (compiled with numba) because torch's reductions are slow where BootEA's bootstrapping needs them:
``max(dim=0)`` is a strided reduction, much slower than ``max(dim=1)``, and ``topk(100, dim=1)`` a partial sort of
every row. Here the column
maxima are updated one row at a time (a vectorized pass), and a row's largest entries are searched among the strided
groups whose maximum reaches the ``k + 1``-th largest group maximum (as the ranking engine's top-k lists,
:mod:`kgeval.lp.engine.block_kernels`), then sorted.

Exact by construction: maxima are copies of entries, ties go to the first index as torch's ``max`` documents, and a
row whose ``k + 1`` largest entries are not all distinct (or that holds a NaN) is reported, not answered, so that its
caller asks torch (whose order among equal entries is its sort's, not a documented rule). No ``fastmath``.
"""

from __future__ import annotations

import numba
import numpy as np

from kgeval.engine.topk_kernel import TOPK_GROUP, group_maxima, reaching

__all__ = ["largest_rows", "row_column_maxima"]


@numba.njit(nogil=True, cache=True, boundscheck=False)
def row_column_maxima(
    sims: np.ndarray, row_value: np.ndarray, row_arg: np.ndarray, col_value: np.ndarray, col_arg: np.ndarray
) -> bool:  # pragma: no cover - compiled
    """Each row's and each column's maximum of ``sims`` (b, c) and its first index; returns whether a NaN was met
    (then the outputs are not torch's and the caller must not use them).

    :param row_value: shape (b,) written; :param row_arg: shape (b,) int64 written
    :param col_value: shape (c,) written; :param col_arg: shape (c,) int64 written
    """
    b, c = sims.shape
    m = c // TOPK_GROUP
    maxima = np.empty(m + c - m * TOPK_GROUP, dtype=sims.dtype)
    for i in range(b):
        row = sims[i]
        if group_maxima(row, m, maxima):
            return True
        best = maxima[0]
        for j in range(1, maxima.shape[0]):
            s = maxima[j]
            best = s if s > best else best
        first = c
        for j in range(maxima.shape[0]):  # the first column holding the maximum: search the groups that reach it
            if maxima[j] != best:
                continue
            if j >= m:
                first = min(first, m * TOPK_GROUP + j - m)
                continue
            for g in range(TOPK_GROUP):
                if row[g * m + j] == best:
                    first = min(first, g * m + j)
                    break
        row_value[i], row_arg[i] = best, first
        if i == 0:
            col_value[:] = row
            col_arg[:] = 0
            continue
        for j in range(c):  # vectorized: compare and select per column
            s = row[j]
            better = s > col_value[j]
            col_value[j] = s if better else col_value[j]
            col_arg[j] = i if better else col_arg[j]
    return False


@numba.njit(nogil=True, cache=True, boundscheck=False)
def largest_rows(sims: np.ndarray, k: int, ids: np.ndarray, exact: np.ndarray) -> None:  # pragma: no cover
    """Each row's ``k`` largest entries' columns, largest first, into ``ids`` (b, k); ``exact[i]`` says whether row
    ``i``'s answer is unique (its ``k + 1`` largest entries distinct, no NaN), else ``ids[i]`` is left unspecified.

    :param sims: shape (b, c) float32, C-contiguous, ``1 <= k <= c``
    """
    b, c = sims.shape
    want = min(k + 1, c)  # one more than asked: the k-th must be strictly above the next for a unique answer
    m = c // TOPK_GROUP
    maxima = np.empty(m + c - m * TOPK_GROUP, dtype=sims.dtype)
    found_ids = np.empty(c, dtype=np.int64)
    found = np.empty(c, dtype=sims.dtype)
    for i in range(b):
        row = sims[i]
        exact[i] = False
        if group_maxima(row, m, maxima):
            continue
        tau = -np.inf
        if maxima.shape[0] > want:  # the want-th largest group maximum bounds the row's want-th largest entry
            tau = np.partition(maxima, maxima.shape[0] - want)[maxima.shape[0] - want]
        n = reaching(row, m, maxima, tau, found_ids, found)  # the columns scored >= tau
        order = np.argsort(-found[:n])
        unique = True
        for p in range(want - 1):
            unique &= found[order[p]] > found[order[p + 1]]
        for p in range(k):
            ids[i, p] = found_ids[order[p]]
        exact[i] = unique


def _load() -> None:
    """Compile (or load from numba's cache) the kernels now, not inside a timed training loop."""
    sims = np.zeros((2, 2), np.float32)
    row_column_maxima(sims, np.empty(2, np.float32), np.empty(2, np.int64), np.empty(2, np.float32),
                      np.empty(2, np.int64))
    largest_rows(sims, 1, np.empty((2, 1), np.int64), np.empty(2, np.bool_))


_load()
