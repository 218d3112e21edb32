"""The compiled statistics pass (kgeval.engine.calibration_stats_kernel) against CalibrationData's numpy pass: the same
counts, the same minima and maxima (bit for bit, signed zeros included), the same histogram, the same fits. Chunks
without counts take the sorted pass (``accumulate_sorted``), chunks with counts the grid lookup (``accumulate``)."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.engine.calibration_stats_kernel import accumulate, accumulate_sorted, gap_table, score_range
from kgeval.studies.s5 import statistics
from kgeval.studies.s5.calibration import fit_isotonic, fit_platt
from kgeval.studies.s5.statistics import CalibrationData

FIELDS = ("tie_counts", "gap_counts", "gap_min", "gap_max")


def tied_sample(seed: int, num_pos: int = 300) -> tuple[np.ndarray, list[np.ndarray]]:
    """Positives from a small set of values (many ties), and negative chunks drawn from a small set that holds the
    positives' values, their neighbours, both signed zeros, values below the smallest and above the largest
    positive; later chunks reach further out on both sides, so the histogram grows between chunks."""
    rng = np.random.default_rng(seed)
    pos = np.round(rng.normal(0.5, 1.0, num_pos), 1).astype(np.float32).astype(np.float64)
    pos[:3] = 0.0
    distinct = np.unique(pos)
    pool = np.concatenate(
        [distinct, np.nextafter(distinct, -np.inf), np.nextafter(distinct, np.inf), np.round(rng.normal(0, 2, 40), 2)]
    )
    pool = np.concatenate([pool, [0.0, -0.0, distinct[0] - 1, distinct[-1] + 1]])
    chunks = []
    for spread, size in ((1.0, 5000), (4.0, 1), (30.0, 777), (1.0, 2048), (300.0, 3000)):
        chunk = rng.choice(pool, size) * np.where(rng.uniform(size=size) < 0.1, spread, 1.0)
        chunks.append(chunk)
    return pos, chunks


def fold(pos, chunks, counts, compiled, dtype=np.float64, num_bins=64, max_chunk=2**20) -> CalibrationData:
    data = CalibrationData(pos, num_bins=num_bins)
    data.compiled = compiled
    data.max_chunk = max_chunk
    for chunk, c in zip(chunks, counts):
        data.add_negatives(np.asarray(chunk, dtype=dtype), c)
    return data


def assert_same(a: CalibrationData, b: CalibrationData) -> None:
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype
        # bit for bit: -0.0 and 0.0 differ here
        np.testing.assert_array_equal(x.view(np.int64), y.view(np.int64), err_msg=name)
    np.testing.assert_array_equal(a.histogram.counts, b.histogram.counts)
    assert (a.histogram.lo, a.histogram.width) == (b.histogram.lo, b.histogram.width)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("max_chunk", [2**20, 1000, 97])
def test_compiled_pass_equals_numpy_pass(dtype, weighted, max_chunk):
    pos, chunks = tied_sample(0)
    rng = np.random.default_rng(1)
    counts = [rng.integers(0, 4, len(c)) if weighted else None for c in chunks]
    numpy_pass = fold(pos, chunks, counts, False, dtype, max_chunk=max_chunk)
    compiled = fold(pos, chunks, counts, True, dtype, max_chunk=max_chunk)
    assert_same(numpy_pass, compiled)
    assert numpy_pass.histogram.counts.sum() == compiled.num_negatives
    assert compiled.num_negatives == sum(len(c) if k is None else k.sum() for c, k in zip(chunks, counts))
    assert compiled.tie_counts.sum() > 0 and (compiled.gap_counts[[0, -1]] > 0).all()


def test_signed_zeros_are_selected_as_numpy_selects_them():
    pos = np.array([-1.0, 1.0])
    for chunk in ([0.0, -0.0], [-0.0, 0.0], [0.0, -0.0, 0.0], [-0.5, 0.0, -0.0, 0.5, -0.0]):
        numpy_pass = fold(pos, [chunk], [None], False)
        assert_same(numpy_pass, fold(pos, [chunk], [None], True))
    # a zero that ties with a positive zero of either sign
    for zero in (0.0, -0.0):
        chunk = [-0.0, 0.0, 1e-300, -1e-300]
        assert_same(fold([zero, 2.0], [chunk], [None], False), fold([zero, 2.0], [chunk], [None], True))


def test_matrix_and_other_dtypes_are_flattened():
    pos, chunks = tied_sample(2)
    matrix = np.asarray(chunks[0][:4000], dtype=np.float32).reshape(40, 100)
    for scores in (matrix, matrix.T, matrix[:, ::2], np.round(matrix * 10).astype(np.int32)):
        numpy_pass = fold(pos, [scores], [None], False)
        assert_same(numpy_pass, fold(pos, [scores], [None], True))


def test_non_finite_scores_are_rejected_after_the_same_chunks():
    pos, chunks = tied_sample(3)
    for bad in (np.nan, np.inf, -np.inf):
        scores = chunks[0].copy()
        scores[2500] = bad
        states = []
        for compiled in (False, True):
            data = CalibrationData(pos, num_bins=64)
            data.compiled, data.max_chunk = compiled, 1000
            with pytest.raises(ValueError, match="NaN or infinite"):
                data.add_negatives(scores)
            states.append(data)
        assert_same(*states)
        assert states[1].num_negatives == 2000  # the two chunks before the bad one


def test_gaps_equal_a_binary_search_on_edge_grids():
    rng = np.random.default_rng(4)
    cases = [
        np.array([2.0]),  # one distinct positive: every value in cell 0
        np.array([0.0, 5e-324]),  # a span whose cells per unit overflow
        np.array([-1e300, 0.0, 1e300]),  # a span near the largest float
        np.unique(rng.normal(size=5000)),
        np.unique(np.concatenate([rng.normal(size=3000), rng.normal(0, 1e-9, 3000)])),  # dense cells
    ]
    for values in cases:
        probes = np.concatenate(
            [values, np.nextafter(values, -np.inf), np.nextafter(values, np.inf), [-1e308, 1e308, 0.0, -0.0]]
        )
        probes = np.concatenate([probes, rng.choice(probes, 1000) * rng.uniform(0.5, 1.5, 1000)])
        table, grid = gap_table(values)
        n = len(values)
        index = np.searchsorted(values, probes, side="left")
        tied = (index < n) & (values[np.minimum(index, n - 1)] == probes)
        for ordered in (False, True):
            stats = (np.zeros(n, np.int64), np.zeros(n + 1, np.int64), np.full(n + 1, np.inf), np.full(n + 1, -np.inf))
            hist = np.zeros(2, np.int64)
            if ordered:
                accumulate_sorted(np.sort(probes), probes, values, 0.0, 0.0, (*stats, hist))
            else:
                grid_and_bins = np.concatenate([grid, [0.0, 0.0]])
                accumulate(probes, np.zeros(0, np.int64), values, table, grid_and_bins, (*stats, hist))
            np.testing.assert_array_equal(stats[0], np.bincount(index[tied], minlength=n))
            np.testing.assert_array_equal(stats[1], np.bincount(index[~tied], minlength=n + 1))
            assert hist.sum() == len(probes)


def test_large_counts_are_counted_exactly():
    pos, chunks = tied_sample(7)
    rng = np.random.default_rng(8)
    counts = [rng.integers(0, 2**40, len(c)) for c in chunks]  # bins sum past 2**31, below 2**53
    assert_same(fold(pos, chunks, counts, False), fold(pos, chunks, counts, True))


def test_score_range():
    assert score_range(np.array([3.0, -1.0, 2.0])) == (-1.0, 3.0)
    assert score_range(np.array([1.5], dtype=np.float32)) == (1.5, 1.5)
    low, high = score_range(np.array([1.0, np.nan, 2.0]))
    assert np.isnan(low) and np.isnan(high)
    assert score_range(np.array([np.nan, 1.0]))[0] != score_range(np.array([np.nan, 1.0]))[0]
    assert score_range(np.array([1.0, np.inf])) == (1.0, np.inf)


def test_fits_from_both_passes_are_equal():
    rng = np.random.default_rng(5)
    pos = rng.normal(1.0, 1.0, 500).astype(np.float32)
    chunks = [rng.normal(-1.0, 1.5, 20000).astype(np.float32) for _ in range(3)]
    chunks[1][:200] = pos[:200]  # ties with positives
    counts = [None, rng.integers(0, 3, 20000), None]
    numpy_pass = fold(pos, chunks, counts, False, np.float32, num_bins=1024)
    compiled = fold(pos, chunks, counts, True, np.float32, num_bins=1024)
    assert_same(numpy_pass, compiled)
    a, b = fit_isotonic(numpy_pass).estimator, fit_isotonic(compiled).estimator
    np.testing.assert_array_equal(a.X_thresholds_, b.X_thresholds_)
    np.testing.assert_array_equal(a.y_thresholds_, b.y_thresholds_)
    assert fit_platt(numpy_pass).parameters() == fit_platt(compiled).parameters()


def test_numpy_pass_runs_where_numba_is_missing(monkeypatch):
    pos, chunks = tied_sample(6)
    monkeypatch.setattr(statistics, "_compiled_pass", lambda: None)
    calls = []
    original = CalibrationData._add_chunk_numpy
    monkeypatch.setattr(CalibrationData, "_add_chunk_numpy", lambda self, *a: calls.append(1) or original(self, *a))
    data = fold(pos, chunks[:1], [None], True)
    assert calls and data.num_negatives == len(chunks[0])
