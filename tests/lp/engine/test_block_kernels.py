"""Tests of kgeval.lp.engine.block_kernels against brute-force numpy."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.lp.engine.block_kernels import TOPK_GROUP, count_queries, topk_rows
from topk_reference import sorted_lists


@pytest.mark.parametrize("C", [1, 7, 300])
def test_counts_equal_brute_force(C):
    """Every query of a row (rows shared by several queries), NaN entries and thresholds, ties before the true ID."""
    rng = np.random.default_rng(C)
    b, q = 9, 40
    rows = rng.integers(0, 4, size=(b, C)).astype(np.float32)
    rows[rng.random(rows.shape) < 0.1] = np.nan
    local = np.sort(rng.integers(0, b, size=q))
    true = rng.integers(0, C, size=q)
    thresholds = rows[local, true].copy()
    thresholds[::7] = np.nan
    out = [np.full(q, -1, dtype=np.int64) for _ in range(3)]
    count_queries(rows, local, thresholds, true, *out)
    for i in range(q):
        row, t = rows[local[i]], thresholds[i]
        assert out[0][i] == np.sum(row > t)
        assert out[1][i] == np.sum(row >= t)
        assert out[2][i] == np.sum(row[: true[i]] == t)


@pytest.mark.parametrize("C", [3, TOPK_GROUP, 8 * TOPK_GROUP * 5 - 1, 1000])
@pytest.mark.parametrize("k", [1, 3])
def test_topk_rows_equal_a_full_sort(C, k):
    """Lists equal a stable sort, with many ties, -inf entries, a row of one value; rows with a NaN are flagged."""
    rng = np.random.default_rng(C + k)
    rows = rng.integers(0, 20, size=(8, C)).astype(np.float32)
    rows[rng.random(rows.shape) < 0.3] = -np.inf
    rows[1] = 2.5
    rows[2] = -np.inf
    rows[3, C // 2] = np.nan
    ids = np.full((8, k), -1, dtype=np.int64)
    values = np.full((8, k), np.nan, dtype=np.float32)
    has_nan = topk_rows(rows, k, ids, values)
    assert has_nan.tolist() == [r == 3 for r in range(8)]
    expected_ids, expected_values = sorted_lists(rows, k)
    keep = ~has_nan
    np.testing.assert_array_equal(ids[keep], expected_ids[keep])
    np.testing.assert_array_equal(values[keep], expected_values[keep])


def test_topk_rows_on_real_valued_scores():
    rng = np.random.default_rng(1)
    rows = rng.standard_normal((5, 14_505)).astype(np.float32)
    ids = np.empty((5, 10), dtype=np.int64)
    values = np.empty((5, 10), dtype=np.float32)
    assert not topk_rows(rows, 10, ids, values).any()
    expected_ids, _ = sorted_lists(rows, 10)
    np.testing.assert_array_equal(ids, expected_ids)
