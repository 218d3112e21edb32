"""Sufficient statistics of streamed scores for fitting calibration functions (S5, paper 004, Sec. 4).

A calibration function ``f`` maps a link-prediction score ``x`` to a posterior ``f(x)``: the probability that the
triple is a positive. It is fitted on the validation positives and *all* their LCWA negatives with the weights of
Eq. 11, ``w+ = 1/|G_VA|`` per positive and ``w- = 1/|N|`` per negative, so both classes weigh one in total.

The negatives are far too many to hold (FB15k-237: ~5 * 10^8 scores), so :class:`CalibrationData` keeps sufficient
statistics that are updated chunk by chunk (:meth:`CalibrationData.add_negatives`); the positives (one per
validation triple) are kept as they are.

**Isotonic regression: an exact reduction.** Sort all points by score. Between two consecutive distinct positive
scores ``v_(j-1) < v_j`` lies a run of negatives only. The weighted least-squares isotonic fit (the slopes of the
greatest convex minorant of the cumulative-sum diagram) is constant on every run of equal labels: a run of zeros is
one straight piece of the diagram, and a convex minorant that touched the piece inside would have to contain all of
it. The fit is therefore unchanged when every run is replaced by its first and last score, each carrying half of
the run's total weight (the diagram is the same polyline with collinear vertices removed), and negatives tied with a
positive score are pooled with it (as scikit-learn pools ties). So per gap ``j`` (``0..n_unique``) we keep the
number of negatives and their minimum and maximum, and per distinct positive score the number of tied negatives:
``O(|G_VA|)`` memory. :func:`fit_isotonic` fits :class:`sklearn.isotonic.IsotonicRegression` on these at most
``3 n + 1`` points and obtains *the same function* (thresholds and interpolation) as a fit on all scores at once,
up to floating-point rounding of the weight sums. (One caveat inherited from scikit-learn: it merges scores closer
than ``1e-15`` as ties; the reduction only merges exactly equal scores.)

**Platt scaling: a bounded-error reduction.** The logistic loss of a negative depends on its exact score, so the
negatives are also counted in a :class:`StreamingHistogram` of ``B`` equal-width bins whose range grows by doubling
(exact merging of bin pairs) to cover every score seen. :func:`fit_platt` fits a weighted logistic regression on
the raw positives and the negatives moved to their bin centres. Each negative moves by at most ``h/2`` (``h`` the
final bin width, at most ``2 * (max - min) / B``); since ``|d/dz log(1 + e^z)| < 1``, the weighted objective at any
``(a, b)`` differs from the exact one by at most ``|a| h / 2`` (the negatives' weights sum to one), and each
posterior ``sigma(a x + b)`` used for the validation metrics by at most ``|a| h / 8``."""

from __future__ import annotations

import functools
import importlib.util
import math
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["StreamingHistogram", "CalibrationData"]


def _as_scores(scores: Any, name: str = "scores") -> np.ndarray:
    """Scores as a flat float64 array (float64 input is not copied); non-finite values are an error."""
    if hasattr(scores, "detach"):
        scores = scores.detach().cpu().numpy()
    array = np.asarray(scores, dtype=np.float64).reshape(-1)
    if array.size:
        _check_finite(float(array.min()), float(array.max()), name)
    return array


