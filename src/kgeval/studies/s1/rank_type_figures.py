"""S1 figures: metrics under the four rank types per model, and their change under entity-ID permutations."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from kgeval.io import read_tsv
from kgeval.metrics import RANK_TYPES, get_metric
from kgeval.studies.s1.rank_types import ORIGINAL_ORDER, REFERENCE_SCORERS, check_metrics

__all__ = ["plot_permutations", "plot_rank_types", "write_permutations_figure", "write_rank_types_figure"]

_RANK_TYPE_LABELS = {
    "optimistic": "optimistic",
    "realistic": "realistic",
    "pessimistic": "pessimistic",
    "nondeterministic": "non-deterministic",
}
#: metrics drawn on a log axis (the paper's Fig. 1 draws MR on one)
_LOG_METRICS = frozenset({"mr", "gmr", "hmr", "medr"})
#: the smallest relative spread between rank types a reader can see in the figure
_VISIBLE_SPREAD = 1e-3


def _select(frame: pd.DataFrame, source: str, **conditions) -> pd.DataFrame:
    for column, value in conditions.items():
        present = sorted(set(frame[column].astype(str)))
        if str(value) not in present:
            raise ValueError(f"{source}: no rows with {column} = {value!r}; present: {present}")
        frame = frame[frame[column].astype(str) == str(value)]
    return frame


def plot_rank_types(
    rank_types: pd.DataFrame,
    reference: pd.DataFrame | None,
    split: str,
    side: str,
    metrics: Sequence[str],
):
    """Each model's metric under the four rank types (markers) and their spread (bar), one panel per dataset x metric.

    The reference scorers are drawn at the right of each panel for scale: the constant scorer spans the whole range
    between the best and the worst value, the random scorer has no spread.

    :param rank_types: :func:`rank_types_table`
    :param reference: :func:`reference_scorer_table` (or ``None``)
    :return: the matplotlib figure
    """
    from kgeval.plotting import category_colors, category_markers, new_figure

    keys = check_metrics(metrics)
    frame = _select(rank_types, "rank types table", split=split, side=side)
    if reference is not None:
        reference = _select(reference, "reference scorer table", split=split, side=side)
    datasets = list(dict.fromkeys(frame["dataset"]))
    models = sorted(set(frame["model"]))
    colors = category_colors(list(RANK_TYPES))
    markers = category_markers(list(RANK_TYPES))
    fig, axes = new_figure(len(datasets), len(keys), width=max(3.6, 0.4 * (len(models) + 3)), height=2.8)
    for i, dataset in enumerate(datasets):
        for j, key in enumerate(keys):
            ax = axes[i, j]
            part = frame[(frame["dataset"] == dataset) & (frame["metric"] == key)]
            labels = list(models)
            series = []
            for model in models:
                rows = part[part["model"] == model]
                series.append([{t: float(r[t]) for t in RANK_TYPES} for _, r in rows.iterrows()])
            if reference is not None:
                for scorer in REFERENCE_SCORERS:
                    rows = reference[
                        (reference["dataset"] == dataset)
                        & (reference["metric"] == key)
                        & (reference["scorer"] == scorer)
                    ]
                    if len(rows):
                        labels.append(f"{scorer} scorer")
                        series.append([{r["rank_type"]: float(r["value"]) for _, r in rows.iterrows()}])
            for x, runs in enumerate(series):
                for run in runs:
                    values = np.array([run[t] for t in RANK_TYPES if t in run and np.isfinite(run[t])])
                    if values.size:
                        ax.vlines(x, values.min(), values.max(), color="0.6", linewidth=3, alpha=0.6, zorder=1)
                    for k, t in enumerate(RANK_TYPES):
                        if t in run and np.isfinite(run[t]):
                            # rank types side by side, so that equal values do not hide each other
                            offset = (k - (len(RANK_TYPES) - 1) / 2) * 0.12
                            ax.scatter(x + offset, run[t], color=colors[t], marker=markers[t], s=18, zorder=2,
                                       label=_RANK_TYPE_LABELS[t])
            if reference is not None and len(labels) > len(models):
                ax.axvline(len(models) - 0.5, color="0.3", linewidth=0.8, linestyle=":")
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels(labels, rotation=60, ha="right")
            ax.set_xlim(-0.6, len(labels) - 0.4)
            label = get_metric(key).label or key
            ax.set_ylabel(label)
            ax.set_title(f"{dataset}: {label}")
            if key in _LOG_METRICS:
                _log_axis(ax)
    handles, names = axes[0, 0].get_legend_handles_labels()
    unique = dict(zip(names, handles))
    fig.legend(unique.values(), unique.keys(), loc="outside lower center", ncols=len(unique), title="rank type")
    fig.suptitle(
        f"Rank definitions: {split} split, {side} side(s); grey bar = spread between the rank types\n"
        + _coincide_note(frame[frame["metric"].isin(keys)])
    )
    return fig


def _log_axis(ax) -> None:
    """A log y axis labelled 1, 2, 5 per decade over at most two decades of data, the decades alone over more (the
    real tier's MR spans 1 to 14,000): with more ticks than ``numticks`` the locator would draw none at all."""
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    ax.set_yscale("log")
    low, high = ax.dataLim.intervaly
    subs = (1.0, 2.0, 5.0) if high <= 100 * max(low, 1e-12) else (1.0,)
    ax.yaxis.set_major_locator(LogLocator(subs=subs, numticks=10))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())


