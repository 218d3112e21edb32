"""The spread of the six Platt functions of each procedure (paper 004, Sec. 6.1 and Fig. 3).

The paper fits Platt scaling from six initialisations ``{a, b} ⊆ {-1, 0, 1}`` and shows the six functions' range
for each link-prediction method (Fig. 3). :func:`table_platt_spread` condenses ``calibrators.tsv`` to one row per
run and procedure: the range of ``a``, ``b`` and the validation ``R2_w`` over the six fits, the number of distinct
functions among them and the relative spread that the claim ``s5.platt_initialisations_differ`` judges; for the
paper procedure also the relative spread after 10 and 100 times its epoch budget (``a_epochs_x<m>``,
``b_epochs_x<m>`` of ``calibrators.tsv``, :func:`kgeval.studies.s5.fitting.budget_columns`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.studies.s5.fitting import BUDGET_MULTIPLES

__all__ = ["DISTINCT_DECIMALS", "LONGER_BUDGETS", "SPREAD_COLUMNS", "table_platt_spread"]

#: two fits are the same function when a and b agree to this many decimals
DISTINCT_DECIMALS = 4
#: the multiples of the paper procedure's epoch budget with a spread column (``relative_spread_x<m>``)
LONGER_BUDGETS: tuple[int, ...] = tuple(m for m in BUDGET_MULTIPLES if m != 1)
#: the columns of :func:`table_platt_spread`
SPREAD_COLUMNS: tuple[str, ...] = (
    "dataset", "model", "model_class", "seed", "procedure", "num_fits", "num_distinct",
    "a_min", "a_max", "b_min", "b_max", "r2_w_min", "r2_w_max", "relative_spread",
    *(f"relative_spread_x{m}" for m in LONGER_BUDGETS),
)
_RUN = ["dataset", "model", "seed"]


def _relative_range(values: np.ndarray) -> float:
    """``(max - min) / max(1, |median|)``: the range on the scale of the parameter, never inflated near 0."""
    return float(np.ptp(values) / max(1.0, abs(float(np.median(values)))))


def _spread(a: np.ndarray, b: np.ndarray) -> float:
    """The larger relative range of ``a`` and ``b`` (NaN when a value is missing: a budget not run or diverged)."""
    if np.isnan(a).any() or np.isnan(b).any():
        return float("nan")
    return max(_relative_range(a), _relative_range(b))


def table_platt_spread(calibrators: pd.DataFrame) -> pd.DataFrame:
    """One row per run (dataset, model, seed) and Platt procedure with the spread of its six fits.

    ``relative_spread`` is the larger of the relative ranges (:func:`_relative_range`) of ``a`` and ``b``;
    ``num_distinct`` counts the fits with different ``(a, b)`` to :data:`DISTINCT_DECIMALS` decimals; ``r2_w_min``
    and ``r2_w_max`` are the validation ``R2_w`` (the fit share) of the worst and best of the six;
    ``relative_spread_x<m>`` is the relative spread after ``m`` times the epoch budget (NaN where not run).

    :param calibrators: ``s5/tables/calibrators.tsv`` (columns ``dataset, model, model_class, seed, method,
        procedure, a, b, r2_w``)
    :return: columns :data:`SPREAD_COLUMNS`, sorted by run and procedure; no rows without Platt fits
    """
    platt = calibrators[calibrators["method"] == "platt"]
    rows = []
    for (dataset, model, seed, procedure), run in platt.groupby([*_RUN, "procedure"], sort=True):
        a = run["a"].to_numpy(dtype=float)
        b = run["b"].to_numpy(dtype=float)
        r2 = run["r2_w"].to_numpy(dtype=float)
        distinct = len({(round(x, DISTINCT_DECIMALS), round(y, DISTINCT_DECIMALS)) for x, y in zip(a, b)})
        longer = [
            _spread(run[f"a_epochs_x{m}"].to_numpy(dtype=float), run[f"b_epochs_x{m}"].to_numpy(dtype=float))
            if f"a_epochs_x{m}" in run else float("nan")
            for m in LONGER_BUDGETS
        ]
        rows.append((
            dataset, model, str(run["model_class"].iloc[0]), seed, procedure, len(run), distinct,
            a.min(), a.max(), b.min(), b.max(), np.nanmin(r2), np.nanmax(r2),
            max(_relative_range(a), _relative_range(b)), *longer,
        ))
    return pd.DataFrame(rows, columns=list(SPREAD_COLUMNS))
