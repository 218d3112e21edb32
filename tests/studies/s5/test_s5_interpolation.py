"""GridInterpolation is numpy.interp bit for bit (kgeval.studies.s5.interpolation)."""

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

from kgeval.studies.s5.interpolation import GridInterpolation


def _bits(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)


def _probes(xp: np.ndarray, rng: np.random.Generator, n: int = 200_000) -> np.ndarray:
    """Random scores over and beyond the thresholds' range, the thresholds themselves and their float neighbours,
    midpoints, and float32-rounded scores (as the models give)."""
    lo, hi = xp.min(), xp.max()
    pad = max(hi - lo, 1.0)
    uniform = rng.uniform(lo - pad, hi + pad, n)
    near = np.concatenate([xp, np.nextafter(xp, -np.inf), np.nextafter(xp, np.inf), (xp[:-1] + xp[1:]) / 2])
    return np.concatenate([uniform, near, uniform.astype(np.float32).astype(np.float64), [lo - 1e300, hi + 1e300]])


def _isotonic_thresholds(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.concatenate([rng.normal(0, 1, n), rng.normal(3, 0.01, n // 4)]).astype(np.float32).astype(np.float64)
    y = (rng.random(x.size) < 1 / (1 + np.exp(-2 * x))).astype(float)
    fit = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(x, y)
    return fit.X_thresholds_, fit.y_thresholds_


@pytest.mark.parametrize("seed", range(4))
def test_equals_numpy_interp_on_isotonic_fits(seed):
    rng = np.random.default_rng(seed)
    xp, fp = _isotonic_thresholds(rng, [50, 2_000, 20_000, 5][seed])
    x = _probes(xp, rng)
    rng.shuffle(x)
    assert np.array_equal(_bits(GridInterpolation(xp, fp)(x)), _bits(np.interp(x, xp, fp)))


@pytest.mark.parametrize("xp, fp", [([1.5], [0.25]), ([-1.0, 2.0], [0.0, 1.0]), ([0.0, 1e-300, 1.0], [0.1, 0.2, 0.9])])
def test_equals_numpy_interp_on_few_thresholds(xp, fp):
    xp, fp = np.array(xp), np.array(fp)
    x = _probes(xp, np.random.default_rng(0), 10_000)
    assert np.array_equal(_bits(GridInterpolation(xp, fp)(x)), _bits(np.interp(x, xp, fp)))


def test_clustered_thresholds_are_searched_not_guessed():
    """Thousands of thresholds inside one grid cell of a wide range: every score there is binary-searched."""
    xp = np.concatenate([[-1e6], np.linspace(0.0, 1e-3, 5_000), [1e6]])
    fp = np.linspace(0.0, 1.0, xp.size)
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-1e-3, 2e-3, 100_000), rng.uniform(-2e6, 2e6, 10_000)])
    assert np.array_equal(_bits(GridInterpolation(xp, fp)(x)), _bits(np.interp(x, xp, fp)))


def test_shape_out_and_non_finite_scores():
    rng = np.random.default_rng(2)
    xp, fp = _isotonic_thresholds(rng, 300)
    interpolation = GridInterpolation(xp, fp)
    x = rng.normal(0, 2, (7, 11))
    expected = np.interp(x, xp, fp)
    out = np.empty((7, 11))
    assert interpolation(x, out=out) is out and np.array_equal(out, expected)
    strided = np.empty((7, 22))[:, ::2]
    interpolation(x, out=strided)
    assert np.array_equal(strided, expected)
    in_place = x.copy()
    interpolation(in_place, out=in_place)
    assert np.array_equal(in_place, expected)
    with_nan = np.array([np.nan, -np.inf, np.inf, 0.0])
    assert np.array_equal(interpolation(with_nan), np.interp(with_nan, xp, fp), equal_nan=True)
    assert interpolation(np.zeros(0)).shape == (0,)


def test_rejects_thresholds_it_cannot_serve():
    with pytest.raises(ValueError, match="strictly increasing"):
        GridInterpolation([0.0, 0.0, 1.0], [0.0, 0.5, 1.0])
    with pytest.raises(ValueError, match="one shape"):
        GridInterpolation([0.0, 1.0], [0.0])
