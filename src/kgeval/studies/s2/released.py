"""S2 at paper scale without training: the authors' released results, adjusted by kgeval from the datasets alone.

Hoyt et al. (2022) released the results behind their Fig. 1 (``collated/collated.tsv`` of
``pykeen/ranking-metrics-manuscript``): one row per (dataset, model) for ComplEx, RotatE, TransE and TuckER on Nations,
Kinships, FB15k-237 and WN18RR, with every base metric (test split, head and tail ranks pooled, realistic ranks; the
``count`` column is twice the number of test triples) and the authors' own adjusted indices and z-scores.

This module keeps the release's *base* metrics and recomputes every adjusted index and z-score with kgeval's
expectations and variances, which come from the datasets' own filtered candidate counts
(:func:`kgeval.lp.candidates.dataset_expectations`, ``results/tables/expectations.tsv``), through the same code as
``kgeval adjust`` (:func:`kgeval.studies.s2.adjust.adjust_value`). The result has the shape of the collated metrics
table, so the grid, size correlations and family figures of :mod:`kgeval.studies.s2.grid` apply unchanged.

:func:`published_comparison` puts the authors' adjusted values next to kgeval's. :func:`expectation_check` explains
the differences: from the published values it recovers the expectation (and, for z-scores, the variance) the authors
used - the adjusted index is affine in the base metric, ``A = (M - E) / (1 - E)``, so ``E = (M - A) / (1 - A)``; a
z-score ``Z = (M - E) / sqrt(V)`` is a line through the four models' ``(Z, M)`` points with intercept ``E`` and slope
``sqrt(V)`` - and compares it with kgeval's closed form, a Monte-Carlo estimate from the same candidate counts, and
the candidate forms that reproduce the published numbers exactly.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kgeval.io import read_tsv, write_tsv
from kgeval.metrics import METRICS, closed_form, sample_metric_values
from kgeval.studies.s2.adjust import adjust_value

__all__ = [
    "RELEASE_COMMIT",
    "RELEASE_URL",
    "BASE_COLUMNS",
    "PUBLISHED_COLUMNS",
    "CHECKED_METRICS",
    "fetch_collated",
    "collated_path",
    "read_collated",
    "released_metrics",
    "published_comparison",
    "expectation_check",
    "write_released_metrics",
    "write_published_comparison",
    "write_expectation_check",
]

logger = logging.getLogger(__name__)

#: the commit of pykeen/ranking-metrics-manuscript whose collated/collated.tsv is the offline copy (byte-identical)
RELEASE_COMMIT = "18427ce1fffb9ba5ce837fa53bd9a5fb3d778cbd"
#: raw-file URL of the released table at that commit
RELEASE_URL = (
    f"https://raw.githubusercontent.com/pykeen/ranking-metrics-manuscript/{RELEASE_COMMIT}/collated/collated.tsv"
)

#: base-metric columns of the release -> kgeval metric keys
BASE_COLUMNS: dict[str, str] = {
    "arithmetic_mean_rank": "mr",
    "inverse_harmonic_mean_rank": "mrr",
    "geometric_mean_rank": "gmr",
    "harmonic_mean_rank": "hmr",
    "inverse_geometric_mean_rank": "igmr",
    "inverse_arithmetic_mean_rank": "imr",
    "median_rank": "medr",
    "inverse_median_rank": "imedr",
    "standard_deviation": "std",
    "variance": "var",
    "median_absolute_deviation": "mad",
    "count": "count",
    "hits_at_1": "hits@1",
    "hits_at_3": "hits@3",
    "hits_at_5": "hits@5",
    "hits_at_10": "hits@10",
}

#: the authors' adjusted and z-scored columns -> kgeval metric keys
PUBLISHED_COLUMNS: dict[str, str] = {
    "adjusted_arithmetic_mean_rank": "amr",
    "adjusted_arithmetic_mean_rank_index": "amri",
    "adjusted_inverse_harmonic_mean_rank": "amrr",
    "adjusted_geometric_mean_rank_index": "agmri",
    "adjusted_hits_at_1": "ah@1",
    "adjusted_hits_at_3": "ah@3",
    "adjusted_hits_at_5": "ah@5",
    "adjusted_hits_at_10": "ah@10",
    "z_arithmetic_mean_rank": "zmr",
    "z_inverse_harmonic_mean_rank": "zmrr",
    "z_geometric_mean_rank": "zgmr",
    "z_hits_at_1": "zh@1",
    "z_hits_at_3": "zh@3",
    "z_hits_at_5": "zh@5",
    "z_hits_at_10": "zh@10",
}

#: base metrics whose published adjusted index and z-score :func:`expectation_check` explains
CHECKED_METRICS: tuple[str, ...] = ("mrr", "mr", "gmr", "hits@1", "hits@3", "hits@5", "hits@10")

_KEY_COLUMNS = ("dataset", "model")
#: relative agreement at which an implied expectation counts as reproduced by a candidate form
_MATCH_RTOL = 1e-6


def fetch_collated(cache_dir: str | os.PathLike | None = None, url: str = RELEASE_URL) -> Path:
    """Download the released table once (``pystow``, pinned commit) and return its local path.

    :param cache_dir: the cache root; default ``pystow``'s (``~/.data/kgeval``, or ``$PYSTOW_HOME/kgeval``)
    """
    import pystow  # lazily: only users without a local copy need it

    module = pystow.Module(base=Path(cache_dir)) if cache_dir is not None else pystow.module("kgeval")
    return module.ensure("ranking-metrics-manuscript", RELEASE_COMMIT[:7], url=url, name="collated.tsv")


def collated_path(data_dir: str | os.PathLike | None, folder: str | None) -> Path:
    """The released table: ``{data_dir}/{folder}/collated.tsv`` when both are set (or ``folder`` is absolute),
    otherwise downloaded and cached (:func:`fetch_collated`)."""
    if folder is not None and (data_dir is not None or Path(folder).is_absolute()):
        base = Path(folder) if Path(folder).is_absolute() else Path(data_dir) / folder
        path = base / "collated.tsv"
        if not path.is_file():
            raise FileNotFoundError(
                f"S2 release: {path} is missing; point studies.s2.released_results.folder at the folder holding "
                f"collated.tsv (relative to data_dir) or set it to null to download {RELEASE_URL}"
            )
        return path
    return fetch_collated()


def read_collated(path: str | os.PathLike) -> pd.DataFrame:
    """Read the released table and check that it holds every column kgeval uses.

    :return: one row per (dataset, model), sorted
    :raises ValueError: naming the missing columns or a repeated (dataset, model)
    """
    table = pd.read_csv(path, sep="\t")
    need = set(_KEY_COLUMNS) | set(BASE_COLUMNS) | set(PUBLISHED_COLUMNS)
    missing = sorted(need - set(table.columns))
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; is it collated/collated.tsv of the S2 release?")
    if table.duplicated(list(_KEY_COLUMNS)).any():
        raise ValueError(f"{path}: a (dataset, model) appears twice")
    return table.sort_values(list(_KEY_COLUMNS), kind="stable").reset_index(drop=True)


def _dataset_rows(collated: pd.DataFrame, datasets: Mapping[str, str]) -> pd.DataFrame:
    """The release's rows of the mapped datasets, with ``dataset`` replaced by the config key."""
    unknown = sorted(set(datasets) - set(collated["dataset"]))
    if unknown:
        raise ValueError(
            f"studies.s2.released_results.datasets names {unknown}, which the release lacks; it has "
            f"{sorted(set(collated['dataset']))}"
        )
    rows = collated.loc[collated["dataset"].isin(list(datasets))].copy()
    rows["release_dataset"] = rows["dataset"]
    rows["dataset"] = rows["dataset"].map(dict(datasets))
    return rows


