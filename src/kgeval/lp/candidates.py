"""Filtered candidate counts of a dataset's evaluation triples, from the dataset alone (no model).

In the filtered setting every known answer (train, valid, test) of a query other than the true one is removed, so
the number of candidates of triple ``(h, r, t)`` on side ``tail`` is ``num_entities - #{t' : (h, r, t') known} + 1``
(the true tail is itself known), and symmetrically for side ``head``. These are exactly the ``num_candidates`` of the
ranks tables (:func:`kgeval.lp.ranking.rank_lp` with ``filter_triples = train + valid + test``), in the same row order
(head rows, then tail rows, each in split order), so expectations computed here equal those computed from any
model's ranks, Monte-Carlo draws included.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from kgeval.io import write_tsv
from kgeval.lp.datasets import LPData, load_dataset
from kgeval.lp.filtering import FilterIndex, as_triples_array
from kgeval.metrics import expectations_table

__all__ = ["candidate_counts", "dataset_expectations", "dataset_expectations_to_file"]

#: sides in the ranks tables' row order
SIDES: tuple[str, ...] = ("head", "tail")


def candidate_counts(data: LPData, split: str, index: FilterIndex | None = None) -> pd.DataFrame:
    """The ``side, num_candidates`` columns of the ranks table of ``split``, without scoring anything.

    :param data: the dataset
    :param split: ``"valid"`` or ``"test"`` (or ``"train"``)
    :param index: the filter index of train+valid+test (built when omitted)
    :return: one row per (triple, side): head rows first, then tail rows, each in the split's triple order
    """
    if index is None:
        index = FilterIndex(
            [as_triples_array(t) for t in data.all_mapped_triples()],
            num_entities=data.num_entities,
            num_relations=data.num_relations,
        )
    triples = as_triples_array(data.factory(split).mapped_triples)
    frames = []
    for side in SIDES:
        anchor_col = 2 if side == "head" else 0
        known = index.counts(side, triples[:, anchor_col], triples[:, 1])
        frames.append(pd.DataFrame({"side": side, "num_candidates": (data.num_entities - known + 1).astype(np.int64)}))
    return pd.concat(frames, ignore_index=True)


def dataset_expectations(data: LPData, dataset: str, splits: Sequence[str]) -> pd.DataFrame:
    """The ``expectations.tsv`` rows of one dataset: every metric's expectation and variance per split and side.

    :return: columns ``dataset, split, side, metric, n_ranks, expectation, variance, method``
    """
    index = FilterIndex(
        [as_triples_array(t) for t in data.all_mapped_triples()],
        num_entities=data.num_entities,
        num_relations=data.num_relations,
    )
    frames = [expectations_table(candidate_counts(data, split, index), dataset, split) for split in splits]
    return pd.concat(frames, ignore_index=True)


def dataset_expectations_to_file(
    dataset: str, spec: dict[str, Any], data_dir: str | os.PathLike | None, splits: Sequence[str], out: str
) -> pd.DataFrame:
    """Load a dataset and write its expectations table (``results/datasets/{dataset}/expectations.tsv``)."""
    table = dataset_expectations(load_dataset(dataset, spec, data_dir), dataset, splits)
    write_tsv(table, out, sort_by=["dataset", "split", "side", "metric"])
    return table
