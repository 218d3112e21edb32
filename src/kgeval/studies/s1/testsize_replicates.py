"""Bootstrap replicates of the test-size sweep (S1's Fig. 1 claims): every metric at every test size, jointly.

A sweep ranks one model's nested test pools (``num_test`` = t, the first t test mappings of the pool). The claims read
the seed mean of a metric at every test size of a training size (``num_train``) at once: a line fitted through all
sizes, its goodness of fit, the value at one size, and the difference between training sizes at a test size they
share. Their replicates cover two sources of variation (a two-stage bootstrap):

- the test mappings (:func:`mapping_units`): a resample draws the test mappings of a split seed with replacement,
  each bringing both of its queries (graph 1 -> graph 2 and back, which are correlated), with every pool's candidates
  fixed. One draw serves every test size and every training size of that seed: a mapping drawn twice counts twice in
  every nested pool that holds it, so the sizes (and the training sizes, whose pools of one seed are the same mappings
  up to the size they share, :mod:`kgeval.studies.s1.splits`) are resampled together, never apart;
- the split seeds: each replicate draws the seeds with replacement (one stream per pair, shared by every training and
  test size) and averages the drawn seeds' replicates, as the tables average over seeds; a seed drawn twice brings two
  different inner resamples. With one seed this stage does nothing.

The metrics are the realistic-rank MR, Hits@1, AMR and AMRI of :mod:`kgeval.metrics`, computed from per-mapping sums
(a resample's value is a weighted sum over mappings; the tests check it against :func:`kgeval.metrics.compute_metrics`
on the resampled rows).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kgeval.uncertainty.resampling import BootstrapSettings
from kgeval.uncertainty.resampling import resample_counts, stream_seed

__all__ = [
    "REPLICATED",
    "UNIT",
    "SweepReplicates",
    "mapping_units",
    "mapping_sums",
    "metrics_of_sums",
    "seed_means",
    "sweep_replicates",
]

#: the metrics with replicates
REPLICATED: tuple[str, ...] = ("mr", "hits@1", "amr", "amri")

#: what the replicates resample, for a claim's ``interval`` column
UNIT = "test mappings (both directions together; one draw per split seed shared by every test and training size), then split seeds"

_PATH = re.compile(r"testsize/(?P<pair>[^/]+)/(?P<num_train>\d+)/(?P<seed>\d+)/ranks\.parquet$")
_COLUMNS = ["num_test", "source", "target", "side", "rank_realistic", "num_candidates"]


@dataclass(frozen=True)
class SweepReplicates:
    """One training size's sweep, averaged over split seeds.

    :param sizes: the test sizes, ascending; shape: (S,)
    :param points: metric -> the seed-mean value at each size; shape: (S,)
    :param replicates: metric -> the bootstrap replicates of it; shape: (B, S)
    :param seeds: how many split seeds the mean takes
    """

    sizes: np.ndarray
    points: Mapping[str, np.ndarray]
    replicates: Mapping[str, np.ndarray]
    seeds: int


def mapping_units(block: pd.DataFrame) -> tuple[np.ndarray, pd.MultiIndex]:
    """The test mapping of each row of one pool: its ``left`` row (source a, target b) and its ``right`` row (source
    b, target a) are one unit.

    :param block: rows of one ``num_test`` with ``source``, ``target`` and ``side``
    :return: the unit index of each row, and the units as (graph-1 label, graph-2 label) pairs
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
    return codes, pd.MultiIndex.from_tuples(list(uniques), names=["label1", "label2"])


def mapping_sums(block: pd.DataFrame) -> tuple[pd.MultiIndex, np.ndarray]:
    """Per test mapping of one pool: the sums over its rows of the realistic rank, of the rank-1 indicator, of the
    rank's expectation under random scoring ``(|S| + 1) / 2``, and the number of rows.

    :return: the units and their sums; shape: (U, 4)
    """
    codes, units = mapping_units(block)
    rank = block["rank_realistic"].to_numpy(dtype=np.float64)
    expected = (block["num_candidates"].to_numpy(dtype=np.float64) + 1.0) / 2.0
    columns = (rank, (rank <= 1.0).astype(np.float64), expected, np.ones_like(rank))
    sums = np.stack([np.bincount(codes, weights=c, minlength=len(units)) for c in columns], axis=1)
    return units, sums


