"""S2 (Hoyt et al. 2022, Sec. 4.3): the models x datasets grid of base, adjusted and z-scored metrics.

From the collated metrics table, the expectations table and the dataset summaries, :func:`grid_table` gives one row
per (dataset, model, metric family) with the family's base metric (e.g. MRR), adjusted index (AMRR) and z-score
(ZMRR), averaged over seeds, next to the dataset's size. :func:`size_correlation` measures the paper's claim that
adjusted metrics remove the dependence on dataset size: Spearman's rho (:func:`scipy.stats.spearmanr`) of each
metric against the mean number of candidates. :func:`plot_family` draws the paper's Fig. 1 for one family.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from kgeval.io import read_tsv, write_tsv
from kgeval.metrics import METRICS, get_metric, supported_rank_types

__all__ = [
    "Family",
    "DEFAULT_FAMILIES",
    "VARIANTS",
    "family_slug",
    "parse_families",
    "mean_num_candidates",
    "grid_table",
    "size_correlation",
    "plot_family",
    "GridSelection",
    "write_grid_table",
    "write_size_correlation",
    "write_family_figure",
]

#: the three variants of a family, in figure order
VARIANTS: tuple[str, ...] = ("base", "adjusted", "z")
_VARIANT_TITLES = {"base": "base metric", "adjusted": "adjusted index", "z": "z-score"}


class Family(NamedTuple):
    """A base metric with its adjusted index and its z-score (registry keys)."""

    base: str
    adjusted: str
    z: str


#: the four families of the issue: the paper's Fig. 1 (MRR) and its MR, Hits@10 and GMR counterparts
DEFAULT_FAMILIES: tuple[Family, ...] = (
    Family("mrr", "amrr", "zmrr"),
    Family("mr", "amri", "zmr"),
    Family("hits@10", "ah@10", "zh@10"),
    Family("gmr", "agmri", "zgmr"),
)


def family_slug(base: str) -> str:
    """A file- and rule-name-safe name of a family (``hits@10`` -> ``hits_at_10``)."""
    return base.replace("@", "_at_")


def parse_families(families: Iterable[Mapping[str, str] | Sequence[str]] | None) -> tuple[Family, ...]:
    """Families from config entries ``{base: mrr, adjusted: amrr, z: zmrr}``; checks the keys and their relation.

    :raises ValueError: naming the entry, if a key is unknown or the adjusted/z metric does not derive from the base
    """
    if families is None:
        return DEFAULT_FAMILIES
    out = []
    for i, entry in enumerate(families):
        fam = Family(**entry) if isinstance(entry, Mapping) else Family(*entry)
        for variant, key in zip(VARIANTS, fam):
            try:
                spec = get_metric(key)
            except KeyError as error:
                raise ValueError(f"studies.s2.families[{i}].{variant}: {error.args[0]}") from None
            expected_kind = {"base": "base", "adjusted": "adjusted", "z": "z"}[variant]
            if spec.kind != expected_kind:
                raise ValueError(f"studies.s2.families[{i}].{variant}: {key!r} is a {spec.kind} metric, not {variant}")
            if variant != "base" and spec.base != fam.base:
                raise ValueError(
                    f"studies.s2.families[{i}].{variant}: {key!r} adjusts {spec.base!r}, "
                    f"not the family base {fam.base!r}"
                )
        out.append(fam)
    return tuple(out)


def mean_num_candidates(expectations: pd.DataFrame) -> pd.Series:
    """The mean number of candidates per (dataset, split, side), recovered exactly from the closed form E[MR].

    Under uniform ranks, E[MR] = mean((N_i + 1) / 2), so mean(N_i) = 2 E[MR] - 1.

    :param expectations: the expectations table (``dataset, split, side, metric, n_ranks, expectation, ...``)
    :return: indexed by (dataset, split, side)
    """
    mr = expectations[expectations["metric"] == "mr"]
    if mr.empty:
        raise ValueError("the expectations table has no 'mr' rows, which give the mean number of candidates")
    return (2.0 * mr.set_index(["dataset", "split", "side"])["expectation"] - 1.0).rename("mean_num_candidates")


def _read_summaries(summaries: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    rows = []
    for dataset, frame in summaries.items():
        if "num_entities" not in frame.columns:
            raise ValueError(f"summary of dataset {dataset!r} lacks column 'num_entities'")
        test = frame[frame["split"] == "test"] if "split" in frame.columns else frame
        rows.append(
            {
                "dataset": dataset,
                "num_entities": int(frame["num_entities"].max()),
                "num_test_triples": int(test["num_triples"].sum()) if "num_triples" in frame.columns else -1,
            }
        )
    return pd.DataFrame(rows, columns=["dataset", "num_entities", "num_test_triples"])


def _select(values: Sequence[str] | None, present: Iterable[str], what: str) -> list[str]:
    present = sorted(set(present))
    if not values:
        return present
    missing = [v for v in values if v not in present]
    if missing:
        raise ValueError(f"studies.s2.{what}: {missing} not in the metrics table; present: {', '.join(present)}")
    return list(values)


def grid_table(
    metrics: pd.DataFrame,
    expectations: pd.DataFrame,
    summaries: Mapping[str, pd.DataFrame],
    families: Sequence[Family] = DEFAULT_FAMILIES,
    split: str = "test",
    side: str = "both",
    rank_type: str = "realistic",
    datasets: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per (dataset, model, family): base, adjusted and z value (mean and std over seeds) and dataset size.

    :param metrics: the collated metrics table (``dataset, model, seed, split, side, rank_type, metric, value``)
    :param expectations: the expectations table (gives the mean number of candidates and the base metric's
        expectation under random ranking)
    :param summaries: dataset key -> its ``summary.tsv`` (gives ``num_entities``)
    :param families: the metric families
    :param split: evaluation split
    :param side: head, tail or both
    :param rank_type: rank type of every variant (the adjusted and z metrics exist for realistic ranks only)
    :param datasets: datasets to include (default: all in the metrics table)
    :param models: models to include (default: all in the metrics table)
    :return: columns ``dataset, num_entities, num_test_triples, mean_num_candidates, n_ranks, model, family,
        n_seeds, {variant}_metric, {variant}, {variant}_std`` for each variant and ``base_expectation``; sorted by
        dataset size
    """
    for fam in families:
        for key in fam:
            if rank_type not in supported_rank_types(key):
                raise ValueError(f"metric {key!r} is not defined for {rank_type} ranks ({supported_rank_types(key)})")
    sel = metrics[(metrics["split"] == split) & (metrics["side"] == side) & (metrics["rank_type"] == rank_type)]
    if sel.empty:
        raise ValueError(f"no metrics for split={split!r}, side={side!r}, rank_type={rank_type!r}")
    datasets = _select(datasets, sel["dataset"], "datasets")
    models = _select(models, sel["model"], "models")
    sel = sel[sel["dataset"].isin(datasets) & sel["model"].isin(models)]
    missing_summaries = sorted(set(datasets) - set(summaries))
    if missing_summaries:
        raise ValueError(f"no dataset summary for {missing_summaries}")
    sizes = _read_summaries({d: summaries[d] for d in datasets}).set_index("dataset")
    exp = expectations[(expectations["split"] == split) & (expectations["side"] == side)]
    candidates = mean_num_candidates(exp).droplevel(["split", "side"])
    n_ranks = exp[exp["metric"] == "mr"].set_index("dataset")["n_ranks"]
    exp_value = exp.set_index(["dataset", "metric"])["expectation"]
    rows = []
    for (dataset, model), frame in sel.groupby(["dataset", "model"], sort=True):
        if dataset not in candidates.index:
            raise ValueError(
                f"the expectations table has no rows for dataset {dataset!r}, split {split!r}, side {side!r}"
            )
        by_metric = frame.groupby("metric")["value"]
        means, stds, counts = by_metric.mean(), by_metric.std(ddof=1), by_metric.count()
        for fam in families:
            row = {
                "dataset": dataset,
                "num_entities": int(sizes.loc[dataset, "num_entities"]),
                "num_test_triples": int(sizes.loc[dataset, "num_test_triples"]),
                "mean_num_candidates": float(candidates.loc[dataset]),
                "n_ranks": int(n_ranks.loc[dataset]),
                "model": model,
                "family": fam.base,
            }
            for variant, key in zip(VARIANTS, fam):
                if key not in means.index:
                    raise ValueError(f"metric {key!r} missing for {dataset}/{model} in the metrics table")
                row[f"{variant}_metric"] = key
                row[variant] = float(means[key])
                row[f"{variant}_std"] = float(stds[key]) if counts[key] > 1 else float("nan")
            row["n_seeds"] = int(counts[fam.base])
            row["base_expectation"] = float(exp_value.get((dataset, fam.base), float("nan")))
            rows.append(row)
    columns = ["dataset", "num_entities", "num_test_triples", "mean_num_candidates", "n_ranks", "model", "family"]
    columns += ["n_seeds"] + [f"{v}{s}" for v in VARIANTS for s in ("_metric", "", "_std")] + ["base_expectation"]
    out = pd.DataFrame(rows, columns=columns)
    family_order = {fam.base: i for i, fam in enumerate(families)}
    out["_f"] = out["family"].map(family_order)
    out = out.sort_values(["num_entities", "dataset", "model", "_f"], kind="stable").drop(columns="_f")
    return out.reset_index(drop=True)


