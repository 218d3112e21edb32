"""S2's claims on a trained grid: the size claims on small grids whose answer is known, judged by the exact
permutation test over the datasets (the bootstrap intervals shown as context)."""

from __future__ import annotations

import pandas as pd

from kgeval.claims import DIFFERS, HOLDS, INCONCLUSIVE, MEASURED, NOT_CHECKABLE
from kgeval.studies.s2.claims import trained_claims
from kgeval.uncertainty.resampling import BootstrapSettings

MRR, AMRR, ZMRR = (f"s2.fig1_{k}" for k in ("mrr_anticorrelated_with_size", "amrr_not_anticorrelated_with_size",
                                            "zmrr_not_anticorrelated_with_size"))
SIZES = (10, 100, 1000, 5000, 20000, 50000)


def _grid(mrr: list[float], adjusted: list[float], sizes=SIZES) -> pd.DataFrame:
    """Two models per dataset (the second 0.001 better); ZMRR = AMRR times 100 (a stand-in)."""
    rows = []
    for i, (n, base, adj) in enumerate(zip(sizes, mrr, adjusted, strict=True)):
        for j, model in enumerate(("a", "b")):
            rows.append({"family": "mrr", "dataset": f"d{i}", "model": model, "num_entities": n,
                         "base": base + 0.001 * j, "adjusted": adj + 0.001 * j, "z": 100 * (adj + 0.001 * j),
                         "base_expectation": 0.01})
    return pd.DataFrame(rows)


def _claims(grid):
    return {c.claim: c for c in trained_claims(grid, BootstrapSettings(resamples=400, permutations=10, level=0.95, seed=3))}


def test_paper_like_grid_holds():
    # MRR falls with size at every dataset; adjusted (without the smallest, d0) it rises
    claims = _claims(_grid([0.6, 0.5, 0.4, 0.3, 0.2, 0.1], [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]))
    assert {claims[c].verdict for c in (MRR, AMRR, ZMRR)} == {HOLDS}
    # the identity is the one most extreme of the 6! orderings: p = 1/720, as small as the design allows
    assert claims[MRR].interval.startswith(
        "exact permutation test over 6 datasets (720 orderings of their sizes): p = 0.00139 for rho < 0 (smallest "
        "reachable 0.00139), p = 1 for rho > 0"
    )
    assert "p = 0.00833 for rho > 0 (smallest reachable 0.00833)" in claims[AMRR].interval  # 1/5!
    # as context, the bootstrap over the datasets (a dataset drawn twice ties its sizes)
    assert "as context, [-0.9789, -0.8671] (bootstrap over 6 datasets" in claims[MRR].interval
    assert "bootstrap over 5 datasets" in claims[AMRR].interval
    assert "bootstrap over the 12 points instead" in claims[MRR].kgeval
    assert claims[MRR].basis == MEASURED


def test_quality_falling_with_size_differs():
    claims = _claims(_grid([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0.6, 0.5, 0.4, 0.3, 0.2, 0.1]))
    assert claims[MRR].verdict == DIFFERS  # MRR rises with size: the test for rho > 0 is significant
    assert "0.00139 for rho > 0: significant at 0.05 against the claim" in claims[MRR].reason
    assert claims[AMRR].verdict == DIFFERS and claims[ZMRR].verdict == DIFFERS
    assert "without d0" in claims[AMRR].reason
    assert "p = 0.00833 for rho < 0, 1 for rho > 0: significant at 0.05 against the claim" in claims[AMRR].reason


def test_few_mixed_datasets_are_inconclusive():
    # five datasets, MRR falls on the whole but not monotonically: neither one-sided test is significant
    claims = _claims(_grid([0.5, 0.3, 0.45, 0.2, 0.35], [0.1, 0.3, 0.15, 0.35, 0.2], sizes=SIZES[:5]))
    for name in (MRR, AMRR):
        assert claims[name].verdict == INCONCLUSIVE, claims[name]
        assert "neither is below 0.05" in claims[name].reason
    assert "rho(MRR, #entities) = -0.4924, one-sided p = 0.225 for rho < 0, 0.825 for rho > 0" in claims[MRR].reason
    assert "the point estimate lies on the holds side" in claims[MRR].reason
    assert "as context, [-0.9457, 0.6361] (bootstrap over 5 datasets" in claims[MRR].interval
    # no significant anti-correlation of AMRR without d0: not evidence that there is none
    assert "no significant anti-correlation, but its absence is no evidence" in claims[AMRR].reason


def test_single_dataset_draws_are_dropped_and_counted():
    # without the smallest three datasets remain: about 1 in 9 resamples draws a single one
    claims = _claims(_grid([0.6, 0.5, 0.4, 0.3], [0.0, 0.1, 0.2, 0.3], sizes=SIZES[:4]))
    assert "undefined (a single distinct dataset or a constant metric), dropped" in claims[AMRR].interval


def test_four_datasets_decide_mrr_but_not_the_adjusted_claims():
    # four datasets: p = 1/24 < 0.05 for MRR; without the smallest, three remain, whose 6 orderings give p >= 1/6
    claims = _claims(_grid([0.6, 0.5, 0.4, 0.3], [0.0, 0.1, 0.2, 0.3], sizes=SIZES[:4]))
    assert claims[MRR].verdict == HOLDS
    assert "p = 0.0417 for rho < 0 (smallest reachable 0.0417)" in claims[MRR].interval
    for name in (AMRR, ZMRR):
        assert claims[name].verdict == NOT_CHECKABLE, claims[name]
        assert claims[name].reason == (
            "3 datasets: an exact permutation test over 3! = 6 orderings of their sizes cannot reach p below 0.167 "
            "(the level needs p < 0.05); too few units"
        )


def test_three_datasets_are_not_checkable():
    # three datasets: even a perfect fall of MRR reaches only p = 1/6; two remain without the smallest
    claims = _claims(_grid([0.6, 0.5, 0.4], [0.0, 0.1, 0.2], sizes=SIZES[:3]))
    assert claims[MRR].verdict == NOT_CHECKABLE
    assert claims[MRR].reason.startswith("3 datasets: an exact permutation test over 3! = 6 orderings")
    assert "p = 0.167 for rho < 0 (smallest reachable 0.167)" in claims[MRR].interval
    for name in (AMRR, ZMRR):
        assert claims[name].verdict == NOT_CHECKABLE, claims[name]
        assert "2 datasets: an exact permutation test over 2! = 2 orderings" in claims[name].reason
        assert "cannot reach p below 0.5" in claims[name].reason


def test_a_single_dataset_defines_no_correlation():
    # two datasets: without the smallest one remains, with a single size
    claims = _claims(_grid([0.6, 0.5], [0.0, 0.1], sizes=SIZES[:2]))
    for name in (AMRR, ZMRR):
        assert claims[name].verdict == NOT_CHECKABLE
        assert "1 dataset(s): a correlation with dataset size needs at least 2" in claims[name].reason
        assert "= n/a over 2 points" in claims[name].kgeval
    assert claims[MRR].verdict == NOT_CHECKABLE and "2! = 2 orderings" in claims[MRR].reason
