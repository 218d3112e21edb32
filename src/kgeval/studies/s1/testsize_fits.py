"""Straight lines through a metric's values over the test sizes of a sweep (S1's Fig. 1 claims).

Every function takes the test sizes ``x`` (shape (S,)) and values ``y`` of shape (..., S) (one row per bootstrap
replicate, or a single row of point values) and fits ``y = a + b x`` by least squares along the last axis.

- :func:`fitted_change`: the line's relative change over the swept range, ``b (x_max - x_min) / (a + b x_min)``: the
  drift of the metric from the smallest to the largest test set read from every size, not from two noisy endpoints;
- :func:`r_squared`: the share of the values' variance the line explains (1 for values on a line).
"""

from __future__ import annotations

import numpy as np

__all__ = ["linear_fit", "fitted_change", "r_squared"]


def linear_fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Intercept and slope of the least-squares line of ``y`` (shape (..., S)) against ``x`` (shape (S,))."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or y.shape[-1] != len(x) or len(x) < 2:
        raise ValueError(f"need two or more test sizes and values of shape (..., {len(x)}), got {y.shape}")
    centred = x - x.mean()
    slope = (y * centred).sum(axis=-1) / (centred**2).sum()
    return y.mean(axis=-1) - slope * x.mean(), slope


def fitted_change(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The fitted line's relative change from the smallest to the largest test size (NaN where the line is 0 at the
    smallest size)."""
    intercept, slope = linear_fit(x, y)
    x = np.asarray(x, dtype=np.float64)
    start = intercept + slope * x.min()
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(start != 0, slope * (x.max() - x.min()) / np.abs(start), np.nan)


def r_squared(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The coefficient of determination of the fitted line (NaN for constant values)."""
    intercept, slope = linear_fit(x, y)
    y = np.asarray(y, dtype=np.float64)
    fitted = intercept[..., None] + slope[..., None] * np.asarray(x, dtype=np.float64)
    residual = ((y - fitted) ** 2).sum(axis=-1)
    total = ((y - y.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, 1.0 - residual / total, np.nan)
