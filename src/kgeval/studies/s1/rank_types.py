"""S1, part A (paper 000, Sec. 2.1 and 3.1): how the four rank definitions differ, and why ties matter.

Three results:

* :func:`rank_types_table` - every metric of every trained model under the optimistic, realistic, pessimistic and
  non-deterministic rank, side by side, with the spread between them. It reads the collated metrics table
  (``results/tables/metrics.tsv``); nothing is recomputed.
* :func:`reference_scorer_table` - the two reference scorers of :mod:`kgeval.studies.s1.reference_scorers`, ranked by the same
  engine as the models: the constant scorer (every candidate ties, so optimistic rank 1, pessimistic ``|S|``,
  realistic ``(|S| + 1) / 2``) and the random scorer (no ties, every rank type the same, expectation
  ``(|S| + 1) / 2``). Each value stands next to what theory says it must be.
* :func:`permutation_table` - the non-deterministic rank breaks ties by entity ID, so it changes when the entity IDs
  are relabeled. Ranks are recomputed under seeded permutations of the entity IDs (:class:`PermutedScorer`: the same
  scores with the score columns, the true entities and the filter sets relabeled) for the reference scorers and every
  trained model; the table reports each metric under the original and the permuted orders and the change. The
  realistic rank is reported alongside as a control: it must not move at all.

Ranks come from :func:`kgeval.lp.ranking.rank_from_score_fn`, one score row per (triple, side), filtered by the known
train, valid and test triples (docs/design.md); metrics from :func:`kgeval.metrics.compute_metrics`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kgeval.lp.filtering import FilterIndex, as_triples_array
from kgeval.io import read_tsv, write_tsv
from kgeval.metrics import RANK_TYPES, compute_metrics, expectations, get_metric, supported_rank_types

# torch, PyKEEN, the ranking engine and the reference scorers are imported by the functions that rank, not here: the
# rank-types table and the two figures read TSVs only, and their jobs paid ~6 s of CPU for these imports.
if TYPE_CHECKING:
    import torch

    from kgeval.lp.datasets import LPData
    from kgeval.lp.scoring import Scorer

__all__ = [
    "REFERENCE_SCORERS",
    "ORIGINAL_ORDER",
    "RANK_TYPE_COLUMNS",
    "order_name",
    "study_settings",
    "rank_split",
    "constant_scorer_ranks",
    "rank_types_table",
    "reference_scorer_table",
    "permutation_table",
    "plot_rank_types",
    "plot_permutations",
    "write_rank_types_table",
    "write_reference_scorer_table",
    "write_permutation_table",
    "write_rank_types_figure",
    "write_permutations_figure",
]

logger = logging.getLogger(__name__)

#: the reference scorers, in table and figure order
REFERENCE_SCORERS: tuple[str, ...] = ("constant", "random")
#: name of the unpermuted candidate order (ties broken by the dataset's own entity IDs)
ORIGINAL_ORDER = "entity_id"
#: rank columns of a ranks frame (docs/design.md)
RANK_TYPE_COLUMNS: tuple[str, ...] = tuple(f"rank_{t}" for t in RANK_TYPES)
_SIDES = ("head", "tail")


def order_name(seed: int | None) -> str:
    """Name of a candidate order: :data:`ORIGINAL_ORDER`, or ``permutation_<seed>`` for a seeded permutation."""
    return ORIGINAL_ORDER if seed is None else f"permutation_{int(seed)}"


def study_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """Resolve and check ``studies.s1.ranks`` of a validated config (the workflow calls this when it parses).

    :return: the section with ``datasets`` and ``models`` resolved to lists of config keys
    :raises ValueError: naming the config key, for unknown datasets, models or metrics, or a split that is not ranked
    """
    section = dict(config["studies"]["s1"]["ranks"])
    prefix = "config key studies.s1.ranks"
    for key, configured in (("datasets", config["datasets"]), ("models", config["models"])):
        chosen = list(configured) if section[key] is None else list(section[key])
        unknown = [name for name in chosen if name not in configured]
        if unknown or not chosen:
            raise ValueError(
                f"{prefix}.{key}: {unknown or 'empty list'} not among the configured {key} {sorted(configured)}; "
                "name configured keys or use null for all"
            )
        section[key] = chosen
    splits = config["ranking"]["splits"]
    if section["split"] not in splits:
        raise ValueError(f"{prefix}.split: {section['split']!r} is not ranked; ranking.splits is {list(splits)}")
    for key in ("figure_metrics", "reference_metrics", "permutation_metrics"):
        for metric in section[key]:
            try:
                get_metric(metric)
            except KeyError as error:
                raise ValueError(f"{prefix}.{key}: {error.args[0]}") from None
    partial = [m for m in section["figure_metrics"] if tuple(supported_rank_types(m)) != tuple(RANK_TYPES)]
    if partial:
        raise ValueError(
            f"{prefix}.figure_metrics: {partial} are defined for the realistic rank only and cannot compare rank "
            "types; use base metrics such as mr, mrr, hits@10"
        )
    return section


def _triples(triples, name: str) -> np.ndarray:
    if isinstance(triples, (list, tuple)):
        arrays = [as_triples_array(t, name=f"{name}[{i}]") for i, t in enumerate(triples)]
        return np.concatenate(arrays) if arrays else np.zeros((0, 3), dtype=np.int64)
    return as_triples_array(triples, name=name)


def rank_split(
    scorer: Scorer,
    triples,
    known_triples,
    *,
    permutation: np.ndarray | None = None,
    sides: Sequence[str] = _SIDES,
    memory_budget_mb: float = 256.0,
) -> pd.DataFrame:
    """Filtered ranks of every triple on each side, optionally with the entity IDs relabeled.

    :param scorer: any :class:`~kgeval.lp.scoring.Scorer` (a model's, or a reference scorer)
    :param triples: shape: (n, 3) the ID triples to rank
    :param known_triples: shape: (m, 3), or a list of such arrays: the triples whose answers are filtered
        (train + valid + test); the true entity of a query always stays a candidate
    :param permutation: shape: (E,) relabel entity ``e`` as ``permutation[e]`` before ranking (scores, true entities
        and filter sets alike), so that only the order among tied candidates changes; ``None`` keeps the IDs
    :param sides: ``head`` and/or ``tail``
    :param memory_budget_mb: bound on one batch of scores
    :return: one row per (triple, side): ``head, relation, tail`` (the original IDs), ``side``, the four
        ``rank_*`` columns and ``num_candidates``
    """
    import torch

    from kgeval.lp.ranking import rank_from_score_fn
    from kgeval.studies.s1.reference_scorers import PermutedScorer, permute_triples

    array = _triples(triples, "triples")
    known = _triples(known_triples, "known_triples")
    num_entities = scorer.num_entities
    for name, values in (("triples", array), ("known_triples", known)):
        if len(values) and values[:, [0, 2]].max() >= num_entities:
            raise ValueError(f"{name} use entity IDs >= the scorer's {num_entities} entities")
    num_relations = int(max(array[:, 1].max(initial=-1), known[:, 1].max(initial=-1))) + 1
    ranked, known_ranked = array, known
    if permutation is not None:
        scorer = PermutedScorer(scorer, permutation)
        ranked, known_ranked = permute_triples(array, permutation), permute_triples(known, permutation)
    index = FilterIndex(known_ranked, num_entities=num_entities, num_relations=max(num_relations, 1))
    frames = []
    for side in sides:
        if side not in _SIDES:
            raise ValueError(f"sides must be 'head' and/or 'tail', got {side!r}")
        anchor_col, answer_col = (0, 2) if side == "tail" else (2, 0)
        anchors = torch.from_numpy(ranked[:, anchor_col].copy())
        relations = torch.from_numpy(ranked[:, 1].copy())
        exclude = index.lookup(side, ranked[:, anchor_col], ranked[:, 1])

        def score_fn(rows: torch.Tensor, side=side, anchors=anchors, relations=relations) -> torch.Tensor:
            return scorer.score(side, anchors[rows], relations[rows])

        result = rank_from_score_fn(
            score_fn, ranked[:, answer_col], num_entities, exclude=exclude, memory_budget_mb=memory_budget_mb
        )
        frame = pd.DataFrame({"head": array[:, 0], "relation": array[:, 1], "tail": array[:, 2], "side": side})
        for rank_type, values in result.ranks().items():
            frame[f"rank_{rank_type}"] = values
        frame["num_candidates"] = result.num_candidates
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def constant_scorer_ranks(
    triples, known_triples, num_entities: int, sides: Sequence[str] = _SIDES
) -> pd.DataFrame:
    """The ranks a constant scorer must get, from the definitions alone (no scores, no engine).

    With every candidate tied, for a query with true entity ``c`` and ``|S|`` candidates left after filtering:
    optimistic 1, pessimistic ``|S|``, realistic ``(|S| + 1) / 2``, non-deterministic ``1 + #{kept j < c}`` (``c``'s
    position among the kept candidates in entity-ID order).

    :return: the columns of :func:`rank_split`
    """
    array = _triples(triples, "triples")
    known = _triples(known_triples, "known_triples")
    num_relations = int(max(array[:, 1].max(initial=-1), known[:, 1].max(initial=-1))) + 1
    index = FilterIndex(known, num_entities=num_entities, num_relations=max(num_relations, 1))
    frames = []
    for side in sides:
        anchor_col, answer_col = (0, 2) if side == "tail" else (2, 0)
        true = array[:, answer_col]
        rows, answers = index.lookup(side, array[:, anchor_col], array[:, 1])
        other = answers != true[rows]  # the true entity is never filtered
        removed = np.bincount(rows[other], minlength=len(array))
        removed_before = np.bincount(rows[other & (answers < true[rows])], minlength=len(array))
        num_candidates = num_entities - removed
        frames.append(
            pd.DataFrame(
                {
                    "head": array[:, 0],
                    "relation": array[:, 1],
                    "tail": array[:, 2],
                    "side": side,
                    "rank_optimistic": np.ones(len(array), dtype=np.int64),
                    "rank_realistic": (num_candidates + 1) / 2.0,
                    "rank_pessimistic": num_candidates.astype(np.int64),
                    "rank_nondeterministic": (true - removed_before + 1).astype(np.int64),
                    "num_candidates": num_candidates.astype(np.int64),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


# ----------------------------------------------------------------------------------------------------------------
# rank types of the trained models (from the collated metrics table)


_METRICS_COLUMNS = ["dataset", "model", "seed", "split", "side", "rank_type", "metric", "value"]
_KEYS = ["dataset", "model", "seed", "split", "side", "metric"]


def rank_types_table(
    metrics: pd.DataFrame,
    datasets: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    source: str = "metrics table",
) -> pd.DataFrame:
    """Every metric under the four rank types side by side, with the spread between them.

    :param metrics: the collated metrics table (columns ``dataset, model, seed, split, side, rank_type, metric,
        value``)
    :param datasets: keep only these datasets (``None``: all)
    :param models: keep only these models (``None``: all)
    :param source: how to name the input in error messages
    :return: one row per (dataset, model, seed, split, side, metric) for every metric defined under all four rank
        types (the adjusted and z-scored metrics exist for the realistic rank only and are left out): columns
        ``optimistic, realistic, pessimistic, nondeterministic``, ``spread`` (largest minus smallest of the four) and
        ``rel_spread`` (spread over the absolute realistic value; NaN where that is 0), sorted
    """
    missing = [c for c in _METRICS_COLUMNS if c not in metrics.columns]
    if missing:
        raise ValueError(
            f"{source}: missing columns {missing}; expected {_METRICS_COLUMNS} (results/tables/metrics.tsv)"
        )
    frame = metrics
    for column, keep in (("dataset", datasets), ("model", models)):
        if keep is not None:
            unknown = sorted(set(keep) - set(frame[column]))
            if unknown:
                raise ValueError(f"{source}: no rows for {column} {unknown}; present: {sorted(set(frame[column]))}")
            frame = frame[frame[column].isin(list(keep))]
    frame = frame[frame["rank_type"].isin(RANK_TYPES)]
    duplicated = frame.duplicated(_KEYS + ["rank_type"])
    if duplicated.any():
        row = frame[duplicated].iloc[0]
        raise ValueError(f"{source}: duplicate rows for {dict(row[_KEYS + ['rank_type']])}")
    # a metric counts if it is defined (present) for every rank type; a NaN value (undefined metric) stays NaN
    present = frame.groupby(_KEYS)["rank_type"].nunique()
    full = present[present == len(RANK_TYPES)].index
    wide = frame.pivot(index=_KEYS, columns="rank_type", values="value").reindex(columns=list(RANK_TYPES))
    wide = wide.loc[wide.index.isin(full)]
    values = wide.to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = values.max(axis=1) - values.min(axis=1)
        realistic = np.abs(wide["realistic"].to_numpy(dtype=float))
        rel = np.where(realistic > 0, spread / np.where(realistic > 0, realistic, 1.0), np.nan)
    out = wide.reset_index()
    out.columns.name = None
    out["spread"] = spread
    out["rel_spread"] = rel
    return out.sort_values(_KEYS, kind="stable").reset_index(drop=True)


def write_rank_types_table(
    metrics_path: str | os.PathLike,
    out: str | os.PathLike,
    datasets: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Read ``results/tables/metrics.tsv``, build :func:`rank_types_table` and write it atomically."""
    table = rank_types_table(read_tsv(metrics_path), datasets=datasets, models=models, source=str(metrics_path))
    write_tsv(table, out, sort_by=_KEYS)
    return table


