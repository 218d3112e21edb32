"""The S1 test-size sweep (paper 000, Sec. 4, Fig. 1): one model, nested test sets of increasing size.

For every number of training alignments ``k`` and split seed, :mod:`kgeval.studies.s1.alignment_runs` trains one GCN-Align model.
Here each model is evaluated on the nested test subsets of :mod:`kgeval.studies.s1.splits` (the first t pairs of the test
pool, for each configured t that fits), so any change of a metric along t is caused by the candidate set alone.

Files (``{key}``, ``{k}``, ``{seed}`` as in :mod:`kgeval.studies.s1.alignment_runs`):

- ``results/s1/testsize/{key}/{k}/{seed}/ranks.parquet`` and ``.../metrics.tsv``: :func:`evaluate_testsize_to_files`,
  the EA ranks table plus a ``num_test`` column (one block of 2t rows per test size t), and its metrics
  ``num_test, side, rank_type, metric, value``;
- ``results/s1/testsize/{key}/metrics.tsv``: :func:`collate_testsize_to_file`,
  ``num_train, seed, num_test, side, rank_type, metric, value``;
- ``results/s1/testsize/{key}/slopes.tsv``: :func:`slopes_to_file`, per (num_train, metric) the least-squares slope
  of the seed-mean metric against ``num_test`` and the metric's relative change over the swept range.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kgeval.ea.data import load_ea_pair
from kgeval.ea.evaluation import ea_metrics, ea_ranks_frame, rank_alignment_nested
from kgeval.studies.s1.splits import nested_sizes
from kgeval.studies.s1.alignment_runs import load_representations, read_split
from kgeval.io import read_tsv, write_parquet, write_tsv
from kgeval.config import MEMORY_BUDGET_MB

__all__ = [
    "FIGURE_METRICS",
    "testsize_ranks",
    "testsize_metrics",
    "SweepFiles",
    "evaluate_testsize_to_files",
    "collate_testsize_to_file",
    "slopes",
    "slopes_to_file",
]

#: the metrics of the sweep's figures: the paper's Fig. 1 (MR, Hits@1, AMR) and the added panel (AMRI, MRR, ZMRR)
FIGURE_METRICS: tuple[str, ...] = ("mr", "hits@1", "amr", "amri", "mrr", "zmrr")

def testsize_ranks(
    left,
    right,
    pool: np.ndarray,
    test_sizes: Iterable[int],
    labels1: Sequence[str],
    labels2: Sequence[str],
    memory_budget_mb: float = MEMORY_BUDGET_MB,
) -> pd.DataFrame:
    """Ranks of one model on every nested test subset that fits into the pool.

    :param left: shape (n1, d)
    :param right: shape (n2, d)
    :param pool: shape (p, 2), the test pool in nested order
    :param test_sizes: the requested sizes (sizes larger than p are skipped)
    :returns: the EA ranks table with a leading ``num_test`` column, sorted by num_test, side, source, target
    """
    sizes = nested_sizes(len(pool), test_sizes)
    if not sizes:
        raise ValueError(f"no test size in {sorted(test_sizes)} fits into the test pool of {len(pool)} pairs")
    # the subsets are nested: the distances of the largest are computed once (rank_alignment_nested)
    results = rank_alignment_nested(left, right, pool, sizes, memory_budget_mb)
    frames = []
    for size in sizes:
        table = ea_ranks_frame(results[size], pool[:size], labels1, labels2)
        table.insert(0, "num_test", size)
        frames.append(table)
    return pd.concat(frames, ignore_index=True)


def testsize_metrics(
    ranks: pd.DataFrame, metrics: Sequence[str] | None = None, source: str = "sweep ranks"
) -> pd.DataFrame:
    """Metrics of every test size of one model: ``num_test, side, rank_type, metric, value``."""
    frames = []
    for size, block in ranks.groupby("num_test", sort=True):
        table = ea_metrics(block, metrics=metrics, source=f"{source} (num_test={size})")
        table.insert(0, "num_test", int(size))
        frames.append(table)
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class SweepFiles:
    """One sweep job's files: the trained model's ``representations.pt`` and ``split.tsv`` in, ranks and metrics
    out."""

    representations: str | os.PathLike
    split: str | os.PathLike
    ranks: str | os.PathLike
    metrics: str | os.PathLike


def evaluate_testsize_to_files(
    key: str,
    spec: dict[str, Any],
    data_dir: str | None,
    files: SweepFiles,
    test_sizes: Sequence[int],
    memory_budget_mb: float = MEMORY_BUDGET_MB,
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Rank one trained model on all nested test subsets; write the ranks table and its metrics (every metric of
    :mod:`kgeval.metrics` unless ``metrics`` names some)."""
    pair = load_ea_pair(key, spec, data_dir)
    left, right = load_representations(files.representations)
    _, pool = read_split(files.split)
    ranks = testsize_ranks(left, right, pool, test_sizes, pair.entity_labels1, pair.entity_labels2, memory_budget_mb)
    table = testsize_metrics(ranks, metrics=metrics, source=str(files.ranks))
    write_parquet(ranks, files.ranks)
    write_tsv(table, files.metrics, sort_by=["num_test", "side", "rank_type", "metric"])
    return table


