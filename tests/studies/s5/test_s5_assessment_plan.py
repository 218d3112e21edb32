"""The plan of S5's test pass: which functions it applies, on which strategies, and the copies of those it leaves
out, checked against a pass that applies every function on every strategy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s5.assessment_plan import SAME_RTOL, expand_sums, plan_assessment
from kgeval.studies.s5.calibration import fit_calibrators
from kgeval.studies.s5.measures import CalibrationSums, negative_feature_totals, select_calibrator
from kgeval.studies.s5.statistics import CalibrationData

STRATEGIES = ("lcwa", "gb", "tc")


def _fitted():
    rng = np.random.default_rng(0)
    data = CalibrationData(rng.normal(2.0, 1.0, 200), num_bins=64)
    data.add_negatives(rng.normal(0.0, 1.0, 5000))
    calibrators = fit_calibrators(data)
    _, table = select_calibrator(calibrators, data)
    return calibrators, table


def test_converged_platt_functions_are_applied_once_and_the_best_get_every_strategy():
    calibrators, table = _fitted()
    plan = plan_assessment(calibrators, table)
    platt = [c for c in calibrators if c.method == "platt"]
    # the six initialisations of the convex fit agree to SAME_RTOL: one of them is applied
    assert len(plan.distinct) == len(calibrators) - len(platt) + 1
    for name, representative in plan.same_as.items():
        a, b = plan.calibrator(name).parameters(), plan.calibrator(representative).parameters()
        assert np.allclose(a, b, rtol=SAME_RTOL, atol=0.0)
    best = table.loc[table["method"] == "platt"].sort_values("r2_w").iloc[-1]["calibrator"]
    assert plan.strategies_of(best, STRATEGIES) == list(STRATEGIES)
    assert plan.strategies_of("isotonic", STRATEGIES) == list(STRATEGIES)
    others = [c.name for c in platt if c.name != best and plan.same_as.get(c.name, c.name) not in plan.every_strategy]
    assert all(plan.strategies_of(n, STRATEGIES) == ["lcwa"] for n in others)
    # without LCWA among the strategies every function gets them all
    assert all(rows == slice(None) for rows in plan.weight_rows(("gb", "tc")))


def test_planned_sums_equal_a_full_pass_on_what_they_keep():
    calibrators, table = _fitted()
    plan = plan_assessment(calibrators, table)
    rng = np.random.default_rng(1)
    scores = rng.normal(0.0, 1.5, 3000)
    weights = (rng.uniform(size=(len(STRATEGIES), 3000)) < 0.5).astype(float)
    full = negative_feature_totals(scores, weights, calibrators, 0.5)
    planned = negative_feature_totals(scores, weights, plan.distinct, 0.5, rows_of=plan.weight_rows(STRATEGIES))
    sums = {}
    for index, calibrator in enumerate(plan.distinct):
        for row, strategy in enumerate(STRATEGIES):
            if strategy in plan.strategies_of(calibrator.name, STRATEGIES):
                s = CalibrationSums()
                s.add_negative_totals(weights[row].sum(), *planned[index, row, [1, 2, 0]])
                sums[(calibrator.name, strategy)] = s
            else:  # left out: never summed
                assert (planned[index, row] == 0).all()
    expanded = expand_sums(sums, plan, STRATEGIES)
    for index, calibrator in enumerate(calibrators):
        for row, strategy in enumerate(STRATEGIES):
            key = (calibrator.name, strategy)
            if strategy not in plan.strategies_of(calibrator.name, STRATEGIES):
                assert key not in expanded
                continue
            got = expanded[key]
            # a copied function's posteriors differ from its own by the parameters' relative difference
            tolerance = 1e-12 if calibrator.name not in plan.same_as else 1e-5
            assert got.neg_posterior == pytest.approx(full[index, row, 0], rel=tolerance)
            assert got.neg_sq_error == pytest.approx(full[index, row, 1], rel=tolerance)
    # the copies are independent objects: adding a function's positives leaves the others alone
    copied = next(iter(plan.same_as))
    expanded[(copied, "lcwa")].add_positives(np.array([0.9]))
    assert expanded[(plan.same_as[copied], "lcwa")].num_pos == 0


def test_assessed_with_names_the_function_whose_negatives_a_function_carries():
    calibrators, table = _fitted()
    plan = plan_assessment(calibrators, table)
    names = [c.name for c in calibrators]
    carried = dict(zip(names, plan.assessed_with(names)))
    assert carried["isotonic"] == "isotonic"
    assert all(carried[n] == r for n, r in plan.same_as.items())
    assert isinstance(table, pd.DataFrame)
