"""Figures of the S1 test-size sweep: metric against the number of test alignments, one line per #train.

Like the paper's Fig. 1: the line is the mean over split seeds, the shaded band spans the seeds' minimum to
maximum; MR and AMR use a logarithmic y-axis (the paper's figure notes its log scale). The AMR panel also draws AMR's
floor 2/(t+1), a perfect aligner's AMR, which falls with the test size t: a line near it falls with it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from kgeval.io import atomic_path, read_tsv  # noqa: E402
from kgeval.metrics import get_metric  # noqa: E402

__all__ = ["LOG_Y", "plot_testsize", "plot_testsize_to_files"]

#: metrics drawn with a logarithmic y-axis
LOG_Y: frozenset[str] = frozenset({"mr", "amr"})


def plot_testsize(
    table: pd.DataFrame,
    metrics: Sequence[str],
    side: str = "both",
    rank_type: str = "realistic",
    title: str | None = None,
) -> plt.Figure:
    """One panel per metric: value against ``num_test``, a line per ``num_train``, a min-max band over seeds.

    :param table: the collated sweep table (``num_train, seed, num_test, side, rank_type, metric, value``)
    :param metrics: the metric keys, one panel each
    :param side: which side to draw (``both`` pools left and right)
    :param rank_type: which rank type to draw
    :param title: the figure title
    """
    part = table[(table["side"] == side) & (table["rank_type"] == rank_type)]
    num_trains = sorted(part["num_train"].unique())
    palette = sns.color_palette("viridis", n_colors=max(len(num_trains), 1))
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.6), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        data = part[part["metric"] == metric]
        if data.empty:
            raise ValueError(
                f"the sweep table holds no values of metric {metric!r} (side={side}, rank_type={rank_type})"
            )
        for color, num_train in zip(palette, num_trains):
            block = data[data["num_train"] == num_train]
            stats = block.groupby("num_test")["value"].agg(["mean", "min", "max"]).sort_index()
            x = stats.index.to_numpy(dtype=float)
            ax.plot(x, stats["mean"], marker="o", markersize=3, color=color, label=str(num_train))
            ax.fill_between(x, stats["min"], stats["max"], color=color, alpha=0.25, linewidth=0)
        if metric == "amr":
            x = np.sort(data["num_test"].unique()).astype(float)
            ax.plot(x, 2.0 / (x + 1.0), color="0.4", linestyle="--", linewidth=1, label="floor 2/(t+1)")
        if metric in LOG_Y and (data["value"] > 0).all():
            ax.set_yscale("log")
        ax.set_xlabel("number of test alignments")
        ax.set_ylabel(get_metric(metric).label)
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = {}, {}
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    handles, labels = list(handles.values()), list(handles)
    fig.legend(handles, labels, title="#train", fontsize="small", title_fontsize="small", loc="center right")
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1 - 1.5 / fig.get_figwidth(), 1))  # leave room for the legend on the right
    return fig


def plot_testsize_to_files(
    collated_path: str | os.PathLike,
    pdf: str | os.PathLike,
    png: str | os.PathLike,
    metrics: Sequence[str],
    rank_type: str = "realistic",
    title: str | None = None,
) -> None:
    """Read the collated sweep table and save :func:`plot_testsize` as PDF and PNG (atomically)."""
    table = read_tsv(collated_path)
    fig = plot_testsize(table, metrics, rank_type=rank_type, title=title)
    for path in (pdf, png):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=150, format=os.path.splitext(str(path))[1].lstrip("."))
    plt.close(fig)
