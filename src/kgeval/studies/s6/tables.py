"""Estimates of the full filtered metrics with intervals over test triples and sample draws, and Kendall tau.

For each run (dataset, model, seed), sampler, k and estimator (:mod:`~kgeval.lp.sampled.estimators`) the per-query
values of every draw are summed per test triple (its head and tail queries together). A bootstrap replicate draws test
triples with replacement (:func:`kgeval.uncertainty.bootstrap_metrics.triple_counts`, the same resamples for every
model of the dataset) and one of the draws (seeded per replicate), and computes the estimate and the full value on
those triples; the interval of the estimate, of the full value and of their difference (the error) are percentile
intervals of those replicates. The point estimate is the mean over draws on all test triples.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from kgeval.lp.sampled.correction import corrected_values
from kgeval.lp.sampled.estimators import (
    ADJUSTED_METRICS, BASE_METRICS, adjusted_values, expectation_columns, naive_ranks, rank_columns, scaled_ranks,
)
from kgeval.studies.s6.evaluation import S6Settings
from kgeval.uncertainty.resampling import BootstrapSettings, percentile_interval, resample_counts, stream_seed

__all__ = ["ESTIMATE_COLUMNS", "ESTIMATORS", "ORDERING_COLUMNS", "query_columns", "run_replicates", "estimates_table", "kendall_tau", "ordering_table"]

#: the estimators, in table order; ``corrected`` is Krichene and Rendle's, for the uniform sampler only
ESTIMATORS: tuple[str, ...] = ("naive", "scaled", "corrected", "adjusted")

#: the columns of estimates.tsv
ESTIMATE_COLUMNS: tuple[str, ...] = (
    "dataset", "model", "seed", "sampler", "k", "estimator", "metric", "estimate", "full", "error",
    "ci_low", "ci_high", "error_ci_low", "error_ci_high", "full_ci_low", "full_ci_high", "ci_method",
)


def query_columns(better, drawn, num_candidates, sampler: str, settings: S6Settings) -> dict[str, np.ndarray]:
    """Per query, ``<estimator>:<metric>`` values of one draw and k, and ``expected:<metric>`` for the sample."""
    naive = naive_ranks(better)
    out = {f"naive:{key}": value for key, value in rank_columns(naive).items()}
    out |= {f"scaled:{key}": value for key, value in rank_columns(scaled_ranks(better, drawn, num_candidates)).items()}
    out |= {f"expected:{key}": value for key, value in expectation_columns(np.asarray(drawn) + 1).items()}
    if sampler == "uniform":
        for key in BASE_METRICS:
            out[f"corrected:{key}"] = corrected_values(naive, drawn, num_candidates, key, settings.gamma, settings.buckets)
    return out


def _triple_sums(values: np.ndarray, triples: np.ndarray, count: int) -> np.ndarray:
    return np.bincount(triples, weights=values, minlength=count)


def _metrics(means: dict[str, np.ndarray]) -> dict[tuple[str, str], np.ndarray]:
    """(estimator, metric) -> value from the means of the query columns (any leading shape)."""
    out = {tuple(name.split(":")): value for name, value in means.items() if not name.startswith("expected:")}
    naive = {key: means[f"naive:{key}"] for key in BASE_METRICS}
    expected = {key: means[f"expected:{key}"] for key in BASE_METRICS}
    for key, value in adjusted_values(naive, expected).items():
        out["adjusted", key] = value
    return out


def _full_metrics(means: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    values = {key: means[f"full:{key}"] for key in BASE_METRICS}
    return values | adjusted_values(values, {key: means[f"fullexp:{key}"] for key in BASE_METRICS})


def run_replicates(full: pd.DataFrame, sampled: pd.DataFrame, settings: S6Settings, boot: BootstrapSettings,
                   dataset: str) -> Iterator[dict]:
    """Rows of one run's replicates: (sampler, k, estimator, metric, point estimate, point full, replicate arrays).

    :param full: the run's full ranks (:func:`~kgeval.studies.s6.evaluation.full_and_sampled`)
    :param sampled: the run's sample counts
    """
    full = full.sort_values(["side", "query"], kind="stable")
    triples, count = full["query"].to_numpy(), int(full["query"].max()) + 1
    n = full["num_candidates"].to_numpy()
    columns = {f"full:{key}": value for key, value in rank_columns(full["rank"].to_numpy()).items()}
    columns |= {f"fullexp:{key}": value for key, value in expectation_columns(n).items()}
    names = list(columns)
    matrix = [_triple_sums(columns[name], triples, count) for name in names]
    blocks = {}
    for (sampler, draw), part in sampled.groupby(["sampler", "draw"], sort=True):
        part = part.sort_values(["side", "query"], kind="stable")
        for k in settings.ks:
            cols = query_columns(part[f"better_{k}"].to_numpy(), part[f"drawn_{k}"].to_numpy(), n, sampler, settings)
            for name, value in cols.items():
                blocks.setdefault((sampler, k, name), []).append(len(names))
                names.append(f"{sampler}|{k}|{draw}|{name}")
                matrix.append(_triple_sums(value, triples, count))
    x = np.column_stack(matrix) / (2.0 * count)
    replicate_means = np.vstack([c @ x for c in resample_counts(count, boot.resamples, stream_seed(boot.seed, dataset, "test", "triples"))])
    picks = np.random.default_rng(stream_seed(settings.seed, dataset, "draw picks")).integers(0, settings.draws, boot.resamples)
    point_all = x.sum(axis=0)
    full_point = _full_metrics({name: point_all[i] for i, name in enumerate(names[:8])})
    full_reps = _full_metrics({name: replicate_means[:, i] for i, name in enumerate(names[:8])})
    for sampler, k in sorted({key[:2] for key in blocks}):
        own = {name: idx for (s, kk, name), idx in blocks.items() if (s, kk) == (sampler, k)}
        point = _metrics({name: point_all[idx].mean() for name, idx in own.items()})
        rows = np.arange(boot.resamples)
        reps = _metrics({name: replicate_means[rows, np.asarray(idx)[picks]] for name, idx in own.items()})
        for (estimator, metric), value in point.items():
            yield {"sampler": sampler, "k": k, "estimator": estimator, "metric": metric, "estimate": float(value),
                   "full": float(full_point[metric]), "replicates": reps[estimator, metric],
                   "full_replicates": full_reps[metric]}


def estimates_table(runs: dict[tuple[str, str, int], tuple[pd.DataFrame, pd.DataFrame]], settings: S6Settings,
                    boot: BootstrapSettings) -> tuple[pd.DataFrame, pd.DataFrame]:
    """estimates.tsv (:data:`ESTIMATE_COLUMNS`) and the replicates (one row per run, sampler, k, estimator, metric and
    replicate: ``estimate``, ``full``) from every run's full ranks and sample counts."""
    method = boot.describe(
        "test triples (a triple's head and tail queries together) and sample draws (one draw per resample)",
        "one trained seed",
    )
    rows, replicates = [], []
    for (dataset, model, seed), (full, sampled) in sorted(runs.items()):
        for row in run_replicates(full, sampled, settings, boot, dataset):
            reps, full_reps = row.pop("replicates"), row.pop("full_replicates")
            low, high = percentile_interval(reps, boot.level)
            err_low, err_high = percentile_interval(reps - full_reps, boot.level)
            full_low, full_high = percentile_interval(full_reps, boot.level)
            rows.append({"dataset": dataset, "model": model, "seed": seed, **row, "error": row["estimate"] - row["full"],
                         "ci_low": low, "ci_high": high, "error_ci_low": err_low, "error_ci_high": err_high,
                         "full_ci_low": full_low, "full_ci_high": full_high, "ci_method": method})
            replicates.append(pd.DataFrame({
                "dataset": dataset, "model": model, "seed": seed, "sampler": row["sampler"], "k": row["k"],
                "estimator": row["estimator"], "metric": row["metric"], "replicate": np.arange(len(reps)),
                "estimate": reps, "full": full_reps,
            }))
    table = pd.DataFrame(rows, columns=list(ESTIMATE_COLUMNS))
    keys = ["dataset", "model", "seed", "sampler", "k", "estimator", "metric"]
    reps = pd.concat(replicates, ignore_index=True) if replicates else pd.DataFrame(columns=[*keys, "replicate", "estimate", "full"])
    return table.sort_values(keys, kind="stable").reset_index(drop=True), reps