def metrics_of_sums(totals: np.ndarray) -> dict[str, np.ndarray]:
    """MR, Hits@1, AMR and AMRI from weighted totals of :func:`mapping_sums`' columns; shape: (..., 4)."""
    rank, hits, expected, rows = np.moveaxis(np.asarray(totals, dtype=np.float64), -1, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "mr": rank / rows,
            "hits@1": hits / rows,
            "amr": rank / expected,
            "amri": 1.0 - (rank - rows) / (expected - rows),
        }


def seed_means(runs: Sequence[np.ndarray], seed: int) -> np.ndarray:
    """The mean over split seeds of each replicate, the seeds drawn with replacement per replicate.

    :param runs: one array of shape (B, ...) per seed (independent inner resamples)
    :param seed: the seed of the draws of seeds
    :return: shape: (B, ...); replicate j averages, for each draw k, the drawn seed's replicate ``(j + k) mod B``, so
        a seed drawn twice brings two different inner resamples
    """
    stacked = np.asarray(runs, dtype=float)  # shape: (seeds, B, ...)
    count, resamples = stacked.shape[:2]
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


def _seed_replicates(
    paths: Mapping[int, str], resamples: int, stream: int
) -> dict[int, tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]]:
    """One split seed's sweeps (num_train -> path): per num_train the sizes, the point values and the replicates
    (metric -> (B, S)) on one shared draw of the seed's test mappings."""
    blocks: dict[int, list[tuple[int, pd.MultiIndex, np.ndarray]]] = {}
    for num_train, path in sorted(paths.items()):
        ranks = pd.read_parquet(path, columns=_COLUMNS)
        blocks[num_train] = [(int(t), *mapping_sums(b)) for t, b in ranks.groupby("num_test", sort=True)]
    universe = pd.MultiIndex.from_tuples(
        sorted({u for parts in blocks.values() for _, units, _ in parts for u in units}), names=["label1", "label2"]
    )
    positions = {k: [universe.get_indexer(units) for _, units, _ in parts] for k, parts in blocks.items()}
    chunks: dict[int, list[np.ndarray]] = {k: [] for k in blocks}
    for counts in resample_counts(len(universe), resamples, stream):
        for k, parts in blocks.items():
            totals = [counts[:, idx].astype(np.float64) @ sums for idx, (_, _, sums) in zip(positions[k], parts)]
            chunks[k].append(np.stack(totals, axis=1))  # shape: (chunk, S, 4)
    out = {}
    for k, parts in blocks.items():
        sizes = np.array([t for t, _, _ in parts], dtype=np.int64)
        points = metrics_of_sums(np.stack([sums.sum(axis=0) for _, _, sums in parts]))
        out[k] = (sizes, points, metrics_of_sums(np.concatenate(chunks[k])))
    return out


def sweep_replicates(
    ranks_paths: Sequence[str | os.PathLike], settings: BootstrapSettings
) -> dict[tuple[str, int], SweepReplicates]:
    """The seed-mean metrics of every sweep and their joint replicates (module docstring).

    :param ranks_paths: every sweep's ``.../testsize/<pair>/<num_train>/<seed>/ranks.parquet``
    :return: ``(pair, num_train)`` -> its sweep
    :raises ValueError: when the seeds of one training size rank different test sizes
    """
    by_seed: dict[tuple[str, int], dict[int, str]] = {}
    for path in sorted(map(str, ranks_paths)):
        pair, num_train, seed = _path_keys(path)
        by_seed.setdefault((pair, seed), {})[num_train] = path
    runs: dict[tuple[str, int], list] = {}
    for (pair, seed), paths in sorted(by_seed.items()):
        stream = stream_seed(settings.seed, pair, str(seed))
        for k, run in _seed_replicates(paths, settings.resamples, stream).items():
            runs.setdefault((pair, k), []).append(run)
    out = {}
    for (pair, k), parts in sorted(runs.items()):
        sizes = parts[0][0]
        if any(not np.array_equal(p[0], sizes) for p in parts):
            raise ValueError(f"{pair}, #train {k}: the split seeds rank different test sizes; rerun the sweep")
        draws = stream_seed(settings.seed, pair, "seeds")  # the same seeds drawn for every training and test size
        out[pair, k] = SweepReplicates(
            sizes=sizes,
            points={m: np.mean([p[1][m] for p in parts], axis=0) for m in REPLICATED},
            replicates={m: seed_means([p[2][m] for p in parts], draws) for m in REPLICATED},
            seeds=len(parts),
        )
    return out