def _coincide_note(frame: pd.DataFrame) -> str:
    """How far the trained models' rank types lie apart at most (relative), said in the title: markers that overlap
    in the figure are values that coincide, not values hidden by a bug."""
    if frame.empty:
        return ""
    values = frame[list(RANK_TYPES)].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = (values.max(axis=1) - values.min(axis=1)) / np.abs(frame["realistic"].to_numpy(dtype=float))
    largest = float(np.nanmax(spread))
    said = "so their markers coincide" if largest < _VISIBLE_SPREAD else "visibly"
    return f"models: the four rank types differ by at most {largest:.1g} (relative), {said}"


def plot_permutations(table: pd.DataFrame, split: str, side: str, metrics: Sequence[str]):
    """Change of each metric under the non-deterministic rank when the entity IDs are permuted.

    One panel per dataset x metric; x: scorers (reference scorers first, then the models), y: value under a
    permutation minus the value under the original entity IDs, one marker per permutation (and per model seed).

    :param table: :func:`permutation_table`
    :return: the matplotlib figure
    """
    from kgeval.plotting import category_colors, category_markers, new_figure

    keys = check_metrics(metrics)
    frame = _select(table, "permutation table", split=split, side=side, rank_type="nondeterministic")
    frame = frame[frame["order"] != ORIGINAL_ORDER]
    datasets = list(dict.fromkeys(frame["dataset"]))
    orders = sorted(set(frame["order"]))
    colors = category_colors(orders, palette="Dark2")
    markers = category_markers(orders)
    scorers = [s for s in REFERENCE_SCORERS if s in set(frame["scorer"])]
    scorers += sorted(set(frame.loc[frame["kind"] == "model", "scorer"]))
    fig, axes = new_figure(len(datasets), len(keys), width=max(3.6, 0.35 * (len(scorers) + 2)), height=2.8)
    for i, dataset in enumerate(datasets):
        for j, key in enumerate(keys):
            ax = axes[i, j]
            part = frame[(frame["dataset"] == dataset) & (frame["metric"] == key)]
            for x, scorer in enumerate(scorers):
                rows = part[part["scorer"] == scorer]
                for order in orders:
                    values = rows.loc[rows["order"] == order, "change"].to_numpy(dtype=float)
                    offset = (orders.index(order) - (len(orders) - 1) / 2) * 0.15
                    ax.scatter(np.full(values.shape, x + offset), values, color=colors[order], marker=markers[order],
                               s=22, label=order.replace("_", " "))
            ax.axhline(0.0, color="0.3", linewidth=0.8)
            ax.axvline(len([s for s in scorers if s in REFERENCE_SCORERS]) - 0.5, color="0.3", linewidth=0.8,
                       linestyle=":")
            ax.set_xticks(range(len(scorers)))
            ax.set_xticklabels([f"{s} scorer" if s in REFERENCE_SCORERS else s for s in scorers], rotation=60,
                               ha="right")
            label = get_metric(key).label or key
            ax.set_ylabel(f"change of {label}")
            ax.set_title(f"{dataset}: {label}")
    handles, names = axes[0, 0].get_legend_handles_labels()
    unique = dict(zip(names, handles))
    fig.legend(unique.values(), unique.keys(), loc="outside lower center", ncols=len(unique),
               title="entity IDs relabeled by")
    fig.suptitle(
        f"Non-deterministic rank under permuted entity IDs: {split} split, {side} side(s);\n"
        "change against the dataset's own IDs"
    )
    return fig


def write_rank_types_figure(
    rank_types_path: str | os.PathLike,
    reference_path: str | os.PathLike | None,
    pdf: str | os.PathLike,
    png: str | os.PathLike,
    split: str,
    side: str,
    metrics: Sequence[str],
) -> None:
    """Read the rank-types (and reference-scorer) tables and save :func:`plot_rank_types` as PDF and PNG."""
    from kgeval.plotting import save_figure

    reference = read_tsv(reference_path) if reference_path is not None else None
    save_figure(plot_rank_types(read_tsv(rank_types_path), reference, split, side, metrics), pdf, png)


def write_permutations_figure(
    table_path: str | os.PathLike,
    pdf: str | os.PathLike,
    png: str | os.PathLike,
    split: str,
    side: str,
    metrics: Sequence[str],
) -> None:
    """Read the permutation table and save :func:`plot_permutations` as PDF and PNG."""
    from kgeval.plotting import save_figure

    save_figure(plot_permutations(read_tsv(table_path), split, side, metrics), pdf, png)
