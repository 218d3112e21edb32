"""Figures of S4 (paper 003): relation distributions (Fig. 2), system ranking (Fig. 3), tau against pooling depth
(Figs. 4-5), per-relation MRR (Fig. 6), stability (Fig. 7) and discriminative power (Fig. 8). Each reads the tables
the rules write; Figs. 3-5 serve the model-based and the released-results runs alike.
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
    "plot_released_discriminative",
    "plot_relation_distribution",
    "plot_released_relation_mrr",
]

PathLike = str | os.PathLike

#: axis/legend names of the metric keys
METRIC_LABELS = {"mr": "MR", "mrr": "MRR", "map@20": "MAP@20", "ndcg@20": "nDCG@20"}


def _label(family: str, metric: str) -> str:
    name = METRIC_LABELS.get(metric, metric.replace("hits@", "Hits@"))
    return f"{family.capitalize()} {name}"


def _level_label(level: str, pooled: str = "pooled labels") -> str:
    """A level's name in a figure; ``pooled`` says what the pooled labels are (released or simulated)."""
    if level == "original":
        return "original test labels"
    if level == "sparse":
        return "sparse labels"
    return f"{pooled} (depth {level_depth(level)})"


def _codes(n: int) -> list[str]:
    letters = string.ascii_uppercase
    return [letters[i] if i < 26 else f"{letters[i // 26 - 1]}{letters[i % 26]}" for i in range(n)]


def plot_system_ranking(
    *, metrics_path: PathLike, dataset: str, pdf: PathLike, png: PathLike, pooled_labels: str = "pooled labels"
) -> None:
    """Fig. 3: micro MRR per system on the original, sparse and pooled labels, systems sorted by the original.

    :param pooled_labels: what the pooled labels are, as the legend names them (released or simulated)
    """
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
        ax.plot(x, values.to_numpy(), marker=markers[level], color=colors[level],
                label=_level_label(level, pooled_labels))
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
    pooled_labels: str = "pooled labels",
) -> None:
    """Fig. 4: tau between the sparse and the pooled micro rankings against pooling depth, per micro metric.

    :param pooled_labels: what the pooled labels are, as the title names them (released or simulated)
    """
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
    ax.set_title(f"{dataset}: micro metrics, sparse vs {pooled_labels}")
    ax.legend()
    save_figure(fig, pdf, png)


def plot_micro_macro(
    *,
    tau_path: PathLike,
    dataset: str,
    pdf: PathLike,
    png: PathLike,
    metrics: Sequence[str] = ("mrr", "hits@10"),
    pooled_labels: str = "pooled labels",
) -> None:
    """Fig. 5: tau against pooling depth for micro and macro MRR and Hits@10.

    :param pooled_labels: what the pooled labels are, as the title names them (released or simulated)
    """
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
    ax.set_title(f"{dataset}: micro vs macro metrics, sparse vs {pooled_labels}")
    ax.legend()
    save_figure(fig, pdf, png)