def _check_finite(low: float, high: float, name: str) -> None:
    """``min`` and ``max`` of an array are finite iff every entry is (NaN propagates through both)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"{name} contain NaN or infinite values; check the model's scores")


def _as_counts(counts: Any, size: int) -> np.ndarray | None:
    """Multiplicities as int64 of shape (size,), or None for "each once"."""
    if counts is None:
        return None
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    if counts.shape != (size,):
        raise ValueError(f"counts must have shape ({size},), got {counts.shape}")
    if (counts < 0).any():
        raise ValueError("counts must be non-negative")
    return counts


def _bincount(index: np.ndarray, counts: np.ndarray | None, length: int) -> np.ndarray:
    """Exact int64 counts per index (weighted by ``counts`` if given)."""
    if counts is None:
        return np.bincount(index, minlength=length).astype(np.int64, copy=False)
    return np.bincount(index, weights=counts, minlength=length).astype(np.int64)


def _grid_index(values: np.ndarray, lo: float, inv_width: float, offset: int, top: int, work: np.ndarray) -> np.ndarray:
    """``clip(floor((values - lo) * inv_width) + offset, 0, top)`` as intp, using ``work`` as scratch (no temporaries)."""
    np.subtract(values, lo, out=work)
    work *= inv_width
    work += offset
    np.clip(work, 0, top, out=work)
    # the values are non-negative now, so truncation is the floor
    return work.astype(np.intp)


class StreamingHistogram:
    """Counts of values in ``num_bins`` equal-width bins whose range doubles as needed.

    The first non-empty chunk fixes the range ``[lo, lo + num_bins * width)`` to its minimum and maximum. A later
    value outside the range doubles the width (merging each pair of adjacent bins exactly) towards that side until
    every value fits, so all counts are exact and each value lies in a bin of the final width.

    :param num_bins: number of bins (even, at least 2)
    """

    def __init__(self, num_bins: int = 2**16) -> None:
        if num_bins < 2 or num_bins % 2:
            raise ValueError(f"num_bins must be an even number >= 2, got {num_bins}")
        self.num_bins = int(num_bins)
        self.counts = np.zeros(self.num_bins, dtype=np.int64)
        self.lo: float | None = None
        self.width: float | None = None

    def _bin(self, values: np.ndarray) -> np.ndarray:
        return np.floor((values - self.lo) / self.width)

    def add(
        self,
        values: np.ndarray,
        counts: np.ndarray | None = None,
        *,
        low: float | None = None,
        high: float | None = None,
        work: np.ndarray | None = None,
    ) -> None:
        """Count ``values`` (shape: (k,)), each ``counts[i]`` times (default once).

        :param low: ``values.min()`` if already known (saves a pass)
        :param high: ``values.max()`` if already known
        :param work: float64 scratch space of the same shape as ``values``
        """
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        counts = _as_counts(counts, values.size)
        if not values.size:
            return
        low = float(values.min()) if low is None else low
        high = float(values.max()) if high is None else high
        self.cover(low, high)
        work = np.empty_like(values) if work is None else work
        bins = _grid_index(values, self.lo, 1.0 / self.width, 0, self.num_bins - 1, work)
        self.counts += _bincount(bins, counts, self.num_bins)

    def cover(self, low: float, high: float) -> None:
        """Fix the range (first call) or double it until it covers ``[low, high]``, merging bins exactly."""
        _check_finite(low, high, "values")
        if self.lo is None:
            span = high - low
            self.lo = low
            # a little slack so that the maximum falls inside the last bin despite rounding; a first chunk of zeros
            # (span 0) gets a width whose inverse is finite (the ulp of 1e-290 is a normal number)
            self.width = max(span / self.num_bins * (1 + 1e-9), math.ulp(max(abs(low), abs(high), 1e-290)) * 4)
        while True:
            first, last = self._bin(np.array([low, high]))
            if first < 0:
                # extend to the left: the old range becomes the right half
                self.counts = np.bincount(
                    (self.num_bins + np.arange(self.num_bins)) // 2,
                    weights=self.counts,
                    minlength=self.num_bins,
                ).astype(np.int64)
                self.lo -= self.num_bins * self.width
                self.width *= 2
            elif last >= self.num_bins:
                # extend to the right: the old range becomes the left half
                self.counts = np.bincount(
                    np.arange(self.num_bins) // 2, weights=self.counts, minlength=self.num_bins
                ).astype(np.int64)
                self.width *= 2
            else:
                break

    @property
    def centres(self) -> np.ndarray:
        """Bin centres. shape: (num_bins,)"""
        if self.lo is None:
            return np.zeros(self.num_bins)
        return self.lo + (np.arange(self.num_bins) + 0.5) * self.width

    @property
    def error_bound(self) -> float:
        """Largest distance of a counted value from its bin centre (half the bin width; 0 when empty)."""
        return 0.0 if self.width is None else self.width / 2


class _GapLocator:
    """Where values fall relative to sorted distinct positive scores, without a binary search for most values.

    ``numpy.searchsorted`` over ~10^7 unsorted values costs seconds. A uniform grid over the positives' range
    answers most values by one lookup: a grid cell with no positive in itself or its two neighbours has a fixed
    number of positives below it. Only values in the other cells (a small fraction) are binary-searched.
    """

    def __init__(self, values: np.ndarray) -> None:
        self.values = values
        n = len(values)
        self.num_cells = int(np.clip(64 * n, 1024, 2**21))
        self.lo = float(values[0])
        span = float(values[-1]) - self.lo
        self.width = span / self.num_cells if span > 0 else 1.0
        # cells -3 .. num_cells + 2 are stored at offsets 0 .. num_cells + 5; positives lie in cells 0 .. num_cells
        # and mark their neighbours, so the outermost cells (all scores far below or above the positives) stay unmarked
        size = self.num_cells + 6
        cell_of_value = np.clip(np.floor((values - self.lo) / self.width), -1, self.num_cells).astype(np.int64) + 3
        refine = np.zeros(size, dtype=bool)
        for shift in (-1, 0, 1):
            refine[np.clip(cell_of_value + shift, 0, size - 1)] = True
        # per cell: the number of positive scores in cells strictly below it, or -1 where a binary search is needed
        below = np.searchsorted(cell_of_value, np.arange(size), side="left").astype(np.intp)
        self.code = np.where(refine, -1, below).astype(np.intp)

    def locate(self, scores: np.ndarray, work: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """For each score: the number of distinct positive scores strictly below it; and which scores equal one.

        :param scores: shape: (k,) float64
        :param work: float64 scratch space of shape (k,)
        :return: ``(index, tied)``: shape (k,) intp, and the positions (ascending) of the scores equal to a positive
        """
        work = np.empty_like(scores) if work is None else work
        cells = _grid_index(scores, self.lo, 1.0 / self.width, 3, self.num_cells + 5, work)
        index = self.code[cells]
        exact = np.flatnonzero(index < 0)
        tied = exact[:0]
        if exact.size:
            values = scores[exact]
            found = np.searchsorted(self.values, values, side="left")
            index[exact] = found
            inside = found < len(self.values)
            hit = np.zeros(exact.size, dtype=bool)
            hit[inside] = self.values[found[inside]] == values[inside]
            tied = exact[hit]
        return index, tied


@functools.cache
def _compiled_pass() -> ModuleType | None:
    """:mod:`kgeval.engine.calibration_stats_kernel` (numba loads with it, at the first chunk), or ``None`` where
    numba is not installed."""
    if importlib.util.find_spec("numba") is None:
        return None
    from kgeval.engine import calibration_stats_kernel

    return calibration_stats_kernel


class CalibrationData:
    """Sufficient statistics of positive and (streamed) negative scores for fitting calibration functions.

    :param positive_scores: shape: (n,) scores of the positives (kept as they are)
    :param num_bins: bins of the negatives' histogram used by Platt scaling
    """

    def __init__(self, positive_scores: Any, num_bins: int = 2**16) -> None:
        positives = _as_scores(positive_scores, "positive scores")
        if not positives.size:
            raise ValueError("calibration needs at least one positive score")
        self.positive_scores = positives
        self.pos_values, self.pos_counts = np.unique(positives, return_counts=True)
        n_unique = len(self.pos_values)
        self._locate = _GapLocator(self.pos_values)
        #: negatives whose score equals a positive score. shape: (n_unique,)
        self.tie_counts = np.zeros(n_unique, dtype=np.int64)
        #: negatives strictly between consecutive positive scores (gap j: below pos_values[j]). shape: (n_unique+1,)
        self.gap_counts = np.zeros(n_unique + 1, dtype=np.int64)
        self.gap_min = np.full(n_unique + 1, np.inf)
        self.gap_max = np.full(n_unique + 1, -np.inf)
        self.histogram = StreamingHistogram(num_bins)
        self._gap_table: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def num_positives(self) -> int:
        """``|G_VA|``: the number of positives."""
        return int(self.positive_scores.size)

    @property
    def num_negatives(self) -> int:
        """``|N|``: the number of negatives added so far (with multiplicity)."""
        return int(self.gap_counts.sum() + self.tie_counts.sum())

    def weights(self) -> tuple[float, float]:
        """``(w+, w-)`` of Eq. 11."""
        if not self.num_negatives:
            raise ValueError("no negatives were added; calibration needs both classes")
        return 1.0 / self.num_positives, 1.0 / self.num_negatives

    #: scores processed at once by :meth:`add_negatives` (bounds its temporaries to about 80 bytes per score)
    max_chunk: int = 2**20

    #: fold the chunks with the compiled pass (:mod:`kgeval.engine.calibration_stats_kernel`); ``False``, or numba
    #: missing, selects the numpy pass (:meth:`_add_chunk_numpy`), which gives the same statistics
    compiled: bool = True

    def add_negatives(self, scores: Any, counts: Any = None) -> None:
        """Add negative scores (shape: (k,), or any shape, flattened), each counted ``counts[i]`` times (default once).

        Cost: the compiled pass sorts each chunk and merges it with the positives when no counts are given, and
        otherwise looks up each score's gap on a grid (see :mod:`kgeval.engine.calibration_stats_kernel`); its only
        temporary is the sorted copy. The numpy pass makes a handful of vectorised passes over the scores plus a
        binary search for the few that fall next to a positive score (see :class:`_GapLocator`). Memory: the scores
        are processed :attr:`max_chunk` at a time (the chunks also fix the histogram's growth, so both passes see
        the same chunks), so the numpy pass's temporaries stay below ~80 MiB whatever ``k`` is.
        """
        if hasattr(scores, "detach"):
            scores = scores.detach().cpu().numpy()
        scores = np.asarray(scores).reshape(-1)
        counts = _as_counts(counts, scores.size)
        for start in range(0, scores.size, self.max_chunk):
            stop = start + self.max_chunk
            self._add_chunk(scores[start:stop], None if counts is None else counts[start:stop])

    def _add_chunk(self, scores: np.ndarray, counts: np.ndarray | None) -> None:
        kernel = _compiled_pass() if self.compiled else None
        if kernel is None:
            self._add_chunk_numpy(scores, counts)
        else:
            self._add_chunk_compiled(kernel, scores, counts)

    def _add_chunk_compiled(self, kernel: ModuleType, scores: np.ndarray, counts: np.ndarray | None) -> None:
        """One chunk through :mod:`kgeval.engine.calibration_stats_kernel` (float32 scores are read as they are):
        sorted and merged with the positives (``accumulate_sorted``) when each score counts once, else a grid
        lookup per score (``accumulate``)."""
        if scores.dtype not in (np.float32, np.float64):
            scores = scores.astype(np.float64)
        scores = np.ascontiguousarray(scores)
        if not scores.size:
            return
        ordered = np.sort(scores) if counts is None else None
        # NaN sorts last, so the ends of the sorted chunk are its minimum and maximum or show a NaN
        low, high = kernel.score_range(scores) if ordered is None else (ordered[0], ordered[-1])
        _check_finite(float(low), float(high), "scores")
        histogram = self.histogram
        histogram.cover(float(low), float(high))
        stats = (self.tie_counts, self.gap_counts, self.gap_min, self.gap_max, histogram.counts)
        inv_width = 1.0 / histogram.width
        if ordered is not None:
            kernel.accumulate_sorted(ordered, scores, self.pos_values, histogram.lo, inv_width, stats)
            return
        if self._gap_table is None:
            self._gap_table = kernel.gap_table(self.pos_values)
        table, grid = self._gap_table
        grid = np.concatenate([grid, [histogram.lo, inv_width]])
        kernel.accumulate(scores, np.ascontiguousarray(counts), self.pos_values, table, grid, stats)

    def _add_chunk_numpy(self, scores: np.ndarray, counts: np.ndarray | None) -> None:
        """One chunk through numpy (the reference of the compiled pass)."""
        scores = np.asarray(scores, dtype=np.float64)
        if not scores.size:
            return
        low, high = float(scores.min()), float(scores.max())
        _check_finite(low, high, "scores")
        work = np.empty_like(scores)
        index, tied = self._locate.locate(scores, work)
        if tied.size:
            tie_counts = None if counts is None else counts[tied]
            self.tie_counts += _bincount(index[tied], tie_counts, len(self.tie_counts))
            keep = np.ones(scores.size, dtype=bool)
            keep[tied] = False
            gap_index, gap_scores = index[keep], scores[keep]
            gap_counts = None if counts is None else counts[keep]
        else:
            gap_index, gap_scores, gap_counts = index, scores, counts
        self.gap_counts += _bincount(gap_index, gap_counts, len(self.gap_counts))
        if gap_counts is not None:
            present = gap_counts > 0
            gap_index, gap_scores = gap_index[present], gap_scores[present]
        np.minimum.at(self.gap_min, gap_index, gap_scores)
        np.maximum.at(self.gap_max, gap_index, gap_scores)
        self.histogram.add(scores, counts, low=low, high=high, work=work)

    def isotonic_points(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The reduced data set of the exact isotonic reduction (module docstring).

        :return: ``(x, y, weight)``, each of shape (k,) with ``k <= 3 n_unique + 2``
        """
        w_pos, w_neg = self.weights()
        weight_at = self.pos_counts * w_pos + self.tie_counts * w_neg
        y_at = self.pos_counts * w_pos / weight_at
        nonempty = self.gap_counts > 0
        single = nonempty & (self.gap_min == self.gap_max)
        double = nonempty & ~single
        x = np.concatenate([self.pos_values, self.gap_min[single], self.gap_min[double], self.gap_max[double]])
        weight = np.concatenate(
            [
                weight_at,
                self.gap_counts[single] * w_neg,
                self.gap_counts[double] * w_neg / 2,
                self.gap_counts[double] * w_neg / 2,
            ]
        )
        y = np.concatenate([y_at, np.zeros(int(single.sum()) + 2 * int(double.sum()))])
        return x, y, weight

    def platt_points(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Raw positives (label 1) and the negatives at their histogram bin centres (label 0), Eq. 11 weights.

        :return: ``(x, y, weight)``, each of shape (k,)
        """
        w_pos, w_neg = self.weights()
        nonempty = self.histogram.counts > 0
        x = np.concatenate([self.positive_scores, self.histogram.centres[nonempty]])
        y = np.concatenate([np.ones(self.num_positives), np.zeros(int(nonempty.sum()))])
        weight = np.concatenate([np.full(self.num_positives, w_pos), self.histogram.counts[nonempty] * w_neg])
        return x, y, weight
