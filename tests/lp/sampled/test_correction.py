import numpy as np

from kgeval.lp.sampled.correction import bv_correction, corrected_values, hypergeometric_matrix


def test_hypergeometric_rows_are_distributions():
    a = hypergeometric_matrix(12, 4)
    assert np.allclose(a.sum(axis=1), 1.0)
    assert a[0, 0] == 1.0  # rank 1: no negative above it in any sample


def test_gamma_one_is_the_posterior_mean_and_full_sample_is_exact():
    n, m = 9, 3
    a = hypergeometric_matrix(n, m)
    full = 1.0 / np.arange(1, n + 1)
    assert np.allclose(bv_correction(n, m, "mrr", 1.0), (a.T @ full) / a.sum(axis=0))
    assert np.allclose(bv_correction(n, n - 1, "mrr", 0.01), full)


def test_least_bias_correction_of_a_linear_metric_is_the_scaled_rank():
    n, m = 10, 3  # E[j | r] = m (r - 1) / (n - 1), so x_j = 1 + (n - 1) j / m is unbiased for MR
    x = bv_correction(n, m, "mr", 0.0)
    assert np.allclose(x, 1 + (n - 1) * np.arange(m + 1) / m, atol=1e-6)


def test_queries_that_drew_everything_get_their_full_value():
    ranks = np.array([1.0, 3.0, 2.0])
    out = corrected_values(ranks, np.array([4, 4, 2]), np.array([5, 5, 40]), "mrr", 0.01, 2)
    assert np.allclose(out[:2], 1.0 / ranks[:2])