def kendall_tau(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between the columns of ``a`` and ``b`` along the last axis (models), vectorised over the leading
    axes; NaN where either has no untied pair."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    sa = np.sign(a[..., :, None] - a[..., None, :])
    sb = np.sign(b[..., :, None] - b[..., None, :])
    upper = np.triu(np.ones(sa.shape[-2:], dtype=bool), 1)
    num = (sa * sb)[..., upper].sum(axis=-1)
    den = np.sqrt((sa[..., upper] != 0).sum(axis=-1) * (sb[..., upper] != 0).sum(axis=-1).astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


#: the columns of ordering.tsv
ORDERING_COLUMNS: tuple[str, ...] = (
    "dataset", "seed", "sampler", "k", "estimator", "metric", "models", "tau", "ci_low", "ci_high",
)


def ordering_table(estimates: pd.DataFrame, replicates: pd.DataFrame, level: float) -> pd.DataFrame:
    """Kendall tau-b between the sampled and the full ordering of the models of each dataset and seed, per sampler, k,
    estimator and metric, with its percentile interval over the replicates (datasets with fewer than two models are
    left out)."""
    keys = ["dataset", "seed", "sampler", "k", "estimator", "metric"]
    rows = []
    for key, part in estimates.groupby(keys, sort=True):
        if part["model"].nunique() < 2:
            continue
        tau = float(kendall_tau(part["estimate"].to_numpy(), part["full"].to_numpy()))
        reps = replicates.merge(part[["model", *keys]], on=["model", *keys])
        est = reps.pivot(index="replicate", columns="model", values="estimate").to_numpy()
        full = reps.pivot(index="replicate", columns="model", values="full").to_numpy()
        low, high = percentile_interval(kendall_tau(est, full), level)
        rows.append((*key, part["model"].nunique(), tau, low, high))
    return pd.DataFrame(rows, columns=list(ORDERING_COLUMNS))
