"""S4's Table 3 and 4 rules: holds, differs, inconclusive on built taus; never holds on unchanged rankings."""

from __future__ import annotations

import math

from kgeval.claims import BY_CONSTRUCTION, DIFFERS, HOLDS, INCONCLUSIVE, MEASURED, NOT_CHECKABLE
from kgeval.studies.s4.category_claims import (
    CHANGED_CELLS,
    TABLE3_METRICS,
    TABLE4_METRICS,
    changes_rankings_claim,
    table3_claims,
    table4_claim,
)

ONE, CHANGE = "s4.x.table3_one_to_one_unchanged", "s4.x.table3_many_side_rankings_change"


def _table3(one_to_one: tuple[float, float, float], changed: tuple[float, float, float]) -> dict:
    taus = {(s, "1-1", m): one_to_one for s in ("head", "tail") for m in TABLE3_METRICS}
    taus.update({(s, c, m): changed for s, c in CHANGED_CELLS for m in TABLE3_METRICS})
    return taus


def _claims(one_to_one, changed, added=3) -> dict:
    return {c.claim: c for c in table3_claims("x", _table3(one_to_one, changed), added, "bootstrap")}


def test_table3_paper_like_taus_hold():
    claims = _claims((1.0, 1.0, 1.0), (0.1, -0.2, 0.4))
    assert claims[ONE].verdict == HOLDS and claims[CHANGE].verdict == HOLDS


def test_table3_high_taus_differ_and_wide_ones_are_inconclusive():
    assert _claims((0.6, 0.4, 0.8), (0.95, 0.92, 1.0))[CHANGE].verdict == DIFFERS
    assert _claims((0.6, 0.4, 0.8), (0.95, 0.92, 1.0))[ONE].verdict == DIFFERS
    claims = _claims((1.0, 0.8, 1.0), (0.7, 0.4, 0.95))
    assert claims[CHANGE].verdict == INCONCLUSIVE and claims[ONE].verdict == INCONCLUSIVE


def test_table3_unchanged_rankings_never_hold_the_change_rule():
    claims = _claims((1.0, 1.0, 1.0), (1.0, 1.0, 1.0), added=0)
    assert claims[CHANGE].verdict == DIFFERS
    # no 1-1 answer added: the rankings on them coincide whatever the systems
    assert claims[ONE].verdict == BY_CONSTRUCTION and "computed: holds" in claims[ONE].reason


def test_table3_without_taus_is_not_checkable():
    nan = (math.nan,) * 3
    claims = _claims(nan, nan)
    assert claims[ONE].verdict == NOT_CHECKABLE and claims[CHANGE].verdict == NOT_CHECKABLE
    assert claims[ONE].basis == MEASURED


def test_table4_rule():
    def verdict(tau):
        return table4_claim("x", {m: tau for m in TABLE4_METRICS}, "bootstrap").verdict

    assert verdict((0.2, 0.0, 0.35)) == HOLDS
    assert verdict((0.8, 0.6, 0.9)) == DIFFERS
    assert verdict((0.3, 0.1, 0.6)) == INCONCLUSIVE
    assert verdict((1.0, 1.0, 1.0)) == DIFFERS  # an unchanged ranking


def test_released_rows_are_judged_on_the_point():
    claim = table4_claim("", {m: (0.2, 0.2, 0.2) for m in TABLE4_METRICS}, "not resampled")
    assert claim.claim == "s4.table4_sparse_distribution_below_0_4" and claim.interval == "not resampled"
    assert changes_rankings_claim(-0.2308, 10, 13, "not resampled").verdict == HOLDS
    assert changes_rankings_claim(1.0, 10, 13, "not resampled").verdict == DIFFERS