# ----------------------------------------------------------------------------------------------------------------
# reference scorers


def _check_metrics(metrics: Sequence[str]) -> list[str]:
    return [get_metric(key).key for key in metrics]


def _side_views(frame: pd.DataFrame) -> Iterable[tuple[str, pd.DataFrame]]:
    for side in ("head", "tail", "both"):
        part = frame if side == "both" else frame[frame["side"] == side]
        if len(part):
            yield side, part


def reference_scorer_table(
    data: LPData,
    dataset: str,
    split: str,
    metrics: Sequence[str],
    random_seed: int = 0,
    memory_budget_mb: float = 256.0,
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

    keys = _check_metrics(metrics)
    triples = data.factory(split).mapped_triples
    known = data.all_mapped_triples()
    num_entities = data.num_entities
    rows = []

    def add(scorer: str, ranks: pd.DataFrame, expected: pd.DataFrame, std: pd.DataFrame | None, source: str,
            reference_ranks: pd.DataFrame | None) -> None:
        values = compute_metrics(ranks, metrics=keys, source=f"{dataset}/{split}/{scorer}")
        merged = values.merge(expected, on=["side", "rank_type", "metric"], how="left", suffixes=("", "_expected"))
        if std is not None:
            merged = merged.merge(std, on=["side", "metric"], how="left")
        else:
            merged["expected_std"] = 0.0
        deviation = {}
        for side, part in _side_views(ranks):
            for rank_type in RANK_TYPES:
                column = f"rank_{rank_type}"
                if reference_ranks is None:
                    deviation[(side, rank_type)] = np.nan
                else:
                    ref = reference_ranks.loc[part.index, column].to_numpy(dtype=float)
                    deviation[(side, rank_type)] = float(np.abs(part[column].to_numpy(dtype=float) - ref).max())
        for record in merged.itertuples(index=False):
            rows.append(
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
            )

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
    expected_rows = []
    for side, part in _side_views(random):
        moments = expectations(part["num_candidates"].to_numpy(), metrics=keys, num_samples=num_samples, seed=0)
        for record in moments.itertuples(index=False):
            for rank_type in RANK_TYPES:
                expected_rows.append((side, rank_type, record.metric, record.expectation, np.sqrt(record.variance)))
    moments = pd.DataFrame(expected_rows, columns=["side", "rank_type", "metric", "value", "expected_std"])
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


_REFERENCE_KEYS = ["dataset", "split", "side", "scorer", "rank_type", "metric"]


def write_reference_scorer_table(
    dataset_specs: Mapping[str, Mapping[str, Any]],
    data_dir: str | os.PathLike | None,
    out: str | os.PathLike,
    split: str,
    metrics: Sequence[str],
    random_seed: int = 0,
    memory_budget_mb: float = 256.0,
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


# ----------------------------------------------------------------------------------------------------------------
# permutations of the entity IDs


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
    memory_budget_mb: float = 256.0,
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

    keys = _check_metrics(metrics)
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
    memory_budget_mb: float = 256.0,
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


# ----------------------------------------------------------------------------------------------------------------
# figures


_RANK_TYPE_LABELS = {
    "optimistic": "optimistic",
    "realistic": "realistic",
    "pessimistic": "pessimistic",
    "nondeterministic": "non-deterministic",
}
#: metrics drawn on a log axis (the paper's Fig. 1 draws MR on one)
_LOG_METRICS = frozenset({"mr", "gmr", "hmr", "medr"})


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
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    from kgeval.plotting import category_colors, category_markers, new_figure

    keys = _check_metrics(metrics)
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
                ax.set_yscale("log")
                ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
                ax.yaxis.set_major_formatter(ScalarFormatter())
                ax.yaxis.set_minor_formatter(NullFormatter())
    handles, names = axes[0, 0].get_legend_handles_labels()
    unique = dict(zip(names, handles))
    fig.legend(unique.values(), unique.keys(), loc="outside lower center", ncols=len(unique), title="rank type")
    fig.suptitle(f"Rank definitions: {split} split, {side} side(s); grey bar = spread between the rank types")
    return fig


def plot_permutations(table: pd.DataFrame, split: str, side: str, metrics: Sequence[str]):
    """Change of each metric under the non-deterministic rank when the entity IDs are permuted.

    One panel per dataset x metric; x: scorers (reference scorers first, then the models), y: value under a
    permutation minus the value under the original entity IDs, one marker per permutation (and per model seed).

    :param table: :func:`permutation_table`
    :return: the matplotlib figure
    """
    from kgeval.plotting import category_colors, category_markers, new_figure

    keys = _check_metrics(metrics)
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
