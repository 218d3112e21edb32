"""The paired sign-flip test and Holm's correction (kgeval.uncertainty.comparisons)."""

from __future__ import annotations

import itertools

import numpy as np
from scipy import stats

from kgeval.uncertainty.comparisons import holm, sign_flip_pvalues


def test_sign_flip_agrees_with_scipy_permutation_test():
    rng = np.random.default_rng(0)
    a = 1.0 / rng.integers(1, 20, 60)
    b = 1.0 / rng.integers(1, 25, 60)
    permutations = 4000
    ours = sign_flip_pvalues(a - b, permutations, seed=1)
    theirs = stats.permutation_test(
        (a, b), lambda x, y: np.mean(x - y), permutation_type="samples", n_resamples=permutations,
        alternative="two-sided", random_state=2,
    ).pvalue
    # two Monte-Carlo estimates of the same p-value: within 4 standard errors of their difference
    p = 0.5 * (ours + theirs)
    assert abs(ours - theirs) <= 4 * np.sqrt(2 * p * (1 - p) / permutations) + 2 / permutations


def test_sign_flip_exact_on_a_tiny_sample():
    """With 5 queries all 32 sign vectors are equally likely; many draws approach the exact p-value."""
    d = np.array([0.5, 0.25, -0.1, 0.3, 0.2])
    observed = abs(d.mean())
    exact = np.mean([abs((d * s).mean()) >= observed - 1e-12 for s in itertools.product([-1, 1], repeat=5)])
    p = sign_flip_pvalues(d, 20000, seed=0)
    assert abs(p - exact) < 0.01


def test_false_positive_rate_on_exchangeable_rank_vectors():
    """Two systems whose ranks are exchangeable on every query: at alpha 0.05 at most 7 % of 400 tests reject."""
    rng = np.random.default_rng(5)
    replications, n = 400, 80
    difficulty = rng.integers(1, 50, size=(replications, n))  # query difficulty shared by both systems
    ranks_a = difficulty + rng.integers(0, 20, size=(replications, n))
    ranks_b = difficulty + rng.integers(0, 20, size=(replications, n))
    p = sign_flip_pvalues(1.0 / ranks_a - 1.0 / ranks_b, 1000, seed=6)
    assert p.shape == (replications,)
    assert np.mean(p <= 0.05) <= 0.07


def test_identical_systems_and_a_clear_difference():
    assert sign_flip_pvalues(np.zeros(10), 100, seed=0) == 1.0
    p = sign_flip_pvalues(np.full((2, 30), 0.2) * np.array([[1.0], [-1.0]]), 500, seed=0)
    assert np.allclose(p, 1.0 / 501)


def test_holm_against_its_definition():
    p = np.array([0.01, 0.04, 0.03, 0.005, np.nan])
    adjusted = holm(p)
    assert np.isnan(adjusted[4])
    valid = p[:4]
    order = np.argsort(valid)
    expected = np.minimum(1.0, np.maximum.accumulate(valid[order] * (4 - np.arange(4))))
    np.testing.assert_allclose(adjusted[:4][order], expected)
    assert holm(np.array([np.nan])).shape == (1,)
    # Holm rejects a subset of what the uncorrected tests reject, and never more than Bonferroni's complement
    assert (adjusted[:4] >= valid).all()
