"""The bootstrap of S2's size correlation over datasets (the unit) and over model x dataset points."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from kgeval.studies.s2.size_bootstrap import rho_over_datasets, rho_over_points, spearman
from kgeval.uncertainty.resampling import BootstrapSettings
from kgeval.uncertainty.resampling import resample_indices


def _frame() -> pd.DataFrame:
    rows = [("d0", 10, 0.5), ("d0", 10, 0.6), ("d1", 100, 0.4), ("d1", 100, 0.45), ("d2", 1000, 0.3), ("d2", 1000, 0.5)]
    return pd.DataFrame(rows, columns=["dataset", "num_entities", "base"])


def test_spearman_is_scipys_and_nan_when_constant():
    x, y = np.array([1.0, 2, 3, 4]), np.array([0.3, 0.1, 0.4, 0.2])
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic)
    assert np.isnan(spearman(np.ones(4), y))


def test_rho_over_datasets_drops_single_dataset_draws():
    settings = BootstrapSettings(resamples=300, permutations=10, level=0.95, seed=7)
    result = rho_over_datasets(_frame(), "base", settings)
    single = sum(len(set(row.tolist())) == 1 for chunk in resample_indices(3, 300, 7) for row in chunk)
    assert single > 0 and result.dropped == single
    assert result.point == pytest.approx(stats.spearmanr(_frame()["num_entities"], _frame()["base"]).statistic)
    assert -1.0 <= result.low <= result.point <= result.high <= 1.0
    assert result.units == "3 datasets" and "dropped" in result.unit()


def test_a_dataset_drawn_twice_counts_twice():
    """One resample by hand: datasets (0, 0, 2) give the points of d0 twice and of d2 once."""
    frame = _frame()
    first = next(iter(resample_indices(3, 1, 11)))[0]
    drawn = pd.concat([frame.loc[frame["dataset"] == f"d{i}"] for i in first])
    expected = spearman(drawn["num_entities"].to_numpy(float), drawn["base"].to_numpy(float))
    result = rho_over_datasets(frame, "base", BootstrapSettings(resamples=1, permutations=10, level=0.95, seed=11))
    if len(set(first.tolist())) > 1:
        assert result.low == pytest.approx(expected)
    else:
        assert result.dropped == 1


def test_points_bootstrap_is_narrower_for_a_perfect_trend():
    frame = pd.DataFrame({"dataset": [f"d{i}" for i in range(4) for _ in range(3)],
                          "num_entities": [10 ** i for i in range(4) for _ in range(3)],
                          "base": [1 - 0.2 * i - 0.01 * j for i in range(4) for j in range(3)]})
    settings = BootstrapSettings(resamples=200, permutations=10, level=0.95, seed=1)
    by_points, by_datasets = rho_over_points(frame, "base", settings), rho_over_datasets(frame, "base", settings)
    assert by_points.units == "12 points" and by_datasets.units == "4 datasets"
    assert by_points.high < 0 and by_datasets.high < 0
