"""S5's candidate fits: procedures, the held-out validation share and its columns."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s5.fitting import (
    HOLDOUT_METRICS,
    budget_columns,
    fit_candidates,
    fit_platt_procedure,
    holdout_columns,
    platt_paper_budgets,
    split_holdout,
)
from kgeval.studies.s5.measures import CalibrationSums
from kgeval.studies.s5.settings import PlattSettings, S5Settings
from s5_samples import s5_section, score_sample, streamed


def _settings(procedure="both"):
    settings = S5Settings.from_config(s5_section(), memory_budget_mb=16, device="cpu")
    return dataclasses.replace(settings, platt=dataclasses.replace(settings.platt, procedure=procedure))


def test_split_holdout_is_seeded_disjoint_and_keeps_a_fitted_triple():
    fit, held = split_holdout(100, 0.2, 0)
    assert len(held) == 20 and len(fit) == 80 and not set(fit) & set(held)
    assert np.array_equal(split_holdout(100, 0.2, 0)[1], held) and not np.array_equal(split_holdout(100, 0.2, 1)[1], held)
    assert len(split_holdout(100, 0.0, 0)[1]) == 0
    assert len(split_holdout(2, 0.9, 0)[0]) == 1
    with pytest.raises(ValueError):
        split_holdout(10, 1.0, 0)


@pytest.mark.parametrize("procedure, expected", [("both", {"converged": 6, "paper": 6}), ("paper", {"paper": 6})])
def test_fit_candidates_runs_the_configured_procedures(procedure, expected):
    pos, neg, counts = score_sample(1)
    calibrators, best, table, times = fit_candidates(streamed(pos, neg, counts), _settings(procedure))
    platt = table[table["method"] == "platt"]
    assert platt["procedure"].value_counts().to_dict() == expected
    assert table.loc[table["method"] == "isotonic", "procedure"].item() == "pava"
    assert table["selected"].sum() == 1 and best.name in set(table["calibrator"])
    assert all(name.startswith(f"platt_{p}(") for name, p in zip(platt["calibrator"], platt["procedure"]))
    assert {f"t_fit_platt_{p}" for p in expected} <= set(times)
    # deterministic: the same settings give the same functions
    again = fit_candidates(streamed(pos, neg, counts), _settings(procedure))[2]
    pd.testing.assert_series_equal(table["a"], again["a"])


def test_holdout_columns_copy_each_calibrators_sums_or_nan():
    pos, neg, counts = score_sample(2)
    calibrators, _, table, _ = fit_candidates(streamed(pos, neg, counts), _settings("converged"))
    empty = holdout_columns(table, calibrators, None)
    assert all(empty[f"holdout_{m}"].isna().all() for m in HOLDOUT_METRICS)
    sums = {}
    for c in calibrators:
        s = CalibrationSums()
        s.add_positives(c.predict(pos[:10]))
        s.add_negatives(c.predict(neg[:50]))
        sums[c.name] = s
    filled = holdout_columns(table, calibrators, sums)
    for c in calibrators:
        row = filled[filled["calibrator"] == c.name]
        assert row["holdout_r2_w"].item() == pytest.approx(sums[c.name].metrics()["r2_w"])
    assert (filled["holdout_num_positives"] == 10).all()


def test_paper_budgets_start_from_the_paper_fits_and_run_longer():
    pos, neg, counts = score_sample(3)
    data, settings = streamed(pos, neg, counts), _settings("paper")
    values = platt_paper_budgets(data, settings, (1, 10, 100))
    assert values.shape == (6, 3, 2)
    # one multiple is the paper procedure itself (the six descents stepped side by side: equal to rounding)
    fits = np.array([fit_platt_procedure(data, settings, "paper", i).parameters() for i in range(6)])
    np.testing.assert_allclose(values[:, 0], fits, rtol=1e-9, atol=1e-12)
    # ten times the epochs is the descent that the longer budget passes through, in the same batch orders
    longer = dataclasses.replace(settings, platt=dataclasses.replace(settings.platt, epochs=10 * settings.platt.epochs))
    np.testing.assert_allclose(platt_paper_budgets(data, longer, (1,))[:, 0], values[:, 1], rtol=1e-9, atol=1e-12)


def test_budget_columns_fill_the_paper_rows_only():
    pos, neg, counts = score_sample(4)
    data, settings = streamed(pos, neg, counts), _settings("both")
    calibrators, _, table, _ = fit_candidates(data, settings)
    table = budget_columns(table, data, settings)
    paper = table["procedure"] == "paper"
    columns = ["a_epochs_x10", "b_epochs_x10", "a_epochs_x100", "b_epochs_x100"]
    assert table.loc[paper, columns].notna().to_numpy().all() and table.loc[~paper, columns].isna().to_numpy().all()
    assert (table.loc[paper, ["learning_rate", "batch_size", "epochs"]].to_numpy() == [0.01, 1024, 10]).all()
    values = platt_paper_budgets(data, settings, (100,))
    np.testing.assert_array_equal(table.loc[paper, "b_epochs_x100"].to_numpy(), values[:, 0, 1])
    converged = budget_columns(fit_candidates(data, _settings("converged"))[2], data, _settings("converged"))
    assert converged[columns + ["epochs"]].isna().to_numpy().all()
