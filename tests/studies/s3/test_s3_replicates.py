"""S3's bootstrap replicates against brute-force resamples of the test mappings."""

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s3.replicates import run_replicates
from kgeval.uncertainty.resampling import resample_indices


def test_run_replicates_equal_brute_force_resamples():
    rng = np.random.default_rng(1)
    n = 50
    features = pd.DataFrame({"id1": range(n), "id2": range(n), "name_split": rng.choice(["same", "close", "different"], n)})
    ranks = pd.DataFrame({"id1": range(n), "id2": range(n), "side": "left", "rank_realistic": rng.integers(1, 4, n) * 1.0})
    ranks = pd.concat([ranks, ranks.assign(side="right", rank_realistic=1.0)])  # the other side is not evaluated
    reps = run_replicates(ranks, features, resamples=3, seed=5)
    idx = next(resample_indices(n, 3, 5))
    left = ranks[ranks["side"] == "left"].merge(features, on=["id1", "id2"])
    for b in range(3):
        part = left.iloc[idx[b]]
        assert np.isclose(reps["mrr_all"][b], (1.0 / part["rank_realistic"]).mean())
        same = part[part["name_split"] == "same"]
        assert np.isclose(reps["hits@1_same"][b], (same["rank_realistic"] <= 1).mean())


def test_pool_seeds_draws_seeds_with_replacement_each_with_its_own_inner_resample():
    from kgeval.studies.s3.replicates import REPLICATED, pool_seeds

    resamples = 400
    # seed s's replicates sit around 10 s: the pooled mean spreads with the seeds drawn, not only within one seed
    runs = [{c: 10.0 * s + np.arange(resamples) / resamples for c in REPLICATED} for s in range(3)]
    pooled = pool_seeds(runs, stream=7)["hits@1_all"]
    assert pooled.shape == (resamples,)
    assert pooled.min() < 10.0 < 10.5 < pooled.max()  # draws of mostly seed 0 and mostly seed 2 both occur
    assert abs(pooled.mean() - 10.5) < 0.5  # centred on the mean over seeds
    # brute force: replicate b is the mean over its drawn seeds of their inner replicates
    rng = np.random.default_rng(7)
    drawn = rng.integers(0, 3, size=(resamples, 3))
    inner = np.stack([rng.permutation(resamples) for _ in range(3)], axis=1)
    for b in (0, 99, 399):
        expected = np.mean([runs[drawn[b, j]]["hits@1_all"][inner[b, j]] for j in range(3)])
        assert pooled[b] == pytest.approx(expected)
    # one seed: its replicates unchanged; the same stream for every method keeps them paired
    np.testing.assert_array_equal(pool_seeds(runs[:1], 7)["mrr_all"], runs[0]["mrr_all"])
    np.testing.assert_array_equal(pool_seeds(runs, 7)["mrr_all"], pool_seeds(runs, 7)["mrr_all"])
