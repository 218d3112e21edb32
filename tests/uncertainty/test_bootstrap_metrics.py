"""Every registered metric on bootstrap resamples (kgeval.uncertainty.bootstrap_metrics) against PyKEEN by brute force,
and the coverage of the percentile interval by simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.metrics import METRICS, RANK_TYPES, compute_metrics, supported_rank_types
from kgeval.uncertainty.bootstrap_metrics import (
    BootstrapSettings,
    bootstrap_replicates,
    canonical_order,
    metrics_with_intervals,
    side_blocks,
    stratified_counts,
)
from kgeval.uncertainty.resampling import percentile_interval, resample_indices, stream_seed

SETTINGS = BootstrapSettings(resamples=40, permutations=50, level=0.95, seed=3)


def ranks_table(n: int, seed: int, max_candidates: int = 60) -> pd.DataFrame:
    """A synthetic ranks table with ties, small candidate counts (some 1, some <= 10) and both sides."""
    rng = np.random.default_rng(seed)
    nc = rng.integers(1, max_candidates, n)
    opt = np.floor(rng.random(n) * nc) + 1
    pes = np.minimum(opt + rng.integers(0, 3, n), nc)
    return pd.DataFrame(
        {
            "head": rng.integers(0, 30, n).astype(str),
            "relation": rng.choice(["r1", "r2"], n),
            "tail": rng.integers(0, 30, n).astype(str),
            "side": rng.choice(["head", "tail"], n),
            "num_candidates": nc,
            "rank_optimistic": opt,
            "rank_realistic": (opt + pes) / 2,
            "rank_pessimistic": pes,
            "rank_nondeterministic": np.minimum(opt + 1, pes),
        }
    )


def assert_rows_match(expected: pd.DataFrame, replicates: dict, j: int = 0) -> None:
    for row in expected.itertuples(index=False):
        got = replicates[row.side, row.rank_type, row.metric][j]
        assert np.isclose(got, row.value, rtol=1e-7, atol=1e-10, equal_nan=True), (row, got)


def test_counts_of_ones_reproduce_compute_metrics_for_every_metric_and_rank_type():
    table = ranks_table(150, seed=0)
    expected = compute_metrics(table)
    blocks = side_blocks(canonical_order(table))
    replicates = {}
    for side, block in blocks.items():
        for (rank_type, key), values in block.replicates(np.ones((1, block.n))).items():
            replicates[side, rank_type, key] = values
    assert set(replicates) == set(map(tuple, expected[["side", "rank_type", "metric"]].to_numpy()))
    covered = {(rt, key) for _, rt, key in replicates}
    assert covered == {(rt, key) for key in METRICS for rt in supported_rank_types(key)}
    assert set(RANK_TYPES) == {rt for rt, _ in covered}
    assert_rows_match(expected, replicates)


def test_random_resamples_equal_pykeen_on_the_resampled_rows():
    table = canonical_order(ranks_table(120, seed=1))
    blocks = side_blocks(table)
    n_head = int((table["side"] == "head").sum())
    sizes = {"head": n_head, "tail": len(table) - n_head}
    chunk = next(stratified_counts(sizes, 3, 7, "d", "s"))
    head_idx = next(resample_indices(sizes["head"], 3, stream_seed(7, "d", "s", "head")))
    tail_idx = next(resample_indices(sizes["tail"], 3, stream_seed(7, "d", "s", "tail")))
    replicates = {}
    for side, block in blocks.items():
        for (rank_type, key), values in block.replicates(chunk[side]).items():
            replicates[side, rank_type, key] = values
    for j in range(3):
        resampled = table.iloc[np.concatenate([head_idx[j], n_head + tail_idx[j]])]
        assert_rows_match(compute_metrics(resampled), replicates, j)


def test_degenerate_adjusted_metrics_are_nan_on_every_resample():
    table = ranks_table(60, seed=2, max_candidates=8)  # every num_candidates <= 10: Hits@10 cannot be wrong
    replicates = bootstrap_replicates(table, 20, 0, "d", "s")
    for key in ("ah@10", "zh@10"):
        assert np.isnan(replicates["both", "realistic", key]).all()
    assert not np.isnan(replicates["both", "realistic", "amri"]).any()


def test_every_model_gets_the_same_resamples_whatever_its_row_order():
    table = ranks_table(80, seed=3)
    shuffled = table.sample(frac=1.0, random_state=0)
    a = bootstrap_replicates(table, 30, 5, "d", "test")
    b = bootstrap_replicates(shuffled, 30, 5, "d", "test")
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    c = bootstrap_replicates(table, 30, 5, "d", "valid")
    assert not np.array_equal(a["both", "realistic", "mrr"], c["both", "realistic", "mrr"])


def test_metrics_with_intervals_keeps_compute_metrics_and_brackets_the_values():
    table = ranks_table(200, seed=4)
    out = metrics_with_intervals(table, "d", "test", SETTINGS)
    plain = compute_metrics(table)
    pd.testing.assert_frame_equal(out[list(plain.columns)], plain)
    assert list(out.columns) == ["side", "rank_type", "metric", "value", "ci_low", "ci_high", "ci_method"]
    defined = out.dropna(subset=["value"])
    assert (defined["ci_low"] <= defined["ci_high"]).all()
    assert (out["ci_method"] == "percentile bootstrap over queries, B=40, stratified by side").all()
    count = out[out["metric"] == "count"]
    assert (count["ci_low"] == count["value"]).all() and (count["ci_high"] == count["value"]).all()


def test_interval_covers_a_known_mrr_in_95_percent_of_replications():
    """Ranks i.i.d. on 1..50 with P(r) proportional to r^-1.5: the true MRR is exact; 400 replications, B=500."""
    support = np.arange(1, 51, dtype=float)
    probabilities = support**-1.5 / (support**-1.5).sum()
    truth = float((probabilities / support).sum())
    rng = np.random.default_rng(11)
    replications, n_side = 400, 60
    covered = 0
    for rep in range(replications):
        ranks = rng.choice(support, size=2 * n_side, p=probabilities)
        table = pd.DataFrame(
            {
                "side": ["head"] * n_side + ["tail"] * n_side,
                "num_candidates": 50,
                **{f"rank_{t}": ranks for t in RANK_TYPES},
            }
        )
        replicates = []
        for counts in stratified_counts({"head": n_side, "tail": n_side}, 500, rep, "sim", "test"):
            replicates.append(counts["both"] @ (1.0 / ranks) / ranks.size)
        low, high = percentile_interval(np.concatenate(replicates), 0.95)
        covered += low <= truth <= high
    assert 0.92 <= covered / replications <= 0.98, covered / replications


def test_settings_from_the_validated_config():
    settings = BootstrapSettings.from_config({"resamples": 10, "permutations": 20, "level": 0.9, "seed": 1})
    assert settings == BootstrapSettings(10, 20, 0.9, 1)


def test_stratified_counts_resample_each_side_within_itself():
    chunks = list(stratified_counts({"head": 5, "tail": 7}, 100, 0, "d", "s"))
    assert sum(c["both"].shape[0] for c in chunks) == 100
    for c in chunks:
        assert (c["head"].sum(axis=1) == 5).all() and (c["tail"].sum(axis=1) == 7).all()
        np.testing.assert_array_equal(c["both"], np.hstack([c["head"], c["tail"]]))
    only_tail = next(stratified_counts({"head": 0, "tail": 4}, 3, 0, "d", "s"))
    assert set(only_tail) == {"tail", "both"}
    with pytest.raises(ValueError, match="empty"):
        next(stratified_counts({"head": 0, "tail": 0}, 3, 0))
