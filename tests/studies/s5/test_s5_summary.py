"""The S5 summary: its cost per unit of work against hand arithmetic, and the long table's rows."""

from __future__ import annotations

import math

import pytest

from kgeval.studies.s5.summary import UNIT_COSTS, summary_table, unit_costs

TIMES = {
    "t_lp": 2.0, "t_score": 0.5, "t_stats": 0.25, "t_fit_all": 0.1, "t_fit_isotonic": 0.01, "t_fit_platt": 0.09,
    "t_fit_selected": 0.01, "t_select": 0.02, "t_posteriors": 0.03,
}
COUNTS = {"num_entities": 1000, "num_relations": 10, "num_valid": 50, "num_test": 100, "num_valid_negatives": 25_000}


def test_unit_costs_divide_each_phase_by_its_units():
    costs = unit_costs(TIMES, COUNTS)
    assert costs["ns_per_valid_negative"] == pytest.approx(0.25e9 / 25_000)
    assert costs["ns_per_valid_negative_end_to_end"] == pytest.approx(0.75e9 / 25_000)
    # every entity of each test triple's head and tail query
    assert costs["ns_per_lp_candidate"] == pytest.approx(2.0e9 / (2 * 100 * 1000))


def test_unit_costs_are_nan_without_units():
    costs = unit_costs(TIMES, {**COUNTS, "num_valid_negatives": 0, "num_test": 0})
    assert all(math.isnan(v) for v in costs.values())


def test_summary_table_holds_timings_mr_counts_and_unit_costs():
    table = summary_table(TIMES, COUNTS, mr=3.5)
    values = dict(zip(table["metric"], table["value"]))
    assert values["mr"] == 3.5 and values["num_test"] == 100
    assert values["t_a"] == pytest.approx(0.25 + 0.01 + 0.03)
    assert set(UNIT_COSTS) <= set(values)
    assert table["metric"].is_unique
