"""S2's claims on a trained grid: the size claims on small grids whose answer is known, judged on the bootstrap
interval over datasets."""

from __future__ import annotations

import pandas as pd

from kgeval.claims import DIFFERS, HOLDS, INCONCLUSIVE, MEASURED
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
    assert claims[MRR].interval.startswith("[-0.9789, -0.8671]")  # a dataset drawn twice ties its sizes
    assert "bootstrap over 6 datasets" in claims[MRR].interval
    assert "bootstrap over 5 datasets" in claims[AMRR].interval
    assert "bootstrap over the 12 points instead" in claims[MRR].kgeval
    assert claims[MRR].basis == MEASURED


def test_quality_falling_with_size_differs():
    claims = _claims(_grid([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0.6, 0.5, 0.4, 0.3, 0.2, 0.1]))
    assert claims[MRR].verdict == DIFFERS  # MRR rises with size in every resample
    assert claims[AMRR].verdict == DIFFERS and claims[ZMRR].verdict == DIFFERS
    assert "without d0" in claims[AMRR].reason


def test_few_mixed_datasets_are_inconclusive():
    # five datasets, MRR falls on the whole but not monotonically: the dataset bootstrap straddles 0
    claims = _claims(_grid([0.5, 0.3, 0.45, 0.2, 0.35], [0.1, 0.3, 0.15, 0.35, 0.2], sizes=SIZES[:5]))
    for name in (MRR, AMRR):
        assert claims[name].verdict == INCONCLUSIVE, claims[name]
        assert "straddles" in claims[name].reason
    assert "rho(MRR, #entities)'s interval [-0.9457, 0.6361] straddles" in claims[MRR].reason
    assert "the point estimate -0.4924 lies on the holds side" in claims[MRR].reason


def test_single_dataset_draws_are_dropped_and_counted():
    # without the smallest three datasets remain: about 1 in 9 resamples draws a single one
    claims = _claims(_grid([0.6, 0.5, 0.4, 0.3], [0.0, 0.1, 0.2, 0.3], sizes=SIZES[:4]))
    assert "undefined (a single distinct dataset or a constant metric), dropped" in claims[AMRR].interval


def test_fewer_than_three_datasets_are_not_checkable():
    # three datasets: MRR is judged; without the smallest, two remain, whose dataset bootstrap cannot vary
    claims = _claims(_grid([0.6, 0.5, 0.4], [0.0, 0.1, 0.2], sizes=SIZES[:3]))
    for name in (AMRR, ZMRR):
        assert claims[name].verdict == "not checkable" and "needs at least 3" in claims[name].reason, claims[name]
    assert claims[MRR].verdict != "not checkable"
