"""S4's pool bias (Zhou et al. 2022, Sec. 3.1) checked on the authors' released per-system results.

The paper pools the top-10 predictions of six systems (TransE, RotatE, ComplEx, DistMult, RESCAL, ConvE) and chooses
them diverse "to reduce the bias towards a specific KGC model". In TREC pooling the known bias runs the other way
round for the systems outside the pool: their correct answers are judged only where a contributor also found them.
The statistic is the difference between the mean gain in micro MRR from FB-Test-S to FB-Test-S-C of the contributors
and of the other systems. Systems are few (13), so the test is exact: every split of the systems into groups of the
two sizes (:func:`scipy.stats.permutation_test`, all permutations), two-sided. Its 95 % interval inverts that test
under a shift model: the shifts ``d`` for which the contributors' gains minus ``d`` are not rejected at 5 %.

The paper's sentence holds when the whole interval lies at or below 0 (the contributors gain no more than the
others), differs when it lies above 0 (the contributors gain more: pool bias). Where no system gains or loses (the
pooled labels change no metric) there is no bias to measure: not checkable.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.claims import NOT_CHECKABLE, Claim, Criterion, format_interval, interval_claim, judge

__all__ = ["POOL_SYSTEMS", "exact_pvalue", "shift_interval", "pool_bias_claim"]

#: Sec. 3.1: the six systems whose top-10 predictions form the pool
POOL_SYSTEMS: tuple[str, ...] = ("complex", "conve", "distmult", "rescal", "rotate", "transe")


def _difference(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def exact_pvalue(x: np.ndarray, y: np.ndarray, shift: float = 0.0) -> float:
    """Two-sided exact permutation p-value of ``mean(x - shift) - mean(y)`` over every split of the pooled values."""
    from scipy.stats import permutation_test  # here, not at the top: most S4 jobs never need SciPy

    result = permutation_test((np.asarray(x, float) - shift, np.asarray(y, float)), _difference,
                              permutation_type="independent", n_resamples=np.inf, vectorized=True)
    return float(result.pvalue)


def shift_interval(x: np.ndarray, y: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The shifts not rejected by :func:`exact_pvalue` at ``1 - level``, by bisection on each side of the
    difference in means (the end points to 1e-6 of the values' range); infinite where groups this small cannot
    reach a p-value below ``1 - level``."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    point, span = float(x.mean() - y.mean()), float(np.ptp(np.concatenate([x, y]))) or 1.0
    alpha, bounds = 1.0 - level, []
    for direction in (-1.0, 1.0):
        inside, outside = point, point + direction * 2 * span
        if exact_pvalue(x, y, outside) > alpha:  # too few systems for any split to reject: unbounded
            bounds.append(direction * np.inf)
            continue
        while abs(outside - inside) > 1e-6 * span:
            middle = (inside + outside) / 2
            inside, outside = (middle, outside) if exact_pvalue(x, y, middle) > alpha else (inside, middle)
        bounds.append(inside)
    return bounds[0], bounds[1]


def pool_bias_claim(evaluation: pd.DataFrame, level: float = 0.95) -> Claim:
    """The pool-bias row from the released evaluation table (``test_set, system, family, metric, value``)."""
    claim = "s4.sec3_1_pool_bias"
    statement = ("Sec. 3.1: pooling six diverse systems reduces the bias towards specific systems: the six pool "
                 "contributors gain no more micro MRR from FB-Test-S to FB-Test-S-C than the seven other systems")
    paper = "no number (six diverse systems chosen 'to reduce the bias towards a specific KGC model')"
    tolerance = "mean gain of contributors - others <= 0 (whole interval)"
    mrr = evaluation[(evaluation["family"] == "micro") & (evaluation["metric"] == "mrr")]
    wide = mrr.pivot(index="system", columns="test_set", values="value")
    missing = [t for t in ("FB-Test-S", "FB-Test-S-C") if t not in wide.columns]
    if missing:
        return Claim(claim, statement, paper, "", tolerance, NOT_CHECKABLE,
                     f"the released evaluation lacks the micro MRR on {' and '.join(missing)}")
    gain = (wide["FB-Test-S-C"] - wide["FB-Test-S"]).dropna()
    inside = gain.index.isin(POOL_SYSTEMS)
    x, y = gain[inside].to_numpy(), gain[~inside].to_numpy()
    if len(x) < 2 or len(y) < 2 or not np.any(gain.to_numpy() != 0):
        return Claim(claim, statement, paper, "", tolerance, NOT_CHECKABLE,
                     "fewer than two systems in a group, or the pooled labels change no system's micro MRR")
    point = float(x.mean() - y.mean())
    low, high = shift_interval(x, y, level)
    text = (f"mean micro MRR gain: contributors {x.mean():+.4f} ({len(x)}), others {y.mean():+.4f} ({len(y)}); "
            f"difference {point:+.4f}, exact two-sided permutation p = {exact_pvalue(x, y):.4f}")
    unit = (f"exact permutation test inverted under a shift model, all splits of {len(gain)} systems into "
            f"{len(x)} and {len(y)}")
    judgement = judge(point, low, high, Criterion(upper=0.0), name="contributors - others")
    return interval_claim(claim, statement, paper, text, judgement, format_interval(low, high, unit), tolerance)
