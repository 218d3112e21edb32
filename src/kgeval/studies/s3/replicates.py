"""Bootstrap replicates of the S3 table values the claims judge: Hits@1 per name split and MRR on all test mappings.

The unit resampled is the test mapping (one row per mapping on the evaluated side, as OpenEA evaluates graph 1 ->
graph 2): each run's test mappings, sorted by their ids, are resampled with replacement from a stream seeded by the
setting (dataset, bias, training ratio) and the split seed but not the method, so the methods of one setting, which
share its test mappings, are resampled together and a difference between two of them is paired; the two contexts of a
claim hold different test mappings, so their resamples are independent. A split's value on a resample is the mean
over the resampled mappings that fall into it.

**Several seeds** (each a training seed and a draw of the seed mappings) are pooled by a two-stage bootstrap
(:func:`pool_seeds`): each replicate draws the setting's seeds with replacement, and each drawn seed brings one of its
own test-mapping resamples (another one each time a seed is drawn again); the replicate is the mean over the drawn
seeds, as the table's value is the mean over seeds. The seed draws come from a stream of the setting, not the method,
so the methods of a setting stay paired. With one seed the interval covers the test mappings only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kgeval.studies.s3.features import NAME_SPLITS
from kgeval.studies.s3.tables import parse_run_path
from kgeval.uncertainty.resampling import BootstrapSettings
from kgeval.uncertainty.resampling import resample_counts, stream_seed

__all__ = ["REPLICATED", "run_replicates", "pool_seeds", "setting_replicates"]

#: the wide-table columns that get replicates
REPLICATED: tuple[str, ...] = (*(f"hits@1_{s}" for s in NAME_SPLITS), "hits@1_all", "mrr_all")


def run_replicates(
    ranks: pd.DataFrame, features: pd.DataFrame, resamples: int, seed: int, side: str = "left"
) -> dict[str, np.ndarray]:
    """The replicated columns (:data:`REPLICATED`) of one run, realistic ranks.

    :param ranks: the run's ranks table (``id1, id2, side, rank_realistic``)
    :param features: ``id1, id2, name_split``
    :return: column -> shape: (resamples,) (NaN where a resample holds no mapping of the split)
    """
    part = ranks[ranks["side"] == side].merge(features[["id1", "id2", "name_split"]], on=["id1", "id2"], how="left")
    part = part.sort_values(["id1", "id2"], kind="stable")
    if part.empty:
        return {c: np.full(resamples, np.nan) for c in REPLICATED}
    rank = part["rank_realistic"].to_numpy(dtype=np.float64)
    columns = {"hits@1_all": (rank <= 1).astype(float), "mrr_all": 1.0 / rank}
    members = {"hits@1_all": np.ones(len(part)), "mrr_all": np.ones(len(part))}
    for split in NAME_SPLITS:
        inside = (part["name_split"] == split).to_numpy(dtype=float)
        columns[f"hits@1_{split}"] = (rank <= 1) * inside
        members[f"hits@1_{split}"] = inside
    values = np.stack([columns[c] for c in REPLICATED], axis=1)
    sizes = np.stack([members[c] for c in REPLICATED], axis=1)
    out = []
    for counts in resample_counts(len(part), resamples, seed):
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append((counts @ values) / (counts @ sizes))
    stacked = np.concatenate(out, axis=0)
    return {c: stacked[:, j] for j, c in enumerate(REPLICATED)}


def pool_seeds(runs: Sequence[Mapping[str, np.ndarray]], stream: int) -> dict[str, np.ndarray]:
    """The two-stage bootstrap of the module docstring over one setting's runs (in seed order).

    :param runs: per seed, column -> shape: (resamples,) its test-mapping replicates (:func:`run_replicates`)
    :param stream: the setting's seed (not the method's: the methods of a setting draw the same seeds)
    :return: column -> shape: (resamples,); with one run, that run's replicates
    """
    if len(runs) == 1:
        return {c: np.asarray(runs[0][c]) for c in REPLICATED}
    k = len(runs)
    resamples = len(next(iter(runs[0].values())))
    rng = np.random.default_rng(stream)
    drawn = rng.integers(0, k, size=(resamples, k))  # the seeds of each replicate, with replacement
    inner = np.stack([rng.permutation(resamples) for _ in range(k)], axis=1)  # one inner resample per position
    out = {}
    for c in REPLICATED:
        values = np.stack([np.asarray(r[c]) for r in runs])  # (seeds, resamples)
        out[c] = values[drawn, inner].mean(axis=1)
    return out


def setting_replicates(
    ranks_paths: Sequence[str | os.PathLike], features: Mapping[str, pd.DataFrame], settings: BootstrapSettings
) -> dict[tuple[str, str, float, str], dict[str, np.ndarray]]:
    """Replicates of every setting, its seeds pooled (:func:`pool_seeds`).

    :param ranks_paths: every run's ``.../s3/<dataset>/runs/<model>/<bias>/<ratio>/<seed>/ranks.parquet``
    :param features: dataset -> its features table
    :return: ``(dataset, bias, train_ratio, model)`` -> column -> shape: (resamples,)
    """
    per_setting: dict[tuple[str, str, float, str], list[tuple[int, dict[str, np.ndarray]]]] = {}
    for path in sorted(map(str, ranks_paths)):
        run = parse_run_path(path)
        ranks = pd.read_parquet(path)
        if ranks.empty:  # a skipped setting
            continue
        key = (str(run["dataset"]), str(run["bias"]), float(run["train_ratio"]), str(run["model"]))
        seed = stream_seed(settings.seed, *map(str, key[:3]), str(run["seed"]))  # not the method: paired
        per_setting.setdefault(key, []).append(
            (int(run["seed"]), run_replicates(ranks, features[key[0]], settings.resamples, seed))
        )
    out = {}
    for key, runs in per_setting.items():
        ordered = [r for _, r in sorted(runs, key=lambda item: item[0])]
        out[key] = pool_seeds(ordered, stream_seed(settings.seed, *map(str, key[:3]), "seeds"))
    return out
