"""S1: metrics under seeded permutations of the entity IDs, for the reference scorers and every trained model (the
non-deterministic rank breaks ties by entity ID; the realistic rank must not move)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kgeval.io import write_tsv
from kgeval.metrics import RANK_TYPES, compute_metrics
from kgeval.config import MEMORY_BUDGET_MB
from kgeval.studies.s1.rank_types import ORIGINAL_ORDER, check_metrics, order_name
from kgeval.studies.s1.split_ranks import rank_split

if TYPE_CHECKING:
    from kgeval.lp.datasets import LPData
    from kgeval.lp.scoring import Scorer

__all__ = ["permutation_table", "write_permutation_table"]

logger = logging.getLogger(__name__)


def _parse_model_path(path: str | os.PathLike) -> tuple[str, str, int]:
    """``results/models/{dataset}/{model}/{seed}/model.pt`` -> (dataset, model, seed)."""
    p = Path(path)
    if len(p.parts) < 4:
        raise ValueError(f"{path}: expected a path .../{{dataset}}/{{model}}/{{seed}}/model.pt")
    dataset, model, seed = p.parts[-4:-1]
    try:
        return dataset, model, int(seed)
    except ValueError:
        raise ValueError(f"{path}: the folder before the file must be an integer seed, got {seed!r}") from None


_PERMUTATION_KEYS = ["dataset", "kind", "scorer", "seed", "split", "side", "rank_type", "metric", "order"]


def permutation_table(
    data: LPData,
    dataset: str,
    split: str,
    scorers: Mapping[tuple[str, str, int], Scorer],
    permutation_seeds: Sequence[int],
    metrics: Sequence[str],
    rank_types: Sequence[str] = ("nondeterministic", "realistic"),
    memory_budget_mb: float = MEMORY_BUDGET_MB,
) -> pd.DataFrame:
    """Metrics of each scorer under the original entity IDs and under seeded permutations of them.

    Every scorer of a dataset sees the same permutations. Optimistic, pessimistic and realistic ranks do not depend on
    the order of the candidates, so their ``change`` is exactly 0; the non-deterministic rank's does not have to be.

    :param data: the dataset (filter set: its train, valid and test triples)
    :param dataset: the dataset's key, for the table
    :param split: the split ranked
    :param scorers: ``(kind, name, seed) -> scorer``; kind ``reference`` or ``model``
    :param permutation_seeds: one permutation of the entity IDs per seed (:func:`random_permutation`)
    :param metrics: metric keys
    :param rank_types: the rank types reported
    :param memory_budget_mb: bound on one batch of scores
    :return: columns ``dataset, kind, scorer, seed, split, side, rank_type, metric, order, value, change``;
        ``order`` is :data:`ORIGINAL_ORDER` or ``permutation_<seed>``, ``change`` the value minus the value under the
        original order
    """
    from kgeval.studies.s1.reference_scorers import random_permutation

    keys = check_metrics(metrics)
    if len(set(permutation_seeds)) != len(permutation_seeds):
        raise ValueError(f"permutation seeds must be distinct, got {list(permutation_seeds)}")
    unknown = sorted(set(rank_types) - set(RANK_TYPES))
    if unknown:
        raise ValueError(f"unknown rank types {unknown}; use {list(RANK_TYPES)}")
    triples = data.factory(split).mapped_triples
    known = data.all_mapped_triples()
    orders: dict[str, np.ndarray | None] = {ORIGINAL_ORDER: None}
    for seed in permutation_seeds:
        orders[order_name(seed)] = random_permutation(data.num_entities, int(seed))
    frames = []
    for (kind, name, seed), scorer in scorers.items():
        if scorer.num_entities != data.num_entities:
            raise ValueError(
                f"{dataset}: scorer {name!r} (seed {seed}) scores {scorer.num_entities} entities but the dataset has "
                f"{data.num_entities}; was it trained on another dataset?"
            )
        start = time.perf_counter()
        for order, permutation in orders.items():
            ranks = rank_split(scorer, triples, known, permutation=permutation, memory_budget_mb=memory_budget_mb)
            values = compute_metrics(ranks, metrics=keys, source=f"{dataset}/{name}/{seed}/{order}")
            values = values[values["rank_type"].isin(list(rank_types))].copy()
            values.insert(0, "order", order)
            values.insert(0, "seed", int(seed))
            values.insert(0, "scorer", name)
            values.insert(0, "kind", kind)
            frames.append(values)
        logger.info(
            "%s/%s: %s %s (seed %d) under %d orders in %.2f s",
            dataset, split, kind, name, seed, len(orders), time.perf_counter() - start,
        )
    table = pd.concat(frames, ignore_index=True)
    table.insert(0, "dataset", dataset)
    table.insert(4, "split", split)
    group = ["dataset", "kind", "scorer", "seed", "split", "side", "rank_type", "metric"]
    original = table[table["order"] == ORIGINAL_ORDER].set_index(group)["value"]
    table["change"] = table["value"].to_numpy() - original.reindex(pd.MultiIndex.from_frame(table[group])).to_numpy()
    return table[[*_PERMUTATION_KEYS, "value", "change"]]


def write_permutation_table(
    model_paths: Sequence[str | os.PathLike],
    dataset_specs: Mapping[str, Mapping[str, Any]],
    data_dir: str | os.PathLike | None,
    out: str | os.PathLike,
    split: str,
    permutation_seeds: Sequence[int],
    metrics: Sequence[str],
    random_seed: int = 0,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
) -> pd.DataFrame:
    """:func:`permutation_table` for the reference scorers and every given model, all datasets in one TSV.

    :param model_paths: ``results/models/{dataset}/{model}/{seed}/model.pt`` files; each is ranked on its dataset
    :param dataset_specs: config key -> dataset spec, for every dataset to study (the reference scorers rank each)
    :param random_seed: seed of the random reference scorer (also its ``seed`` in the table; the constant scorer has
        no seed and is listed with the same one)
    """
    from kgeval.lp.datasets import load_dataset
    from kgeval.lp.ranks import load_model
    from kgeval.lp.scoring import make_scorer
    from kgeval.studies.s1.reference_scorers import ConstantScorer, RandomScorer

    by_dataset: dict[str, list[tuple[str, int, str]]] = {key: [] for key in dataset_specs}
    for path in model_paths:
        dataset, model, seed = _parse_model_path(path)
        if dataset not in by_dataset:
            raise ValueError(f"{path}: dataset {dataset!r} is not among the studied datasets {sorted(by_dataset)}")
        by_dataset[dataset].append((model, seed, os.fspath(path)))
    frames = []
    for key, spec in dataset_specs.items():
        data = load_dataset(key, dict(spec), data_dir)
        scorers: dict[tuple[str, str, int], Scorer] = {
            ("reference", "constant", int(random_seed)): ConstantScorer(data.num_entities),
            ("reference", "random", int(random_seed)): RandomScorer(data.num_entities, seed=int(random_seed)),
        }
        for model, seed, path in sorted(by_dataset[key]):
            scorers[("model", model, seed)] = make_scorer(load_model(path, "cpu"), device="cpu")
        frames.append(
            permutation_table(
                data, key, split, scorers, permutation_seeds, metrics, memory_budget_mb=memory_budget_mb
            )
        )
    if not frames:
        raise ValueError("no datasets given for the permutation study (studies.s1.ranks.datasets is empty)")
    table = pd.concat(frames, ignore_index=True)
    write_tsv(table, out, sort_by=_PERMUTATION_KEYS)
    return table
