"""S4's Fig. 7 and Fig. 8 claims on this tier's systems, on built stability and discriminative tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.claims import MEASURED
from kgeval.studies.s4.metric_claims import discrimination_claim, stability_claim

FRACTIONS = (0.1, 0.5, 0.9)


def _stability(macro: float, micro: float, sd: float, draws: int = 20) -> pd.DataFrame:
    rows = []
    for fraction in FRACTIONS:
        for family, tau in (("macro", macro), ("micro", micro)):
            for metric in ("mrr", "hits@10"):
                rows.append(("original", "questions", fraction, 100, family, metric, tau, sd, draws))
        rows.append(("depth10", "questions", fraction, 100, "macro", "mrr", 0.0, sd, draws))  # another level: unread
    return pd.DataFrame(rows, columns=["level", "unit", "fraction", "num_units", "family", "metric", "tau_mean",
                                       "tau_std", "num_defined"])


def test_stability_holds_differs_is_inconclusive_and_an_unchanged_ranking_never_holds():
    assert stability_claim("fb_0", _stability(0.95, 0.8, 0.05), MEASURED).verdict == "holds"
    assert stability_claim("fb_0", _stability(0.8, 0.95, 0.05), MEASURED).verdict == "differs"
    noisy = stability_claim("fb_0", _stability(0.9, 0.85, 0.4), MEASURED)
    assert noisy.verdict == "inconclusive" and "straddles" in noisy.reason
    same = stability_claim("fb_0", _stability(1.0, 1.0, 0.0), MEASURED)
    assert same.verdict != "holds"
    assert "equal at 3" in same.kgeval


def test_stability_interval_is_the_normal_interval_over_the_draws():
    claim = stability_claim("fb_0", _stability(0.95, 0.8, 0.1, draws=25), MEASURED)
    se = np.sqrt(3 * 2 * 0.1**2 / 25) / 3
    low, high = 0.15 - 1.959964 * se, 0.15 + 1.959964 * se
    assert f"mrr: [{low:.4f}, {high:.4f}]" in claim.interval and "25 subsampling draws" in claim.interval


def _discriminative(macro: dict[str, float], micro: dict[str, float]) -> pd.DataFrame:
    rows = []
    for family, values in (("macro", macro), ("micro", micro)):
        for metric, p in values.items():
            rows += [("original", family, metric, "a", b, 0.0, p) for b in ("b", "c", "d")]
    return pd.DataFrame(rows, columns=["level", "family", "metric", "system_a", "system_b", "statistic", "pvalue"])


@pytest.mark.parametrize("macro_p, side", [(0.01, "holds"), (0.5, "differs")])
def test_discrimination_names_the_side_without_an_interval(macro_p, side):
    macro = {"mrr": macro_p, "hits@10": macro_p, "map@20": macro_p, "ndcg@20": 0.9}
    claim = discrimination_claim("fb_0", _discriminative(macro, {"mrr": 0.1, "hits@10": 0.2}), MEASURED)
    assert claim.verdict == "inconclusive" and f"on the {side} side" in claim.reason
    assert "mean p-value over 3 pairs" in claim.kgeval


def test_discrimination_without_a_metric_is_not_checkable():
    claim = discrimination_claim("fb_0", _discriminative({"mrr": 0.1}, {"mrr": 0.2}), MEASURED)
    assert claim.verdict == "not checkable" and "macro hits@10" in claim.reason
