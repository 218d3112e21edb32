"""S1's sweep replicates against brute-force resamples, through kgeval's own metrics."""

import numpy as np
import pandas as pd
import pytest

from kgeval.metrics import compute_metrics
from kgeval.studies.s1.testsize_replicates import block_replicates, change_replicates
from kgeval.uncertainty.resampling import BootstrapSettings
from kgeval.uncertainty.resampling import resample_indices, stream_seed


def _block(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    nc = rng.integers(5, 50, n)
    r = np.minimum(rng.integers(1, 10, n), nc).astype(float)
    return pd.DataFrame({"side": "head", "num_candidates": nc, **{f"rank_{t}": r for t in
                         ("optimistic", "realistic", "pessimistic", "nondeterministic")}})


def test_block_replicates_equal_the_metrics_of_resampled_rows():
    block = _block(40, 0)
    reps = block_replicates(block, resamples=4, seed=3)
    idx = next(resample_indices(len(block), 4, 3))
    for b in range(4):
        metrics = compute_metrics(block.iloc[idx[b]], metrics=["mr", "hits@1", "amr"])
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
    first, last = np.mean(lows, axis=0), np.mean(highs, axis=0)
    np.testing.assert_allclose(changes[("p", 5)]["mr"], (last - first) / np.abs(first))
