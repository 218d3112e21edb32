"""Figures of S4 (paper 003): system ranking (Fig. 3), tau against pooling depth (Figs. 4-5), per-relation MRR
(Fig. 6), stability (Fig. 7) and discriminative power (Fig. 8). Each reads the tables the rules write.
"""

from __future__ import annotations

import os
import string
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.ticker import LogLocator, MaxNLocator, NullLocator

from kgeval.io import read_tsv
from kgeval.studies.s4.labels import level_depth
from kgeval.plotting import category_colors, category_markers, new_figure, save_figure

from kgeval.studies.s4.analysis import deepest_level, kendall_tau, system_vector
from kgeval.studies.s4.metrics import answer_values

__all__ = [
    "METRIC_LABELS",
    "plot_system_ranking",
    "plot_tau_depth",
    "plot_micro_macro",
    "plot_relation_mrr",
    "plot_stability",
    "plot_discriminative",
]

PathLike = str | os.PathLike

#: axis/legend names of the metric keys
METRIC_LABELS = {"mr": "MR", "mrr": "MRR", "map@20": "MAP@20", "ndcg@20": "nDCG@20"}


def _label(family: str, metric: str) -> str:
    name = METRIC_LABELS.get(metric, metric.replace("hits@", "Hits@"))
    return f"{family.capitalize()} {name}"


def _level_label(level: str) -> str:
    if level == "original":
        return "original test labels"
    if level == "sparse":
        return "sparse labels"
    return f"pooled labels (depth {level_depth(level)})"


def _codes(n: int) -> list[str]:
    letters = string.ascii_uppercase
    return [letters[i] if i < 26 else f"{letters[i // 26 - 1]}{letters[i % 26]}" for i in range(n)]


def plot_system_ranking(*, metrics_path: PathLike, dataset: str, pdf: PathLike, png: PathLike) -> None:
    """Fig. 3: micro MRR per system on the original, sparse and pooled labels, systems sorted by the original."""
    metrics = read_tsv(metrics_path)
    pooled = deepest_level(sorted(set(metrics["level"])))
    original = system_vector(metrics, "original", "micro", "mrr").sort_values(ascending=False, kind="stable")
    systems = list(original.index)
    codes = _codes(len(systems))
    fig, axes = new_figure(1, 1, width=max(5.0, 0.45 * len(systems) + 2), height=3.4)
    ax = axes[0, 0]
    x = np.arange(len(systems))
    levels = ["original", "sparse", pooled]
    colors = category_colors(levels)
    markers = category_markers(levels)
    for level in levels:
        values = system_vector(metrics, level, "micro", "mrr").reindex(systems)
        ax.plot(x, values.to_numpy(), marker=markers[level], color=colors[level], label=_level_label(level))
    ax.set_xticks(x, [f"{c}\n{s}" for c, s in zip(codes, systems, strict=True)], fontsize=7)
    ax.set_xlabel("system (sorted by micro MRR on the original labels)")
    ax.set_ylabel("micro MRR")
    sparse = system_vector(metrics, "sparse", "micro", "mrr").reindex(systems)
    deep = system_vector(metrics, pooled, "micro", "mrr").reindex(systems)
    tau_so = kendall_tau(sparse.to_numpy(), original.to_numpy())[0]
    tau_ps = kendall_tau(deep.to_numpy(), sparse.to_numpy())[0]
    ax.set_title(
        f"{dataset}: micro MRR per system\nKendall's tau: sparse vs original {tau_so:.4f}, "
        f"pooled vs sparse {tau_ps:.4f}"
    )
    ax.legend()
    save_figure(fig, pdf, png)


def _depth_axis(ax, table: pd.DataFrame) -> None:
    ax.set_xlabel("pooling depth (0 = sparse labels)")
    ax.set_ylabel("Kendall's tau to the sparse-label ranking")
    ax.set_xticks(sorted(set(table["depth"])))
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_ylim(-1.05, 1.05)


def plot_tau_depth(
    *,
    tau_path: PathLike,
    dataset: str,
    pdf: PathLike,
    png: PathLike,
    metrics: Sequence[str] = ("mr", "mrr", "hits@1", "hits@3", "hits@10"),
) -> None:
    """Fig. 4: tau between the sparse and the pooled micro rankings against pooling depth, per micro metric."""
    table = read_tsv(tau_path)
    table = table.loc[(table["depth"] >= 0) & (table["family"] == "micro") & table["metric"].isin(metrics)]
    fig, axes = new_figure(1, 1, width=5.0, height=3.4)
    ax = axes[0, 0]
    names = [m for m in metrics if m in set(table["metric"])]
    colors, markers = category_colors(names), category_markers(names)
    for metric in names:
        part = table.loc[table["metric"] == metric].sort_values("depth")
        ax.plot(part["depth"], part["tau"], marker=markers[metric], color=colors[metric], label=_label("micro", metric))
    _depth_axis(ax, table)
    ax.set_title(f"{dataset}: micro metrics, sparse vs pooled labels")
    ax.legend()
    save_figure(fig, pdf, png)


def plot_micro_macro(
    *, tau_path: PathLike, dataset: str, pdf: PathLike, png: PathLike, metrics: Sequence[str] = ("mrr", "hits@10")
) -> None:
    """Fig. 5: tau against pooling depth for micro and macro MRR and Hits@10."""
    table = read_tsv(tau_path)
    table = table.loc[(table["depth"] >= 0) & table["metric"].isin(metrics)]
    fig, axes = new_figure(1, 1, width=5.0, height=3.4)
    ax = axes[0, 0]
    colors = category_colors(list(metrics))
    for metric in metrics:
        for family, style, marker in (("micro", "-", "o"), ("macro", "--", "s")):
            part = table.loc[(table["metric"] == metric) & (table["family"] == family)].sort_values("depth")
            if part.empty:
                continue
            ax.plot(
                part["depth"],
                part["tau"],
                linestyle=style,
                marker=marker,
                color=colors[metric],
                label=_label(family, metric),
            )
    _depth_axis(ax, table)
    ax.set_title(f"{dataset}: micro vs macro metrics")
    ax.legend()
    save_figure(fig, pdf, png)


