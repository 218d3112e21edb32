"""Bootstrap replicates of the test-size sweep's relative changes (S1's Fig. 1 claims).

A sweep ranks one model's nested test pools of several sizes (``num_test``). A claim judges the relative change of a
metric between the smallest and the largest pool, ``(v_max - v_min) / |v_min|``, of the mean over split seeds. Its
replicates resample the evaluation queries (rows, both sides) of each pool independently, with the pool's candidates
fixed, and average each seed's replicates as the table averages its values. The metrics of a resample are
:class:`kgeval.uncertainty.bootstrap_metrics.RankBlock`'s (realistic ranks), the same as in ``tables/metrics.tsv``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kgeval.uncertainty.bootstrap_metrics import RankBlock
from kgeval.uncertainty.resampling import BootstrapSettings
from kgeval.uncertainty.resampling import resample_counts, stream_seed

__all__ = ["REPLICATED", "block_replicates", "change_replicates", "replicates_of"]

#: the metrics with replicates
REPLICATED: tuple[str, ...] = ("mr", "hits@1", "amr")

_PATH = re.compile(r"testsize/(?P<pair>[^/]+)/(?P<num_train>\d+)/(?P<seed>\d+)/ranks\.parquet$")


def block_replicates(block: pd.DataFrame, resamples: int, seed: int) -> dict[str, np.ndarray]:
    """MR, Hits@1 and AMR (realistic ranks) of one pool's rows on each resample.

    :param block: rows of one ``num_test`` (``rank_realistic``, ``num_candidates``)
    :return: metric -> shape: (resamples,)
    """
    prepared = RankBlock(
        {"realistic": block["rank_realistic"].to_numpy(dtype=np.float64)},
        block["num_candidates"].to_numpy(dtype=np.int64),
    )
    chunks = [prepared.replicates(counts) for counts in resample_counts(len(block), resamples, seed)]
    return {metric: np.concatenate([c["realistic", metric] for c in chunks]) for metric in REPLICATED}


def _path_keys(path: str) -> tuple[str, int, int]:
    match = _PATH.search(os.path.normpath(path).replace(os.sep, "/"))
    if match is None:
        raise ValueError(f"{path}: expected a path ending in testsize/<pair>/<num_train>/<seed>/ranks.parquet")
    return match["pair"], int(match["num_train"]), int(match["seed"])


def change_replicates(
    ranks_paths: Sequence[str | os.PathLike], settings: BootstrapSettings
) -> dict[tuple[str, int], dict[str, np.ndarray]]:
    """Replicates of the relative change smallest -> largest pool, per (pair, #train), of the seed-mean metrics.

    :param ranks_paths: every sweep's ``.../testsize/<pair>/<num_train>/<seed>/ranks.parquet``
    :return: ``(pair, num_train)`` -> metric -> shape: (resamples,); settings with one pool size are left out
    """
    ends: dict[tuple[str, int], list[tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]] = {}
    for path in sorted(map(str, ranks_paths)):
        pair, num_train, seed = _path_keys(path)
        ranks = pd.read_parquet(path, columns=["num_test", "rank_realistic", "num_candidates"])
        sizes = sorted(ranks["num_test"].unique())
        if len(sizes) < 2:
            continue
        stream = [stream_seed(settings.seed, pair, str(num_train), str(seed), str(s)) for s in (sizes[0], sizes[-1])]
        low, high = (
            block_replicates(ranks[ranks["num_test"] == s], settings.resamples, st)
            for s, st in zip((sizes[0], sizes[-1]), stream)
        )
        ends.setdefault((pair, num_train), []).append((low, high))
    out = {}
    for key, runs in ends.items():
        changes = {}
        for metric in REPLICATED:
            first = np.mean([low[metric] for low, _ in runs], axis=0)
            last = np.mean([high[metric] for _, high in runs], axis=0)
            with np.errstate(divide="ignore", invalid="ignore"):
                changes[metric] = np.where(first != 0, (last - first) / np.abs(first), np.nan)
        out[key] = changes
    return out


def replicates_of(changes: Mapping[tuple[str, int], Mapping[str, np.ndarray]], pair: str, num_train: int, metric: str):
    """The replicates of one setting and metric (KeyError naming the setting if it has none)."""
    try:
        return np.asarray(changes[(pair, int(num_train))][metric], dtype=float)
    except KeyError:
        raise KeyError(f"no bootstrap replicates of {metric} for pair {pair}, #train {num_train}") from None
