"""S1's sweep replicates against brute-force resamples, through kgeval's own metrics."""

import numpy as np
import pandas as pd
import pytest

from kgeval.metrics import compute_metrics
from kgeval.studies.s1.testsize_replicates import block_replicates, change_replicates
from kgeval.uncertainty.resampling import BootstrapSettings
from kgeval.uncertainty.resampling import resample_indices, stream_seed


def _block(n: int, seed: int) -> pd.DataFrame:
    """``n // 2`` test mappings a_i <-> b_i, each ranked in both directions (left rows first)."""
    rng = np.random.default_rng(seed)
    t = n // 2
    nc = rng.integers(5, 50, 2 * t)
    r = np.minimum(rng.integers(1, 10, 2 * t), nc).astype(float)
    a, b = [f"a{i}" for i in range(t)], [f"b{i}" for i in range(t)]
    return pd.DataFrame({"source": a + b, "target": b + a, "side": ["left"] * t + ["right"] * t,
                         "num_candidates": nc, **{f"rank_{k}": r for k in
                         ("optimistic", "realistic", "pessimistic", "nondeterministic")}})


def test_block_replicates_equal_the_metrics_of_resampled_mappings():
    """A resample draws test mappings; each brings its left and its right row."""
    block = _block(40, 0)
    reps = block_replicates(block, resamples=4, seed=3)
    idx = next(resample_indices(20, 4, 3))
    for b in range(4):
        rows = block.iloc[np.concatenate([idx[b], 20 + idx[b]])].assign(side="head")  # compute_metrics' LP sides
        metrics = compute_metrics(rows, metrics=["mr", "hits@1", "amr"])
        metrics = metrics[(metrics["side"] == "both") & (metrics["rank_type"] == "realistic")].set_index("metric")
        for key in ("mr", "hits@1", "amr"):
            assert reps[key][b] == pytest.approx(metrics.loc[key, "value"], rel=1e-9)


def test_change_replicates_are_relative_changes_of_seed_means(tmp_path):
    paths = []
    for seed in (0, 1):
        path = tmp_path / "testsize" / "p" / "5" / str(seed) / "ranks.parquet"
        path.parent.mkdir(parents=True)
        pd.concat([_block(30, seed).assign(num_test=10), _block(60, seed + 10).assign(num_test=20)]).to_parquet(path)
        paths.append(path)
    changes = change_replicates(paths, BootstrapSettings(resamples=6, permutations=10, level=0.95, seed=2))
    lows, highs = [], []
    for seed, path in zip((0, 1), paths):
        ranks = pd.read_parquet(path)
        lows.append(block_replicates(ranks[ranks["num_test"] == 10], 6, stream_seed(2, "p", "5", str(seed), "10"))["mr"])
        highs.append(block_replicates(ranks[ranks["num_test"] == 20], 6, stream_seed(2, "p", "5", str(seed), "20"))["mr"])
    # the second stage: per replicate j, seeds drawn with replacement, the k-th drawn seed bringing replicate j + k
    drawn = np.random.default_rng(stream_seed(2, "p", "5", "seeds")).integers(0, 2, size=(6, 2))
    first = np.array([np.mean([lows[s][(j + k) % 6] for k, s in enumerate(drawn[j])]) for j in range(6)])
    last = np.array([np.mean([highs[s][(j + k) % 6] for k, s in enumerate(drawn[j])]) for j in range(6)])
    np.testing.assert_allclose(changes[("p", 5)]["mr"], (last - first) / np.abs(first))


def test_a_mapping_ranked_in_one_direction_only_is_an_error():
    block = _block(10, 1).iloc[1:]
    with pytest.raises(ValueError, match="1 of 5 test mappings lack one of the 2 directions"):
        block_replicates(block, resamples=2, seed=0)


def test_one_seed_is_its_own_mean_and_several_seeds_widen_the_spread():
    from kgeval.studies.s1.testsize_replicates import seed_means

    one = np.arange(5.0)
    np.testing.assert_array_equal(seed_means([one], 0), one)
    rng = np.random.default_rng(0)
    runs = [rng.normal(loc, 0.1, 2000) for loc in (0.0, 1.0)]  # two seeds far apart: training variance dominates
    assert np.std(seed_means(runs, 1)) > 3 * np.std(np.mean(runs, axis=0))
