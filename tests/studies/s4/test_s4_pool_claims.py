"""S4's pool bias: an exact permutation test over systems, inverted for an interval."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from kgeval.claims import DIFFERS, HOLDS, INCONCLUSIVE, NOT_CHECKABLE
from kgeval.studies.s4.pool_claims import POOL_SYSTEMS, exact_pvalue, pool_bias_claim, shift_interval

OTHERS = ("atte", "bique", "compgcn", "hake", "hitter", "interacte", "tucker")


def _evaluation(gain_pool, gain_others) -> pd.DataFrame:
    rows = []
    for systems, gains in ((POOL_SYSTEMS, gain_pool), (OTHERS, gain_others)):
        for system, gain in zip(systems, gains, strict=True):
            rows.append(("FB-Test-S", system, "micro", "mrr", 0.3))
            rows.append(("FB-Test-S-C", system, "micro", "mrr", 0.3 + gain))
    return pd.DataFrame(rows, columns=["test_set", "system", "family", "metric", "value"])


def test_exact_pvalue_counts_every_split() -> None:
    x, y = np.array([3.0, 4.0, 5.0]), np.array([1.0, 2.0, 0.5, 1.5])
    pooled, observed = np.concatenate([x, y]), x.mean() - y.mean()
    splits = [pooled[list(i)].mean() - np.delete(pooled, list(i)).mean() for i in itertools.combinations(range(7), 3)]
    splits = np.array(splits)
    one_sided = min(np.mean(splits >= observed - 1e-12), np.mean(splits <= observed + 1e-12))
    assert exact_pvalue(x, y) == pytest.approx(min(1.0, 2 * one_sided))  # SciPy's two-sided p-value
    assert shift_interval(x, y) == (-np.inf, np.inf)  # 35 splits: no p-value below 2 / 35 > 0.05
    x, y = np.append(x, 4.5), np.append(y, 1.2)
    observed = x.mean() - y.mean()
    low, high = shift_interval(x, y)
    assert low < observed < high
    assert exact_pvalue(x, y, low - 0.01) <= 0.05 and exact_pvalue(x, y, high + 0.01) <= 0.05


def test_verdicts() -> None:
    spread = np.linspace(-0.002, 0.002, 7)
    assert pool_bias_claim(_evaluation(0.05 + spread[:6], 0.01 + spread)).verdict == DIFFERS
    assert pool_bias_claim(_evaluation(0.01 + spread[:6], 0.05 + spread)).verdict == HOLDS
    mixed = pool_bias_claim(_evaluation(np.array([0.03, -0.01, 0.04, 0.0, 0.05, 0.01]), 0.01 + 0.01 * spread))
    assert mixed.verdict == INCONCLUSIVE and "permutation" in mixed.interval


def test_identical_labels_never_hold() -> None:
    claim = pool_bias_claim(_evaluation(np.zeros(6), np.zeros(7)))
    assert claim.verdict == NOT_CHECKABLE and "change no system" in claim.reason


def test_a_missing_test_set_is_named() -> None:
    evaluation = _evaluation(np.zeros(6), np.zeros(7))
    claim = pool_bias_claim(evaluation[evaluation["test_set"] == "FB-Test-S"])
    assert claim.verdict == NOT_CHECKABLE and "FB-Test-S-C" in claim.reason
