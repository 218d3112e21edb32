"""The six-fit spread table of the Platt functions (kgeval.studies.s5.spread), checked on built tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.studies.s5.spread import SPREAD_COLUMNS, table_platt_spread


def _calibrators(params: dict[str, list[tuple[float, float]]]) -> pd.DataFrame:
    rows = [("d", "m", "TransE", 0, "isotonic", "isotonic", "pava", np.nan, np.nan, 0.8)]
    for procedure, fits in params.items():
        for i, (a, b) in enumerate(fits):
            rows.append(("d", "m", "TransE", 0, f"platt_{procedure}({i})", "platt", procedure, a, b, 0.5 + 0.01 * i))
    return pd.DataFrame(rows, columns=["dataset", "model", "model_class", "seed", "calibrator", "method",
                                       "procedure", "a", "b", "r2_w"])


def test_spread_counts_distinct_functions_and_relative_range():
    same = [(1.5, -0.25)] * 3 + [(1.50001, -0.25)] * 3
    apart = [(0.1, 2.0), (0.2, 2.0), (0.3, 4.0), (0.1, 2.0), (0.1, 2.0), (0.1, 2.0)]
    table = table_platt_spread(_calibrators({"converged": same, "paper": apart}))
    assert list(table.columns) == list(SPREAD_COLUMNS)
    table = table.set_index("procedure")
    assert table.loc["converged", "num_fits"] == 6 and table.loc["converged", "num_distinct"] == 1
    assert table.loc["converged", "relative_spread"] < 1e-4
    assert table.loc["paper", "num_distinct"] == 3
    # b ranges over 2.0 with median 2.0 -> 1.0; a ranges over 0.2 with median 0.1 -> 0.2 / max(1, 0.1)
    assert np.isclose(table.loc["paper", "relative_spread"], 1.0)
    assert table.loc["paper", "a_min"] == 0.1 and table.loc["paper", "a_max"] == 0.3
    assert np.isclose(table.loc["paper", "r2_w_max"] - table.loc["paper", "r2_w_min"], 0.05)


def test_spread_without_platt_fits_is_empty():
    table = table_platt_spread(_calibrators({}))
    assert table.empty and list(table.columns) == list(SPREAD_COLUMNS)


def test_spread_after_longer_budgets_where_the_table_has_them():
    apart = [(0.1, 2.0), (0.2, 2.0), (0.3, 4.0), (0.1, 2.0), (0.1, 2.0), (0.1, 2.0)]
    calibrators = _calibrators({"converged": apart, "paper": apart})
    assert table_platt_spread(calibrators)[["relative_spread_x10", "relative_spread_x100"]].isna().to_numpy().all()
    paper = calibrators["procedure"] == "paper"
    calibrators.loc[paper, ["a_epochs_x10", "b_epochs_x10"]] = [(1.0, 10.0 + i) for i in range(6)]
    calibrators.loc[paper, ["a_epochs_x100", "b_epochs_x100"]] = [(1.0, 10.0)] * 5 + [(np.nan, np.nan)]
    table = table_platt_spread(calibrators).set_index("procedure")
    # b ranges over 5 with median 12.5; a diverged fit leaves the spread undefined
    assert np.isclose(table.loc["paper", "relative_spread_x10"], 5 / 12.5)
    assert np.isnan(table.loc["paper", "relative_spread_x100"]) and np.isnan(table.loc["converged", "relative_spread_x10"])
