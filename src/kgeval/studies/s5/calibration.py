"""Calibration functions fitted from streamed scores, and their weighted assessment (S5, paper 004, Sec. 2.2, 4, 5).

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
posterior ``sigma(a x + b)`` used for the validation metrics by at most ``|a| h / 8``.

**Platt initialisations (exact fit).** The paper fits six Platt functions with the initial ``(a, b)`` among the ordered pairs
of distinct values of ``{-1, 0, 1}`` (:data:`PLATT_INITS`). Here each initial pair is set as ``coef_`` and
``intercept_`` of a :class:`sklearn.linear_model.LogisticRegression` with ``warm_start=True`` (no penalty), which
is where scikit-learn starts its optimiser (Newton-Cholesky by default; L-BFGS, a gradient method closer to the
paper's "gradient descent", gives the same optimum about ten times slower). The unpenalised weighted logistic loss
is convex, so every initialisation converges to the same optimum up to the solver tolerance unless the iteration
limit stops it first; we record iterations and convergence. Platt's own target smoothing (``(N+ + 1)/(N+ + 2)``)
is not used: the paper does not mention it. The pipeline (:mod:`kgeval.studies.s5.assessment`) uses one exact fit
as the reference ``platt_exact`` and the six gradient-descent fits below as the paper's candidates.

**Platt by gradient descent (the paper's Sec. 3 and Appendix B).** The paper learns Platt scaling by gradient
descent from each of the six initialisations, and Fig. 3 shows the spread of the six functions: with a finite step
budget the starting point matters. :func:`fit_platt_gd` is plain full-batch gradient descent with a fixed learning
rate ``eta`` and a fixed number of steps on the Eq. 11-weighted mean log-loss of the same points as the exact fit.
To make one learning rate fit every model's score scale, the descent runs in standardised coordinates
``z = (x - mu) / sd`` (``mu``, ``sd``: the weighted mean and standard deviation of the scores), where the loss is
``(1/4)``-smooth in each parameter; the initial ``(a, b)`` is mapped into them (``a' = a sd``, ``b' = b + a mu``)
and the result mapped back, so the function is the same ``sigmoid(a x + b)``. This is a diagonal preconditioning;
it does not change the optimum, only the path. :func:`fit_platt` (the exact optimum) is reported next to it.

**Assessment.** :class:`CalibrationSums` accumulates, over streamed posteriors, what the weighted Brier score
(Eq. 7), the weighted coefficient of determination (Eq. 8), TPR, TNR and balanced accuracy (Eq. 9, 16, 17) need.
**R2_w (Eq. 8).** The paper defines ``y_bar`` in Eq. 8 as "the mean of the posterior probabilities ``y_hat_i``".
We take the mean with the same weights that Eq. 8 applies to every other sum, those of Eq. 11:
``y_bar = sum_i w_i y_hat_i / sum_i w_i``. An unweighted mean would be dominated by the (hundreds of millions of)
negatives and would not be the centre of the weighted sums it enters; the weighted one is the mean of the
distribution that Eq. 8 assesses. With Eq. 11 weights each class weighs one, so ``y_bar = (m+ + m-) / 2`` (``m+``,
``m-``: mean posterior of the positives, of the negatives) and ``sum_i w_i (y_bar - y_i)^2 = (1 - y_bar)^2 +
y_bar^2``, hence ``R2_w = 1 - 2 BS_w / ((1 - y_bar)^2 + y_bar^2)``: the streamed sums only need the posteriors'
per-class sums besides the squared errors. This ``r2_w`` is what selects the calibrator and what the tables report.
Extension column ``r2_w_label_mean``: ``y_bar`` as the weighted mean of the *labels* (Draper & Smith's definition,
and :func:`sklearn.metrics.r2_score`), which with Eq. 11 weights is ``1/2`` and gives ``1 - 4 BS_w``: selecting
by it is selecting by ``BS_w``, so isotonic regression (the in-sample Brier minimiser among monotone functions)
would win by construction. Since ``(1 - y_bar)^2 + y_bar^2 >= 1/2``, ``r2_w >= r2_w_label_mean`` always.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

# scikit-learn and SciPy (~2 s of CPU to import) are imported by the functions that fit and predict: the S5 table
# and figure jobs import this module (through kgeval.studies.s5.assessment) for its constants only.
if TYPE_CHECKING:
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

__all__ = [
    "PLATT_INITS",
    "METRICS",
    "StreamingHistogram",
    "CalibrationData",
    "Calibrator",
    "CalibrationSums",
    "weighted_metrics",
    "fit_isotonic",
    "fit_platt",
    "fit_platt_gd",
    "PlattGD",
    "fit_calibrators",
    "in_sample_sums",
    "select_calibrator",
]

#: the six initial (a, b) of the paper's Platt functions: ordered pairs of distinct values of {-1, 0, 1}
PLATT_INITS: tuple[tuple[float, float], ...] = (
    (-1.0, 0.0),
    (-1.0, 1.0),
    (0.0, -1.0),
    (0.0, 1.0),
    (1.0, -1.0),
    (1.0, 0.0),
)

#: the assessment measures, in the order of the paper's figures
METRICS: tuple[str, ...] = ("r2_w", "bs_w", "ba", "tpr", "tnr")


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
        _check_finite(low, high, "values")
        if self.lo is None:
            span = high - low
            self.lo = low
            # a little slack so that the maximum falls inside the last bin despite rounding
            self.width = max(span / self.num_bins * (1 + 1e-9), math.ulp(max(abs(low), abs(high), 1e-300)) * 4)
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
        work = np.empty_like(values) if work is None else work
        bins = _grid_index(values, self.lo, 1.0 / self.width, 0, self.num_bins - 1, work)
        self.counts += _bincount(bins, counts, self.num_bins)

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

    def add_negatives(self, scores: Any, counts: Any = None) -> None:
        """Add negative scores (shape: (k,)), each counted ``counts[i]`` times (default once).

        Cost: a handful of vectorised passes over the scores plus a binary search for the few that fall next to a
        positive score (see :class:`_GapLocator`). Memory: the scores are processed :attr:`max_chunk` at a time,
        so the temporaries stay below ~80 MiB whatever ``k`` is.
        """
        if hasattr(scores, "detach"):
            scores = scores.detach().cpu().numpy()
        scores = np.asarray(scores).reshape(-1)
        counts = _as_counts(counts, scores.size)
        for start in range(0, scores.size, self.max_chunk):
            stop = start + self.max_chunk
            self._add_chunk(scores[start:stop], None if counts is None else counts[start:stop])

    def _add_chunk(self, scores: np.ndarray, counts: np.ndarray | None) -> None:
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


@dataclass
class Calibrator:
    """A fitted calibration function.

    :ivar name: ``isotonic`` or ``platt(a0,b0)`` with the initial parameters
    :ivar method: ``isotonic`` or ``platt``
    :ivar estimator: the fitted scikit-learn estimator
    :ivar init: Platt's initial ``(a, b)``; None for isotonic regression
    :ivar converged: whether the optimiser converged (always True for isotonic regression)
    """

    name: str
    method: str
    estimator: IsotonicRegression | LogisticRegression
    init: tuple[float, float] | None = None
    converged: bool = True

    def predict(self, scores: Any) -> np.ndarray:
        """Posterior probabilities of scores of any shape (same shape, float64).

        Isotonic regression: linear interpolation between the fitted thresholds, clipped to the fitted range (what
        :meth:`IsotonicRegression.predict` computes, via :func:`numpy.interp`). Platt: ``sigmoid(a x + b)``.
        """
        if hasattr(scores, "detach"):
            scores = scores.detach().cpu().numpy()
        scores = np.asarray(scores, dtype=np.float64)
        if self.method == "isotonic":
            est = self.estimator
            return np.interp(scores, est.X_thresholds_, est.y_thresholds_)
        from scipy.special import expit

        a, b = self.parameters()
        return expit(a * scores + b)

    def parameters(self) -> tuple[float, float]:
        """Platt's fitted ``(a, b)``."""
        if self.method == "isotonic":
            raise ValueError("only Platt scaling has parameters (a, b)")
        return float(self.estimator.coef_[0, 0]), float(self.estimator.intercept_[0])

    def describe(self) -> dict[str, Any]:
        """Parameters for tables: a, b, initial values, iterations, convergence, number of thresholds."""
        info: dict[str, Any] = {"calibrator": self.name, "method": self.method, "converged": self.converged}
        if self.method != "isotonic":
            a, b = self.parameters()
            info.update(
                a=a,
                b=b,
                a0=self.init[0],
                b0=self.init[1],
                n_iter=int(np.max(self.estimator.n_iter_)),
                num_thresholds=np.nan,
            )
        else:
            info.update(
                a=np.nan,
                b=np.nan,
                a0=np.nan,
                b0=np.nan,
                n_iter=np.nan,
                num_thresholds=len(self.estimator.X_thresholds_),
            )
        return info


