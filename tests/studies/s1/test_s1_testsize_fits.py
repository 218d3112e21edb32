"""Straight lines through a sweep's values: against NumPy's own least squares and hand-made lines."""

import numpy as np
import pytest

from kgeval.studies.s1.testsize_fits import fitted_change, linear_fit, r_squared

X = np.array([1000.0, 2000.0, 4000.0, 8000.0])


def test_the_fit_equals_numpys_polyfit_row_by_row():
    y = np.random.default_rng(0).normal(size=(5, 4))
    intercept, slope = linear_fit(X, y)
    for row, a, b in zip(y, intercept, slope):
        assert np.polyfit(X, row, 1) == pytest.approx([b, a])


def test_a_line_has_r2_one_and_its_own_relative_change():
    y = 2.0 + 0.001 * X  # 3 at the smallest size, 10 at the largest
    assert r_squared(X, y) == pytest.approx(1.0)
    assert fitted_change(X, y) == pytest.approx(7.0 / 3.0)
    assert fitted_change(X, np.full(4, 5.0)) == 0.0 and np.isnan(r_squared(X, np.full(4, 5.0)))


def test_noise_lowers_r2_and_one_outlying_endpoint_moves_the_fit_less_than_the_endpoints():
    x = np.arange(1000.0, 6000.0, 1000.0)
    y = np.array([1.0, 1.0, 1.0, 1.0, 1.3])
    assert r_squared(x, y) < 0.99
    assert 0 < fitted_change(x, y) < (1.3 - 1.0) / 1.0


def test_fewer_than_two_sizes_are_an_error():
    with pytest.raises(ValueError, match="two or more test sizes"):
        linear_fit(np.array([1.0]), np.array([1.0]))