def _expectations_of(expectations: pd.DataFrame, dataset: str, split: str, side: str) -> pd.DataFrame:
    sub = expectations.loc[
        (expectations["dataset"] == dataset) & (expectations["split"] == split) & (expectations["side"] == side)
    ]
    if sub.empty:
        raise ValueError(
            f"the expectations table has no rows for dataset {dataset!r}, split {split!r}, side {side!r}; add the "
            "dataset to the config (its expectations come from rule tabulate_dataset_expectations)"
        )
    return sub


def released_metrics(
    collated: pd.DataFrame,
    expectations: pd.DataFrame,
    datasets: Mapping[str, str],
    split: str = "test",
    side: str = "both",
) -> pd.DataFrame:
    """The release's base metrics with kgeval's adjusted indices and z-scores, as a collated metrics table.

    :param collated: the released table (:func:`read_collated`)
    :param expectations: kgeval's expectations table (``dataset, split, side, metric, n_ranks, expectation,
        variance, method``), computed from the datasets
    :param datasets: the release's dataset name -> the config's dataset key
    :param split: the split the release evaluated (test)
    :param side: the side the release pooled (both)
    :return: columns ``dataset, model, seed, split, side, rank_type, metric, value`` (seed 0, rank type realistic:
        the release's single run and PyKEEN's default rank type), sorted
    :raises ValueError: when the release's ``count`` is not the dataset's number of ranking tasks (the release was
        evaluated on other triples than the dataset's test split)
    """
    rows = []
    for row in _dataset_rows(collated, datasets).itertuples(index=False):
        record = row._asdict()
        dataset, model = record["dataset"], record["model"]
        exp = _expectations_of(expectations, dataset, split, side)
        n_ranks = int(exp["n_ranks"].iloc[0])
        if int(round(record["count"])) != n_ranks:
            raise ValueError(
                f"release {record['release_dataset']}/{model}: count {record['count']:g} but dataset {dataset!r} has "
                f"{n_ranks} {side} ranking tasks on {split}; the release evaluated other triples"
            )
        for column, key in BASE_COLUMNS.items():
            value = float(record[column])
            rows.append((dataset, model, key, value))
            if key not in set(exp["metric"]) or METRICS[key].kind != "base":
                continue
            for derived_key, _, derived_value in adjust_value(exp, dataset, split, key, value, side=side).derived:
                if derived_key in METRICS:
                    rows.append((dataset, model, derived_key, float(derived_value)))
    table = pd.DataFrame(rows, columns=["dataset", "model", "metric", "value"])
    table.insert(2, "seed", 0)
    table.insert(3, "split", split)
    table.insert(4, "side", side)
    table.insert(5, "rank_type", "realistic")
    keys = ["dataset", "model", "seed", "split", "side", "rank_type", "metric"]
    return table.sort_values(keys, kind="stable").reset_index(drop=True)


