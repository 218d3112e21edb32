"""Estimates of the full filtered metrics of a model evaluated with sampled candidates, with intervals.

From each query's counts (:mod:`~kgeval.lp.sampled.counts`: ``g`` sampled candidates above the true answer, ``e``
equal to it, ``d`` drawn, ``N`` filtered candidates in the full ranking) each rank type gets a better count ``b``
(optimistic ``g``, realistic ``g + e / 2``, pessimistic ``g + e``), and two estimators
(:mod:`~kgeval.lp.sampled.estimators`) give a rank per query:

- ``naive``: the rank among the ``d + 1`` sampled candidates, ``1 + b``, what a sampled protocol reports (OGB's);
  its AMRI uses the sample's own expectation ``(d + 2) / 2``;
- ``scaled``: ``1 + (N - 1) b / d``; its AMRI uses the full ranking's expectation ``(N + 1) / 2``.

Under the uniform sampler ``b`` is hypergeometric with mean ``d (r - 1) / (N - 1)`` for full rank ``r``, so the scaled
rank is unbiased for ``r`` and the scaled MR and AMRI (linear in the ranks) are unbiased for the full MR and AMRI: the
table marks them ``unbiased``. No estimator of MRR or Hits@k from a sample is unbiased (``1 / r`` and ``r <= k`` are
not linear in ``b``); study S6 measures how far each lies from the full ranking. The intervals are percentile
bootstrap intervals over the split's triples (a triple's head and tail queries together); each query's sample is
its own draw, so they cover the draws too. They do not cover an estimator's bias.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.lp.sampled.counts import SampledCandidates
from kgeval.lp.sampled.estimators import amri, expectation_columns, rank_columns, scaled_ranks
from kgeval.uncertainty.resampling import BootstrapSettings, percentile_interval, resample_counts, stream_seed

__all__ = ["ESTIMATE_COLUMNS", "RANK_TYPES", "METRICS", "query_values", "estimates_table"]

#: the columns of a sampled metrics table
ESTIMATE_COLUMNS: tuple[str, ...] = (
    "dataset", "model", "seed", "split", "sampler", "k", "side", "rank_type", "estimator", "metric",
    "value", "ci_low", "ci_high", "unbiased", "ci_method",
)
#: how each rank type counts a tie in the sample (the share of equal candidates counted as better)
RANK_TYPES: dict[str, float] = {"optimistic": 0.0, "realistic": 0.5, "pessimistic": 1.0}
#: the Hits@k of the table
HITS: tuple[int, ...] = (1, 3, 10)
#: the metrics of the table, each a mean of per-query values except ``amri`` (from MR and its expectation);
#: ``drawn`` is the mean number of candidates drawn per query (k, or fewer where filtering or a guided pool leaves
#: fewer), the same for both estimators
METRICS: tuple[str, ...] = ("mr", "mrr", *(f"hits@{k}" for k in HITS), "amri", "drawn")
#: the estimators, in table order
ESTIMATORS: tuple[str, ...] = ("naive", "scaled")


def query_values(counts: pd.DataFrame) -> dict[tuple[str, str, str], np.ndarray]:
    """Per query, ``(estimator, rank_type, column) -> values``: every mean metric's value and ``expected`` (the
    expected rank AMRI is adjusted with)."""
    greater, equal = counts["greater"].to_numpy(float), counts["equal"].to_numpy(float)
    drawn, n = counts["drawn"].to_numpy(np.int64), counts["num_candidates"].to_numpy(np.int64)
    expected = {"naive": expectation_columns(drawn + 1)["mr"], "scaled": expectation_columns(n)["mr"]}
    out = {}
    for rank_type, tie in RANK_TYPES.items():
        better = greater + tie * equal
        for estimator, ranks in (("naive", 1.0 + better), ("scaled", scaled_ranks(better, drawn, n))):
            for column, values in rank_columns(ranks, hits=HITS).items():
                out[estimator, rank_type, column] = values
            out[estimator, rank_type, "expected"] = expected[estimator]
            out[estimator, rank_type, "drawn"] = drawn.astype(np.float64)
    return out


def _side_sums(counts: pd.DataFrame, values: dict, num_triples: int) -> dict[str, tuple[np.ndarray, int]]:
    """Per side (``head``, ``tail``, ``both``): the (triples, columns) sums of each triple's queries, and the number of
    queries per triple."""
    sides = counts["side"].to_numpy()
    triples = counts["triple"].to_numpy(np.int64)
    out = {}
    for side in ("head", "tail"):
        keep = sides == side
        out[side] = (np.column_stack([np.bincount(triples[keep], weights=v[keep], minlength=num_triples)
                                      for v in values.values()]), 1)
    out["both"] = (out["head"][0] + out["tail"][0], 2)
    return out


def _metric(means: dict[str, np.ndarray], metric: str) -> np.ndarray:
    return amri(means["mr"], means["expected"]) if metric == "amri" else means[metric]


def estimates_table(
    counts: pd.DataFrame, settings: SampledCandidates, boot: BootstrapSettings, names: tuple[str, str, int, str]
) -> pd.DataFrame:
    """The :data:`ESTIMATE_COLUMNS` rows of one model and split: every side, rank type, estimator and metric.

    :param counts: the split's counts (:func:`~kgeval.lp.sampled.counts.sampled_counts`)
    :param names: the dataset, the model, the seed and the split (the dataset and split seed the resamples, so every
        model of a dataset gets the same ones)
    """
    dataset, model, seed, split = names
    values = query_values(counts)
    keys = list(values)
    num_triples = int(counts["triple"].max()) + 1 if len(counts) else 0
    if num_triples == 0:
        return pd.DataFrame(columns=list(ESTIMATE_COLUMNS))
    method = boot.describe(
        "test triples (a triple's head and tail queries together), each query's sample its own draw",
        f"covers the triples and the draws, not the estimator's bias; {settings.describe()}",
    )
    resample_seed = stream_seed(boot.seed, dataset, split, "sampled triples")
    rows = []
    for side, (sums, per_triple) in _side_sums(counts, values, num_triples).items():
        scale = 1.0 / (per_triple * num_triples)
        point = sums.sum(axis=0) * scale
        replicates = np.vstack([chunk @ sums for chunk in resample_counts(num_triples, boot.resamples, resample_seed)])
        replicates *= scale
        for estimator in ESTIMATORS:
            for rank_type in RANK_TYPES:
                idx = {column: keys.index((estimator, rank_type, column)) for e, r, column in keys
                       if (e, r) == (estimator, rank_type)}
                point_means = {c: point[i] for c, i in idx.items()}
                rep_means = {c: replicates[:, i] for c, i in idx.items()}
                for metric in METRICS:
                    low, high = percentile_interval(_metric(rep_means, metric), boot.level)
                    rows.append({
                        "dataset": dataset, "model": model, "seed": seed, "split": split,
                        "sampler": settings.sampler, "k": settings.k, "side": side, "rank_type": rank_type,
                        "estimator": estimator, "metric": metric, "value": float(_metric(point_means, metric)),
                        "ci_low": low, "ci_high": high,
                        "unbiased": settings.sampler == "uniform" and estimator == "scaled" and metric in ("mr", "amri"),
                        "ci_method": method,
                    })
    return pd.DataFrame(rows, columns=list(ESTIMATE_COLUMNS))
