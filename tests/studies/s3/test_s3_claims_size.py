"""What training adds to a literal method over the training-free name baseline, per training ratio, paired."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s3.claims_size import NAME_BASELINE, learning_gains
from kgeval.studies.s3.judging import S3Evidence


def _evidence(with_small_baseline: bool = True) -> S3Evidence:
    rows, reps = [], {}
    rng = np.random.default_rng(0)
    values = {("rdgcn", 0.2): 0.7, ("rdgcn", 0.02): 0.6, (NAME_BASELINE, 0.2): 0.5, (NAME_BASELINE, 0.02): 0.5}
    for (model, ratio), hits in values.items():
        if model == NAME_BASELINE and ratio == 0.02 and not with_small_baseline:
            continue
        rows.append({"dataset": "d", "bias": "none", "train_ratio": ratio, "model": model, "hits@1_all": hits})
        reps[("d", "none", ratio, model)] = {"hits@1_all": hits + rng.normal(0, 0.01, 50)}
    return S3Evidence(pd.DataFrame(rows), reps)


def test_gains_are_paired_differences_per_ratio_largest_first():
    ev = _evidence()
    gains = learning_gains(ev, "d", "rdgcn")
    assert list(gains) == [0.2, 0.02]
    for ratio, (hits, gain, reps) in gains.items():
        key = ("d", "none", ratio)
        assert hits == pytest.approx(0.7 if ratio == 0.2 else 0.6) and gain == pytest.approx(hits - 0.5)
        np.testing.assert_array_equal(reps, ev.replicates[(*key, "rdgcn")]["hits@1_all"]
                                      - ev.replicates[(*key, NAME_BASELINE)]["hits@1_all"])


def test_no_gains_without_the_baseline_at_every_ratio():
    assert learning_gains(_evidence(with_small_baseline=False), "d", "rdgcn") is None


def test_a_ratio_the_method_did_not_run_is_left_out():
    ev = _evidence()
    extra = pd.DataFrame([{"dataset": "d", "bias": "none", "train_ratio": 0.04, "model": NAME_BASELINE,
                           "hits@1_all": 0.5},
                          {"dataset": "d", "bias": "none", "train_ratio": 0.04, "model": "rdgcn",
                           "hits@1_all": float("nan")}])  # not run: a row whose value is missing
    ev = S3Evidence(pd.concat([ev.table, extra], ignore_index=True), ev.replicates)
    assert list(learning_gains(ev, "d", "rdgcn")) == [0.2, 0.02]  # rdgcn has no 0.04 row: skipped, not fatal
