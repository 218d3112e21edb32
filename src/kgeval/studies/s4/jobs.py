"""File-level entry points of the S4 workflow rules: each reads its inputs, calls the library, writes its outputs.

Every function has a plain signature (paths and settings), so a rule's script only unpacks ``snakemake`` and calls
one of them, and each can be run by hand for debugging.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kgeval.io import read_tsv, write_json, write_parquet, write_tsv
from kgeval.config import MEMORY_BUDGET_MB
from kgeval.studies.s4.labels import (
    TRIPLE_COLUMNS,
    LabelSet,
    load_released_labels,
    read_label_set,
    write_label_set,
)
from kgeval.studies.s4.simulation import simulate_labels
from kgeval.studies.s4.categories import load_released_categories, relation_categories
from kgeval.studies.s4.settings import LabelSettings, LevelSettings, StabilitySettings

from kgeval.studies.s4.analysis import tau_by_category, tau_by_depth, tau_reweighted
from kgeval.studies.s4.metrics import aggregate_metrics, evaluate_label_levels
from kgeval.studies.s4.stability import discriminative_power, stability_table, triple_units, unit_values

if TYPE_CHECKING:  # torch and PyKEEN only where ranks are computed: the TSV-only S4 jobs stay light
    from kgeval.lp.ranks import TrainedModel

__all__ = [
    "resolve_level",
    "LabelFiles",
    "build_labels",
    "compute_categories",
    "compute_universe_ranks",
    "evaluate_levels",
    "table_tau_depth",
    "table_categories",
    "table_reweighted",
    "table_stability",
    "table_discriminative",
]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike


def resolve_level(name: str, max_depth: int) -> str:
    """A configured level name: ``original``, ``sparse``, ``pooled`` (= ``depth<max_depth>``) or ``depth<d>``."""
    if name == "pooled":
        return f"depth{max_depth}"
    if name in ("original", "sparse") or (
        name.startswith("depth") and name[5:].isdigit() and int(name[5:]) <= max_depth
    ):
        return name
    raise ValueError(f"unknown S4 level {name!r}; use original, sparse, pooled or depth1..depth{max_depth}")


def _dataset_triples(dataset_key: str, dataset_spec: Mapping[str, Any], data_dir: PathLike | None):
    from kgeval.lp.datasets import load_dataset

    data = load_dataset(dataset_key, dict(dataset_spec), data_dir)
    frames = {
        split: pd.DataFrame(data.factory(split).triples, columns=TRIPLE_COLUMNS).astype(str)
        for split in ("train", "valid", "test")
    }
    return data, frames


def _release_folder(data_dir: PathLike | None, folder: str | None) -> Path | None:
    """The release folder: ``folder`` under ``data_dir`` (or absolute); None downloads it (see fetch_release)."""
    if folder is None or data_dir is None and not Path(folder).is_absolute():
        return None
    path = Path(folder)
    return path if path.is_absolute() else Path(data_dir) / path


@dataclass(frozen=True)
class LabelFiles:
    """The files of one label set: triples, judgments, meta data and the per-level summary."""

    triples: PathLike
    judgments: PathLike
    meta: PathLike
    summary: PathLike


def build_labels(
    *,
    dataset_key: str,
    dataset_spec: Mapping[str, Any],
    data_dir: PathLike | None,
    settings: LabelSettings,
    test_ranks_path: PathLike | None,
    topk_paths: Mapping[str, PathLike],
    out: LabelFiles,
) -> LabelSet:
    """Build the label set of one dataset (released S4 labels or simulated pooling) and write it.

    :param settings: released or simulated, and how
    :param test_ranks_path: a test ranks table (its triples are the simulated universe); unused when released
    :param topk_paths: per pooling system, its top-k table; unused when released
    """
    released, release_folder, max_depth = settings.released, settings.release_folder, settings.max_depth
    hide_fraction, seed = settings.hide_fraction, settings.seed
    data, frames = _dataset_triples(dataset_key, dataset_spec, data_dir)
    if released:
        entities = set(data.training.entity_to_id)
        relations = set(data.training.relation_to_id)
        labels = load_released_labels(
            frames["test"], _release_folder(data_dir, release_folder), entities=entities, relations=relations
        )
        if max_depth > labels.max_depth:
            raise ValueError(
                f"studies.s4.pool.max_depth is {max_depth} but the release pools only to {labels.max_depth}"
            )
        labels = LabelSet(labels.triples, labels.judgments, max_depth, labels.meta)
    else:
        if test_ranks_path is None:
            raise ValueError("build_labels: simulated labels need a test ranks table")
        test = pd.read_parquet(test_ranks_path, columns=TRIPLE_COLUMNS)
        topk = {system: pd.read_parquet(path) for system, path in sorted(topk_paths.items())}
        oracle = pd.concat(list(frames.values()), ignore_index=True)
        labels = simulate_labels(test, topk, oracle=oracle, hide_fraction=hide_fraction, seed=seed, max_depth=max_depth)
    labels.meta["dataset"] = dataset_key
    write_label_set(labels, out.triples, out.judgments, out.meta)
    write_tsv(labels.summary(), out.summary, sort_by=["depth"])
    logger.info("%s: label levels\n%s", dataset_key, labels.summary().to_string(index=False))
    return labels


def compute_categories(
    *,
    dataset_key: str,
    dataset_spec: Mapping[str, Any],
    data_dir: PathLike | None,
    threshold: float,
    released: bool,
    release_folder: str | None,
    out: PathLike,
) -> pd.DataFrame:
    """Relation categories from the training triples; with the release, its categories next to them.

    :return: ``relation, tails_per_head, heads_per_tail, category, released_category`` (empty without release)
    """
    _, frames = _dataset_triples(dataset_key, dataset_spec, data_dir)
    table = relation_categories(frames["train"], threshold)
    table["released_category"] = ""
    if released:
        from kgeval.studies.s4.labels import fetch_release

        folder = _release_folder(data_dir, release_folder) or fetch_release()
        reference = load_released_categories(folder)
        table["released_category"] = table["relation"].map(reference).fillna("")
        agree = (table["category"] == table["released_category"]).mean()
        logger.info("%s: computed categories agree with the release on %.1f%% of relations", dataset_key, 100 * agree)
    write_tsv(table, out, sort_by=["relation"])
    return table


def compute_universe_ranks(
    trained: TrainedModel,
    *,
    labels_path: PathLike,
    out: PathLike,
    timing_path: PathLike,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
) -> pd.DataFrame:
    """Rank every triple of a label set's universe, filtered by train+valid+universe (for the released labels).

    The released pooled positives are not test triples, so the test ranks table lacks them; this ranks the whole
    universe (test set plus pooled positives) in the ranks-table format, from which every level is derived.

    :param trained: the model and its dataset, as :func:`kgeval.lp.ranks.compute_ranks` takes them
    """
    import torch

    from kgeval.lp.ranks import rank_triples

    data, model = trained.load()
    universe = read_tsv(labels_path)[TRIPLE_COLUMNS].astype(str)
    e2i, r2i = data.training.entity_to_id, data.training.relation_to_id
    unknown = ~(universe["head"].isin(e2i) & universe["tail"].isin(e2i) & universe["relation"].isin(r2i))
    if unknown.any():
        raise ValueError(f"{labels_path}: {int(unknown.sum())} triple(s) use entities/relations the model lacks")
    ids = torch.as_tensor(
        np.stack(
            [
                universe["head"].map(e2i).to_numpy(),
                universe["relation"].map(r2i).to_numpy(),
                universe["tail"].map(e2i).to_numpy(),
            ],
            axis=1,
        ).astype(np.int64)
    )
    table, _, seconds = rank_triples(
        data,
        model,
        ids,
        out,
        filter_triples=[data.training.mapped_triples, data.validation.mapped_triples, ids],
        memory_budget_mb=memory_budget_mb,
        device=trained.device,
    )
    write_json({"seconds": seconds, "num_triples": len(universe)}, timing_path)
    return table


def evaluate_levels(
    *,
    triples_path: PathLike,
    judgments_path: PathLike,
    ranks_paths: Mapping[str, PathLike],
    settings: LevelSettings,
    answers_path: PathLike,
    questions_path: PathLike,
    metrics_path: PathLike,
) -> pd.DataFrame:
    """Micro and macro evaluation of every system at every level; writes answers, questions and metrics."""
    labels = read_label_set(triples_path, judgments_path, settings.max_depth)
    ranks = {system: pd.read_parquet(path) for system, path in sorted(ranks_paths.items())}
    answers, questions = evaluate_label_levels(
        labels, ranks, rank_type=settings.rank_type, ir_cutoff=settings.ir_cutoff
    )
    metrics = aggregate_metrics(answers, questions, settings.hits_at, settings.ir_cutoff)
    write_parquet(answers, answers_path)
    write_parquet(questions, questions_path)
    write_tsv(metrics, metrics_path, sort_by=["level", "system", "family", "metric"])
    return metrics


def table_tau_depth(*, metrics_path: PathLike, out: PathLike) -> pd.DataFrame:
    """Figs. 4-5 data: tau between the sparse ranking and every level's, per metric."""
    table = tau_by_depth(read_tsv(metrics_path))
    write_tsv(table, out, sort_by=["family", "metric", "depth"])
    return table


