"""S2's claims on a trained grid: the size claims on small grids whose answer is known."""

from __future__ import annotations

import pandas as pd

from kgeval.claims import DIFFERS, HOLDS
from kgeval.studies.s2.claims import trained_claims


def _grid(mrr_by_size: dict[int, float]) -> pd.DataFrame:
    """MRR per dataset size for two models; AMRR from E[MRR] of uniform ranks over n candidates (z: a stand-in)."""
    rows = []
    for i, (n, mrr) in enumerate(sorted(mrr_by_size.items())):
        expectation = sum(1 / k for k in range(1, n + 1)) / n
        for j, model in enumerate(("a", "b")):
            base = mrr + 0.01 * j
            adjusted = (base - expectation) / (1 - expectation)
            rows.append({"family": "mrr", "dataset": f"d{i}", "model": model, "num_entities": n, "base": base,
                         "adjusted": adjusted, "z": adjusted * n ** 0.5, "base_expectation": expectation})
    return pd.DataFrame(rows)


def _verdicts(grid):
    return {c.claim: c.verdict for c in trained_claims(grid)}


def test_paper_like_grid_holds():
    # MRR falls with size only because the smallest dataset is easy by chance; adjusted it is the hardest
    verdicts = _verdicts(_grid({10: 0.60, 1000: 0.30, 5000: 0.35}))
    assert verdicts["s2.fig1_mrr_anticorrelated_with_size"] == HOLDS
    assert verdicts["s2.fig1_amrr_not_anticorrelated_with_size"] == HOLDS
    assert verdicts["s2.fig1_zmrr_not_anticorrelated_with_size"] == HOLDS


def test_quality_falling_with_size_differs():
    verdicts = _verdicts(_grid({10: 0.60, 1000: 0.40, 5000: 0.20}))
    assert verdicts["s2.fig1_mrr_anticorrelated_with_size"] == HOLDS
    assert verdicts["s2.fig1_amrr_not_anticorrelated_with_size"] == DIFFERS
    reasons = {c.claim: c.reason for c in trained_claims(_grid({10: 0.60, 1000: 0.40, 5000: 0.20}))}
    assert "without d0" in reasons["s2.fig1_amrr_not_anticorrelated_with_size"]


def test_rising_mrr_differs():
    assert _verdicts(_grid({10: 0.2, 1000: 0.3, 5000: 0.4}))["s2.fig1_mrr_anticorrelated_with_size"] == DIFFERS