def plot_relation_mrr(
    *, answers_path: PathLike, metrics_path: PathLike, system: str | None, dataset: str, pdf: PathLike, png: PathLike
) -> None:
    """Fig. 6: the distribution over relations of one system's micro MRR on the original, sparse and pooled labels.

    :param system: the system to show; None takes the best by micro MRR on the original labels (the paper: HittER)
    """
    answers = pd.read_parquet(answers_path)
    metrics = read_tsv(metrics_path)
    if system is None:
        system = system_vector(metrics, "original", "micro", "mrr").idxmax()
    if system not in set(answers["system"]):
        raise ValueError(f"plot_relation_mrr: system {system!r} is not among {sorted(set(answers['system']))}")
    pooled = deepest_level(sorted(set(answers["level"])))
    levels = ["original", "sparse", pooled]
    fig, axes = new_figure(1, 1, width=4.5, height=3.4)
    ax = axes[0, 0]
    data, counts = [], []
    for level in levels:
        part = answers.loc[(answers["level"] == level) & (answers["system"] == system)]
        per_relation = answer_values(part["rank"], ())["mrr"].groupby(part["relation"].to_numpy()).mean()
        data.append(per_relation.to_numpy())
        counts.append(len(per_relation))
    ax.boxplot(data, showmeans=True)
    ax.set_xticks(
        np.arange(1, len(levels) + 1),
        [f"{_level_label(lv)}\n({n} relations)" for lv, n in zip(levels, counts, strict=True)],
        fontsize=7,
    )
    ax.set_ylabel("micro MRR per relation")
    ax.set_title(f"{dataset}: {system}, micro MRR over relations")
    save_figure(fig, pdf, png)


def _levels_in_order(levels) -> list[str]:
    """original, sparse, depth1, depth2, ... (the order of the paper's panels)."""
    return sorted(set(levels), key=lambda level: -1 if level == "original" else level_depth(level))


def _metric_styles(table: pd.DataFrame) -> dict[tuple[str, str], dict]:
    metrics = sorted(set(table["metric"]), key=lambda m: (m not in ("mr", "mrr"), m))
    colors, markers = category_colors(metrics), category_markers(metrics)
    return {
        (family, metric): {
            "color": colors[metric],
            "marker": markers[metric],
            "linestyle": "-" if family == "micro" else "--",
        }
        for family in ("micro", "macro")
        for metric in metrics
    }


def plot_stability(*, stability_path: PathLike, dataset: str, pdf: PathLike, png: PathLike) -> None:
    """Fig. 7: mean Kendall's tau between rankings on random question subsets and on all questions, per level."""
    table = read_tsv(stability_path)
    levels = _levels_in_order(table["level"])
    fig, axes = new_figure(1, len(levels), width=4.4, height=3.4, sharey=True)
    styles = _metric_styles(table)
    for ax, level in zip(axes[0], levels, strict=True):
        part = table.loc[table["level"] == level]
        for (family, metric), group in part.groupby(["family", "metric"], sort=False):
            group = group.sort_values("fraction")
            ax.plot(
                100 * group["fraction"],
                group["tau_mean"],
                markersize=3,
                label=_label(family, metric),
                **styles[(family, metric)],
            )
        ax.set_xlabel("subset size (% of the questions)")
        ax.set_title(f"{dataset}: {_level_label(level)}")
    axes[0, 0].set_ylabel("mean Kendall's tau to the full set")
    axes[0, -1].legend(fontsize=6, ncol=2)
    save_figure(fig, pdf, png)


def plot_discriminative(*, discriminative_path: PathLike, dataset: str, pdf: PathLike, png: PathLike) -> None:
    """Fig. 8: p-values of all system pairs sorted in descending order, per metric and level (log scale)."""
    table = read_tsv(discriminative_path)
    levels = _levels_in_order(table["level"])
    fig, axes = new_figure(1, len(levels), width=4.4, height=3.4, sharey=True)
    styles = _metric_styles(table)
    positive = table["pvalue"].to_numpy(dtype=float)
    positive = positive[positive > 0]
    # p-values that underflow to 0 are drawn one decade below the smallest positive one
    floor = max(10.0 ** (np.floor(np.log10(positive.min())) - 1), 1e-300) if len(positive) else 1e-16
    for ax, level in zip(axes[0], levels, strict=True):
        part = table.loc[table["level"] == level]
        for (family, metric), group in part.groupby(["family", "metric"], sort=False):
            p = np.sort(np.clip(group["pvalue"].to_numpy(dtype=float), floor, 1.0))[::-1]
            ax.plot(np.arange(1, len(p) + 1), p, markersize=3, label=_label(family, metric), **styles[(family, metric)])
        ax.set_yscale("log")
        ax.set_ylim(floor / 2, 2.0)
        ax.yaxis.set_major_locator(LogLocator(numticks=8))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("system pair (sorted by p-value, descending)")
        ax.set_title(f"{dataset}: {_level_label(level)}")
    axes[0, 0].set_ylabel("p-value (paired two-tailed t-test)")
    axes[0, -1].legend(fontsize=6, ncol=2)
    save_figure(fig, pdf, png)
