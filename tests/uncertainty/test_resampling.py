"""Seeded resample streams and percentile intervals (kgeval.uncertainty.resampling)."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.uncertainty.resampling import (
    CHUNK,
    percentile_interval,
    resample_counts,
    resample_indices,
    stream_seed,
)


def test_stream_seed_is_stable_and_separates_names():
    assert stream_seed(0, "fb15k237", "test") == stream_seed(0, "fb15k237", "test")
    seeds = {stream_seed(s, d, sp) for s in (0, 1) for d in ("a", "b") for sp in ("valid", "test")}
    assert len(seeds) == 8
    # the separator keeps ("ab", "c") and ("a", "bc") apart
    assert stream_seed(0, "ab", "c") != stream_seed(0, "a", "bc")


def test_resample_counts_are_the_indices_counted():
    indices = np.vstack(list(resample_indices(9, 150, 4)))
    counts = np.vstack(list(resample_counts(9, 150, 4)))
    assert indices.shape == counts.shape == (150, 9)
    for row_idx, row_counts in zip(indices, counts):
        np.testing.assert_array_equal(np.bincount(row_idx, minlength=9), row_counts)
    assert (counts.sum(axis=1) == 9).all()


def test_resamples_do_not_depend_on_how_many_are_asked_for():
    few = np.vstack(list(resample_counts(7, CHUNK + 3, 1)))
    many = np.vstack(list(resample_counts(7, 3 * CHUNK, 1)))
    np.testing.assert_array_equal(few, many[: CHUNK + 3])


def test_resampling_nothing_is_an_error():
    with pytest.raises(ValueError, match="at least one"):
        next(resample_indices(0, 10, 0))


def test_percentile_interval_ignores_nan_and_matches_numpy():
    values = np.concatenate([np.arange(1000, dtype=float), [np.nan] * 5])
    low, high = percentile_interval(values, 0.9)
    np.testing.assert_allclose((low, high), np.quantile(np.arange(1000.0), [0.05, 0.95]))
    assert np.isnan(percentile_interval(np.full(4, np.nan))).all()
