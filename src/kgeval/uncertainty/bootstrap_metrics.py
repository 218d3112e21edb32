"""Every registered rank metric on every bootstrap resample of a ranks table, vectorized, and its percentile interval.

A resample of a ranks table is a vector of counts ``c`` (how often each row, i.e. evaluation query, occurs; the counts
sum to the number of rows ``n``). Each metric of :data:`kgeval.metrics.METRICS` is a function of a few sums of
per-row quantities weighted by those counts, so a chunk of resamples ``C`` (shape ``(b, n)``) gives all of them at
once:

- means of per-row values are ``C @ X / n``, with the columns of ``X``: ``r``, ``1/r``, ``log r``, ``r - m`` and
  ``(r - m)^2`` (``m`` the table's mean, for a variance without cancellation), ``[r <= k]``, and, for the realistic
  rank, the per-row expectation and variance of each base metric under uniformly random ranks (PyKEEN's closed
  forms: ``(N+1)/2``, ``(N^2-1)/12``, ``H_N/N``, PyKEEN's ``harmonic_variances``, ``min(k/N, 1)``,
  ``p(1-p)``, and ``log E[r^(1/n)]``, ``log E[r^(2/n)]`` for the geometric mean rank, whose expectation PyKEEN
  takes as ``prod_i E[r_i^(1/n)]``, i.e. ``exp(c @ log E[r_i^(1/n)])``);
- the median from the sorted distinct ranks and cumulative counts; the MAD (``scipy.stats.median_abs_deviation``
  with ``scale="normal"``) from the distinct absolute deviations of each resample, sorted per resample (both
  compiled for integer counts, with the same bits: :mod:`kgeval.engine.group_sums_kernel`);
- derived metrics as PyKEEN's classes build them from the resample's own expectation and variance:
  ``ExpectationNormalizedMetric`` ``v / E``, ``ReindexedMetric`` ``(v - E) / (1 - E)``, ``ZMetric``
  ``(v - E) / sqrt(V)`` with the sign flipped for a base where smaller is better; NaN where the base metric has
  zero variance under random ranking, as in :func:`kgeval.metrics.compute_metrics`.

The unit resampled is the test triple (:func:`triple_units`): a resample draws test triples with replacement, and a
drawn triple brings its head and its tail query together, because the two queries of one triple are correlated (they
share the triple's entities and relation). Side ``head`` (``tail``) sees each drawn triple's head (tail) query, and
``both`` their union, so a side-specific interval is the same in distribution as one over that side's queries. Rows
are put in a canonical order first (:func:`canonical_order`), so that row ``i`` is the same query in every model's
table and every model of a dataset and split gets the same resamples (:func:`triple_counts`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import special

from kgeval.io import write_tsv
from kgeval.metrics import HITS_K, METRICS, RANK_TYPES, compute_metrics, supported_rank_types
from kgeval.tables import LP_KEY_COLUMNS
from kgeval.engine.group_sums_kernel import exact_counts, group_ids, group_sums, median_and_mad
from kgeval.uncertainty.resampling import BootstrapSettings, percentile_interval, resample_counts, stream_seed

__all__ = [
    "BootstrapSettings",
    "RankBlock",
    "canonical_order",
    "side_blocks",
    "TripleUnits",
    "triple_units",
    "triple_counts",
    "bootstrap_replicates",
    "interval_table",
    "metrics_with_intervals",
    "metrics_with_intervals_files",
]

#: side names of the two strata; ``both`` is their union
STRATA: tuple[str, ...] = ("head", "tail")

#: the unit of the intervals of ``tables/metrics.tsv``, and the sources of variation they cover
METRICS_UNIT = "test triples (a triple's head and tail queries together)"
METRICS_SOURCES = "covers the test set's sampling; one trained seed (its training variance is not covered)"

#: the base metrics of the adjusted and z-scored metrics (the mean rank, the MRR, the GMR and Hits@k)
_BASES: tuple[str, ...] = ("mr", "mrr", "gmr", *(f"hits@{k}" for k in HITS_K))

#: a base metric whose variance under random ranking is at most this is degenerate (kgeval.metrics._is_degenerate)
_DEGENERATE_VARIANCE = 1e-15

#: scipy's scale="normal" of the MAD: the standard normal quantile at 0.75
_MAD_NORMAL = float(special.ndtri(0.75))


def canonical_order(ranks: pd.DataFrame) -> pd.DataFrame:
    """The rows sorted by side, then head, relation and tail (:data:`kgeval.tables.LP_KEY_COLUMNS`), index reset.

    A table without the key columns (e.g. synthetic ranks) keeps its order within each side.
    """
    keys = ["side"] + [c for c in LP_KEY_COLUMNS if c != "side" and c in ranks.columns]
    return ranks.sort_values(keys, kind="stable").reset_index(drop=True)


def _mean_columns(ranks: np.ndarray) -> np.ndarray:
    """Per-row values whose count-weighted means give the base metrics; shape: (n, 5 + len(HITS_K))."""
    centre = ranks.mean()
    hits = [(ranks <= k).astype(float) for k in HITS_K]
    return np.column_stack([ranks, 1.0 / ranks, np.log(ranks), ranks - centre, (ranks - centre) ** 2, *hits])


def _expectation_columns(num_candidates: np.ndarray) -> np.ndarray:
    """Per-row expectations and variances of the base metrics under uniform random ranks (PyKEEN's closed forms).

    :param num_candidates: shape: (n,) integers; ``n`` is also the exponent's denominator of the geometric mean
    :return: shape: (n, 6 + 2 * len(HITS_K)): ``E[r], V[r], E[1/r], V[1/r], log E[r^(1/n)], log E[r^(2/n)]``,
        then ``p_k, p_k (1 - p_k)`` for each k
    """
    from pykeen.metrics.ranking import GeometricMeanRank, generalized_harmonic_numbers, harmonic_variances

    nc = num_candidates.astype(np.int64)
    top = int(nc.max())
    harmonic = generalized_harmonic_numbers(top, p=-1.0) / np.arange(1, top + 1)
    nf = nc.astype(float)
    columns = [
        0.5 * (nf + 1.0),
        (nf**2 - 1.0) / 12.0,
        harmonic[nc - 1],
        harmonic_variances(top)[nc - 1],
        GeometricMeanRank._log_individual_expectation_no_weight(num_candidates=nc),
        GeometricMeanRank._log_individual_expectation_no_weight(num_candidates=nc, factor=2.0),
    ]
    for k in HITS_K:
        p = np.minimum(k / nf, 1.0)
        columns += [p, p * (1.0 - p)]
    return np.column_stack(columns)


def _weighted_middle(values: np.ndarray, weights: np.ndarray, n: int) -> np.ndarray:
    """Per resample, the median of ``values`` each repeated by its weight (the mean of the two middle ones when ``n``
    is even, as :func:`numpy.median`).

    :param values: shape: (K,) or (b, K), ascending along the last axis
    :param weights: shape: (b, K), rows summing to ``n``
    :return: shape: (b,)
    """
    cumulative = np.cumsum(weights, axis=1)
    low = (cumulative <= (n - 1) // 2).sum(axis=1)
    high = (cumulative <= n // 2).sum(axis=1)
    values = np.broadcast_to(values, weights.shape)
    rows = np.arange(weights.shape[0])
    return 0.5 * (values[rows, low] + values[rows, high])


class RankBlock:
    """The ranks of one side (``head``, ``tail`` or ``both``) prepared for resampling: every metric on many resamples.

    :param ranks: rank type -> shape: (n,) ranks in canonical row order
    :param num_candidates: shape: (n,)
    """

    def __init__(self, ranks: Mapping[str, np.ndarray], num_candidates: np.ndarray) -> None:
        self.n = int(num_candidates.size)
        self.num_candidates = np.asarray(num_candidates, dtype=np.int64)
        self.expectation_columns = _expectation_columns(self.num_candidates)
        self.columns = {}
        self.distinct = {}
        for rank_type, values in ranks.items():
            values = np.asarray(values, dtype=float)
            self.columns[rank_type] = _mean_columns(values)
            order = np.argsort(values, kind="stable")
            distinct, starts = np.unique(values[order], return_index=True)
            self.distinct[rank_type] = (order, distinct, starts, group_ids(order, starts))

    def _medians(self, rank_type: str, counts: np.ndarray, exact: bool) -> tuple[np.ndarray, np.ndarray]:
        """Median and MAD (scale "normal") of each resample; shape: (b,) each.

        :param exact: whether the counts are integers that sum exactly in any order
            (:func:`kgeval.engine.group_sums_kernel.exact_counts`, true of resamples): then compiled, with the same
            bits; otherwise numpy's gather, ``reduceat`` and sort, whose order of additions matters
        """
        order, distinct, starts, group = self.distinct[rank_type]
        if exact:
            weights = group_sums(counts, group, distinct.size)
            compiled = median_and_mad(distinct, weights, self.n)
            if compiled is not None:
                return compiled[0], compiled[1] / _MAD_NORMAL
        else:
            weights = np.add.reduceat(counts[:, order], starts, axis=1)
        median = _weighted_middle(distinct, weights, self.n)
        deviation = np.abs(distinct[None, :] - median[:, None])
        by_deviation = np.argsort(deviation, axis=1, kind="stable")
        mad = _weighted_middle(
            np.take_along_axis(deviation, by_deviation, axis=1),
            np.take_along_axis(weights, by_deviation, axis=1),
            self.n,
        )
        return median, mad / _MAD_NORMAL

    def _base_values(self, rank_type: str, counts: np.ndarray, exact: bool) -> dict[str, np.ndarray]:
        """Every base, dispersion and count metric of each resample (``exact``: see :meth:`_medians`)."""
        means = counts @ self.columns[rank_type] / self.n
        mr, mrr, log_mean, centred, centred2 = means[:, :5].T
        var = np.maximum(centred2 - centred**2, 0.0)
        median, mad = self._medians(rank_type, counts, exact)
        with np.errstate(divide="ignore"):
            values = {
                "mr": mr, "mrr": mrr, "gmr": np.exp(log_mean), "hmr": 1.0 / mrr, "igmr": np.exp(-log_mean),
                "imr": 1.0 / mr, "medr": median, "imedr": 1.0 / median, "std": np.sqrt(var), "var": var,
                "mad": mad, "count": np.full(counts.shape[0], float(self.n)),
            }
        for i, k in enumerate(HITS_K):
            values[f"hits@{k}"] = means[:, 5 + i]
        return values

    def _base_moments(self, counts: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Expectation and variance under random ranking of each base metric on each resample (PyKEEN's forms)."""
        n = self.n
        sums = counts @ self.expectation_columns
        moments = {
            "mr": (sums[:, 0] / n, sums[:, 1] / n**2),
            "mrr": (sums[:, 2] / n, sums[:, 3] / n**2),
        }
        gmr_mean = np.exp(sums[:, 4])
        moments["gmr"] = (gmr_mean, np.exp(sums[:, 5]) - gmr_mean**2)
        for i, k in enumerate(HITS_K):
            moments[f"hits@{k}"] = (sums[:, 6 + 2 * i] / n, sums[:, 7 + 2 * i] / n**2)
        return moments

    def replicates(self, counts: np.ndarray) -> dict[tuple[str, str], np.ndarray]:
        """Every registered metric for every rank type it supports, on each resample.

        :param counts: shape: (b, n); row j: how often each row of this block occurs in resample j (sum ``n``)
        :return: (rank type, metric key) -> shape: (b,)
        """
        counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
        if counts.shape[1] != self.n:
            raise ValueError(f"counts have {counts.shape[1]} columns, the block has {self.n} rows")
        out = {}
        exact = exact_counts(counts)
        for rank_type in self.columns:
            values = self._base_values(rank_type, counts, exact)
            if rank_type == "realistic":
                values.update(_derived_values(values, self._base_moments(counts)))
            for key, value in values.items():
                if rank_type in supported_rank_types(key):
                    out[rank_type, key] = value
        return out


def _derived_values(
    base: Mapping[str, np.ndarray], moments: Mapping[str, tuple[np.ndarray, np.ndarray]]
) -> dict[str, np.ndarray]:
    """The adjusted and z-scored metrics from their base values and the bases' moments under random ranking."""
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for key, spec in METRICS.items():
            if spec.kind not in ("adjusted", "z"):
                continue
            value = base[spec.base]
            mean, variance = moments[spec.base]
            cls = spec.cls
            if spec.kind == "z":
                sign = 1.0 if METRICS[spec.base].increasing else -1.0
                result = sign * (value - mean) / np.sqrt(variance)
            elif any(c.__name__ == "ExpectationNormalizedMetric" for c in cls.__mro__):
                result = value / mean
            else:  # ReindexedMetric
                result = (value - mean) / (1.0 - mean)
            out[key] = np.where(variance <= _DEGENERATE_VARIANCE, np.nan, result)
    return out


def side_blocks(ranks: pd.DataFrame) -> dict[str, RankBlock]:
    """A :class:`RankBlock` per side that has rows (``head``, ``tail``; ``both`` = head rows, then tail rows).

    :param ranks: a ranks table in canonical order (:func:`canonical_order`)
    """
    parts = {side: ranks[ranks["side"] == side] for side in STRATA}
    parts = {side: frame for side, frame in parts.items() if len(frame)}
    parts["both"] = pd.concat(list(parts.values()), ignore_index=True)
    blocks = {}
    for side, frame in parts.items():
        rank_values = {t: frame[f"rank_{t}"].to_numpy(dtype=float) for t in RANK_TYPES}
        blocks[side] = RankBlock(rank_values, frame["num_candidates"].to_numpy(dtype=np.int64))
    return blocks


class TripleUnits:
    """Which test triple each query of a ranks table belongs to, per side (the resampling unit of LP).

    :ivar count: the number of test triples T
    :ivar rows: side -> shape: (rows of the side,) the triple index (0..T-1) of each of that side's rows, in canonical
        order; a side without rows is left out
    """

    def __init__(self, count: int, rows: Mapping[str, np.ndarray]) -> None:
        self.count = int(count)
        self.rows = dict(rows)


def triple_units(ranks: pd.DataFrame, source: str = "ranks table") -> TripleUnits:
    """The test triple of each row of a canonically ordered ranks table (:func:`canonical_order`).

    A triple is identified by its head, relation and tail, and by its occurrence among equal triples (a test set that
    holds a triple twice has two units); a table without those columns pairs the i-th head row with the i-th tail row.
    Every triple must have one query on each side that has rows.

    :param source: how to name the table in errors
    :raises ValueError: when a triple has a query on one side and none on the other
    """
    keys = [c for c in LP_KEY_COLUMNS if c != "side" and c in ranks.columns]
    occurrence = ranks.groupby([*keys, "side"], sort=False).cumcount().to_numpy()
    frame = ranks[keys].assign(_occurrence=occurrence)
    codes, uniques = pd.MultiIndex.from_frame(frame).factorize()
    count = len(uniques)
    rows = {}
    for side in STRATA:
        inside = (ranks["side"] == side).to_numpy()
        if not inside.any():
            continue
        present = np.bincount(codes[inside], minlength=count)
        if (present != 1).any():
            lacking = int((present == 0).sum())
            raise ValueError(
                f"{source}: {lacking} of {count} test triples have no {side} query while others have one; the test "
                "triple (its head and tail queries together) is the resampling unit, so every triple needs a query "
                "on each ranked side (rank both sides of every test triple, or only one side of all of them)"
            )
        rows[side] = codes[inside]
    return TripleUnits(count, rows)


def triple_counts(units: TripleUnits, resamples: int, seed: int, *names: str) -> Iterator[dict[str, np.ndarray]]:
    """Resample counts of each side's rows, in chunks: test triples drawn with replacement, each bringing its queries.

    :param units: :func:`triple_units` of the table
    :param seed: the configured seed; the triples are drawn from ``stream_seed(seed, *names, "triples")``
    :param names: the dataset and split (every model of them gets the same resamples)
    :return: chunks: side -> shape: (b, rows of the side), ``both`` the head columns then the tail columns
    """
    if units.count == 0:
        raise ValueError("no rows to resample: the ranks table holds no test triple")
    for counts in resample_counts(units.count, resamples, stream_seed(seed, *names, "triples")):
        out = {side: counts[:, rows] for side, rows in units.rows.items()}
        out["both"] = np.hstack([out[side] for side in STRATA if side in out])
        yield out


def bootstrap_replicates(
    ranks: pd.DataFrame, resamples: int, seed: int, *names: str, source: str = "ranks table"
) -> dict[tuple[str, str, str], np.ndarray]:
    """Every metric of every side and rank type on ``resamples`` resamples of a ranks table's test triples.

    :param ranks: a ranks table (docs/design.md), in any row order
    :param names: the dataset and split (the resample stream's names)
    :param source: how to name the table in errors
    :return: (side, rank type, metric) -> shape: (resamples,)
    """
    ordered = canonical_order(ranks)
    blocks = side_blocks(ordered)
    units = triple_units(ordered, source)
    collected: dict[tuple[str, str, str], list[np.ndarray]] = {}
    for counts in triple_counts(units, resamples, seed, *names):
        for side, block in blocks.items():
            for (rank_type, key), values in block.replicates(counts[side]).items():
                collected.setdefault((side, rank_type, key), []).append(values)
    return {key: np.concatenate(chunks) for key, chunks in collected.items()}


def interval_table(replicates: Mapping[tuple[str, str, str], np.ndarray], level: float) -> pd.DataFrame:
    """The percentile interval of each (side, rank type, metric): columns ``side, rank_type, metric, ci_low,
    ci_high``."""
    rows = [(*key, *percentile_interval(values, level)) for key, values in replicates.items()]
    return pd.DataFrame(rows, columns=["side", "rank_type", "metric", "ci_low", "ci_high"])


def metrics_with_intervals(
    ranks: pd.DataFrame, dataset: str, split: str, settings: BootstrapSettings, source: str = "ranks table"
) -> pd.DataFrame:
    """:func:`kgeval.metrics.compute_metrics` with a percentile-bootstrap interval on every value.

    :return: columns ``side, rank_type, metric, value, ci_low, ci_high, ci_method``, sorted
    """
    table = compute_metrics(ranks, source=source)
    replicates = bootstrap_replicates(ranks, settings.resamples, settings.seed, dataset, split, source=source)
    intervals = interval_table(replicates, settings.level)
    keys = ["side", "rank_type", "metric"]
    out = table.merge(intervals, on=keys, how="left", validate="one_to_one")
    missing = out[out["ci_low"].isna() & out["value"].notna()]
    lacking = [k for k in map(tuple, missing[keys].to_numpy()) if k not in replicates]
    if lacking:
        raise RuntimeError(f"{source}: no bootstrap replicates for {lacking[:5]} ({len(lacking)} rows)")
    out["ci_method"] = settings.describe(METRICS_UNIT, METRICS_SOURCES)
    return out.sort_values(keys, kind="stable").reset_index(drop=True)


def metrics_with_intervals_files(
    ranks_paths: Sequence[str | os.PathLike],
    outs: Sequence[str | os.PathLike],
    dataset: str,
    splits: Sequence[str],
    settings: BootstrapSettings,
) -> None:
    """:func:`metrics_with_intervals` for each (ranks table, output, split) of one trained model, written atomically.

    :param splits: the split of each ranks table (the resample stream's name, with ``dataset``)
    """
    if not len(ranks_paths) == len(outs) == len(splits):
        raise ValueError(f"{len(ranks_paths)} ranks tables, {len(outs)} outputs and {len(splits)} splits; give one each")
    for path, out, split in zip(ranks_paths, outs, splits):
        table = metrics_with_intervals(pd.read_parquet(path), dataset, split, settings, source=str(path))
        write_tsv(table, out, sort_by=["side", "rank_type", "metric"])