def plot_relation_mrr(
    *,
    answers_path: PathLike,
    metrics_path: PathLike,
    system: str | None,
    dataset: str,
    pdf: PathLike,
    png: PathLike,
    pooled_labels: str = "pooled labels",
) -> None:
    """Fig. 6: the distribution over relations of one system's micro MRR on the original, sparse and pooled labels.

    :param system: the system to show; None takes the best by micro MRR on the original labels (the paper: HittER)
    :param pooled_labels: what the pooled labels are, as the axis names them (released or simulated)
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
        [f"{_level_label(lv, pooled_labels)}\n({n} relations)" for lv, n in zip(levels, counts, strict=True)],
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


def plot_stability(
    *, stability_path: PathLike, dataset: str, pdf: PathLike, png: PathLike, pooled_labels: str = "pooled labels"
) -> None:
    """Fig. 7: mean Kendall's tau between rankings on random subsets and on the full set, per level.

    One row of panels per unit of sampling: discarded test triples (the paper's) first, discarded questions (kgeval's
    extension) below; tables without a ``unit`` column count as questions.
    """
    table = read_tsv(stability_path)
    if "unit" not in table.columns:
        table = table.assign(unit="questions")
    levels = _levels_in_order(table["level"])
    units = [u for u in ("triples", "questions") if u in set(table["unit"])]
    fig, axes = new_figure(len(units), len(levels), width=4.4, height=3.4, sharey=True)
    styles = _metric_styles(table)
    for row, unit in enumerate(units):
        for ax, level in zip(axes[row], levels, strict=True):
            part = table.loc[(table["level"] == level) & (table["unit"] == unit)]
            for (family, metric), group in part.groupby(["family", "metric"], sort=False):
                group = group.sort_values("fraction")
                ax.plot(
                    100 * group["fraction"],
                    group["tau_mean"],
                    markersize=3,
                    label=_label(family, metric),
                    **styles[(family, metric)],
                )
            what = "test triples (paper)" if unit == "triples" else "questions (extension)"
            ax.set_xlabel(f"subset size (% of the {unit})")
            ax.set_title(f"{dataset}: {_level_label(level, pooled_labels)}\ndiscarding {what}")
        axes[row, 0].set_ylabel("mean Kendall's tau to the full set")
    axes[0, -1].legend(fontsize=6, ncol=2)
    save_figure(fig, pdf, png)


def _discriminative_panels(
    table: pd.DataFrame,
    panels: Sequence[tuple[str, str]],
    column: str,
    pdf: PathLike,
    png: PathLike,
    log_scale: bool = True,
) -> None:
    """p-values of all system pairs sorted in descending order, one panel per ``(value of column, title)``.

    :param log_scale: a log y axis (tiny p-values stay apart); False draws p on [0, 1], where the area under a curve
        is the mean p-value the paper compares
    """
    fig, axes = new_figure(1, len(panels), width=4.4, height=3.4, sharey=True)
    styles = _metric_styles(table)
    positive = table["pvalue"].to_numpy(dtype=float)
    positive = positive[positive > 0]
    # p-values that underflow to 0 are drawn one decade below the smallest positive one
    floor = max(10.0 ** (np.floor(np.log10(positive.min())) - 1), 1e-300) if len(positive) else 1e-16
    for ax, (value, title) in zip(axes[0], panels, strict=True):
        part = table.loc[table[column] == value]
        for (family, metric), group in part.groupby(["family", "metric"], sort=False):
            p = np.sort(np.clip(group["pvalue"].to_numpy(dtype=float), floor, 1.0))[::-1]
            ax.plot(np.arange(1, len(p) + 1), p, markersize=3, label=_label(family, metric), **styles[(family, metric)])
        if log_scale:
            ax.set_yscale("log")
            ax.set_ylim(floor / 2, 2.0)
            ax.yaxis.set_major_locator(LogLocator(numticks=8))
            ax.yaxis.set_minor_locator(NullLocator())
        else:
            ax.set_ylim(0.0, 1.02)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("system pair (sorted by p-value, descending)")
        ax.set_title(title)
    # the test behind the p-values: the table's ``test`` column (the sign-flip test of kgeval's own systems), else the
    # paper's paired t-test (the released p-values)
    tests = sorted(set(table["test"].astype(str))) if "test" in table else ["paired two-tailed t-test"]
    axes[0, 0].set_ylabel(f"p-value ({'; '.join(tests)})")
    axes[0, -1].legend(fontsize=6, ncol=2)
    save_figure(fig, pdf, png)


def plot_discriminative(
    *, discriminative_path: PathLike, dataset: str, pdf: PathLike, png: PathLike, pooled_labels: str = "pooled labels"
) -> None:
    """Fig. 8: p-values of all system pairs sorted in descending order, per metric and level (log scale)."""
    table = read_tsv(discriminative_path)
    levels = _levels_in_order(table["level"])
    panels = [(lv, f"{dataset}: {_level_label(lv, pooled_labels)}") for lv in levels]
    _discriminative_panels(table, panels, "level", pdf, png)


def plot_released_discriminative(
    *,
    pairs_path: PathLike,
    pdf: PathLike,
    png: PathLike,
    metrics: Sequence[str] = ("mrr", "hits@10", "map@20", "ndcg@20"),
) -> None:
    """Fig. 8 from the released p-values: one panel per test set (FB15k-237, WN18RR, FB-Test-S-C), p on [0, 1] as in
    the paper (the area under a curve, i.e. the mean p-value, measures discriminative power)."""
    table = read_tsv(pairs_path)
    table = table.loc[table["metric"].isin(metrics)]
    titles = {"FB-Test-O": "FB15k-237 (FB-Test-O)", "WN18RR": "WN18RR", "FB-Test-S-C": "FB-Test-S-C"}
    order = [t for t in ("FB-Test-O", "WN18RR", "FB-Test-S-C") if t in set(table["test_set"])]
    order += sorted(set(table["test_set"]) - set(order))
    _discriminative_panels(table, [(t, titles.get(t, t)) for t in order], "test_set", pdf, png, log_scale=False)


def plot_relation_distribution(
    *, distribution_path: PathLike, kl_path: PathLike, pdf: PathLike, png: PathLike, num_classes: int = 50
) -> None:
    """Fig. 2: relation distributions of FB-Test-O, FB-Test-S and FB-Test-S-C, with the KL divergences.

    As the paper, low-frequency relations are merged: the ``num_classes - 1`` most frequent relations of FB-Test-O
    keep their own bar, the rest form one class (the last bar).
    """
    table = read_tsv(distribution_path)
    kl = read_tsv(kl_path).set_index(["first", "second"])["kl"]
    sets = ["FB-Test-O", "FB-Test-S", "FB-Test-S-C"]
    top = table.sort_values(["FB-Test-O", "relation"], ascending=[False, True], kind="stable")
    keep = list(top["relation"].iloc[: num_classes - 1])
    merged = table.assign(cls=np.where(table["relation"].isin(keep), table["relation"], "other"))
    counts = merged.groupby("cls")[sets].sum().reindex(keep + ["other"]).fillna(0)
    fig, axes = new_figure(len(sets), 1, width=9.0, height=2.2, sharex=True)
    x = np.arange(len(counts))
    notes = {
        "FB-Test-O": f"KL(FB15k-237 || FB-Test-O) = {kl.get(('FB15k-237', 'FB-Test-O'), np.nan):.4f}",
        "FB-Test-S": f"KL(FB-Test-O || FB-Test-S) = {kl.get(('FB-Test-O', 'FB-Test-S'), np.nan):.4f}",
        "FB-Test-S-C": f"KL(FB-Test-O || FB-Test-S-C) = {kl.get(('FB-Test-O', 'FB-Test-S-C'), np.nan):.4f}",
    }
    colors = category_colors(sets)
    for ax, name in zip(axes[:, 0], sets, strict=True):
        share = counts[name] / counts[name].sum()
        ax.bar(x, share.to_numpy(), color=colors[name], width=0.8)
        ax.set_ylabel("share of triples")
        ax.set_title(f"{name} ({int(counts[name].sum()):,} triples): {notes[name]}", fontsize=8)
    axes[-1, 0].set_xticks(x, [f"{i + 1}" if c != "other" else "other" for i, c in enumerate(counts.index)], fontsize=6)
    axes[-1, 0].set_xlabel(
        f"relation class (the {len(keep)} most frequent relations of FB-Test-O by rank, then all others merged)"
    )
    save_figure(fig, pdf, png)


def plot_released_relation_mrr(*, table_path: PathLike, system: str, pdf: PathLike, png: PathLike) -> None:
    """Fig. 6 from the release: one system's micro MRR per relation on FB-Test-O, FB-Test-S and FB-Test-S-C."""
    table = read_tsv(table_path)
    sets = [t for t in ("FB-Test-O", "FB-Test-S", "FB-Test-S-C") if t in set(table["test_set"])]
    data = [table.loc[table["test_set"] == t, "micro_mrr"].to_numpy(float) for t in sets]
    fig, axes = new_figure(1, 1, width=4.5, height=3.4)
    ax = axes[0, 0]
    ax.boxplot(data, showmeans=True)
    ax.set_xticks(
        np.arange(1, len(sets) + 1),
        [f"{t}\n({len(d)} relations,\nmedian {np.median(d):.4f})" for t, d in zip(sets, data, strict=True)],
        fontsize=7,
    )
    ax.set_ylabel("micro MRR per relation")
    ax.set_title(f"{system}: micro MRR over relations (released)")
    save_figure(fig, pdf, png)
