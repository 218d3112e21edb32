"""S3's bootstrap replicates against brute-force resamples of the test mappings."""

import numpy as np
import pandas as pd

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
