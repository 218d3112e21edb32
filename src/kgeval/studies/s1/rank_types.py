"""S1, part A (paper 000, Sec. 2.1 and 3.1): how the four rank definitions differ, and why ties matter.

Three results, each in its own module:

* :func:`rank_types_table` (here) - every metric of every trained model under the optimistic, realistic,
  pessimistic and non-deterministic rank, side by side, with the spread between them. It reads the collated metrics
  table (``results/tables/metrics.tsv``); nothing is recomputed.
* :func:`kgeval.studies.s1.reference_table.reference_scorer_table` - the two reference scorers of
  :mod:`kgeval.studies.s1.reference_scorers`, ranked by the same engine as the models: the constant scorer (every
  candidate ties, so optimistic rank 1, pessimistic ``|S|``, realistic ``(|S| + 1) / 2``) and the random scorer (no
  ties, every rank type the same, expectation ``(|S| + 1) / 2``). Each value stands next to what theory says it
  must be.
* :func:`kgeval.studies.s1.permutations.permutation_table` - the non-deterministic rank breaks ties by entity ID, so
  it changes when the entity IDs are relabeled. Ranks are recomputed under seeded permutations of the entity IDs
  (:class:`~kgeval.studies.s1.reference_scorers.PermutedScorer`: the same scores with the score columns, the true
  entities and the filter sets relabeled) for the reference scorers and every trained model; the table reports each
  metric under the original and the permuted orders and the change. The realistic rank is reported alongside as a
  control: it must not move at all.

Ranks come from :func:`kgeval.studies.s1.split_ranks.rank_split` (the engine's
:func:`kgeval.lp.ranking.rank_from_score_fn`, one score row per (triple, side), filtered by the known train, valid and
test triples, docs/design.md); metrics from :func:`kgeval.metrics.compute_metrics`; the figures are
:mod:`kgeval.studies.s1.rank_type_figures`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kgeval.config import full_datasets
from kgeval.io import read_tsv, write_tsv
from kgeval.metrics import RANK_TYPES, get_metric, supported_rank_types

__all__ = [
    "REFERENCE_SCORERS",
    "ORIGINAL_ORDER",
    "RANK_TYPE_COLUMNS",
    "check_metrics",
    "order_name",
    "side_views",
    "study_settings",
    "rank_types_table",
    "write_rank_types_table",
]

#: the reference scorers, in table and figure order
REFERENCE_SCORERS: tuple[str, ...] = ("constant", "random")
#: name of the unpermuted candidate order (ties broken by the dataset's own entity IDs)
ORIGINAL_ORDER = "entity_id"
#: rank columns of a ranks frame (docs/design.md)
RANK_TYPE_COLUMNS: tuple[str, ...] = tuple(f"rank_{t}" for t in RANK_TYPES)


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
        every = full_datasets(config) if key == "datasets" else list(configured)
        chosen = every if section[key] is None else list(section[key])
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



def check_metrics(metrics: Sequence[str]) -> list[str]:
    return [get_metric(key).key for key in metrics]


def side_views(frame: pd.DataFrame) -> Iterable[tuple[str, pd.DataFrame]]:
    for side in ("head", "tail", "both"):
        part = frame if side == "both" else frame[frame["side"] == side]
        if len(part):
            yield side, part


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