def _spearman(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    mask = np.isfinite(x) & np.isfinite(y)
    x, y = x[mask], y[mask]
    if x.size < 3 or np.unique(x).size < 2 or np.unique(y).size < 2:
        return float("nan"), float("nan")
    from scipy import stats  # here, not at the top: the grid table and figure jobs never need SciPy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        result = stats.spearmanr(x, y)
    return float(result.statistic), float(result.pvalue)


def size_correlation(grid: pd.DataFrame, size_column: str = "mean_num_candidates") -> pd.DataFrame:
    """Spearman's rho between each metric and dataset size, over all (dataset, model) points and per model.

    A metric whose value falls as datasets grow (MRR in the paper) has rho < 0; a size-invariant one has rho near 0.
    With few datasets the per-model rho takes only a few values (with 3 datasets: -1, -0.5, 0.5, 1), so read the
    pooled row first.

    :param grid: the output of :func:`grid_table`
    :param size_column: the size measure (``mean_num_candidates`` or ``num_entities``)
    :return: columns ``family, variant, metric, scope, n_points, n_datasets, rho, pvalue`` where ``scope`` is
        ``all models`` or a model key; rho/pvalue are NaN where undefined (fewer than 3 points or a constant input)
    """
    rows = []
    for (family, variant), sub in _long(grid).groupby(["family", "variant"], sort=False):
        scopes = [("all models", sub)] + [(m, s) for m, s in sub.groupby("model", sort=True)]
        for scope, frame in scopes:
            rho, p = _spearman(frame[size_column].to_numpy(float), frame["value"].to_numpy(float))
            rows.append(
                {
                    "family": family,
                    "variant": variant,
                    "metric": frame["metric"].iloc[0],
                    "scope": scope,
                    "n_points": int(len(frame)),
                    "n_datasets": int(frame["dataset"].nunique()),
                    "rho": rho,
                    "pvalue": p,
                }
            )
    return pd.DataFrame(
        rows, columns=["family", "variant", "metric", "scope", "n_points", "n_datasets", "rho", "pvalue"]
    )


def _long(grid: pd.DataFrame) -> pd.DataFrame:
    """shape: one row per (dataset, model, family, variant) with ``metric, value, std``."""
    frames = []
    keep = ["dataset", "num_entities", "mean_num_candidates", "model", "family", "base_expectation"]
    for variant in VARIANTS:
        f = grid[keep].copy()
        f["variant"] = variant
        f["metric"] = grid[f"{variant}_metric"]
        f["value"] = grid[variant]
        f["std"] = grid[f"{variant}_std"]
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


def plot_family(grid: pd.DataFrame, family: str, pdf_path: str | os.PathLike, png_path: str | os.PathLike) -> None:
    """The paper's Fig. 1 for one family: base, adjusted and z value against dataset size, side by side.

    One colour per dataset, one marker per model; x is the mean number of candidates (log scale), with a small
    horizontal offset per model so that models on the same dataset do not hide each other. The base panel marks
    each dataset's expectation under random ranking (black bar); the other panels mark it at 0.
    """
    from kgeval.plotting import category_colors, category_markers, log_axis, new_figure, save_figure

    sub = grid[grid["family"] == family]
    if sub.empty:
        raise ValueError(f"family {family!r} is not in the grid table; present: {sorted(grid['family'].unique())}")
    datasets = list(dict.fromkeys(sub.sort_values(["num_entities", "dataset"])["dataset"]))
    models = sorted(sub["model"].unique())
    colors, markers = category_colors(datasets), category_markers(models)
    offsets = {m: 10 ** (0.04 * (i - (len(models) - 1) / 2)) for i, m in enumerate(models)}
    fig, axes = new_figure(1, 3, width=4.0, height=3.4)
    for ax, variant in zip(axes[0], VARIANTS):
        key = sub[f"{variant}_metric"].iloc[0]
        for _, row in sub.iterrows():
            x = row["mean_num_candidates"] * offsets[row["model"]]
            ax.errorbar(
                x,
                row[variant],
                yerr=None if np.isnan(row[f"{variant}_std"]) else row[f"{variant}_std"],
                marker=markers[row["model"]],
                color=colors[row["dataset"]],
                markersize=7,
                markeredgecolor="black",
                markeredgewidth=0.5,
                linestyle="none",
            )
        if variant == "base":
            ref = sub.drop_duplicates("dataset")
            ax.scatter(ref["mean_num_candidates"], ref["base_expectation"], marker="_", s=400, color="black", zorder=3)
        else:
            ax.axhline(0.0, color="black", linewidth=0.8, linestyle="--")
        log_axis(ax, "x")
        ax.set_xlabel("mean number of candidates (log)")
        ax.set_ylabel(METRICS[key].label)
        ax.set_title(f"{_VARIANT_TITLES[variant]}: {METRICS[key].label}")
        if variant == "base" and key in ("mr", "gmr", "hmr", "medr"):
            log_axis(ax, "y", sub["base"].to_numpy(float))
    from matplotlib.lines import Line2D

    dataset_handles = [
        Line2D([], [], marker="o", linestyle="none", color=colors[d], markeredgecolor="black", label=d)
        for d in datasets
    ]
    model_handles = [
        Line2D([], [], marker=markers[m], linestyle="none", color="grey", markeredgecolor="black", label=m)
        for m in models
    ]
    random_handle = [
        Line2D([], [], marker="_", linestyle="none", color="black", markersize=14, label="random (expected)")
    ]
    # figure legends placed "outside" are part of the constrained layout, so nothing is cut off
    fig.legend(handles=dataset_handles + random_handle, title="dataset (by size)", loc="outside right upper")
    fig.legend(handles=model_handles, title="model", loc="outside right lower")
    save_figure(fig, pdf_path, png_path)


# ----------------------------------------------------------------------------------------------------------------------
# file wrappers for the Snakemake scripts


def _summaries_from_paths(paths: Iterable[str | os.PathLike]) -> dict[str, pd.DataFrame]:
    """``results/datasets/{dataset}/summary.tsv`` -> {dataset: table}."""
    return {Path(p).parent.name: read_tsv(p) for p in paths}


@dataclass(frozen=True)
class GridSelection:
    """Which cells and columns :func:`grid_table` builds: the metric families, the split, side and rank type, and
    the datasets and models (``None``: every one in the metrics table)."""

    families: Iterable[Mapping[str, str]] | None = None
    split: str = "test"
    side: str = "both"
    rank_type: str = "realistic"
    datasets: Sequence[str] | None = None
    models: Sequence[str] | None = None


def write_grid_table(
    metrics_path: str | os.PathLike,
    expectations_path: str | os.PathLike,
    summary_paths: Iterable[str | os.PathLike],
    out: str | os.PathLike,
    selection: GridSelection = GridSelection(),
) -> pd.DataFrame:
    """Read the inputs, build :func:`grid_table`, write it as TSV (rows ordered by dataset size)."""
    grid = grid_table(
        read_tsv(metrics_path),
        read_tsv(expectations_path),
        _summaries_from_paths(summary_paths),
        families=parse_families(selection.families),
        split=selection.split,
        side=selection.side,
        rank_type=selection.rank_type,
        datasets=selection.datasets,
        models=selection.models,
    )
    write_tsv(grid, out, sort_by=[])  # already sorted by dataset size, model, family
    return grid


def write_size_correlation(
    grid_path: str | os.PathLike, out: str | os.PathLike, size_column: str = "mean_num_candidates"
) -> pd.DataFrame:
    """Read the grid table, compute :func:`size_correlation`, write it as TSV."""
    table = size_correlation(read_tsv(grid_path), size_column=size_column)
    write_tsv(table, out, sort_by=[])  # family order, then variant, then pooled scope first
    return table


def write_family_figure(
    grid_path: str | os.PathLike, family: str, pdf_path: str | os.PathLike, png_path: str | os.PathLike
) -> None:
    """Read the grid table and draw :func:`plot_family`."""
    plot_family(read_tsv(grid_path), family, pdf_path, png_path)
