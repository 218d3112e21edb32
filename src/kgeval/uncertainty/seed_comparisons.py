"""Comparisons of two architectures over their training seeds: ``tables/model_comparisons_over_seeds.tsv``.

``tables/model_comparisons.tsv`` compares two trained models of one seed: whether these weights differ on this test
set. Whether two *architectures* differ needs the variation between training runs too. For every dataset and split,
each pair of models that both have at least two seeds gets, for MRR, Hits@10 and AMRI (realistic rank, side
``both``, as :mod:`kgeval.uncertainty.model_comparisons`):

- ``value_a``, ``value_b``: the mean over each model's seeds, and their difference (a - b);
- ``ci_low``, ``ci_high``: a two-stage percentile bootstrap. Replicate j draws each model's seeds with replacement
  (independently per model: the seeds of two models are separate training runs) and evaluates every drawn seed on the
  j-th resample of the test triples, the one resample of ``tables/metrics.tsv`` that every seed and model shares,
  because they share the test set. The interval covers both sources, training seeds and the test set's sampling;
- ``p_value``: the exact permutation test of the seed labels. The ``k_a + k_b`` per-seed values (each on the whole
  test set) are split into two groups of ``k_a`` and ``k_b`` in every possible way; p is the share of splits whose
  absolute mean difference reaches the observed one. ``p_min`` is the smallest p the design can reach (2 seeds each:
  1/3, 3 each: 1/10, 4 each: 1/35), so a pair can be significant only when ``p_min`` is below the level. Above
  :data:`EXACT_LIMIT` splits, ``uncertainty.permutations`` random splits are drawn instead (``ci_method`` says so).
  The test conditions on the test set: it asks whether the training runs of the two architectures differ;
- ``p_holm``, ``significant`` and ``winner`` as in ``tables/model_comparisons.tsv``: Holm over the pairs of one dataset,
  split and metric.

SciPy's ``permutation_test`` with ``permutation_type="independent"`` enumerates the same splits but reports neither the
smallest reachable p nor a shared stream, and needs one call per pair and metric; the enumeration here serves the
three metrics at once.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kgeval.io import write_tsv
from kgeval.uncertainty.comparisons import holm
from kgeval.uncertainty.model_comparisons import (
    SIDE,
    ComparedMetrics,
    QueryValues,
    check_same_queries,
    metric_replicates,
    metric_values,
    read_ranks_tables,
)
from kgeval.uncertainty.resampling import BootstrapSettings, percentile_interval, stream_seed

__all__ = ["COLUMNS", "EXACT_LIMIT", "seed_permutation_pvalues", "seed_comparisons", "seed_comparisons_file"]

#: the columns of tables/model_comparisons_over_seeds.tsv, in order
COLUMNS: list[str] = [
    "dataset", "split", "side", "rank_type", "metric", "model_a", "model_b", "seeds_a", "seeds_b", "value_a",
    "value_b", "difference", "ci_low", "ci_high", "ci_method", "p_value", "p_min", "p_holm", "significant", "winner",
]
_KEYS = ["dataset", "split", "metric", "model_a", "model_b"]

#: the most splits of the seed labels enumerated exactly
EXACT_LIMIT = 200_000


def _splits(total: int, size: int, permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    """Membership masks of group a, shape: (splits, total): every split, or random ones above :data:`EXACT_LIMIT`."""
    if math.comb(total, size) <= EXACT_LIMIT:
        masks = np.zeros((math.comb(total, size), total), dtype=bool)
        for i, members in enumerate(itertools.combinations(range(total), size)):
            masks[i, list(members)] = True
        return masks, True
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((permutations, total)), axis=1)
    masks = np.zeros((permutations + 1, total), dtype=bool)
    masks[0, :size] = True  # the observed split counts, as in a Monte Carlo permutation p-value
    np.put_along_axis(masks[1:], order[:, :size], True, axis=1)
    return masks, False


def seed_permutation_pvalues(
    values_a: np.ndarray, values_b: np.ndarray, permutations: int, seed: int
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Two-sided permutation p-values of the mean difference of two groups of seeds, one per column.

    :param values_a: shape: (k_a, m), per seed of model a the value of each of m metrics
    :param values_b: shape: (k_b, m)
    :param permutations: random splits drawn when the exact enumeration exceeds :data:`EXACT_LIMIT`
    :param seed: the seed of those random splits
    :return: p (shape: (m,)), the smallest reachable p (shape: (m,)), and whether the enumeration was exact
    """
    pooled = np.vstack([values_a, values_b]).astype(float)  # shape: (k, m)
    total, size = pooled.shape[0], values_a.shape[0]
    masks, exact = _splits(total, size, permutations, seed)
    group_a = masks.astype(float) @ pooled / size
    group_b = (~masks).astype(float) @ pooled / (total - size)
    stats = np.abs(group_a - group_b)  # shape: (splits, m)
    observed = np.abs(values_a.mean(axis=0) - values_b.mean(axis=0))
    tolerance = 1e-12 * np.maximum(1.0, np.abs(pooled).max(axis=0))
    p = (stats >= observed - tolerance).mean(axis=0)
    p_min = (stats >= stats.max(axis=0) - tolerance).mean(axis=0)
    return p, p_min, exact


def _method(settings: BootstrapSettings, exact: bool) -> str:
    interval = settings.describe(
        "training seeds (each model's drawn with replacement), then test triples (a triple's head and tail queries "
        "together, shared by every seed and model)"
    )
    test = "exact permutation test of the seed labels" if exact else (
        f"permutation test of the seed labels, {settings.permutations:,} random splits"
    )
    return (
        f"two-stage {interval}, not adjusted; covers training seeds and the test set's sampling: compares "
        f"architectures; p: {test}, conditional on the test set; p_holm: Holm over the model pairs of one dataset, "
        "split and metric"
    )


