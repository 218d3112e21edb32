"""The compiled nearest-neighbour kernels against brute force: first indices of maxima, exact top-k rows, flags."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.engine.nearest_kernel import largest_rows, row_column_maxima
from kgeval.engine.topk_kernel import TOPK_GROUP


def maxima(sims: np.ndarray) -> tuple[bool, tuple[np.ndarray, ...]]:
    b, c = sims.shape
    out = (np.empty(b, np.float32), np.empty(b, np.int64), np.empty(c, np.float32), np.empty(c, np.int64))
    return row_column_maxima(np.ascontiguousarray(sims), *out), out


def largest(sims: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    ids = np.full((sims.shape[0], k), -1, np.int64)
    exact = np.zeros(sims.shape[0], np.bool_)
    largest_rows(np.ascontiguousarray(sims), k, ids, exact)
    return ids, exact


def brute_largest(row: np.ndarray, k: int) -> tuple[np.ndarray, bool]:
    """The k largest columns, largest first, and whether the k + 1 largest values are all distinct."""
    order = sorted(range(len(row)), key=lambda j: -row[j])
    top = [row[j] for j in order[: k + 1]]
    return np.array(order[:k]), all(a > b for a, b in zip(top, top[1:]))


@pytest.mark.parametrize("shape", [(1, 1), (1, 5), (5, 1), (7, TOPK_GROUP * 3 + 5), (40, 300)])
def test_maxima_are_the_first_maxima_of_rows_and_columns(shape):
    rng = np.random.default_rng(shape[0] * 100 + shape[1])
    sims = rng.integers(-3, 4, size=shape).astype(np.float32)  # many ties: the first index must win
    sims[0, -1] = -np.inf
    nan, (row_value, row_arg, col_value, col_arg) = maxima(sims)
    assert not nan
    for i in range(shape[0]):
        assert row_value[i] == sims[i].max() and row_arg[i] == int(np.flatnonzero(sims[i] == sims[i].max())[0])
    for j in range(shape[1]):
        column = sims[:, j]
        assert col_value[j] == column.max() and col_arg[j] == int(np.flatnonzero(column == column.max())[0])


@pytest.mark.parametrize("where", [(0, 0), (3, 7), (4, 12)])
def test_a_nan_anywhere_is_reported(where):
    sims = np.random.default_rng(0).standard_normal((5, 13)).astype(np.float32)
    sims[where] = np.nan
    assert maxima(sims)[0]


@pytest.mark.parametrize("c, k", [(1, 1), (5, 1), (5, 5), (TOPK_GROUP * 4 + 3, 2), (300, 100), (1000, 100), (40, 39)])
def test_distinct_rows_give_their_sorted_largest_columns(c, k):
    rng = np.random.default_rng(c + k)
    sims = np.stack([rng.permutation(c) for _ in range(6)]).astype(np.float32) - c / 2  # distinct per row
    sims[1, 0] = -np.inf
    ids, exact = largest(sims, k)
    for i, row in enumerate(sims):
        expected, unique = brute_largest(row, k)
        assert unique and exact[i]
        np.testing.assert_array_equal(ids[i], expected)


def test_ties_among_the_k_plus_one_largest_are_flagged_and_only_those():
    rng = np.random.default_rng(5)
    sims = np.stack([rng.permutation(200) for _ in range(5)]).astype(np.float32)
    k = 10
    sims[1, np.argsort(-sims[1])[3]] = np.sort(sims[1])[-2]  # a tie inside the top k
    sims[2, np.argsort(-sims[2])[k]] = np.sort(sims[2])[-k]  # the k-th and the (k + 1)-th tie
    sims[3, np.argsort(-sims[3])[k + 1]] = np.sort(sims[3])[-(k + 1)]  # a tie just below: the answer is unique
    sims[4, 17] = np.nan
    ids, exact = largest(sims, k)
    assert exact.tolist() == [True, False, False, True, False]
    for i in (0, 3):
        np.testing.assert_array_equal(ids[i], brute_largest(sims[i], k)[0])
