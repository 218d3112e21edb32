"""Bootstrap replicates of the test-size sweep's relative changes (S1's Fig. 1 claims).

A sweep ranks one model's nested test pools of several sizes (``num_test``). A claim judges the relative change of a
metric between the smallest and the largest pool, ``(v_max - v_min) / |v_min|``, of the mean over split seeds. Its
replicates cover two sources of variation (a two-stage bootstrap):

- the test mappings (:func:`mapping_units`): a resample draws test mappings with replacement, each bringing both of
  its queries (graph 1 -> graph 2 and back, which are correlated), with the pool's candidates fixed; each pool and
  seed has its own stream;
- the split seeds: each replicate draws the seeds with replacement (its own stream) and averages the drawn seeds'
  replicates, as the table averages its values over seeds; a seed drawn twice contributes two different inner
  resamples. With one seed this stage does nothing.

The metrics of a resample are :class:`kgeval.uncertainty.bootstrap_metrics.RankBlock`'s (realistic ranks), the same as
in ``tables/metrics.tsv``.
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

__all__ = [
    "REPLICATED", "UNIT", "mapping_units", "block_replicates", "seed_means", "change_replicates", "replicates_of"
]

#: the metrics with replicates
REPLICATED: tuple[str, ...] = ("mr", "hits@1", "amr")

#: what the replicates resample, for a claim's ``interval`` column
UNIT = "test mappings (both directions together) of the smallest and largest pools, then split seeds"

_PATH = re.compile(r"testsize/(?P<pair>[^/]+)/(?P<num_train>\d+)/(?P<seed>\d+)/ranks\.parquet$")


def mapping_units(block: pd.DataFrame) -> tuple[np.ndarray, int]:
    """The test mapping of each row of one pool: its ``left`` row (source a, target b) and its ``right`` row (source
    b, target a) are one unit.

    :param block: rows of one ``num_test`` with ``source``, ``target`` and ``side``
    :return: the unit index of each row, and the number of units
    :raises ValueError: when a mapping lacks one of its two directions
    """
    left = (block["side"] == "left").to_numpy()
    first = np.where(left, block["source"].astype(str), block["target"].astype(str))
    second = np.where(left, block["target"].astype(str), block["source"].astype(str))
    codes, uniques = pd.MultiIndex.from_arrays([first, second]).factorize()
    sides = block["side"].nunique()
    per_unit = np.bincount(codes, minlength=len(uniques))
    if (per_unit != sides).any():
        raise ValueError(
            f"{int((per_unit != sides).sum())} of {len(uniques)} test mappings lack one of the {sides} directions "
            "ranked; the test mapping is the resampling unit and needs every ranked direction"
        )
    return codes, len(uniques)


def block_replicates(block: pd.DataFrame, resamples: int, seed: int) -> dict[str, np.ndarray]:
    """MR, Hits@1 and AMR (realistic ranks) of one pool on each resample of its test mappings.

    :param block: rows of one ``num_test`` (``source``, ``target``, ``side``, ``rank_realistic``, ``num_candidates``)
    :return: metric -> shape: (resamples,)
    """
    prepared = RankBlock(
        {"realistic": block["rank_realistic"].to_numpy(dtype=np.float64)},
        block["num_candidates"].to_numpy(dtype=np.int64),
    )
    units, count = mapping_units(block)
    chunks = [prepared.replicates(counts[:, units]) for counts in resample_counts(count, resamples, seed)]
    return {metric: np.concatenate([c["realistic", metric] for c in chunks]) for metric in REPLICATED}


def seed_means(runs: Sequence[np.ndarray], seed: int) -> np.ndarray:
    """The mean over split seeds of each replicate, the seeds drawn with replacement per replicate.

    :param runs: one array of shape (B,) per seed (independent inner resamples)
    :param seed: the seed of the draws of seeds
    :return: shape: (B,); replicate j averages, for each draw k, the drawn seed's replicate ``(j + k) mod B``, so a
        seed drawn twice brings two different inner resamples
    """
    stacked = np.asarray(runs, dtype=float)  # shape: (S, B)
    count, resamples = stacked.shape
    if count == 1:
        return stacked[0]
    drawn = np.random.default_rng(seed).integers(0, count, size=(resamples, count))
    inner = (np.arange(resamples)[:, None] + np.arange(count)[None, :]) % resamples
    return stacked[drawn, inner].mean(axis=1)


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
        columns = ["num_test", "source", "target", "side", "rank_realistic", "num_candidates"]
        ranks = pd.read_parquet(path, columns=columns)
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
        draws = stream_seed(settings.seed, key[0], str(key[1]), "seeds")  # the same seeds drawn for both ends
        for metric in REPLICATED:
            first = seed_means([low[metric] for low, _ in runs], draws)
            last = seed_means([high[metric] for _, high in runs], draws)
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