def published_comparison(collated: pd.DataFrame, metrics: pd.DataFrame, datasets: Mapping[str, str]) -> pd.DataFrame:
    """The authors' adjusted values next to kgeval's, from the same base metric.

    :param metrics: the output of :func:`released_metrics`
    :return: ``dataset, model, metric, base_metric, base_value, published, kgeval, difference`` (kgeval minus
        published), sorted by dataset, metric, model
    """
    ours = metrics.set_index(["dataset", "model", "metric"])["value"]
    rows = []
    for row in _dataset_rows(collated, datasets).itertuples(index=False):
        record = row._asdict()
        for column, key in PUBLISHED_COLUMNS.items():
            base = METRICS[key].base
            base_column = next(c for c, k in BASE_COLUMNS.items() if k == base)
            value = float(ours.loc[(record["dataset"], record["model"], key)])
            published = float(record[column])
            rows.append(
                (
                    record["dataset"],
                    record["model"],
                    key,
                    base,
                    float(record[base_column]),
                    published,
                    value,
                    value - published,
                )
            )
    columns = ["dataset", "model", "metric", "base_metric", "base_value", "published", "kgeval", "difference"]
    out = pd.DataFrame(rows, columns=columns)
    return out.sort_values(["dataset", "metric", "model"], kind="stable").reset_index(drop=True)


def _adjusted_key(base: str) -> str:
    return "amri" if base == "mr" else next(k for k, s in METRICS.items() if s.base == base and s.kind == "adjusted")


def _z_key(base: str) -> str:
    return next(k for k, s in METRICS.items() if s.base == base and s.kind == "z")


def _published_column(key: str) -> str:
    return next(c for c, k in PUBLISHED_COLUMNS.items() if k == key)


def _base_column(key: str) -> str:
    return next(c for c, k in BASE_COLUMNS.items() if k == key)


