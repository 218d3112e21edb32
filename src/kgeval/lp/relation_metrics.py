"""Every rank metric per relation and per relation category, from the ranks tables (no re-scoring):
``tables/metrics_by_relation.tsv`` and a figure of MRR by category per model.

Categories are those of :mod:`kgeval.lp.relation_categories`, from the dataset's training triples.

Each group (one relation, or all relations of one category) gets :func:`kgeval.metrics.compute_metrics` of its rows
with the percentile-bootstrap interval of :mod:`kgeval.uncertainty.bootstrap_metrics`: the group's test triples are
resampled, a triple bringing its head and tail queries together, from a stream named after the dataset, split and
group, so every model of a dataset and split sees the same resamples. A group's ``both`` MRR weighted by its number of
queries (``2 * num_triples``) averages to the overall MRR of ``tables/metrics.tsv``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kgeval.io import write_tsv
from kgeval.lp.relation_categories import CATEGORIES, THRESHOLD, relation_categories
from kgeval.uncertainty.bootstrap_metrics import BootstrapSettings, metrics_with_intervals
from kgeval.uncertainty.model_comparisons import read_ranks_tables

__all__ = [
    "CATEGORIES",
    "THRESHOLD",
    "COLUMNS",
    "relation_categories",
    "metrics_by_relation",
    "metrics_by_relation_table",
    "metrics_by_relation_file",
    "plot_categories",
]

#: the columns of tables/metrics_by_relation.tsv, in order
COLUMNS: list[str] = [
    "dataset", "model", "seed", "split", "group", "relation", "category", "num_triples", "side", "rank_type",
    "metric", "value", "ci_low", "ci_high", "ci_method",
]
_SORT = ["dataset", "model", "seed", "split", "group", "relation", "side", "rank_type", "metric"]


def metrics_by_relation(
    ranks: pd.DataFrame,
    categories: pd.DataFrame,
    names: tuple[str, str],
    settings: BootstrapSettings,
    source: str = "ranks table",
) -> pd.DataFrame:
    """Every metric of one ranks table per relation (``group`` ``relation``) and per category (``category``).

    :param ranks: a ranks table (docs/design.md)
    :param categories: :func:`relation_categories` of the dataset's training triples
    :param names: the dataset and split (with the group, the name of each group's resample stream)
    :return: the columns of :data:`COLUMNS` but ``dataset, model, seed, split``; a category row's ``relation`` is the
        category, a relation row's ``category`` its category
    :raises ValueError: naming a relation of the ranks table that the training triples lack
    """
    category_of = dict(zip(categories["relation"], categories["category"]))
    unknown = sorted(set(ranks["relation"]) - set(category_of))
    if unknown:
        raise ValueError(f"{source}: relation {unknown[0]!r} has no training triple ({len(unknown)} relation(s)); "
                         "its category is undefined. Rank the dataset the model was trained on")
    ranks = ranks.assign(_category=ranks["relation"].map(category_of))
    frames = []
    for group, column in (("relation", "relation"), ("category", "_category")):
        for name, rows in ranks.groupby(column, sort=True):
            table = metrics_with_intervals(rows.drop(columns="_category"), names[0], f"{names[1]}/{group}/{name}",
                                           settings, source=f"{source} ({group} {name})")
            frames.append(table.assign(group=group, relation=name, category=category_of.get(name, name),
                                       num_triples=len(rows) // 2 if rows["side"].nunique() == 2 else len(rows)))
    return pd.concat(frames, ignore_index=True)


def metrics_by_relation_table(
    ranks_paths: Sequence[str | os.PathLike],
    training: Mapping[str, pd.DataFrame],
    settings: BootstrapSettings,
) -> pd.DataFrame:
    """``tables/metrics_by_relation.tsv``: :func:`metrics_by_relation` of every ranks table.

    :param ranks_paths: ``.../{dataset}/{model}/{seed}/{split}.parquet``
    :param training: dataset -> its training triples (labels: ``head, relation, tail``)
    :return: :data:`COLUMNS`, sorted
    """
    ranks, sources = read_ranks_tables(ranks_paths)
    categories = {dataset: relation_categories(triples) for dataset, triples in training.items()}
    frames = []
    for (dataset, model, split, seed), table in sorted(ranks.items()):
        part = metrics_by_relation(table, categories[dataset], (dataset, split), settings,
                                   sources[(dataset, model, split, seed)])
        frames.append(part.assign(dataset=dataset, model=model, seed=seed, split=split))
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.concat(frames, ignore_index=True)[COLUMNS]
    return out.sort_values(_SORT, kind="stable").reset_index(drop=True)


def metrics_by_relation_file(
    ranks_paths: Sequence[str | os.PathLike],
    out: str | os.PathLike,
    datasets: Mapping[str, Mapping[str, Any]],
    data_dir: str | None,
    settings: BootstrapSettings,
) -> pd.DataFrame:
    """:func:`metrics_by_relation_table` with each dataset's training triples loaded from its config entry, written
    atomically.

    :param datasets: dataset key -> its config entry (those of the ranks tables)
    """
    from kgeval.lp.datasets import load_dataset

    training = {key: _labelled(load_dataset(key, dict(spec), data_dir).training) for key, spec in datasets.items()}
    table = metrics_by_relation_table(ranks_paths, training, settings)
    write_tsv(table, out, sort_by=_SORT)
    return table


def _labelled(factory: Any) -> pd.DataFrame:
    """The triples of a PyKEEN triples factory as labels (``head, relation, tail``)."""
    ids = factory.mapped_triples.numpy()
    out = {}
    for column, index, mapping in (("head", 0, factory.entity_to_id), ("relation", 1, factory.relation_to_id),
                                   ("tail", 2, factory.entity_to_id)):
        labels = np.empty(len(mapping), dtype=object)
        for label, position in mapping.items():
            labels[position] = label
        out[column] = labels[ids[:, index]]
    return pd.DataFrame(out)


def plot_categories(table: pd.DataFrame, pdf: str | os.PathLike, png: str | os.PathLike) -> None:
    """MRR (realistic rank, both sides) by relation category, one bar per model and seed with its interval; one
    panel per dataset and split.

    :param table: ``tables/metrics_by_relation.tsv``
    """
    from kgeval.plotting import category_colors, new_figure, save_figure

    rows = table[(table["group"] == "category") & (table["metric"] == "mrr") & (table["side"] == "both")
                 & (table["rank_type"] == "realistic")]
    panels = sorted({(d, s) for d, s in zip(rows["dataset"], rows["split"])}) or [("", "")]
    fig, axes = new_figure(1, len(panels), width=4.5, height=3.2)
    for ax, (dataset, split) in zip(axes[0], panels):
        part = rows[(rows["dataset"] == dataset) & (rows["split"] == split)]
        runs = sorted({f"{m} (seed {s})" for m, s in zip(part["model"], part["seed"])})
        colors = category_colors(runs)
        width = 0.8 / max(len(runs), 1)
        for i, run in enumerate(runs):
            mine = part[[f"{m} (seed {s})" == run for m, s in zip(part["model"], part["seed"])]]
            mine = mine.set_index("relation").reindex(list(CATEGORIES))
            x = np.arange(len(CATEGORIES)) + (i - (len(runs) - 1) / 2) * width
            errors = np.vstack([mine["value"] - mine["ci_low"], mine["ci_high"] - mine["value"]])
            ax.bar(x, mine["value"], width, yerr=errors, color=colors[run], label=run, capsize=2)
        ax.set_xticks(np.arange(len(CATEGORIES)), CATEGORIES)
        ax.set_xlabel("relation category (training triples, threshold 1.5)")
        ax.set_ylabel("MRR (realistic, both sides)")
        ax.set_title(f"{dataset} {split}".strip() or "no ranks")
        if runs:
            ax.legend(fontsize="small")
    save_figure(fig, pdf, png)