def table_categories(
    *,
    answers_path: PathLike,
    categories_path: PathLike,
    level: str,
    max_depth: int,
    hits_at: Sequence[int],
    out: PathLike,
) -> pd.DataFrame:
    """Table 3: tau per question side and relation category between sparse and ``level`` (default: pooled)."""
    answers = pd.read_parquet(answers_path)
    categories = read_tsv(categories_path).set_index("relation")["category"]
    table = tau_by_category(answers, categories, level=resolve_level(level, max_depth), hits_at=hits_at)
    write_tsv(table, out, sort_by=["side", "category", "metric"])
    return table


def table_reweighted(
    *, answers_path: PathLike, level: str, max_depth: int, hits_at: Sequence[int], out: PathLike
) -> pd.DataFrame:
    """Table 4: tau between sparse and ``level`` micro rankings, with the level's or the sparse relation weights."""
    answers = pd.read_parquet(answers_path)
    table = tau_reweighted(answers, level=resolve_level(level, max_depth), hits_at=hits_at)
    write_tsv(table, out, sort_by=["distribution", "metric"])
    return table


def _per_level(
    answers_path: PathLike,
    questions_path: PathLike,
    levels: Sequence[str],
    max_depth: int,
    table_of: Callable[[pd.DataFrame, pd.DataFrame, str], pd.DataFrame],
) -> pd.DataFrame:
    """``table_of(answers, questions, level)`` for each label level, stacked, with ``level`` as the first column."""
    answers = pd.read_parquet(answers_path)
    questions = pd.read_parquet(questions_path)
    frames = []
    for name in levels:
        level = resolve_level(name, max_depth)
        frames.append(table_of(answers, questions, level).assign(level=level))
    table = pd.concat(frames, ignore_index=True)
    return table[["level"] + [c for c in table.columns if c != "level"]]