def fit_isotonic(data: CalibrationData) -> Calibrator:
    """Exact isotonic regression (increasing, clipped to [0, 1]) on all scores, via the reduction (module docstring)."""
    from sklearn.isotonic import IsotonicRegression

    x, y, weight = data.isotonic_points()
    estimator = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
    estimator.fit(x, y, sample_weight=weight)
    return Calibrator(name="isotonic", method="isotonic", estimator=estimator)


def fit_platt(
    data: CalibrationData,
    init: tuple[float, float] = (0.0, 0.0),
    max_iter: int = 1000,
    tol: float = 1e-8,
    solver: str = "newton-cholesky",
) -> Calibrator:
    """Platt scaling ``sigmoid(a x + b)``: an unpenalised weighted logistic regression started at ``init``.

    :param data: the statistics (positives exact, negatives at histogram bin centres; bound in module docstring)
    :param init: initial ``(a, b)``, set as the estimator's ``coef_``/``intercept_`` with ``warm_start=True``
    :param max_iter: iteration limit of the solver
    :param tol: the solver's stopping tolerance
    :param solver: a scikit-learn solver that honours ``warm_start`` (``newton-cholesky``: a few Newton steps on
        two parameters, ~10x faster here than ``lbfgs``, which reaches the same optimum)
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    x, y, weight = data.platt_points()
    # normalise the weights to mean one: same minimiser, and the solver's tolerance becomes scale-free
    weight = weight * (len(weight) / weight.sum())
    estimator = LogisticRegression(C=np.inf, solver=solver, max_iter=max_iter, tol=tol, warm_start=True)
    estimator.coef_ = np.array([[float(init[0])]])
    estimator.intercept_ = np.array([float(init[1])])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        estimator.fit(x.reshape(-1, 1), y, sample_weight=weight)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    name = f"platt({init[0]:g},{init[1]:g})"
    return Calibrator(
        name=name, method="platt", estimator=estimator, init=(float(init[0]), float(init[1])), converged=converged
    )


@dataclass
class PlattGD:
    """Parameters of a Platt function learnt by gradient descent, shaped like scikit-learn's fitted attributes.

    :ivar coef_: shape (1, 1): ``a``
    :ivar intercept_: shape (1,): ``b``
    :ivar n_iter_: shape (1,): steps taken
    :ivar loss_: final weighted mean log-loss
    :ivar grad_norm_: final gradient norm (standardised coordinates)
    """

    coef_: np.ndarray
    intercept_: np.ndarray
    n_iter_: np.ndarray
    loss_: float
    grad_norm_: float


def fit_platt_gd(
    data: CalibrationData,
    init: tuple[float, float] = (0.0, 0.0),
    learning_rate: float = 1.0,
    steps: int = 1000,
    tol: float = 1e-6,
) -> Calibrator:
    """Platt scaling ``sigmoid(a x + b)`` learnt by plain full-batch gradient descent from ``init`` (module docstring).

    :param data: the statistics (the same points as :func:`fit_platt`)
    :param init: initial ``(a, b)`` in the scores' own units
    :param learning_rate: fixed step size in standardised coordinates (the loss is 1/4-smooth per parameter there,
        so steps up to about 4 descend)
    :param steps: step budget
    :param tol: ``converged`` is reported when the final gradient norm (standardised coordinates) is below it; the
        descent always takes all ``steps`` (a budget, as in the paper)
    """
    from scipy.special import expit

    x, y, weight = data.platt_points()
    weight = weight / weight.sum()
    mu = float(weight @ x)
    sd = float(np.sqrt(weight @ (x - mu) ** 2)) or 1.0
    z = (x - mu) / sd
    a, b = float(init[0]) * sd, float(init[1]) + float(init[0]) * mu
    grad_a = grad_b = 0.0
    for _ in range(int(steps)):
        residual = weight * (expit(a * z + b) - y)
        grad_a, grad_b = float(residual @ z), float(residual.sum())
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
    t = a * z + b
    # log(1 + e^t) - y t, computed stably
    loss = float(weight @ (np.logaddexp(0.0, t) - y * t))
    residual = weight * (expit(t) - y)
    grad_norm = float(np.hypot(residual @ z, residual.sum()))
    estimator = PlattGD(
        coef_=np.array([[a / sd]]),
        intercept_=np.array([b - a * mu / sd]),
        n_iter_=np.array([int(steps)]),
        loss_=loss,
        grad_norm_=grad_norm,
    )
    name = f"platt({init[0]:g},{init[1]:g})"
    return Calibrator(
        name=name,
        method="platt",
        estimator=estimator,  # type: ignore[arg-type]
        init=(float(init[0]), float(init[1])),
        converged=grad_norm < tol,
    )


def fit_calibrators(
    data: CalibrationData, platt_inits: Sequence[Sequence[float]] = PLATT_INITS, isotonic: bool = True
) -> list[Calibrator]:
    """Isotonic regression and one Platt function per initialisation, all on the same statistics."""
    calibrators = [fit_isotonic(data)] if isotonic else []
    calibrators.extend(fit_platt(data, init=(float(a), float(b))) for a, b in platt_inits)
    return calibrators


@dataclass
class CalibrationSums:
    """Running sums for the weighted assessment of one calibrator (Eq. 7-9, 11, 16, 17) over streamed posteriors.

    Positives and negatives are weighted per Eq. 11 (``1/#positives`` and ``1/#negatives``), so only per-class
    counts, squared errors and hits are needed.
    """

    num_pos: float = 0.0
    pos_sq_error: float = 0.0
    pos_hits: float = 0.0
    pos_posterior: float = 0.0
    num_neg: float = 0.0
    neg_sq_error: float = 0.0
    neg_hits: float = 0.0
    neg_posterior: float = 0.0
    threshold: float = field(default=0.5)

    def add_positives(self, posteriors: np.ndarray, counts: np.ndarray | None = None) -> None:
        """Add posteriors of positives (label 1). shape: (k,), counts: (k,) multiplicities"""
        p = np.asarray(posteriors, dtype=np.float64).reshape(-1)
        c = np.ones_like(p) if counts is None else np.asarray(counts, dtype=np.float64).reshape(-1)
        self.num_pos += float(c.sum())
        self.pos_sq_error += float(c @ (1.0 - p) ** 2)
        self.pos_hits += float(c @ (p >= self.threshold))
        self.pos_posterior += float(c @ p)

    def add_negatives(self, posteriors: np.ndarray, counts: np.ndarray | None = None) -> None:
        """Add posteriors of negatives (label 0). shape: (k,), counts: (k,) multiplicities"""
        p = np.asarray(posteriors, dtype=np.float64).reshape(-1)
        c = np.ones_like(p) if counts is None else np.asarray(counts, dtype=np.float64).reshape(-1)
        self.num_neg += float(c.sum())
        self.neg_sq_error += float(c @ p**2)
        self.neg_hits += float(c @ (p < self.threshold))
        self.neg_posterior += float(c @ p)

    def add_negative_matrix(self, posteriors: np.ndarray, mask: np.ndarray, row_counts: np.ndarray) -> None:
        """Add the negatives ``posteriors[mask]``, row ``i`` counted ``row_counts[i]`` times (no flattening copy).

        :param posteriors: shape: (b, E)
        :param mask: shape: (b, E) bool
        :param row_counts: shape: (b,)
        """
        c = np.asarray(row_counts, dtype=np.float64)
        self.num_neg += float(mask.sum(axis=1) @ c)
        self.neg_sq_error += float(np.where(mask, posteriors * posteriors, 0.0).sum(axis=1) @ c)
        self.neg_hits += float((mask & (posteriors < self.threshold)).sum(axis=1) @ c)
        self.neg_posterior += float(np.where(mask, posteriors, 0.0).sum(axis=1) @ c)

    def add_negative_totals(self, count: float, sq_error: float, hits: float, posterior: float) -> None:
        """Add negatives already summed elsewhere: their (weighted) count, ``sum p^2``, ``sum [p < threshold]`` and
        ``sum p`` (label 0, so the squared error of ``p`` is ``p^2``)."""
        self.num_neg += float(count)
        self.neg_sq_error += float(sq_error)
        self.neg_hits += float(hits)
        self.neg_posterior += float(posterior)

    def metrics(self) -> dict[str, float]:
        """``bs_w``, ``r2_w`` (Eq. 8, ``y_bar``: weighted mean posterior), ``r2_w_label_mean`` (extension: ``y_bar``
        the weighted mean label, ``1 - 4 BS_w``), ``tpr``, ``tnr``, ``ba``, ``mean_posterior`` (of positives),
        ``y_bar`` and the counts (module docstring for the formula).

        Measures that need the missing class are NaN when there are no positives or no negatives.
        """
        nan = float("nan")
        tpr = self.pos_hits / self.num_pos if self.num_pos else nan
        tnr = self.neg_hits / self.num_neg if self.num_neg else nan
        if self.num_pos and self.num_neg:
            # weights w+ = 1/num_pos, w- = 1/num_neg: each class weighs 1, total weight 2
            bs = (self.pos_sq_error / self.num_pos + self.neg_sq_error / self.num_neg) / 2.0
            y_bar = (self.pos_posterior / self.num_pos + self.neg_posterior / self.num_neg) / 2.0
            total = (1.0 - y_bar) ** 2 + y_bar**2
            r2 = 1.0 - 2.0 * bs / total
            r2_label = 1.0 - 4.0 * bs
        else:
            bs = r2 = r2_label = y_bar = nan
        return {
            "bs_w": bs,
            "r2_w": r2,
            "r2_w_label_mean": r2_label,
            "y_bar": y_bar,
            "tpr": tpr,
            "tnr": tnr,
            "ba": (tpr + tnr) / 2.0,
            "mean_posterior": self.pos_posterior / self.num_pos if self.num_pos else nan,
            "num_positives": self.num_pos,
            "num_negatives": self.num_neg,
        }


def weighted_metrics(y_true: Any, y_prob: Any, sample_weight: Any = None, threshold: float = 0.5) -> dict[str, float]:
    """The paper's measures for explicit arrays, with any weights (Eq. 7, 8, 9, 16, 17).

    :param y_true: shape: (n,) labels in {0, 1}
    :param y_prob: shape: (n,) posteriors
    :param sample_weight: shape: (n,) weights (default: all one)
    :param threshold: posteriors ``>= threshold`` are predicted positive
    :return: ``bs_w``, ``r2_w`` (Eq. 8, ``y_bar``: weighted mean of the posteriors), ``r2_w_label_mean`` (extension,
        ``y_bar``: weighted mean of the labels, as :func:`sklearn.metrics.r2_score`), ``tpr``, ``tnr``, ``ba``
    """
    y = np.asarray(y_true, dtype=np.float64).reshape(-1)
    p = np.asarray(y_prob, dtype=np.float64).reshape(-1)
    w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64).reshape(-1)
    if not (y.shape == p.shape == w.shape):
        raise ValueError(f"shapes differ: y_true {y.shape}, y_prob {p.shape}, sample_weight {w.shape}")
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("y_true must hold labels 0 and 1 only")
    bs = float(w @ (p - y) ** 2 / w.sum())
    residual = float(w @ (p - y) ** 2)
    r2 = {}
    for key, centre in (("r2_w", p), ("r2_w_label_mean", y)):
        y_bar = float(w @ centre / w.sum())
        total = float(w @ (y_bar - y) ** 2)
        r2[key] = 1.0 - residual / total if total > 0 else float("nan")
    predicted = p >= threshold
    positives, negatives = y == 1, y == 0
    tpr = float((predicted & positives).sum() / positives.sum()) if positives.any() else float("nan")
    tnr = float((~predicted & negatives).sum() / negatives.sum()) if negatives.any() else float("nan")
    return {"bs_w": bs, **r2, "tpr": tpr, "tnr": tnr, "ba": (tpr + tnr) / 2.0}


def in_sample_sums(calibrator: Calibrator, data: CalibrationData) -> CalibrationSums:
    """Assessment sums of a calibrator on the data it was fitted on (for picking the best one on validation).

    Positives are exact. Negatives: for isotonic regression the reduced points (exact for the isotonic fit on the
    same data, which is constant on each gap and on each tie); for Platt the histogram bin centres (each posterior
    within ``|a| h / 8``, see module docstring).
    """
    sums = CalibrationSums()
    sums.add_positives(calibrator.predict(data.positive_scores))
    if calibrator.method == "isotonic":
        nonempty = data.gap_counts > 0
        low = calibrator.predict(data.gap_min[nonempty])
        high = calibrator.predict(data.gap_max[nonempty])
        counts = data.gap_counts[nonempty] / 2.0
        sums.add_negatives(np.concatenate([low, high]), np.concatenate([counts, counts]))
        sums.add_negatives(calibrator.predict(data.pos_values), data.tie_counts)
    else:
        nonempty = data.histogram.counts > 0
        sums.add_negatives(calibrator.predict(data.histogram.centres[nonempty]), data.histogram.counts[nonempty])
    return sums


def select_calibrator(calibrators: Sequence[Calibrator], data: CalibrationData) -> tuple[Calibrator, pd.DataFrame]:
    """Pick the calibrator with the largest ``R2_w`` on the data they were fitted on (the paper's rule, Sec. 6.2).

    Ties keep the earlier calibrator (isotonic regression comes first in :func:`fit_calibrators`).

    :return: the best calibrator and a table with one row per calibrator: parameters and in-sample measures
    """
    if not calibrators:
        raise ValueError("no calibrators to select from")
    rows = []
    best, best_r2 = None, -np.inf
    for calibrator in calibrators:
        measures = in_sample_sums(calibrator, data).metrics()
        rows.append({**calibrator.describe(), **measures})
        if measures["r2_w"] > best_r2:
            best, best_r2 = calibrator, measures["r2_w"]
    if best is None:
        best = calibrators[0]
    table = pd.DataFrame(rows)
    table["selected"] = table["calibrator"] == best.name
    return best, table