def _matches(value: float, candidate: float) -> bool:
    return math.isfinite(value) and math.isfinite(candidate) and abs(value - candidate) <= _MATCH_RTOL * abs(candidate)


def _expectation_row(
    dataset: str,
    key: str,
    group: pd.DataFrame,
    counts: np.ndarray,
    sampled: Mapping[str, np.ndarray],
    num_samples: int,
) -> dict:
    """One row of :func:`expectation_check`: base metric ``key`` on ``dataset`` (``group``: its released rows)."""
    mean_n = float(counts.mean())
    base = group[_base_column(key)].to_numpy(float)
    adjusted = group[_published_column(_adjusted_key(key))].to_numpy(float)
    implied = (base - adjusted) / (1.0 - adjusted)
    z = group[_published_column(_z_key(key))].to_numpy(float)
    slope, intercept = np.polyfit(z, base, 1)
    residual = float(np.max(np.abs(base - (intercept + slope * z))) / max(np.max(np.abs(base)), 1e-300))
    e_n, v_n = closed_form(key, counts)
    e_m, v_m = closed_form(key, np.maximum(counts - 1, 1))
    continuous = math.log(mean_n) / (mean_n - 1.0) if key == "mrr" and mean_n > 1 else float("nan")
    forms = {"kgeval": e_n, "n_minus_1": e_m, "continuous_mean": continuous}
    adjusted_e = float(np.median(implied))
    return {
        "dataset": dataset,
        "metric": key,
        "n_ranks": int(counts.size),
        "mean_num_candidates": mean_n,
        "published_adjusted_expectation": adjusted_e,
        "published_adjusted_spread": float(np.ptp(implied)),
        "published_z_expectation": float(intercept),
        "published_z_variance": float(slope**2),
        "published_z_sign": 1 if slope > 0 else -1,
        "published_z_residual": residual,
        "kgeval_expectation": float(e_n),
        "kgeval_variance": float(v_n),
        "monte_carlo_expectation": float(sampled[key].mean()),
        "monte_carlo_stderr": float(sampled[key].std(ddof=1) / math.sqrt(num_samples)),
        "monte_carlo_variance": float(sampled[key].var(ddof=1)),
        "n_minus_1_expectation": float(e_m),
        "n_minus_1_variance": float(v_m),
        "continuous_mean_expectation": continuous,
        "adjusted_explained_by": next((name for name, value in forms.items() if _matches(adjusted_e, value)), "none"),
        "z_explained_by": next(
            (
                name
                for name, value in forms.items()
                if _matches(float(intercept), value)
                and (name != "kgeval" or _matches(float(slope**2), float(v_n)))
                and (name != "n_minus_1" or _matches(float(slope**2), float(v_m)))
            ),
            "none",
        ),
    }