def table_stability(
    *, answers_path: PathLike, questions_path: PathLike, settings: StabilitySettings, out: PathLike
) -> pd.DataFrame:
    """Fig. 7 data: mean tau of random subsets against the full level, per level, size and metric.

    Two units of sampling, one block of rows each: ``triples`` (the paper's: test triples are discarded) and
    ``questions`` (kgeval's extension: whole questions are discarded).
    """

    hits_at, ir_cutoff = settings.hits_at, settings.ir_cutoff
    fractions, repeats, seed = settings.fractions, settings.repeats, settings.seed

    def both_units(answers: pd.DataFrame, questions: pd.DataFrame, level: str) -> pd.DataFrame:
        return pd.concat(
            [
                stability_table(triple_units(answers, questions, level, hits_at, ir_cutoff), fractions, repeats, seed),
                stability_table(unit_values(answers, questions, level, hits_at, ir_cutoff), fractions, repeats, seed),
            ],
            ignore_index=True,
        )

    table = _per_level(answers_path, questions_path, settings.levels, settings.max_depth, both_units)
    write_tsv(table, out, sort_by=["level", "unit", "family", "metric", "fraction"])
    return table


def table_discriminative(
    *,
    answers_path: PathLike,
    questions_path: PathLike,
    levels: Sequence[str],
    max_depth: int,
    hits_at: Sequence[int],
    ir_cutoff: int,
    permutations: int,
    seed: int,
    out: PathLike,
) -> pd.DataFrame:
    """Fig. 8 data: paired sign-flip (and t-test) p-values of every system pair and metric, per level; ``seed``
    is the label set's stream (combined with level, family and metric)."""
    table = _per_level(
        answers_path,
        questions_path,
        levels,
        max_depth,
        lambda answers, questions, level: discriminative_power(
            answers, questions, level, hits_at, ir_cutoff, permutations, seed
        ),
    )
    write_tsv(table, out, sort_by=["level", "family", "metric", "system_a", "system_b"])
    return table