_PATH_PATTERN = re.compile(r"(?P<num_train>\d+)/(?P<seed>\d+)/[^/]+$")


def collate_testsize_to_file(paths: Iterable[str | os.PathLike], out: str | os.PathLike) -> pd.DataFrame:
    """Stack per-model sweep metrics; ``num_train`` and ``seed`` are read from each path's ``.../{k}/{seed}/`` part."""
    frames = []
    for path in paths:
        match = _PATH_PATTERN.search(Path(path).as_posix())
        if match is None:
            raise ValueError(f"{path}: expected a path ending in .../<num_train>/<seed>/<file>")
        table = read_tsv(path)
        table.insert(0, "seed", int(match["seed"]))
        table.insert(0, "num_train", int(match["num_train"]))
        frames.append(table)
    if not frames:
        raise ValueError("collate_testsize_to_file: no input tables")
    table = pd.concat(frames, ignore_index=True)
    keys = ["num_train", "seed", "num_test", "side", "rank_type", "metric"]
    write_tsv(table, out, sort_by=keys)
    return table


def slopes(
    table: pd.DataFrame, side: str = "both", rank_type: str = "realistic", metrics: Sequence[str] = FIGURE_METRICS
) -> pd.DataFrame:
    """Least-squares slope of each metric (mean over seeds) against the number of test alignments, per #train.

    :param table: the collated sweep table
    :returns: columns ``num_train, metric, num_sizes, min_test, max_test, slope, intercept, value_at_min,
        value_at_max, relative_change`` (``relative_change`` = (value at max - value at min) / |value at min|)
    """
    part = table[(table["side"] == side) & (table["rank_type"] == rank_type) & table["metric"].isin(metrics)]
    mean = part.groupby(["num_train", "metric", "num_test"], as_index=False)["value"].mean()
    rows = []
    for (num_train, metric), block in mean.groupby(["num_train", "metric"], sort=True):
        block = block.sort_values("num_test")
        x = block["num_test"].to_numpy(dtype=float)
        y = block["value"].to_numpy(dtype=float)
        if len(x) >= 2 and np.isfinite(y).all():
            slope, intercept = np.polyfit(x, y, deg=1)
        else:
            slope, intercept = float("nan"), float("nan")
        first, last = y[0], y[-1]
        rows.append(
            {
                "num_train": int(num_train),
                "metric": metric,
                "num_sizes": len(x),
                "min_test": int(x[0]),
                "max_test": int(x[-1]),
                "slope": float(slope),
                "intercept": float(intercept),
                "value_at_min": float(first),
                "value_at_max": float(last),
                "relative_change": float((last - first) / abs(first)) if first else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def slopes_to_file(
    collated_path: str | os.PathLike, out: str | os.PathLike, rank_type: str = "realistic"
) -> pd.DataFrame:
    """Write :func:`slopes` of a collated sweep table."""
    table = slopes(read_tsv(collated_path), rank_type=rank_type)
    write_tsv(table, out, sort_by=["metric", "num_train"])
    return table