def expectation_check(
    collated: pd.DataFrame,
    candidates: Mapping[str, np.ndarray],
    datasets: Mapping[str, str],
    metrics: Sequence[str] = CHECKED_METRICS,
    num_samples: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """The expectations and variances behind the published adjusted values, against kgeval's and a simulation.

    Per dataset and base metric:

    - ``published_adjusted_expectation``: ``E = (M - A) / (1 - A)`` from the published adjusted index ``A`` (median
      over the models; ``published_adjusted_spread`` is its range, ~0 when all models used the same ``E``);
    - ``published_z_expectation``, ``published_z_variance``: intercept and squared slope of the line through the
      models' (published z-score, base value) points; ``published_z_sign`` is +1 when the published z-score grows
      with the base metric (for MR: when a worse MR has a larger z); ``published_z_residual`` is the largest
      distance of a model's point from the line, relative to the largest base value (~0: one E and V for all models);
    - ``kgeval_expectation``, ``kgeval_variance``: kgeval's closed form on the number of candidates ``N_i`` of every
      ranking task (rank uniform on ``1..N_i``, the true entity counted among the candidates);
    - ``monte_carlo_expectation`` (± ``monte_carlo_stderr``), ``monte_carlo_variance``: the metric's mean and
      variance over ``num_samples`` simulated random rankings of the same tasks;
    - ``n_minus_1_expectation``, ``n_minus_1_variance``: the closed form with ``N_i - 1`` candidates (the true entity
      not counted);
    - ``continuous_mean_expectation`` (MRR only): ``ln(N) / (N - 1)`` at the mean number of candidates ``N``, the
      expectation of ``1/r`` for a continuous uniform ``r`` on ``[1, N]``;
    - ``adjusted_explained_by``, ``z_explained_by``: the first of ``kgeval`` (closed form on ``N_i``),
      ``n_minus_1`` and ``continuous_mean`` that reproduces the published value to a relative 1e-6, else ``none``.

    :param candidates: config dataset key -> shape: (n,), the number of candidates of every ranking task of the
        evaluated split and side (:func:`kgeval.lp.candidates.candidate_counts`)
    :param datasets: the release's dataset name -> config dataset key
    :param metrics: the base metrics to check
    :param num_samples: simulated random rankings per dataset
    :param seed: seed of the simulation
    :return: one row per (dataset, metric), sorted
    """
    released = _dataset_rows(collated, datasets)
    rows = []
    for dataset, group in released.groupby("dataset", sort=True):
        if dataset not in candidates:
            raise ValueError(f"expectation_check: no candidate counts for dataset {dataset!r}")
        counts = np.asarray(candidates[dataset], dtype=np.int64)
        if int(round(group["count"].iloc[0])) != counts.size:
            raise ValueError(
                f"expectation_check: dataset {dataset!r} has {counts.size} ranking tasks, the release {group['count'].iloc[0]:g}"
            )
        sampled = sample_metric_values({key: METRICS[key].instantiate() for key in metrics}, counts, num_samples, seed)
        for key in metrics:
            rows.append(_expectation_row(dataset, key, group, counts, sampled, num_samples))
    return pd.DataFrame(rows).sort_values(["dataset", "metric"], kind="stable").reset_index(drop=True)


# ----------------------------------------------------------------------------------------------------------------------
# file wrappers for the Snakemake scripts


def write_released_metrics(
    *,
    data_dir: str | os.PathLike | None,
    folder: str | None,
    expectations_path: str | os.PathLike,
    datasets: Mapping[str, str],
    out: str | os.PathLike,
    split: str = "test",
    side: str = "both",
) -> pd.DataFrame:
    """Read the release and kgeval's expectations; write :func:`released_metrics` (a collated metrics table)."""
    path = collated_path(data_dir, folder)
    logger.info("S2 release: %s", path)
    table = released_metrics(read_collated(path), read_tsv(expectations_path), datasets, split=split, side=side)
    write_tsv(table, out, sort_by=["dataset", "model", "seed", "split", "side", "rank_type", "metric"])
    return table


def write_published_comparison(
    *,
    data_dir: str | os.PathLike | None,
    folder: str | None,
    metrics_path: str | os.PathLike,
    datasets: Mapping[str, str],
    out: str | os.PathLike,
) -> pd.DataFrame:
    """Write :func:`published_comparison` of the release and kgeval's released metrics table."""
    table = published_comparison(read_collated(collated_path(data_dir, folder)), read_tsv(metrics_path), datasets)
    write_tsv(table, out, sort_by=["dataset", "metric", "model"])
    return table


def write_expectation_check(
    *,
    data_dir: str | os.PathLike | None,
    folder: str | None,
    dataset_specs: Mapping[str, Mapping],
    datasets: Mapping[str, str],
    out: str | os.PathLike,
    split: str = "test",
    num_samples: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Load every mapped dataset, count its candidates (no model), and write :func:`expectation_check`.

    :param dataset_specs: config dataset key -> its ``datasets`` entry
    """
    from kgeval.lp.candidates import candidate_counts
    from kgeval.lp.datasets import load_dataset

    candidates = {}
    for key in sorted(set(datasets.values())):
        data = load_dataset(key, dict(dataset_specs[key]), data_dir)
        candidates[key] = candidate_counts(data, split)["num_candidates"].to_numpy()
    table = expectation_check(
        read_collated(collated_path(data_dir, folder)), candidates, datasets, num_samples=num_samples, seed=seed
    )
    write_tsv(table, out, sort_by=["dataset", "metric"])
    return table
