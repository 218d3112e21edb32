"""The file jobs of ``study_s4_released``: each reads the release, builds one table and writes it (the Snakemake
scripts of ``workflow/rules/s4_released.smk`` call these).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kgeval.io import write_tsv
from kgeval.studies.s4.categories import CATEGORIES
from kgeval.studies.s4.release_files import PathLike, labels_folder, results_folder
from kgeval.studies.s4.released_labels import (
    added_positive_examples,
    kl_divergences,
    label_set_statistics,
    pool_statistics,
    relation_distributions,
)
from kgeval.studies.s4.released_results import (
    discriminative_summary,
    released_discriminative,
    released_evaluation,
    released_metrics,
    released_tau_by_category,
    released_tau_reweighted,
    relation_mrr,
)

__all__ = [
    "write_metrics",
    "write_tau_by_category",
    "write_tau_reweighted",
    "write_discriminative",
    "write_label_sets",
    "write_relation_distribution",
    "write_examples",
    "write_relation_mrr",
]


def write_metrics(
    *,
    data_dir: PathLike | None,
    folder: str | None,
    hits_at: Sequence[int],
    ir_cutoff: int,
    metrics_out: PathLike,
    evaluation_out: PathLike,
) -> pd.DataFrame:
    """Write the FB15k-237 metrics table (levels) and every test set's released metrics."""
    root = results_folder(data_dir, folder)
    metrics = released_metrics(root, hits_at, ir_cutoff)
    write_tsv(metrics, metrics_out, sort_by=["level", "system", "family", "metric"])
    write_tsv(
        released_evaluation(root, hits_at, ir_cutoff),
        evaluation_out,
        sort_by=["test_set", "system", "family", "metric"],
    )
    return metrics


def write_tau_by_category(
    *, data_dir: PathLike | None, folder: str | None, hits_at: Sequence[int], out: PathLike
) -> pd.DataFrame:
    """Write Table 3 (:func:`released_tau_by_category`)."""
    table = released_tau_by_category(results_folder(data_dir, folder), hits_at)
    order = {c: i for i, c in enumerate(CATEGORIES)}
    table = table.assign(_c=table["category"].map(order)).sort_values(["side", "_c", "metric"], kind="stable")
    write_tsv(table.drop(columns="_c"), out, sort_by=[])  # Table 3's order: side, category 1-1 .. N-N, metric
    return table


def write_tau_reweighted(
    *, data_dir: PathLike | None, folder: str | None, hits_at: Sequence[int], out: PathLike
) -> pd.DataFrame:
    """Write Table 4 (:func:`released_tau_reweighted`)."""
    table = released_tau_reweighted(results_folder(data_dir, folder), hits_at)
    write_tsv(table, out, sort_by=["distribution", "metric"])
    return table


def write_discriminative(
    *,
    data_dir: PathLike | None,
    folder: str | None,
    hits_at: Sequence[int],
    ir_cutoff: int,
    pairs_out: PathLike,
    summary_out: PathLike,
) -> pd.DataFrame:
    """Write Fig. 8's p-values per pair and their summary per test set and metric."""
    pairs = released_discriminative(results_folder(data_dir, folder), hits_at, ir_cutoff)
    write_tsv(pairs, pairs_out, sort_by=["test_set", "family", "metric", "system_a", "system_b"])
    write_tsv(discriminative_summary(pairs), summary_out, sort_by=["test_set", "family", "metric"])
    return pairs


def _shipped_splits(dataset_key: str, dataset_spec: Mapping, data_dir: PathLike | None) -> dict[str, np.ndarray]:
    from kgeval.lp.datasets import labeled_splits

    return labeled_splits(dataset_key, dict(dataset_spec), data_dir)


def write_label_sets(
    *,
    data_dir: PathLike | None,
    labels: str | None,
    dataset_key: str,
    dataset_spec: Mapping,
    table1_out: PathLike,
    pool_out: PathLike,
) -> pd.DataFrame:
    """Write Table 1 and the pool statistics from the label files and the dataset's shipped test file."""
    folder = labels_folder(data_dir, labels)
    test = _shipped_splits(dataset_key, dataset_spec, data_dir)["test"]
    table = label_set_statistics(folder, test)
    write_tsv(table, table1_out, sort_by=[])  # Table 1's order
    write_tsv(pool_statistics(folder, test), pool_out, sort_by=[])  # Sec. 3's order
    return table


def write_relation_distribution(
    *,
    data_dir: PathLike | None,
    labels: str | None,
    dataset_key: str,
    dataset_spec: Mapping,
    distribution_out: PathLike,
    kl_out: PathLike,
) -> pd.DataFrame:
    """Write Fig. 2's relation distributions and the KL divergences between them."""
    folder = labels_folder(data_dir, labels)
    table = relation_distributions(folder, _shipped_splits(dataset_key, dataset_spec, data_dir))
    write_tsv(table, distribution_out, sort_by=[])  # by FB-Test-O count, as the figure
    write_tsv(kl_divergences(table), kl_out, sort_by=[])  # the paper's order
    return table


def write_examples(
    *, data_dir: PathLike | None, labels: str | None, questions: Sequence[Mapping[str, str]], out: PathLike
) -> pd.DataFrame:
    """Write Table 2 (:func:`added_positive_examples`)."""
    table = added_positive_examples(labels_folder(data_dir, labels), questions)
    write_tsv(table, out, sort_by=[])  # the configured order
    return table


def write_relation_mrr(*, data_dir: PathLike | None, folder: str | None, system: str, out: PathLike) -> pd.DataFrame:
    """Write Fig. 6's per-relation micro MRR of one system."""
    table = relation_mrr(results_folder(data_dir, folder), system)
    write_tsv(table, out, sort_by=["test_set", "relation"])
    return table
