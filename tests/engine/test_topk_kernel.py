"""The strided-group top-k helpers against brute force: group maxima, the k-th largest of them, the scores reaching a
bound."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.engine.topk_kernel import TOPK_GROUP, group_maxima, kth_largest, reaching


def maxima_of(row: np.ndarray) -> tuple[int, np.ndarray, bool]:
    m = row.shape[0] // TOPK_GROUP
    maxima = np.empty(m + row.shape[0] - m * TOPK_GROUP, dtype=row.dtype)
    nan = group_maxima(row, m, maxima)
    return m, maxima, nan


@pytest.mark.parametrize("C", [1, 5, TOPK_GROUP, TOPK_GROUP + 3, 7 * TOPK_GROUP, 7 * TOPK_GROUP + 11, 300])
def test_group_maxima_are_the_strided_groups_maxima(C):
    row = np.random.default_rng(C).standard_normal(C).astype(np.float32)
    m, maxima, nan = maxima_of(row)
    expected = [max(row[j + g * m] for g in range(TOPK_GROUP)) for j in range(m)] + list(row[m * TOPK_GROUP:])
    np.testing.assert_array_equal(maxima, np.array(expected, dtype=np.float32))
    assert not nan


def test_group_maxima_report_a_nan():
    row = np.arange(3 * TOPK_GROUP + 2, dtype=np.float32)
    row[TOPK_GROUP + 1] = np.nan
    assert maxima_of(row)[2]
    row[TOPK_GROUP + 1] = 0.0
    row[-1] = np.nan  # a lone score
    assert maxima_of(row)[2]


@pytest.mark.parametrize(("n", "k"), [(1, 1), (5, 1), (5, 5), (3, 5), (40, 7), (200, 50)])
def test_kth_largest_is_the_sorted_kth(n, k):
    values = np.random.default_rng(n * 100 + k).integers(0, 20, n).astype(np.float32)  # ties included
    best = np.empty(k, dtype=np.float32)
    expected = np.sort(values)[::-1][k - 1] if n >= k else -np.inf
    assert kth_largest(values, best) == expected


@pytest.mark.parametrize("C", [7, 3 * TOPK_GROUP + 5, 300])
@pytest.mark.parametrize("q", [0.0, 0.5, 0.9, 1.0])
def test_reaching_collects_exactly_the_scores_at_or_above_the_bound(C, q):
    row = np.random.default_rng(C).integers(0, 50, C).astype(np.float32)
    m, maxima, _ = maxima_of(row)
    tau = float(np.quantile(row, q))
    ids, found = np.empty(C, dtype=np.int64), np.empty(C, dtype=np.float32)
    n = reaching(row, m, maxima, tau, ids, found)
    assert sorted(ids[:n].tolist()) == [j for j in range(C) if row[j] >= tau]
    np.testing.assert_array_equal(found[:n], row[ids[:n]])
