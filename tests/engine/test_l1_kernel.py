"""The compiled L1 kernel against a brute-force float32 sum in the same order, tiles and row groups included."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.engine.l1_kernel import CANDIDATE_TILE, l1_rows


def ordered_sums(queries: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Brute force: ``sum_k |q_k - c_k|`` accumulated in float32 over k = 0, 1, ... for every pair."""
    out = np.zeros((len(queries), len(candidates)), dtype=np.float32)
    with np.errstate(invalid="ignore"):  # inf - inf is NaN, as in the kernel
        for k in range(queries.shape[1]):
            out += np.abs(queries[:, k, None] - candidates[None, :, k])
    return out


def kernel(queries: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    out = np.full((len(queries), len(candidates)), np.nan, dtype=np.float32)
    l1_rows(np.ascontiguousarray(queries), np.ascontiguousarray(candidates.T), out)
    return out


@pytest.mark.parametrize("rows", [0, 1, 3, 4, 5, 9])
@pytest.mark.parametrize("num_candidates", [1, CANDIDATE_TILE - 1, CANDIDATE_TILE + 1, 2 * CANDIDATE_TILE + 17])
@pytest.mark.parametrize("dims", [0, 1, 7, 64])
def test_same_bits_as_the_ordered_sum(rows, num_candidates, dims):
    rng = np.random.default_rng(rows * 1000 + num_candidates + dims)
    queries = (rng.standard_normal((rows, dims)) * 3).astype(np.float32)
    candidates = rng.standard_normal((num_candidates, dims)).astype(np.float32)
    got = kernel(queries, candidates)
    assert np.array_equal(got.view(np.int32), ordered_sums(queries, candidates).view(np.int32))


def test_nan_and_infinite_entries_follow_ieee():
    queries = np.array([[np.nan, 1.0], [np.inf, 0.0], [1.0, 2.0], [0.0, -np.inf], [3.0, 4.0]], dtype=np.float32)
    candidates = np.array([[0.0, 0.0], [np.inf, 1.0], [1.0, 2.0]], dtype=np.float32)
    np.testing.assert_array_equal(kernel(queries, candidates), ordered_sums(queries, candidates))
    assert np.isnan(kernel(queries, candidates)[1, 1])  # |inf - inf| is NaN


def test_the_order_of_the_sum_shows_in_the_bits():
    """The bit-equality above can fail: the same sums in reverse order differ from the kernel's somewhere."""
    rng = np.random.default_rng(0)
    queries = rng.standard_normal((8, 64)).astype(np.float32)
    candidates = rng.standard_normal((500, 64)).astype(np.float32)
    reverse = ordered_sums(queries[:, ::-1], candidates[:, ::-1])
    assert not np.array_equal(kernel(queries, candidates), reverse)
