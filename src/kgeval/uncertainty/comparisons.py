"""Paired comparisons of two systems on the same units: sign-flip (randomization) tests and Holm's correction.

Two systems evaluated on the same independent units give one paired difference per unit, ``d_i`` (for link
prediction the unit is the test triple and ``d_i`` the sum of its head and tail queries' differences, which are
correlated and so must flip together; for S4 the question). Under the null hypothesis that the two are exchangeable on
each unit, every ``d_i`` is as likely as ``-d_i``; the sign-flip test compares the
observed mean difference with the means under random sign flips (the paired randomization test of IR evaluation,
Smucker et al. 2007). It equals ``scipy.stats.permutation_test(..., permutation_type="samples")`` with the mean
difference as statistic; here every pair and metric of a dataset shares one matrix of signs, which turns the test of
all of them into one matrix product.

Holm's step-down correction is written by hand: SciPy offers only Benjamini-Hochberg (``false_discovery_control``)
and statsmodels is not a dependency for five lines.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sign_flip_pvalues", "holm"]

_CHUNK = 256


def sign_flip_pvalues(differences: np.ndarray, permutations: int, seed: int) -> np.ndarray:
    """Two-sided p-values of the paired sign-flip test of mean difference zero, one per row.

    :param differences: shape: (m, n) or (n,); row j holds the per-unit differences of one comparison
    :param permutations: random sign vectors drawn (shared by all rows)
    :param seed: seed of the sign vectors
    :return: shape: (m,) (or a float for 1-d input); ``(1 + #{|T*| >= |T|}) / (1 + permutations)``, so never 0;
        1.0 for a row whose differences are all zero
    """
    d = np.atleast_2d(np.asarray(differences, dtype=np.float64))
    m, n = d.shape
    observed = np.abs(d.mean(axis=1))
    # a permuted mean within floating-point noise of the observed one counts as "at least as extreme"
    tolerance = 1e-12 * np.maximum(1.0, np.abs(d).max(axis=1, initial=0.0))
    rng = np.random.default_rng(seed)
    extreme = np.zeros(m, dtype=np.int64)
    done = 0
    while done < permutations:
        b = min(_CHUNK, permutations - done)
        signs = rng.integers(0, 2, size=(b, n), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        permuted = np.abs(d @ signs.T) / n  # shape: (m, b)
        extreme += (permuted >= (observed - tolerance)[:, None]).sum(axis=1)
        done += b
    p = (1.0 + extreme) / (1.0 + permutations)
    p[np.all(d == 0, axis=1)] = 1.0
    return p if np.ndim(differences) > 1 else float(p[0])


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error rate), in the input's order.

    The i-th smallest p-value is multiplied by ``m - i + 1`` (i from 1), made non-decreasing along the sorted order,
    and capped at 1; a hypothesis is rejected at level alpha iff its adjusted p-value is <= alpha. NaNs stay NaN and
    do not count towards ``m``.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    if valid.size == 0:
        return out
    order = valid[np.argsort(p[valid], kind="stable")]
    m = order.size
    scaled = p[order] * (m - np.arange(m))
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out
