"""Per-test-triple sums of S5's test assessment (paper 004, Sec. 5, 6.2): every S5 measure resampled over the test
triples.

**What is kept.** The streamed test assessment (:func:`kgeval.studies.s5.assessment.assess_negatives`) sums every
calibrator's ``p``, ``p^2`` and ``[p < threshold]`` over the negatives of each strategy (weights:
:func:`strategy_weights`). :func:`negative_feature_rows` keeps those sums per query (one row of a batch) instead of
per batch, and :class:`TripleSums` hands each test triple its share of its two queries, the tail query ``(s, p, ?)``
and the head query ``(?, p, o)``: a query shared by ``k`` test triples gives each of them ``1/k`` of its sums. With
``union_negatives: false`` a query's weights carry the multiplicity ``k``, so each triple gets its own negatives
once; with the set union of Eq. 12 (the default) a negative counts once, in the query that reaches it first, and
the triples of that query share it. Either way the per-triple sums add up to the totals of ``assessment.tsv``.
Beside the negatives: each triple's own posterior under every calibrator (the positives' sums follow from it).

**Stored** as ``triple_sums.parquet`` beside each run's ``positives.parquet``: one row per test triple in the test
split's order (``head``, ``relation``, ``tail``), and the columns named by :func:`column`: ``num_neg|<strategy>``
(the triple's share of the strategy's negatives, the same for every calibrator), ``pos_posterior|<calibrator>``,
and ``neg_posterior``, ``neg_sq_error`` and ``neg_hits`` ``|<calibrator>|<strategy>``: arrays of shape (triples,)
per calibrator, strategy and sum, never per negative.

**Resampled** (:func:`measure_replicates`, :func:`measure_intervals`): a bootstrap resample of the test triples
(:func:`~kgeval.uncertainty.resampling.resample_counts`) weighs every triple's sums by its count, its head and tail
negatives with it, and recomputes every measure of :func:`~kgeval.studies.s5.measures.weighted_measures` (``bs_w``,
``r2_w``, ``y_bar``, ``tpr``, ``tnr``, ``ba``, ...) from the resampled totals; Pearson's r_xy (Eq. 18-19) likewise
from per-triple sums of its pairs (:func:`correlation_replicates`). Within a run every calibrator and strategy
draws the same resamples (stream :func:`run_stream_seed`), so their differences are paired.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from kgeval.lp.filtering import SIDES
from kgeval.studies.s5.calibration import Calibrator, predict_all
from kgeval.studies.s5.measures import FEATURE_BLOCK, SUM_FIELDS, CalibrationSums, weighted_measures
from kgeval.studies.s5.negatives import NegativeSet
from kgeval.uncertainty.resampling import BootstrapSettings, percentile_interval, resample_counts, stream_seed

__all__ = [
    "NEGATIVE_SUMS",
    "column",
    "strategy_weights",
    "negative_feature_rows",
    "TripleSums",
    "sums_matrix",
    "run_stream_seed",
    "calibrator_replicates",
    "measure_replicates",
    "measure_intervals",
    "correlation_replicates",
]

#: the per-triple sums of the negatives, in the order of :func:`negative_feature_rows`' last axis
NEGATIVE_SUMS: tuple[str, ...] = ("neg_posterior", "neg_sq_error", "neg_hits")


def column(name: str, *keys: str) -> str:
    """The column of ``triple_sums.parquet`` holding sum ``name`` of a calibrator and/or strategy (module docstring)."""
    return "|".join((name, *keys))


def strategy_weights(
    batch: Any, masks: dict[str, Any], strategies: Sequence[str], shape: tuple[int, int]
) -> np.ndarray:
    """Each negative's weight per strategy: the strategy's selection times its query's multiplicity.

    :param batch: one batch of :meth:`NegativeSet.batches`
    :param masks: ``{strategy: negatives.masks(strategy)}``
    :param shape: the batch's score matrix shape (queries, entities)
    :return: shape: (len(strategies), queries * entities) float64
    """
    multiplicity = np.asarray(batch.multiplicity, dtype=np.float64)[:, None]
    weights = np.empty((len(strategies), shape[0] * shape[1]), dtype=np.float64)
    for row, strategy in enumerate(strategies):
        np.multiply(batch.negatives(masks[strategy]), multiplicity, out=weights[row].reshape(shape))
    return weights


def negative_feature_rows(
    scores: np.ndarray,
    weights: np.ndarray,
    calibrators: Sequence[Calibrator],
    threshold: float,
    block: int = FEATURE_BLOCK,
    rows_of: Sequence[slice] | None = None,
) -> np.ndarray:
    """:func:`~kgeval.studies.s5.measures.negative_feature_totals` per query: the weighted sums of every calibrator's
    posteriors ``p``, ``p^2`` and ``[p < threshold]`` over each row's negatives.

    Blocks of whole rows of about ``block`` scores (at least one row) stay in cache as there; the posteriors of all
    calibrators of a block come from one pass (:func:`~kgeval.studies.s5.calibration.predict_all`); per row, the
    sums for every weight row are one small matrix product (a stack of them per block).

    :param scores: shape: (b, E) float64 scores of a batch's queries
    :param weights: shape: (s, b * E) each candidate's weight in each of ``s`` sums (:func:`strategy_weights`)
    :param rows_of: per calibrator the weight rows it is summed with (default: all); the others stay zero
    :return: shape: (len(calibrators), s, b, 3): per calibrator, weight row and query, ``sum w p``, ``sum w p^2``
        and ``sum w [p < threshold]``
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    b, e = scores.shape
    s = weights.shape[0]
    by_row = weights.reshape(s, b, e)
    rows = np.zeros((len(calibrators), s, b, 3))
    chosen = list(rows_of) if rows_of is not None else [slice(None)] * len(calibrators)
    step = max(1, block // max(e, 1))
    features = np.empty((3, len(calibrators), min(step, b) * e))
    for start in range(0, b, step):
        stop = min(start + step, b)
        x = scores[start:stop].reshape(-1)
        f = features[:, :, : x.size]
        predict_all(calibrators, x, out=f[0])
        np.multiply(f[0], f[0], out=f[1])
        np.less(f[0], threshold, out=f[2])
        w = by_row[:, start:stop].transpose(1, 0, 2)  # (rows, s, E)
        for index in range(len(calibrators)):
            # (rows, s, E) @ (rows, E, 3): per row, every chosen weight row's three sums
            sel = chosen[index]
            rows[index, sel, start:stop] = np.matmul(
                w[:, sel], f[:, index].reshape(3, stop - start, e).transpose(1, 2, 0)
            ).transpose(1, 0, 2)
    return rows


class TripleSums:
    """The per-query sums of one streamed pass over a :class:`NegativeSet`, handed out to its positives (the test
    triples) as in the module docstring; :meth:`frame` is ``triple_sums.parquet``.

    :param negatives: the negatives of the test triples (``negatives.positives``)
    :param calibrators: the calibrators whose sums are kept, in the order the pass gives them
    :param strategies: the strategies, in the order of the pass's weight rows
    :param rows_of: per calibrator the weight rows the pass sums it with (default: all): only those strategies get
        columns
    """

    def __init__(
        self,
        negatives: NegativeSet,
        calibrators: Sequence[Calibrator],
        strategies: Sequence[str],
        rows_of: Sequence[slice] | None = None,
    ) -> None:
        self.triples = negatives.positives
        self.calibrators = [c.name for c in calibrators]
        self.strategies = list(strategies)
        self.rows_of = list(rows_of) if rows_of is not None else [slice(None)] * len(self.calibrators)
        #: name -> (calibrator whose negatives' columns it copies, its strategies) (:meth:`alias`)
        self.aliases: dict[str, tuple[str, list[str]]] = {}
        #: calibrator name -> shape: (triples,) posterior of each test triple (:meth:`add_positives`)
        self.posteriors: dict[str, np.ndarray] = {}
        self._query: dict[str, np.ndarray] = {}
        self._share: dict[str, np.ndarray] = {}
        self._rows: dict[str, np.ndarray] = {}
        self._counts: dict[str, np.ndarray] = {}
        self._next = dict.fromkeys(SIDES, 0)
        self._queries = negatives.queries
        for side in SIDES:
            queries = negatives.queries[side]
            pairs = self.triples[:, [0 if side == "tail" else 2, 1]]
            unique, inverse = np.unique(pairs, axis=0, return_inverse=True)  # the order of QuerySet.from_positives
            if not (np.array_equal(unique[:, 0], queries.anchors) and np.array_equal(unique[:, 1], queries.relations)):
                raise ValueError(f"the {side} queries of the negatives are not those of their positives")
            self._query[side] = inverse.reshape(-1)
            self._share[side] = 1.0 / queries.multiplicity[self._query[side]]
            self._rows[side] = np.zeros((len(self.calibrators), len(self.strategies), len(queries), 3))
            self._counts[side] = np.zeros((len(self.strategies), len(queries)))

    def add_batch(self, batch: Any, scores: np.ndarray, weights: np.ndarray, calibrators: Sequence[Calibrator],
                  threshold: float) -> np.ndarray:
        """Keep the per-query sums of the next batch of :meth:`NegativeSet.batches` (:func:`negative_feature_rows`).

        :param scores: shape: (b, E) float64
        :param weights: shape: (strategies, b * E) (:func:`strategy_weights`)
        :return: shape: (calibrators, strategies, 3) the batch's totals, as
            :func:`~kgeval.studies.s5.measures.negative_feature_totals` gives them
        """
        if [c.name for c in calibrators] != self.calibrators:
            raise ValueError("the pass's calibrators are not those the per-triple sums were set up for")
        side, start = batch.side, self._next[batch.side]
        stop = start + len(batch)
        queries = self._queries[side]
        if not np.array_equal(queries.anchors[start:stop], batch.anchors):
            raise ValueError(f"{side} batch out of order: the per-triple sums need the batches of NegativeSet.batches")
        rows = negative_feature_rows(scores, weights, calibrators, threshold, rows_of=self.rows_of)
        self._rows[side][:, :, start:stop] = rows
        self._counts[side][:, start:stop] = weights.reshape(len(self.strategies), len(batch), -1).sum(axis=2)
        self._next[side] = stop
        return rows.sum(axis=2)

    def alias(self, name: str, representative: str, strategies: Sequence[str]) -> None:
        """Give calibrator ``name``, left out of the pass, the negatives' columns of ``representative`` on
        ``strategies`` (:mod:`kgeval.studies.s5.assessment_plan`); its positives come from :meth:`add_positives`."""
        if representative not in self.calibrators:
            raise ValueError(f"{name}: {representative} is not a calibrator of the pass")
        self.aliases[name] = (representative, list(strategies))

    def add_positives(self, posteriors: dict[str, np.ndarray]) -> None:
        """Each test triple's posterior under each calibrator (name -> shape: (triples,))."""
        for name, values in posteriors.items():
            values = np.asarray(values, dtype=np.float64).reshape(-1)
            if len(values) != len(self.triples):
                raise ValueError(f"{name}: {len(values)} posteriors for {len(self.triples)} test triples")
            self.posteriors[name] = values

    def frame(self) -> pd.DataFrame:
        """``triple_sums.parquet``: one row per test triple (module docstring)."""
        for side in SIDES:
            if self._next[side] != len(self._queries[side]):
                raise ValueError(f"only {self._next[side]} of {len(self._queries[side])} {side} queries were added")
        columns: dict[str, np.ndarray] = {
            name: self.triples[:, i].astype(np.int64) for i, name in enumerate(("head", "relation", "tail"))
        }
        counts = sum(self._counts[side][:, self._query[side]] * self._share[side] for side in SIDES)
        for s, strategy in enumerate(self.strategies):
            columns[column("num_neg", strategy)] = counts[s]
        for c, name in enumerate(self.calibrators):
            if name in self.posteriors:
                columns[column("pos_posterior", name)] = self.posteriors[name]
            sums = sum(self._rows[side][c][:, self._query[side]] * self._share[side][:, None] for side in SIDES)
            for s in range(len(self.strategies))[self.rows_of[c]]:
                for f, field in enumerate(NEGATIVE_SUMS):
                    columns[column(field, name, self.strategies[s])] = sums[s, :, f]
        for name, (representative, strategies) in self.aliases.items():
            if name in self.posteriors:
                columns[column("pos_posterior", name)] = self.posteriors[name]
            for strategy in strategies:
                for field in NEGATIVE_SUMS:
                    columns[column(field, name, strategy)] = columns[column(field, representative, strategy)]
        return pd.DataFrame(columns)


def sums_matrix(sums: pd.DataFrame, calibrator: str, strategy: str) -> np.ndarray:
    """The per-triple sums of one calibrator and strategy in the order of
    :data:`~kgeval.studies.s5.measures.SUM_FIELDS` (a triple is one positive: count 1, its ``(1 - p)^2``,
    ``[p >= threshold]`` and ``p``; then its share of the negatives).

    :param sums: a run's ``triple_sums.parquet`` (at least the calibrator's and strategy's columns)
    :return: shape: (triples, 8)
    """
    p = sums[column("pos_posterior", calibrator)].to_numpy(dtype=np.float64)
    threshold = CalibrationSums().threshold
    negatives = [sums[column(f, calibrator, strategy)].to_numpy(dtype=np.float64) for f in NEGATIVE_SUMS]
    posterior, sq_error, hits = negatives
    num_neg = sums[column("num_neg", strategy)].to_numpy(dtype=np.float64)
    positives = [np.ones_like(p), (1.0 - p) ** 2, (p >= threshold).astype(np.float64), p]
    return np.column_stack([*positives, num_neg, sq_error, hits, posterior])


def run_stream_seed(bootstrap: BootstrapSettings, run: Sequence[str]) -> int:
    """The seed of one run's resamples of its test triples: ``run`` is ``(dataset, model, seed)``."""
    return stream_seed(bootstrap.seed, *(str(k) for k in run), "s5")


def calibrator_replicates(
    sums: pd.DataFrame, pairs: Sequence[tuple[str, str]], resamples: int, seed: int
) -> dict[tuple[str, str], dict[str, np.ndarray]]:
    """Every measure of :func:`~kgeval.studies.s5.measures.weighted_measures` for each ``(calibrator, strategy)`` of
    ``pairs`` on the same bootstrap resamples of the test triples (a triple's negatives with it), so that
    differences between calibrators or strategies are paired.

    :param sums: a run's ``triple_sums.parquet`` (at least the pairs' columns)
    :param seed: the resamples' seed (:func:`run_stream_seed` for a run's)
    :return: ``(calibrator, strategy)`` -> measure -> shape: (resamples,) replicates (NaN where a resample leaves a
        class empty)
    """
    width = len(SUM_FIELDS)
    matrix = np.concatenate([sums_matrix(sums, c, s) for c, s in pairs], axis=1) if pairs else np.empty((len(sums), 0))
    totals = [counts @ matrix for counts in resample_counts(len(matrix), resamples, seed)]
    stacked = np.concatenate(totals) if totals else np.empty((0, matrix.shape[1]))
    return {
        pair: weighted_measures(*stacked[:, i * width : (i + 1) * width].T) for i, pair in enumerate(pairs)
    }


def measure_replicates(sums: pd.DataFrame, calibrator: str, strategy: str, resamples: int, seed: int) -> dict:
    """:func:`calibrator_replicates` of one calibrator and strategy.

    :return: measure -> shape: (resamples,) replicates (NaN where a resample leaves a class empty)
    """
    return calibrator_replicates(sums, [(calibrator, strategy)], resamples, seed)[(calibrator, strategy)]


def _correlation_rows(relative: pd.DataFrame, posteriors: np.ndarray) -> np.ndarray:
    """Per triple, the sums over its (up to two) pairs ``(relative rank, posterior)`` of 1, x, y, x^2, y^2, x*y;
    undefined relative ranks left out. shape: (n, 6)"""
    y = np.asarray(posteriors, dtype=np.float64)
    columns = []
    for side in sorted(c for c in relative.columns if c.startswith("relative_rank_")):
        x = relative[side].to_numpy(dtype=np.float64)
        keep = ~np.isnan(x)
        x0, y0 = np.where(keep, x, 0.0), np.where(keep, y, 0.0)
        columns.append(np.stack([keep.astype(float), x0, y0, x0 * x0, y0 * y0, x0 * y0], axis=1))
    return np.sum(columns, axis=0)


def _correlation(totals: np.ndarray) -> np.ndarray:
    """Pearson's r from the summed pair sums of :func:`_correlation_rows` (shape: (..., 6)); NaN when a variable is
    constant."""
    n, sx, sy, sxx, syy, sxy = np.moveaxis(totals, -1, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = sxy / n - (sx / n) * (sy / n)
        vx, vy = sxx / n - (sx / n) ** 2, syy / n - (sy / n) ** 2
        r = cov / np.sqrt(vx * vy)
    return np.where((vx > 1e-15) & (vy > 1e-15), r, np.nan)


def correlation_replicates(positives: pd.DataFrame, method: str, resamples: int, seed: int) -> np.ndarray:
    """Pearson's r_xy (Eq. 18-19, as :func:`kgeval.studies.s5.assessment.rank_posterior_correlation`) on bootstrap
    resamples of the test triples: a triple's head and tail pairs stay together.

    :param positives: one run's ``positives.parquet`` (``relative_rank_head``, ``relative_rank_tail``,
        ``posterior_<method>``)
    :param method: the selected function's method (``isotonic`` or ``platt``)
    :return: shape: (resamples,) replicates (NaN where a resample has a constant variable)
    """
    per_triple = _correlation_rows(positives, positives[f"posterior_{method}"].to_numpy(dtype=np.float64))
    out = [_correlation(counts @ per_triple) for counts in resample_counts(len(positives), resamples, seed)]
    return np.concatenate(out) if out else np.empty(0)


def measure_intervals(
    sums: pd.DataFrame,
    bootstrap: BootstrapSettings,
    run: Sequence[str],
    relative: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per calibrator, strategy and measure of one run: the point value (from the per-triple sums' totals, the values
    of ``assessment.tsv``) and its percentile interval over resamples of the test triples (module docstring).

    :param sums: the run's ``triple_sums.parquet``
    :param run: ``(dataset, model, seed)``, which seeds the resamples (:func:`run_stream_seed`)
    :param relative: the run's ``positives.parquet`` (its ``relative_rank_*`` columns): adds ``pearson_r`` on LCWA
        for every calibrator
    :return: columns ``calibrator, strategy, metric, value, low, high``
    """
    pairs = [
        (c[len("pos_posterior|"):], s[len("num_neg|"):])
        for c in sums.columns if c.startswith("pos_posterior|")
        for s in sums.columns if s.startswith("num_neg|")
        if column("neg_posterior", c[len("pos_posterior|"):], s[len("num_neg|"):]) in sums.columns
    ]
    matrix = np.concatenate([sums_matrix(sums, c, s) for c, s in pairs], axis=1) if pairs else np.empty((len(sums), 0))
    width = len(SUM_FIELDS)
    ranked = [c for c, s in pairs if s == "lcwa"] if relative is not None else []
    rows = [_correlation_rows(relative, sums[column("pos_posterior", c)].to_numpy()) for c in ranked]
    correlation = np.concatenate(rows, axis=1) if rows else np.empty((len(sums), 0))
    totals, pearson = [], []
    for counts in resample_counts(len(sums), bootstrap.resamples, run_stream_seed(bootstrap, run)):
        totals.append(counts @ matrix)
        pearson.append(counts @ correlation)
    totals = np.concatenate(totals) if totals else np.empty((0, matrix.shape[1]))
    pearson = np.concatenate(pearson) if pearson else np.empty((0, correlation.shape[1]))
    out = []
    for i, (calibrator, strategy) in enumerate(pairs):
        point = weighted_measures(*matrix[:, i * width : (i + 1) * width].sum(axis=0))
        replicates = weighted_measures(*totals[:, i * width : (i + 1) * width].T)
        for metric, value in point.items():
            out.append((calibrator, strategy, metric, float(value), *percentile_interval(replicates[metric], bootstrap.level)))
    for i, calibrator in enumerate(ranked):
        point = _correlation(correlation[:, 6 * i : 6 * (i + 1)].sum(axis=0))
        replicates = _correlation(pearson[:, 6 * i : 6 * (i + 1)])
        out.append((calibrator, "lcwa", "pearson_r", float(point), *percentile_interval(replicates, bootstrap.level)))
    return pd.DataFrame(out, columns=["calibrator", "strategy", "metric", "value", "low", "high"])
