"""The compiled group sums, median and MAD (kgeval.engine.group_sums_kernel) against numpy's gather and ``reduceat``, a
plain loop, and the numpy median and MAD that RankBlock used before them: the same bits."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from kgeval.uncertainty.bootstrap_metrics import RankBlock
# the numpy path, kept as the fallback
from kgeval.uncertainty.bootstrap_metrics import _weighted_middle as weighted_middle
from kgeval.engine.group_sums_kernel import exact_counts, group_ids, group_sums, median_and_mad
from kgeval.uncertainty.resampling import resample_counts


def grouping(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """RankBlock's ``order, distinct, starts`` of some values."""
    order = np.argsort(values, kind="stable")
    distinct, starts = np.unique(values[order], return_index=True)
    return order, distinct, starts


def numpy_median_and_mad(distinct: np.ndarray, weights: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The numpy median and unscaled MAD that RankBlock._medians computed before the compiled path."""
    median = weighted_middle(distinct, weights, n)
    deviation = np.abs(distinct[None, :] - median[:, None])
    by_deviation = np.argsort(deviation, axis=1, kind="stable")
    sorted_weights = np.take_along_axis(weights, by_deviation, axis=1)
    return median, weighted_middle(np.take_along_axis(deviation, by_deviation, axis=1), sorted_weights, n)


def old_medians(self: RankBlock, rank_type: str, counts: np.ndarray, exact: bool) -> tuple[np.ndarray, np.ndarray]:
    """RankBlock._medians before the compiled path: a gather, ``reduceat`` and a stable sort per resample."""
    order, distinct, starts = self.distinct[rank_type][:3]
    weights = np.add.reduceat(counts[:, order], starts, axis=1)
    median, mad = numpy_median_and_mad(distinct, weights, self.n)
    return median, mad / float(special.ndtri(0.75))


def loop_sums(counts: np.ndarray, group: np.ndarray, num_groups: int) -> np.ndarray:
    out = np.zeros((counts.shape[0], num_groups))
    for j in range(counts.shape[0]):
        for i in range(counts.shape[1]):
            out[j, group[i]] += counts[j, i]
    return out


def tied_ranks(n: int, seed: int, top: int) -> np.ndarray:
    """Ranks in 1..top with many ties, some half-integral (realistic ranks)."""
    rng = np.random.default_rng(seed)
    return np.floor(rng.random(n) * top) / 2 + 1


@pytest.mark.parametrize(
    ("values", "b"),
    [
        (tied_ranks(300, seed=0, top=40), 7),  # many ties; b not a multiple of four
        (tied_ranks(300, seed=1, top=40), 1),
        (tied_ranks(301, seed=2, top=3), 8),
        (np.full(50, 4.0), 5),  # one group
        (np.random.default_rng(3).permutation(60).astype(float), 6),  # every row its own group
        (np.array([2.0]), 3),
    ],
)
def test_group_sums_match_reduceat_and_a_loop(values, b):
    order, distinct, starts = grouping(values)
    group = group_ids(order, starts)
    counts = next(resample_counts(values.size, b, seed=b))
    counts[0, : values.size // 3] *= 5  # larger integers too
    assert exact_counts(counts)
    sums = group_sums(counts, group, distinct.size)
    assert sums.shape == (b, distinct.size)
    assert np.array_equal(sums, np.add.reduceat(counts[:, order], starts, axis=1))
    assert np.array_equal(sums, loop_sums(counts, group, distinct.size))


def test_group_ids_name_each_rows_group():
    values = tied_ranks(200, seed=4, top=10)
    order, distinct, starts = grouping(values)
    group = group_ids(order, starts)
    assert group.dtype == np.int64
    assert np.array_equal(distinct[group], values)


@pytest.mark.parametrize(
    ("value", "exact"),
    [(3.0, True), (0.0, True), (0.5, False), (-1.0, False), (np.nan, False), (np.inf, False), (2.0**52, False)],
)
def test_exact_counts_are_non_negative_integers_that_cannot_round(value, exact):
    counts = np.ones((3, 10))
    counts[2, 7] = value
    assert exact_counts(counts) is exact


@pytest.mark.parametrize("n", [1, 2, 201, 200])
def test_median_and_mad_match_the_numpy_path(n):
    values = tied_ranks(n, seed=n, top=30)
    order, distinct, starts = grouping(values)
    counts = np.vstack([np.ones(n), next(resample_counts(n, 40, seed=n))])
    weights = group_sums(counts, group_ids(order, starts), distinct.size)
    median, mad = median_and_mad(distinct, weights, n)
    expected_median, expected_mad = numpy_median_and_mad(distinct, weights, n)
    assert np.array_equal(median, expected_median)
    assert np.array_equal(mad, expected_mad)


def test_median_and_mad_decline_weights_they_cannot_walk():
    distinct = np.array([1.0, 2.0, 5.0])
    assert median_and_mad(distinct, np.array([[1.0, 1.0, 1.0]]), 3) is not None
    assert median_and_mad(distinct, np.array([[1.0, 1.0, 2.0]]), 3) is None  # sums to 4, not 3
    assert median_and_mad(distinct, np.array([[0.5, 1.5, 1.0]]), 3) is None
    assert median_and_mad(distinct, np.array([[-1.0, 2.0, 2.0]]), 3) is None


def block_and_counts(n: int, seed: int) -> tuple[RankBlock, list[np.ndarray]]:
    """A block with tied ranks of every kind, and counts: resamples, ones, non-integral, integral summing to 2n."""
    rng = np.random.default_rng(seed)
    nc = rng.integers(1, 40, n)
    opt = np.floor(rng.random(n) * nc) + 1
    pes = np.minimum(opt + rng.integers(0, 3, n), nc)
    ranks = {"optimistic": opt, "realistic": (opt + pes) / 2, "pessimistic": pes}
    ranks["nondeterministic"] = np.minimum(opt + 1, pes)
    counts = [
        next(resample_counts(n, 9, seed)),
        np.ones((1, n)),
        rng.dirichlet(np.ones(n), 5) * n,  # not integers: numpy's path
        2 * next(resample_counts(n, 4, seed + 1)),  # integers, but summing to 2n: numpy's median and MAD
    ]
    return RankBlock(ranks, nc), counts


@pytest.mark.parametrize(("n", "seed"), [(150, 0), (151, 1), (2, 2), (1, 3)])
def test_replicates_have_the_old_paths_bits(n, seed, monkeypatch):
    block, all_counts = block_and_counts(n, seed)
    new = [block.replicates(counts) for counts in all_counts]
    monkeypatch.setattr(RankBlock, "_medians", old_medians)
    old = [block.replicates(counts) for counts in all_counts]
    for got, expected in zip(new, old):
        assert got.keys() == expected.keys()
        for key in expected:
            assert np.array_equal(got[key], expected[key], equal_nan=True), key
