"""Bootstrap of S4's tau-by-depth statistics over questions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from kgeval.studies.s4.stability import UnitValues
from kgeval.studies.s4.tau_bootstrap import level_units, paired_tau_batch, tau_replicates

METRICS = [("micro", "mrr"), ("macro", "mrr")]


def _values(keys: list[tuple[str, str, str]], numerators: np.ndarray, denominators: np.ndarray) -> UnitValues:
    questions = pd.DataFrame(keys, columns=["side", "relation", "anchor"])
    return UnitValues(numerators, denominators, ["a", "b", "c"], list(METRICS), questions)


def test_paired_tau_batch_equals_scipy():
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 4, size=(5, 6, 2)).astype(float), rng.normal(size=(5, 6, 2))
    taus = paired_tau_batch(x, y)
    for b in range(5):
        for m in range(2):
            expected = stats.kendalltau(x[b, :, m], y[b, :, m]).statistic
            assert taus[b, m] == pytest.approx(expected) or (np.isnan(expected) and np.isnan(taus[b, m]))


def test_paired_tau_batch_constant_ranking_is_nan():
    x = np.ones((1, 3, 1))
    assert np.isnan(paired_tau_batch(x, np.arange(3.0).reshape(1, 3, 1))[0, 0])


def test_level_units_aligns_on_the_union_of_questions():
    sparse = _values([("head", "r", "x")], np.ones((1, 3, 2)), np.ones((1, 2)))
    deep = _values([("head", "r", "x"), ("tail", "r", "y")], np.full((2, 3, 2), 2.0), np.full((2, 2), 2.0))
    units = level_units({"sparse": sparse, "depth1": deep}, [("micro", "mrr")])
    assert units["sparse"].numerators.shape == (2, 3, 1)
    assert units["sparse"].denominators[:, 0].tolist() == [1.0, 0.0]  # the sparse level lacks the tail question
    assert units["depth1"].metrics == [("micro", "mrr")]


def test_identical_levels_give_tau_one_in_every_resample():
    rng = np.random.default_rng(1)
    keys = [("head", "r", str(i)) for i in range(50)]
    values = _values(keys, rng.random((50, 3, 2)), np.ones((50, 2)))
    boot = tau_replicates({"sparse": values, "depth1": values, "depth2": values}, resamples=70, seed=3)
    assert boot.depths == [1, 2] and boot.resamples == 70 and boot.num_questions == 50
    assert np.all(boot.at("micro", "mrr", 2) == 1.0)
    assert "50 questions" in boot.unit()


def test_replicates_are_seeded():
    rng = np.random.default_rng(2)
    keys = [("head", "r", str(i)) for i in range(20)]
    a, b = (_values(keys, rng.random((20, 3, 2)), np.ones((20, 2))) for _ in range(2))
    one = tau_replicates({"sparse": a, "depth1": b}, 30, seed=5).taus
    two = tau_replicates({"sparse": a, "depth1": b}, 30, seed=5).taus
    np.testing.assert_array_equal(one, two)
    assert not np.array_equal(one, tau_replicates({"sparse": a, "depth1": b}, 30, seed=6).taus)
