"""S5's Fig. 1 level claims (:mod:`kgeval.studies.s5.claims_levels`) on built assessment tables: the share of runs
meeting each level, at most inconclusive (streamed sums, no interval) with the side named, not checkable without
runs; only the selected function's LCWA values count."""

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s5.claims_levels import LEVELS, level_claims, level_values

COLUMNS = ["dataset", "model", "seed", "calibrator", "method", "selected", "strategy", "metric", "value"]


def _assessment(values: list[tuple[float, float, float]]) -> pd.DataFrame:
    """One run per ``(r2_w, bs_w, ba)`` of the selected isotonic function on LCWA, plus distractors: a non-selected
    Platt function meeting every level and TC values meeting none."""
    rows = []
    for i, (r2, bs, ba) in enumerate(values):
        run = ("nations", f"model{i % 2}", str(i))
        for metric, value in (("r2_w", r2), ("bs_w", bs), ("ba", ba)):
            rows.append((*run, "isotonic", "isotonic", True, "lcwa", metric, value))
            rows.append((*run, "isotonic", "isotonic", True, "tc", metric, -1.0 if metric != "bs_w" else 1.0))
        for metric, value in (("r2_w", 0.8), ("bs_w", 0.05), ("ba", 0.95)):
            rows.append((*run, "platt(1,0)", "platt", False, "lcwa", metric, value))
    return pd.DataFrame(rows, columns=COLUMNS)


def _claims(values):
    return {c.claim: c for c in level_claims(_assessment(values))}


def test_level_values_take_the_selected_function_on_lcwa():
    found = level_values(_assessment([(0.8, 0.05, 0.95), (np.nan, 0.3, 0.5)]), "r2_w")
    assert list(found["value"]) == [0.8] and list(found["seed"]) == ["0"]


def test_most_runs_meeting_every_level_lie_on_the_holds_side():
    claims = _claims([(0.8, 0.05, 0.95), (0.7, 0.1, 0.9), (0.95, 0.2, 0.5)])
    assert set(claims) == {level.claim for level in LEVELS}
    for claim in claims.values():
        # no interval for the streamed sums: never "holds", the side is named
        assert claim.verdict == "inconclusive" and "holds side" in claim.reason, claim.claim
        assert "2 of 3 runs (share 0.67)" in claim.kgeval and "not resampled" in claim.interval
    assert "mean per model: model0 0.875, model1 0.700" in claims["s5.fig1_r2w_in_0.7_0.9"].kgeval


@pytest.mark.parametrize(
    "claim, values",
    [
        ("s5.fig1_r2w_in_0.7_0.9", [(0.95, 0.05, 0.95), (0.5, 0.05, 0.95)]),  # above and below the band
        ("s5.fig1_bs_w_le_0.1", [(0.8, 0.11, 0.95), (0.8, 0.05, 0.95)]),  # half is not most
        ("s5.fig1_ba_ge_0.9", [(0.8, 0.05, 0.89), (0.8, 0.05, 0.5)]),
    ],
)
def test_not_more_than_half_lies_on_the_differs_side(claim, values):
    found = _claims(values)[claim]
    assert found.verdict == "inconclusive" and "differs side" in found.reason


def test_without_runs_the_levels_are_not_checkable():
    empty = _assessment([(np.nan, np.nan, np.nan)])
    for claim in level_claims(empty):
        assert claim.verdict == "not checkable" and "no run" in claim.reason, claim.claim
    for claim in level_claims(pd.DataFrame(columns=COLUMNS)):
        assert claim.verdict == "not checkable"
