"""S3 figure: Hits@1 and AMRI per test split for every seed-mapping setting, one heatmap per (metric, model).

Rows are the settings (bias and training ratio, in the order of Table 3), columns the splits (name-based, then
attribute-based, then all test mappings). A cell is the mean over seeds; empty splits and skipped settings are
grey and marked ``n/a``. Hits@1 uses a sequential scale on [0, 1]; AMRI a diverging one on [-1, 1] centred at 0,
the value of random ranking, so a reader sees at a glance which splits lose most under bias. Splits with fewer than
``min_count`` (30, :data:`~kgeval.studies.s3.tables.MIN_SPLIT_SIZE`) test mappings (e.g. the "same" names left after a name-biased seed set took nearly all of them) are
grey and show their size instead of a value.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from kgeval.io import read_tsv
from kgeval.plotting import new_figure, save_figure
from kgeval.studies.s3.features import ATTR_SPLITS, NAME_SPLITS
from kgeval.studies.s3.sampling import BIASES
from kgeval.studies.s3.tables import MIN_SPLIT_SIZE, setting_label

__all__ = [
    "FIGURE_METRICS",
    "split_matrix",
    "plot_splits",
    "plot_splits_to_files",
    "mappings_table",
    "plot_mappings",
    "plot_mappings_to_files",
]

#: metric key -> (title, colour map, vmin, vmax)
FIGURE_METRICS: dict[str, tuple[str, str, float, float]] = {
    "hits@1": ("Hits@1", "viridis", 0.0, 1.0),
    "amri": ("AMRI", "RdBu", -1.0, 1.0),
}
_COLUMNS = (*NAME_SPLITS, *ATTR_SPLITS, "all")


def split_matrix(
    long: pd.DataFrame, dataset: str, model: str, metric: str, side: str, rank_type: str
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Mean metric per (setting, split) of one dataset and model.

    :returns: values shape (num_settings, 7) (NaN where missing), the mean number of test mappings of each cell
        (same shape, 0 where missing) and the setting labels
    """
    part = long[
        (long["dataset"] == dataset)
        & (long["model"] == model)
        & (long["metric"] == metric)
        & (long["side"] == side)
        & (long["rank_type"] == rank_type)
    ]
    settings = (
        long.loc[long["dataset"] == dataset, ["bias", "train_ratio"]]
        .drop_duplicates()
        .assign(_b=lambda t: t["bias"].map({b: i for i, b in enumerate(BIASES)}))
        .sort_values(["_b", "train_ratio"], ascending=[True, False])
    )
    mean = part.groupby(["bias", "train_ratio", "split"])["value"].mean()
    sizes = part.groupby(["bias", "train_ratio", "split"])["num_test"].mean()
    values = np.full((len(settings), len(_COLUMNS)), np.nan)
    counts = np.zeros((len(settings), len(_COLUMNS)))
    labels = []
    for i, (bias, ratio) in enumerate(settings[["bias", "train_ratio"]].itertuples(index=False)):
        labels.append(setting_label(bias, ratio))
        for j, split in enumerate(_COLUMNS):
            values[i, j] = mean.get((bias, ratio, split), np.nan)
            counts[i, j] = sizes.get((bias, ratio, split), 0)
    return values, counts, labels


def plot_splits(
    long: pd.DataFrame,
    dataset: str,
    models: Sequence[str],
    side: str = "left",
    rank_type: str = "realistic",
    title_note: str = "",
    min_count: int = MIN_SPLIT_SIZE,
):
    """Draw the heatmaps of one dataset; returns the figure.

    :param min_count: a cell of a split with fewer test mappings is grey and shows its size ``n=...`` instead of
        a value (with a handful of mappings Hits@1 is 0 or 1 by chance)
    """
    models = [m for m in models if (long["model"] == m).any()] or list(models)
    num_settings = len(long.loc[long["dataset"] == dataset, ["bias", "train_ratio"]].drop_duplicates())
    fig, axes = new_figure(len(FIGURE_METRICS), len(models), width=4.2, height=0.4 * max(num_settings, 2) + 1.8)
    for row, (metric, (title, cmap, vmin, vmax)) in enumerate(FIGURE_METRICS.items()):
        for col, model in enumerate(models):
            ax = axes[row, col]
            values, counts, labels = split_matrix(long, dataset, model, metric, side, rank_type)
            small = (counts > 0) & (counts < min_count)
            masked = np.ma.masked_where(np.isnan(values) | small, values)
            colormap = matplotlib_cmap(cmap)
            image = ax.imshow(masked, cmap=colormap, vmin=vmin, vmax=vmax, aspect="auto")
            for i in range(values.shape[0]):
                for j in range(values.shape[1]):
                    v = values[i, j]
                    if small[i, j]:  # too few test mappings for a stable value
                        text, v = f"n={counts[i, j]:.0f}", np.nan
                    else:
                        text = "n/a" if np.isnan(v) else f"{v:.2f}"
                    shade = 0.5 if np.isnan(v) else (v - vmin) / (vmax - vmin)
                    dark = not np.isnan(v) and (
                        (cmap == "viridis" and shade < 0.6) or (cmap == "RdBu" and (shade < 0.2 or shade > 0.8))
                    )
                    ax.text(j, i, text, ha="center", va="center", fontsize=7, color="white" if dark else "black")
            ax.set_xticks(range(len(_COLUMNS)), _COLUMNS, rotation=45, ha="right")
            ax.set_yticks(range(len(labels)), labels)
            ax.axvline(len(NAME_SPLITS) - 0.5, color="white", linewidth=2)
            ax.axvline(len(NAME_SPLITS) + len(ATTR_SPLITS) - 0.5, color="white", linewidth=2)
            ax.grid(False)
            ax.set_title(f"{model}: {title}")
            ax.set_xlabel("test split (name | attribute | all)")
            ax.set_ylabel("seed mappings (bias, train ratio)")
            fig.colorbar(image, ax=ax, shrink=0.8, label=title)
    note = f" - {title_note}" if title_note else ""
    fig.suptitle(f"S3 {dataset}: {side} side, {rank_type} ranks{note}")
    return fig


