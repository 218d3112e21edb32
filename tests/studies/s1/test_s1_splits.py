"""S1 test-size sweep: seeded train/test splits of an alignment with nested test subsets."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.studies.s1.splits import nested_sizes, split_alignment


def test_split_is_a_partition_and_nested_across_train_sizes():
    alignment = np.stack([np.arange(50), np.arange(100, 150)], axis=1)
    pools = {}
    for k in (0, 5, 20):
        train, pool = split_alignment(alignment, k, seed=3)
        assert len(train) == k and len(pool) == 50 - k
        together = np.concatenate([train, pool])
        assert sorted(map(tuple, together.tolist())) == sorted(map(tuple, alignment.tolist()))
        again_train, again_pool = split_alignment(alignment, k, seed=3)
        np.testing.assert_array_equal(pool, again_pool)
        pools[k] = pool
    # the test subset of size t is the same pairs for every #train with k + t <= n
    np.testing.assert_array_equal(pools[0][:30], pools[20][:30])
    np.testing.assert_array_equal(pools[5][:30], pools[20][:30])
    assert not np.array_equal(split_alignment(alignment, 5, seed=4)[1], pools[5])
    with pytest.raises(ValueError, match="num_train"):
        split_alignment(alignment, 50, 0)
    assert nested_sizes(30, [40, 10, 30, 10, 20]) == [10, 20, 30]


def test_pools_are_suffixes_of_one_reversed_permutation():
    """For one seed, the pool of k training pairs is the first n - k pairs of the pool of 0, and the training pairs
    are the rest of that pool read backwards: one permutation serves every #train."""
    alignment = np.stack([np.arange(17), np.arange(17)[::-1] + 40], axis=1)
    train0, pool0 = split_alignment(alignment, 0, seed=11)
    assert train0.shape == (0, 2) and pool0.shape == (17, 2)
    for k in range(17):
        train, pool = split_alignment(alignment, k, seed=11)
        np.testing.assert_array_equal(pool, pool0[: 17 - k])
        np.testing.assert_array_equal(train, pool0[17 - k :][::-1])
        assert train.dtype == np.int64 and pool.dtype == np.int64


def test_split_accepts_flat_pairs_and_rejects_bad_sizes():
    flat = [0, 10, 1, 11, 2, 12]
    train, pool = split_alignment(flat, 1, seed=0)
    together = sorted(map(tuple, np.concatenate([train, pool]).tolist()))
    assert together == [(0, 10), (1, 11), (2, 12)]
    for k in (-1, 3, 4):
        with pytest.raises(ValueError, match=f"num_train={k} must lie in 0..2"):
            split_alignment(flat, k, seed=0)


def test_nested_sizes_keeps_what_fits():
    assert nested_sizes(5, [0, -2, 6, 5, 1, 5, 3.0]) == [1, 3, 5]
    assert nested_sizes(0, [1, 2]) == []
    assert nested_sizes(10, []) == []
    assert all(isinstance(t, int) for t in nested_sizes(10, [2.0, 4]))