def _drawn_mean(replicates: np.ndarray, draws: np.random.Generator) -> np.ndarray:
    """Per bootstrap replicate j, the mean over seeds drawn with replacement of each drawn seed's replicate j.

    :param replicates: shape: (seeds, B, m)
    :return: shape: (B, m)
    """
    count, resamples = replicates.shape[:2]
    drawn = draws.integers(0, count, size=(resamples, count))
    return replicates[drawn, np.arange(resamples)[:, None]].mean(axis=1)


def _pair_rows(dataset: str, split: str, runs: Mapping[str, Mapping[int, QueryValues]], settings, names) -> list:
    """The rows of every pair of models of one dataset and split (models with at least two seeds)."""
    first = next(iter(next(iter(runs.values())).values()))
    expected = float(np.mean(0.5 * (first.num_candidates + 1.0)))
    keyed = {(model, s): q for model, seeds in runs.items() for s, q in seeds.items()}
    compared = first.compared
    replicates = metric_replicates(keyed, settings, names)  # (model, seed) -> shape: (B, m)
    values = {key: metric_values(q.columns.mean(axis=0), np.asarray(expected), compared) for key, q in keyed.items()}
    rows = []
    for a, b in itertools.combinations(sorted(runs), 2):
        seeds_a, seeds_b = sorted(runs[a]), sorted(runs[b])
        va = np.array([values[a, s] for s in seeds_a])  # shape: (k_a, 3)
        vb = np.array([values[b, s] for s in seeds_b])
        draws = np.random.default_rng(stream_seed(settings.seed, *names, "seeds", a, b))
        drawn = [
            _drawn_mean(np.stack([replicates[m, s] for s in seeds]), draws)
            for m, seeds in ((a, seeds_a), (b, seeds_b))
        ]
        differences = drawn[0] - drawn[1]  # shape: (B, 3)
        p, p_min, exact = seed_permutation_pvalues(
            va, vb, settings.permutations, stream_seed(settings.seed, *names, "seed_labels", a, b)
        )
        method = _method(settings, exact)
        for j, metric in enumerate(compared.metrics):
            low, high = percentile_interval(differences[:, j], settings.level)
            mean_a, mean_b = float(va[:, j].mean()), float(vb[:, j].mean())
            seeds = (",".join(map(str, seeds_a)), ",".join(map(str, seeds_b)))
            rows.append((
                dataset, split, SIDE, compared.rank_type, metric, a, b, *seeds,
                mean_a, mean_b, mean_a - mean_b, low, high, method, float(p[j]), float(p_min[j]),
            ))
    return rows


def seed_comparisons(
    ranks: Mapping[tuple[str, str, str, int], pd.DataFrame],
    settings: BootstrapSettings,
    sources: Mapping[tuple[str, str, str, int], str] | None = None,
    compared: ComparedMetrics = ComparedMetrics(),
) -> pd.DataFrame:
    """``tables/model_comparisons_over_seeds.tsv``: every two models with at least two seeds each, per dataset and
    split (module docstring).

    :param ranks: (dataset, model, split, seed) -> ranks table
    :param sources: the same keys -> how to name the table in errors (e.g. its path)
    :return: :data:`COLUMNS`, sorted by dataset, split, metric, model_a, model_b (header only without such pairs)
    """
    groups: dict[tuple[str, str], dict[str, dict[int, QueryValues]]] = {}
    for key, frame in sorted(ranks.items()):
        dataset, model, split, seed = key
        source = (sources or {}).get(key, f"ranks of {dataset}/{model}/{seed}/{split}")
        groups.setdefault((dataset, split), {}).setdefault(model, {})[int(seed)] = QueryValues(frame, source, compared)
    rows = []
    for (dataset, split), models in sorted(groups.items()):
        runs = {model: seeds for model, seeds in models.items() if len(seeds) >= 2}
        if len(runs) < 2:
            continue
        keyed = {f"{model}/{s}": q for model, seeds in runs.items() for s, q in seeds.items()}
        check_same_queries(keyed, {k: q.source for k, q in keyed.items()})
        rows += _pair_rows(dataset, split, runs, settings, (dataset, split))
    table = pd.DataFrame(rows, columns=COLUMNS[:17])
    table["p_holm"] = np.nan
    for _, index in table.groupby(["dataset", "split", "metric"], sort=False).groups.items():
        table.loc[index, "p_holm"] = holm(table.loc[index, "p_value"].to_numpy(dtype=float))
    table["significant"] = (table["p_holm"] <= 1.0 - settings.level).astype(bool)
    a_wins = table["difference"] > 0
    table["winner"] = np.where(~table["significant"], "none", np.where(a_wins, table["model_a"], table["model_b"]))
    return table[COLUMNS].sort_values(_KEYS, kind="stable").reset_index(drop=True)


def seed_comparisons_file(
    ranks_paths: Sequence[str | os.PathLike],
    out: str | os.PathLike,
    settings: BootstrapSettings,
    compared: ComparedMetrics = ComparedMetrics(),
) -> pd.DataFrame:
    """:func:`seed_comparisons` of ranks tables ``.../{dataset}/{model}/{seed}/{split}.parquet``, written atomically."""
    ranks, sources = read_ranks_tables(ranks_paths)
    table = seed_comparisons(ranks, settings, sources, compared)
    write_tsv(table, out, sort_by=_KEYS)
    return table