def matplotlib_cmap(name: str):
    """A copy of a colour map whose masked (missing) cells are light grey."""
    import matplotlib

    cmap = matplotlib.colormaps[name].copy()
    cmap.set_bad("#dddddd")
    return cmap


def plot_splits_to_files(
    metrics_path: str | os.PathLike,
    dataset: str,
    models: Sequence[str],
    pdf_out: str | os.PathLike,
    png_out: str | os.PathLike,
    side: str = "left",
    rank_type: str = "realistic",
    title_note: str = "",
) -> None:
    """Read the collated split metrics and save the dataset's heatmaps as PDF and PNG."""
    long = read_tsv(metrics_path)
    fig = plot_splits(long, dataset, models, side=side, rank_type=rank_type, title_note=title_note)
    save_figure(fig, pdf_out, png_out)


def mappings_table(features: pd.DataFrame, seeds: pd.DataFrame, bias: str, train_ratio: float) -> pd.DataFrame:
    """The table behind the paper's Fig. 1: every reference mapping with its ``s_name`` and ``n_attr`` and its role
    in one seed setting (``train``, ``valid`` or ``test``).

    :param features: the features table (``id1, id2, s_name, n_attr, name_split, attr_split``)
    :param seeds: the seeds table (``bias, train_ratio, role, id1, id2``) of one sampling seed
    :returns: columns ``id1, id2, s_name, n_attr, name_split, attr_split, role``, sorted by ``id1``
    """
    chosen = seeds[(seeds["bias"] == bias) & np.isclose(seeds["train_ratio"].astype(float), float(train_ratio))]
    roles = {(a, b): r for a, b, r in zip(chosen["id1"], chosen["id2"], chosen["role"])}
    table = features[["id1", "id2", "s_name", "n_attr", "name_split", "attr_split"]].copy()
    table["role"] = [roles.get((a, b), "test") for a, b in zip(table["id1"], table["id2"])]
    return table.sort_values(["id1", "id2"], kind="stable").reset_index(drop=True)


def plot_mappings(table: pd.DataFrame, dataset: str, setting: str = ""):
    """Fig. 1: every mapping as a point, name similarity (x; NA at -0.1) by mean attribute count (y, symmetric log
    scale when the counts are skewed: max > 10 x median), the seed mappings (train and valid) highlighted in red.

    A pair without attributes is drawn at y = 0 and says so in the title.
    """
    fig, axes = new_figure(1, 1, width=5.0, height=3.8)
    ax = axes[0, 0]
    x = table["s_name"].to_numpy(dtype=float)
    x = np.where(np.isnan(x), -0.1, x)
    y = table["n_attr"].to_numpy(dtype=float)
    has_attr = bool(np.isfinite(y).any())
    if not has_attr:
        y = np.zeros_like(x)
    jitter = np.random.default_rng(0).uniform(-0.008, 0.008, size=len(x))  # seeded: same figure every run
    seed = table["role"].isin(["train", "valid"]).to_numpy()
    ax.scatter(x[~seed] + jitter[~seed], y[~seed], s=3, alpha=0.35, color="#4c72b0", label="test mappings", rasterized=True)
    ax.scatter(x[seed] + jitter[seed], y[seed], s=6, alpha=0.8, color="#d62728", label="seed mappings", rasterized=True)
    finite = y[np.isfinite(y)]
    if has_attr and len(finite) and np.max(finite) > 10 * max(np.median(finite), 1e-9):
        ax.set_yscale("symlog", linthresh=1.0)
    ax.set_xlabel("name similarity s_name (NA at -0.1)")
    ax.set_ylabel("mean number of attributes n_attr" if has_attr else "(no attributes)")
    title = f"{dataset}: {len(table)} mappings"
    if setting:
        title += f", seeds of {setting}"
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper left", markerscale=2)
    return fig


def plot_mappings_to_files(
    features_path: str | os.PathLike,
    seeds_path: str | os.PathLike,
    dataset: str,
    bias: str,
    train_ratio: float,
    pdf_out: str | os.PathLike,
    png_out: str | os.PathLike,
    table_out: str | os.PathLike,
) -> pd.DataFrame:
    """Fig. 1 of one pair with the seeds of one setting (the industrial context), and the table behind it."""
    from kgeval.io import write_tsv

    table = mappings_table(read_tsv(features_path), read_tsv(seeds_path), bias, float(train_ratio))
    fig = plot_mappings(table, dataset, setting_label(bias, train_ratio))
    save_figure(fig, pdf_out, png_out)
    write_tsv(table, table_out, sort_by=["id1", "id2"])
    return table
