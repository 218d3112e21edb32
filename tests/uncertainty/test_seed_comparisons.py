"""Comparisons over training seeds (kgeval.uncertainty.seed_comparisons): the permutation test of the seed labels
against brute-force enumeration, the two-stage interval against resampled rows, and the table's shape."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from kgeval.uncertainty.bootstrap_metrics import BootstrapSettings, canonical_order
from kgeval.uncertainty.resampling import percentile_interval, resample_indices, stream_seed
from kgeval.uncertainty.seed_comparisons import (
    COLUMNS,
    seed_comparisons,
    seed_comparisons_file,
    seed_permutation_pvalues,
)

SETTINGS = BootstrapSettings(resamples=150, permutations=500, level=0.95, seed=4)


def brute_force_p(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Two-sided p of |mean(a) - mean(b)| over every split of the pooled values, and the smallest reachable p."""
    pooled = np.concatenate([a, b])
    stats = []
    for members in itertools.combinations(range(len(pooled)), len(a)):
        inside = np.zeros(len(pooled), dtype=bool)
        inside[list(members)] = True
        stats.append(abs(pooled[inside].mean() - pooled[~inside].mean()))
    stats = np.array(stats)
    observed = abs(a.mean() - b.mean())
    return float(np.mean(stats >= observed - 1e-12)), float(np.mean(stats >= stats.max() - 1e-12))


@pytest.mark.parametrize("k_a, k_b", [(2, 2), (3, 3), (4, 3), (5, 5)])
def test_permutation_p_values_equal_brute_force(k_a, k_b):
    rng = np.random.default_rng(k_a * 10 + k_b)
    a, b = rng.normal(0.3, 0.02, (k_a, 3)), rng.normal(0.31, 0.02, (k_b, 3))
    p, p_min, exact = seed_permutation_pvalues(a, b, 100, 0)
    assert exact
    for j in range(3):
        expected_p, expected_min = brute_force_p(a[:, j], b[:, j])
        assert p[j] == pytest.approx(expected_p) and p_min[j] == pytest.approx(expected_min)


def test_the_smallest_reachable_p_of_few_seeds():
    far_apart = np.array([[1.0], [1.1]]), np.array([[5.0], [5.1]])
    p, p_min, _ = seed_permutation_pvalues(*far_apart, 100, 0)
    assert p[0] == pytest.approx(1 / 3) and p_min[0] == pytest.approx(1 / 3)  # 2 of C(4, 2) = 6 splits
    p, p_min, _ = seed_permutation_pvalues(np.array([[1.0], [1.1], [1.2]]), np.array([[5.0], [5.1], [5.2]]), 100, 0)
    assert p[0] == pytest.approx(0.1) and p_min[0] == pytest.approx(0.1)  # 2 of 20


def test_above_the_exact_limit_random_splits_are_drawn():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, (12, 1)), rng.normal(0, 1, (12, 1))  # C(24, 12) = 2.7 million splits
    p, _, exact = seed_permutation_pvalues(a, b, 2000, 1)
    assert not exact and 0.0 < p[0] <= 1.0


def triples(t: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    heads = rng.permutation(500)[:t].astype(str)
    return pd.DataFrame(
        {
            "head": np.tile(heads, 2), "relation": "r", "tail": np.tile(heads, 2),
            "side": ["head"] * t + ["tail"] * t, "num_candidates": rng.integers(20, 200, 2 * t),
        }
    )


def trained(frame: pd.DataFrame, skill: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    nc = frame["num_candidates"].to_numpy()
    rank = np.maximum(1.0, np.floor(rng.random(len(frame)) ** (1 + 4 * skill) * nc) + 1)
    return frame.assign(rank_optimistic=rank, rank_realistic=rank, rank_pessimistic=rank, rank_nondeterministic=rank)


def test_two_stage_interval_equals_resampled_rows_and_drawn_seeds():
    base = triples(60, 0)
    runs = {("a", 0): trained(base, 0.6, 1), ("a", 1): trained(base, 0.7, 2), ("b", 0): trained(base, 0.3, 3),
            ("b", 1): trained(base, 0.2, 4), ("b", 2): trained(base, 0.4, 5)}
    table = seed_comparisons({("d", m, "test", s): f for (m, s), f in runs.items()}, SETTINGS)
    assert list(table.columns) == COLUMNS and len(table) == 3
    row = table[table.metric == "mrr"].iloc[0]
    assert (row.seeds_a, row.seeds_b) == ("0,1", "0,1,2")
    reciprocal = {key: 1.0 / canonical_order(f).rank_realistic.to_numpy() for key, f in runs.items()}
    assert row.value_a == pytest.approx(np.mean([reciprocal["a", s].mean() for s in (0, 1)]))
    assert row.difference == pytest.approx(row.value_a - row.value_b)
    # brute force: triples drawn by index (both queries), then each model's seeds drawn with replacement
    drawn = np.vstack(list(resample_indices(60, 150, stream_seed(4, "d", "test", "triples"))))
    rows = np.hstack([drawn, 60 + drawn])
    draws = np.random.default_rng(stream_seed(4, "d", "test", "seeds", "a", "b"))
    seeds_a, seeds_b = draws.integers(0, 2, (150, 2)), draws.integers(0, 3, (150, 3))
    diffs = [
        np.mean([reciprocal["a", s][rows[j]].mean() for s in seeds_a[j]])
        - np.mean([reciprocal["b", s][rows[j]].mean() for s in seeds_b[j]])
        for j in range(150)
    ]
    np.testing.assert_allclose((row.ci_low, row.ci_high), percentile_interval(np.array(diffs), 0.95))
    # 1 of the C(5, 2) splits reaches the largest difference: 2 + 3 seeds cannot go below 0.1
    assert row.p_min == pytest.approx(1 / 10) and not row.significant
    assert "training seeds" in row.ci_method and "compares architectures" in row.ci_method


def test_seeds_that_disagree_widen_the_interval_beyond_the_test_sets():
    base = triples(300, 1)
    runs = {("a", s): trained(base, skill, 10 + s) for s, skill in enumerate((0.2, 0.8, 0.5))}
    runs |= {("b", s): trained(base, 0.5, 20 + s) for s in range(3)}
    table = seed_comparisons({("d", m, "test", s): f for (m, s), f in runs.items()}, SETTINGS)
    from kgeval.uncertainty.model_comparisons import model_comparisons

    one_seed = model_comparisons({("d", m, "test", s): f for (m, s), f in runs.items() if s == 0}, SETTINGS)
    width = lambda t: float((t.ci_high - t.ci_low)[t.metric == "mrr"].iloc[0])  # noqa: E731
    assert width(table) > 2 * width(one_seed)


def test_models_with_one_seed_give_a_header_only_file(tmp_path):
    base = triples(20, 2)
    paths = []
    for model in ("a", "b"):
        path = tmp_path / "ranks" / "d" / model / "0" / "test.parquet"
        path.parent.mkdir(parents=True)
        trained(base, 0.5, len(paths)).to_parquet(path)
        paths.append(path)
    seed_comparisons_file(paths, tmp_path / "out.tsv", SETTINGS)
    assert (tmp_path / "out.tsv").read_text().strip().split("\t") == COLUMNS
