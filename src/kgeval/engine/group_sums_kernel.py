"""Resample counts summed per group of equal rank, and the weighted median and MAD from them, compiled.

:class:`kgeval.uncertainty.bootstrap_metrics.RankBlock` needs, for each resample (a row of a ``(b, n)`` matrix of
counts) and each distinct rank, how often the rank occurs: the counts summed over the rows of equal rank. With numpy
that is a gather of the whole matrix into rank order and ``np.add.reduceat``, most of the time of a dataset's
metrics with intervals. :func:`group_sums` reads the counts once, in order, adding each to its group's total. It is
written by hand because no maintained library sums a dense matrix's columns by group without a gather.

The sums have numpy's bits although the order of the additions differs because the counts are integers: every
partial sum of non-negative integers below ``2**53`` is exact in float64, so any order gives the same value (up to
the sign of a zero sum, which compares the same). Resample counts are such integers; :func:`exact_counts` checks it
(one vectorized pass, shared by every rank type of a block), and callers sum in numpy's order where it fails.

:func:`median_and_mad` then finds each resample's median and median absolute deviation from the sorted distinct
values and their weights in one walk, without sorting: the deviations of the values below the median, taken downwards,
and of those above it, taken upwards, are two ascending runs, which it merges (a tie between the runs goes to the
smaller value's side, as a stable sort of the deviations in value order). Equal deviations within a run, which only
rounding could make, come in the other order than a stable sort's; with non-negative weights that changes neither the
cumulative weight before nor after them, so the same values are picked. It returns ``None`` unless the weights are
non-negative integers (exact cumulative sums) and each row sums to ``n``; callers then take the numpy path.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["exact_counts", "group_ids", "group_sums", "median_and_mad"]

#: integers up to this are float64 values whose sums below it are exact
_EXACT_LIMIT = 2**53 - 1


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _integral_below(counts: np.ndarray, bound: float) -> bool:  # pragma: no cover
    """Whether every count is an integer in ``[0, bound]`` (NaN is not)."""
    for j in range(counts.shape[0]):
        row = counts[j]
        ok = True
        for i in range(row.size):  # no early exit, so that the loop vectorizes
            c = row[i]
            ok &= (c >= 0.0) & (c <= bound) & (np.floor(c) == c)
        if not ok:
            return False
    return True


def exact_counts(counts: np.ndarray) -> bool:
    """Whether :func:`group_sums` of ``counts`` has numpy's values in any order of the additions: every count a
    non-negative integer and at most ``(2**53 - 1) // n`` (so no partial sum of a row reaches ``2**53``).

    :param counts: shape: (b, n) float64
    """
    if counts.shape[1] == 0:
        return True
    return bool(_integral_below(counts, float(_EXACT_LIMIT // counts.shape[1])))


def group_ids(order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The group of each row: ``g`` for the rows ``order[starts[g]:starts[g + 1]]``.

    :param order: shape: (n,) a permutation of the rows (e.g. a stable argsort of their values)
    :param starts: shape: (K,) ascending, ``starts[0] == 0``: where each group begins in ``order``
    :return: shape: (n,) int64
    """
    sizes = np.diff(np.append(starts, order.size))
    group = np.empty(order.size, dtype=np.int64)
    group[order] = np.repeat(np.arange(starts.size, dtype=np.int64), sizes)
    return group


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _sum_rows(counts: np.ndarray, group: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    """``out[j, group[i]] += counts[j, i]`` for every ``j`` and ``i``; four rows per pass over ``group`` (their
    additions are independent, which hides the latency of each)."""
    b, n = counts.shape
    j = 0
    while j + 4 <= b:
        r0, r1, r2, r3 = counts[j], counts[j + 1], counts[j + 2], counts[j + 3]
        s0, s1, s2, s3 = out[j], out[j + 1], out[j + 2], out[j + 3]
        for i in range(n):
            g = group[i]
            s0[g] += r0[i]
            s1[g] += r1[i]
            s2[g] += r2[i]
            s3[g] += r3[i]
        j += 4
    for k in range(j, b):
        row, sums = counts[k], out[k]
        for i in range(n):
            sums[group[i]] += row[i]


def group_sums(counts: np.ndarray, group: np.ndarray, num_groups: int) -> np.ndarray:
    """Each row's counts summed per group, from zeros, in row order.

    These are the values of ``np.add.reduceat(counts[:, order], starts, axis=1)`` (:func:`group_ids`) when
    :func:`exact_counts` holds; otherwise the sums may differ from it in the last bits.

    :param counts: shape: (b, n) float64
    :param group: shape: (n,) int64 in ``[0, num_groups)``
    :param num_groups: K
    :return: shape: (b, K) float64
    """
    out = np.zeros((counts.shape[0], num_groups), dtype=np.float64)
    _sum_rows(counts, group, out)
    return out


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _middle(values: np.ndarray, weights: np.ndarray, n: int) -> float:  # pragma: no cover
    """The median of ``values`` (ascending) each repeated by its weight (weights non-negative, summing to ``n``)."""
    low = (n - 1) // 2
    high = n // 2
    cumulative = 0.0
    k = 0
    while cumulative + weights[k] <= low:
        cumulative += weights[k]
        k += 1
    first = values[k]
    while cumulative + weights[k] <= high:
        cumulative += weights[k]
        k += 1
    return 0.5 * (first + values[k])


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _median_and_mad(
    distinct: np.ndarray, weights: np.ndarray, n: int, median: np.ndarray, mad: np.ndarray
) -> bool:  # pragma: no cover
    """Each row's median and MAD into ``median`` and ``mad``; whether every row's weights were non-negative integers
    summing to ``n`` (else the outputs are not to be used)."""
    size = distinct.size
    deviation = np.empty(size)
    merged = np.empty(size)
    merged_weights = np.empty(size)
    for j in range(weights.shape[0]):
        row = weights[j]
        total = 0.0
        for k in range(size):
            w = row[k]
            if not (w >= 0.0 and np.floor(w) == w):
                return False
            total += w
        if total != n:
            return False
        middle = _middle(distinct, row, n)
        for k in range(size):
            deviation[k] = np.abs(distinct[k] - middle)
        above = np.searchsorted(distinct, middle)  # distinct[:above] < middle <= distinct[above:]
        left = above - 1
        right = above
        for m in range(size):
            if right >= size or (left >= 0 and deviation[left] <= deviation[right]):
                merged[m] = deviation[left]
                merged_weights[m] = row[left]
                left -= 1
            else:
                merged[m] = deviation[right]
                merged_weights[m] = row[right]
                right += 1
        median[j] = middle
        mad[j] = _middle(merged, merged_weights, n)
    return True


def median_and_mad(distinct: np.ndarray, weights: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Each resample's median and median absolute deviation (unscaled) of ``distinct`` repeated by ``weights``.

    The values of ``kgeval.uncertainty.bootstrap_metrics._weighted_middle`` on the values and on the deviations
    ``|distinct - median|`` sorted stably (the mean of the two middle ones when ``n`` is even).

    :param distinct: shape: (K,) float64, strictly ascending
    :param weights: shape: (b, K) float64 (:func:`group_sums`)
    :param n: what each row of ``weights`` should sum to
    :return: shape: (b,) each, or ``None`` unless every weight is a non-negative integer and every row sums to ``n``
        (what the walk's exact cumulative sums and its order of equal deviations rely on)
    """
    median = np.empty(weights.shape[0])
    mad = np.empty(weights.shape[0])
    if n < 1 or not _median_and_mad(distinct, np.ascontiguousarray(weights), n, median, mad):
        return None
    return median, mad
