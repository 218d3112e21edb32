"""The weighted assessment of calibration functions (S5, paper 004, Sec. 5, 6.2): Eq. 7-9, 16, 17 over streamed
posteriors, and the selection of the best function on validation.

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
Two more readings of Eq. 8's "mean of the posterior probabilities", reported beside it: ``r2_w_unweighted_mean``,
``y_bar`` the plain mean of all posteriors (positives and negatives alike, so in practice the negatives' mean), and
``r2_w_positive_mean``, ``y_bar`` Eq. 10's mean posterior of the positives. Every reading keeps the formula
``R2_w = 1 - 2 BS_w / ((1 - y_bar)^2 + y_bar^2)`` (each class weighs one) and only moves ``y_bar``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kgeval.studies.s5.calibration import Calibrator
from kgeval.studies.s5.statistics import CalibrationData

__all__ = [
    "METRICS",
    "CalibrationSums",
    "SUM_FIELDS",
    "weighted_measures",
    "negative_feature_totals",
    "in_sample_sums",
    "select_calibrator",
]


#: the assessment measures, in the order of the paper's figures
METRICS: tuple[str, ...] = ("r2_w", "bs_w", "ba", "tpr", "tnr")


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
        the weighted mean label, ``1 - 4 BS_w``), ``r2_w_unweighted_mean`` and ``r2_w_positive_mean`` (the other
        readings of Eq. 8, module docstring), ``tpr``, ``tnr``, ``ba``, ``mean_posterior`` (of positives),
        ``y_bar`` and the counts (module docstring for the formula; :func:`weighted_measures`).

        Measures that need the missing class are NaN when there are no positives or no negatives.
        """
        sums = [getattr(self, name) for name in SUM_FIELDS]
        return {key: float(value) for key, value in weighted_measures(*sums).items()}


#: the fields of :class:`CalibrationSums` that :func:`weighted_measures` takes, in its order
SUM_FIELDS: tuple[str, ...] = (
    "num_pos", "pos_sq_error", "pos_hits", "pos_posterior", "num_neg", "neg_sq_error", "neg_hits", "neg_posterior"
)


def weighted_measures(
    num_pos: Any,
    pos_sq_error: Any,
    pos_hits: Any,
    pos_posterior: Any,
    num_neg: Any,
    neg_sq_error: Any,
    neg_hits: Any,
    neg_posterior: Any,
) -> dict[str, np.ndarray]:
    """The measures of :meth:`CalibrationSums.metrics` from its sums (:data:`SUM_FIELDS`), elementwise: scalars or
    arrays of one shape (e.g. one entry per bootstrap resample). NaN where a class is empty (its count and sums 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        num_pos, num_neg = np.asarray(num_pos, dtype=np.float64), np.asarray(num_neg, dtype=np.float64)
        tpr = pos_hits / num_pos
        tnr = neg_hits / num_neg
        # weights w+ = 1/num_pos, w- = 1/num_neg: each class weighs 1, total weight 2
        bs = (pos_sq_error / num_pos + neg_sq_error / num_neg) / 2.0
        y_bar = (pos_posterior / num_pos + neg_posterior / num_neg) / 2.0
        r2 = 1.0 - 2.0 * bs / ((1.0 - y_bar) ** 2 + y_bar**2)
        plain = (pos_posterior + neg_posterior) / (num_pos + num_neg)
        positive = pos_posterior / num_pos
        return {
            "bs_w": bs,
            "r2_w": r2,
            "r2_w_label_mean": 1.0 - 4.0 * bs,
            "r2_w_unweighted_mean": 1.0 - 2.0 * bs / ((1.0 - plain) ** 2 + plain**2),
            "r2_w_positive_mean": 1.0 - 2.0 * bs / ((1.0 - positive) ** 2 + positive**2),
            "y_bar": y_bar,
            "tpr": tpr,
            "tnr": tnr,
            "ba": (tpr + tnr) / 2.0,
            "mean_posterior": positive,
            "num_positives": num_pos,
            "num_negatives": num_neg,
        }


#: scores per block of :func:`negative_feature_totals`: a block's posteriors, their squares, hits and weights
#: (8 rows of 8 bytes per score, ~1 MiB) stay in a core's cache between the calibrator's passes
FEATURE_BLOCK: int = 2**14


def negative_feature_totals(
    scores: np.ndarray,
    weights: np.ndarray,
    calibrators: Sequence[Calibrator],
    threshold: float,
    block: int = FEATURE_BLOCK,
    rows_of: Sequence[slice] | None = None,
) -> np.ndarray:
    """The weighted sums of every calibrator's posteriors ``p``, ``p^2`` and ``[p < threshold]`` over negatives.

    For each block of ``block`` scores and each calibrator, the posteriors, their squares and hits are the rows of
    a small feature matrix ``F`` and the block's sums for every weight row are ``W F^T`` (one BLAS call). Working
    block by block keeps ``F`` in cache: on the whole batch at once each calibrator wrote and re-read three
    batch-sized arrays from memory (twice the time on FB15k-237, ``benchmarks/s5_assessment.py``). Each posterior
    is the same bits as ``calibrator.predict(scores)``; only the order of the additions differs, so the sums of
    ``p`` and ``p^2`` agree to rounding (the counts of hits are exact either way).

    :param scores: shape: (n,) float64 scores of the negatives
    :param weights: shape: (s, n) each negative's weight in each of ``s`` sums (a strategy's selection times the
        query's multiplicity)
    :param rows_of: per calibrator the weight rows it is summed with (default: all); the others stay zero
    :return: shape: (len(calibrators), s, 3): per calibrator and weight row, ``sum w p``, ``sum w p^2`` and
        ``sum w [p < threshold]``
    """
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    totals = np.zeros((len(calibrators), weights.shape[0], 3))
    chosen = list(rows_of) if rows_of is not None else [slice(None)] * len(calibrators)
    features = np.empty((3, min(block, scores.size)))
    for start in range(0, scores.size, block):
        x, w = scores[start : start + block], weights[:, start : start + block]
        f = features[:, : x.size]
        for index, calibrator in enumerate(calibrators):
            calibrator.predict(x, out=f[0])
            np.multiply(f[0], f[0], out=f[1])
            np.less(f[0], threshold, out=f[2])
            totals[index, chosen[index]] += w[chosen[index]] @ f.T
    return totals


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
