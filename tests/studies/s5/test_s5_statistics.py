"""Streamed statistics of scores: the histogram, the gap locator, chunking, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.studies.s5.calibration import fit_isotonic
from kgeval.studies.s5.statistics import CalibrationData, StreamingHistogram, _GapLocator
from s5_samples import score_sample


def test_gap_locator_matches_binary_search():
    rng = np.random.default_rng(1)
    values = np.unique(np.round(rng.normal(size=300), 3))
    probes = np.concatenate(
        [values, np.nextafter(values, -np.inf), np.nextafter(values, np.inf), rng.normal(0, 3, 20000), [-1e9, 1e9]]
    )
    index, tied = _GapLocator(values).locate(probes)
    tied = np.isin(np.arange(len(probes)), tied)
    np.testing.assert_array_equal(index, np.searchsorted(values, probes, side="left"))
    np.testing.assert_array_equal(tied, np.isin(probes, values))
    # a single distinct positive score
    index, tied = _GapLocator(np.array([2.0])).locate(np.array([1.0, 2.0, 3.0]))
    tied = np.isin(np.arange(3), tied)
    np.testing.assert_array_equal(index, [0, 0, 1])
    np.testing.assert_array_equal(tied, [False, True, False])


def test_streaming_histogram_counts_and_bound():
    rng = np.random.default_rng(2)
    histogram = StreamingHistogram(num_bins=64)
    chunks = [rng.uniform(0, 1, 500), rng.uniform(-30, -29, 500), rng.uniform(100, 101, 500), rng.normal(0, 5, 500)]
    counts = [rng.integers(1, 3, 500) for _ in chunks]
    for values, c in zip(chunks, counts):
        histogram.add(values, c)
    values, c = np.concatenate(chunks), np.concatenate(counts)
    assert histogram.counts.sum() == c.sum()
    bins = np.floor((values - histogram.lo) / histogram.width).astype(int)
    assert bins.min() >= 0 and bins.max() < histogram.num_bins
    np.testing.assert_array_equal(np.bincount(bins, weights=c, minlength=64), histogram.counts)
    assert np.abs(values - histogram.centres[bins]).max() <= histogram.error_bound * (1 + 1e-9)
    # width after doubling is at most twice what the final range needs
    assert histogram.width <= 2 * (values.max() - values.min()) / 64 * (1 + 1e-6)


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="at least one positive"):
        CalibrationData([])
    data = CalibrationData([0.5, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        data.add_negatives([0.1, np.nan])
    with pytest.raises(ValueError, match="no negatives"):
        fit_isotonic(data)
    with pytest.raises(ValueError, match="even"):
        StreamingHistogram(3)


def test_chunked_add_equals_single_add():
    pos, neg, counts = score_sample(8)
    whole = CalibrationData(pos)
    whole.add_negatives(neg, counts)
    pieces = CalibrationData(pos)
    pieces.max_chunk = 97  # many internal chunks
    pieces.add_negatives(neg, counts)
    for name in ("tie_counts", "gap_counts", "gap_min", "gap_max"):
        np.testing.assert_array_equal(getattr(whole, name), getattr(pieces, name))
    np.testing.assert_array_equal(whole.histogram.counts.sum(), pieces.histogram.counts.sum())
