"""S1: the constant and the random reference scorer ranked by the same engine as the models, each metric next to
its theoretical value."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kgeval.io import write_tsv
from kgeval.metrics import RANK_TYPES, compute_metrics, expectations
from kgeval.config import MEMORY_BUDGET_MB
from kgeval.studies.s1.rank_types import check_metrics, side_views
from kgeval.studies.s1.split_ranks import constant_scorer_ranks, rank_split

if TYPE_CHECKING:
    from kgeval.lp.datasets import LPData

__all__ = ["reference_scorer_table", "write_reference_scorer_table"]

logger = logging.getLogger(__name__)


def reference_scorer_table(
    data: LPData,
    dataset: str,
    split: str,
    metrics: Sequence[str],
    random_seed: int = 0,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
    num_samples: int = 1000,
) -> pd.DataFrame:
    """Rank one split with the constant and the random scorer and set each metric next to its theoretical value.

    :param data: the dataset (filter set: its train, valid and test triples)
    :param dataset: the dataset's key, for the table
    :param split: ``valid`` or ``test``
    :param metrics: metric keys (:data:`kgeval.metrics.METRICS`)
    :param random_seed: seed of the random scorer
    :param memory_budget_mb: bound on one batch of scores
    :param num_samples: Monte-Carlo draws for the random scorer's expectation of metrics without a closed form
    :return: columns ``dataset, split, side, scorer, rank_type, metric, value, expected, expected_std,
        expected_from, max_rank_deviation``. For the constant scorer ``expected`` is the metric of the ranks the
        definitions prescribe (:func:`constant_scorer_ranks`, ``expected_from = definition``) and
        ``max_rank_deviation`` the largest difference of any query's rank from that prescription; for the random
        scorer ``expected`` and ``expected_std`` are the metric's expectation and standard deviation when every rank
        is uniform on ``1..|S|`` independently (``expected_from = uniform_ranks``, :func:`kgeval.metrics.expectations`)
    """
    from kgeval.studies.s1.reference_scorers import ConstantScorer, RandomScorer

    keys = check_metrics(metrics)
    triples = data.factory(split).mapped_triples
    known = data.all_mapped_triples()
    num_entities = data.num_entities
    rows = []

    def add(scorer: str, ranks: pd.DataFrame, expected: pd.DataFrame, std: pd.DataFrame | None, source: str,
            reference_ranks: pd.DataFrame | None) -> None:
        rows.extend(_scorer_rows(dataset, split, keys, scorer, ranks, expected, std, source, reference_ranks))

    start = time.perf_counter()
    constant = rank_split(ConstantScorer(num_entities), triples, known, memory_budget_mb=memory_budget_mb)
    prescribed = constant_scorer_ranks(triples, known, num_entities)
    identity = ["head", "relation", "tail", "side"]
    if not constant[identity].equals(prescribed[identity]):  # both list the triples side by side in input order
        raise RuntimeError("rank_split and constant_scorer_ranks list the queries in different orders")
    add("constant", constant, compute_metrics(prescribed, metrics=keys), None, "definition", prescribed)
    logger.info("%s/%s: constant scorer ranked in %.2f s", dataset, split, time.perf_counter() - start)

    start = time.perf_counter()
    random = rank_split(RandomScorer(num_entities, seed=random_seed), triples, known, memory_budget_mb=memory_budget_mb)
    moments = _uniform_moments(random, keys, num_samples)
    add(
        "random",
        random,
        moments.drop(columns="expected_std"),
        moments[["side", "metric", "expected_std"]].drop_duplicates(["side", "metric"]),
        "uniform_ranks",
        None,
    )
    logger.info("%s/%s: random scorer ranked in %.2f s", dataset, split, time.perf_counter() - start)
    return pd.DataFrame(rows)


def _uniform_moments(ranks: pd.DataFrame, keys: Sequence[str], num_samples: int) -> pd.DataFrame:
    """Each metric's expectation and standard deviation per side when every rank is uniform on ``1..|S|``, the same
    for every rank type: ``side, rank_type, metric, value, expected_std``."""
    expected_rows = []
    for side, part in side_views(ranks):
        moments = expectations(part["num_candidates"].to_numpy(), metrics=keys, num_samples=num_samples, seed=0)
        for record in moments.itertuples(index=False):
            for rank_type in RANK_TYPES:
                expected_rows.append((side, rank_type, record.metric, record.expectation, np.sqrt(record.variance)))
    return pd.DataFrame(expected_rows, columns=["side", "rank_type", "metric", "value", "expected_std"])


def _scorer_rows(
    dataset: str,
    split: str,
    keys: Sequence[str],
    scorer: str,
    ranks: pd.DataFrame,
    expected: pd.DataFrame,
    std: pd.DataFrame | None,
    source: str,
    reference_ranks: pd.DataFrame | None,
) -> list[dict]:
    """The table rows of one scorer: each metric of its ranks next to the expected value (and standard deviation),
    and the largest deviation of any query's rank from ``reference_ranks`` (NaN without them)."""
    values = compute_metrics(ranks, metrics=keys, source=f"{dataset}/{split}/{scorer}")
    merged = values.merge(expected, on=["side", "rank_type", "metric"], how="left", suffixes=("", "_expected"))
    if std is not None:
        merged = merged.merge(std, on=["side", "metric"], how="left")
    else:
        merged["expected_std"] = 0.0
    deviation = {}
    for side, part in side_views(ranks):
        for rank_type in RANK_TYPES:
            column = f"rank_{rank_type}"
            if reference_ranks is None:
                deviation[(side, rank_type)] = np.nan
            else:
                ref = reference_ranks.loc[part.index, column].to_numpy(dtype=float)
                deviation[(side, rank_type)] = float(np.abs(part[column].to_numpy(dtype=float) - ref).max())
    return [
        {
            "dataset": dataset,
            "split": split,
            "side": record.side,
            "scorer": scorer,
            "rank_type": record.rank_type,
            "metric": record.metric,
            "value": record.value,
            "expected": record.value_expected,
            "expected_std": record.expected_std,
            "expected_from": source,
            "max_rank_deviation": deviation[(record.side, record.rank_type)],
        }
        for record in merged.itertuples(index=False)
    ]


_REFERENCE_KEYS = ["dataset", "split", "side", "scorer", "rank_type", "metric"]


def write_reference_scorer_table(
    dataset_specs: Mapping[str, Mapping[str, Any]],
    data_dir: str | os.PathLike | None,
    out: str | os.PathLike,
    split: str,
    metrics: Sequence[str],
    random_seed: int = 0,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
) -> pd.DataFrame:
    """:func:`reference_scorer_table` for every given dataset (config key -> spec), written as one TSV."""
    from kgeval.lp.datasets import load_dataset

    frames = []
    for key, spec in dataset_specs.items():
        data = load_dataset(key, dict(spec), data_dir)
        frames.append(
            reference_scorer_table(
                data, key, split, metrics, random_seed=random_seed, memory_budget_mb=memory_budget_mb
            )
        )
    if not frames:
        raise ValueError("no datasets given for the reference scorers (studies.s1.ranks.datasets is empty)")
    table = pd.concat(frames, ignore_index=True)
    write_tsv(table, out, sort_by=_REFERENCE_KEYS)
    return table
