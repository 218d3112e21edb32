"""Krichene and Rendle's corrected sampled metrics (KDD 2020, Sec. 4: the bias-variance, "BV", correction).

A sampled metric is a value ``x_j`` per sampled rank ``j + 1`` (``j`` negatives of the sample above the answer). Given the
full rank ``r`` among ``n`` candidates and ``m`` negatives drawn uniformly without replacement from the ``n - 1``, ``j`` is
hypergeometric: ``P(j | r) = C(r - 1, j) C(n - r, m - j) / C(n - 1, m)`` (the paper's binomial is the with-replacement
version; the hypergeometric makes a sample of all ``n - 1`` negatives exact). The BV correction chooses ``x`` to
minimise, over full ranks weighted by a prior ``p(r)`` (uniform here, as the paper's default),

    sum_r p(r) [ (E[x_J | r] - M(r))^2 + gamma Var[x_J | r] ],

whose minimiser solves ``((1 - gamma) A^T P A + gamma diag(A^T p)) x = A^T P M`` with ``A[r, j] = P(j | r)``. ``gamma = 0``
is the least-bias correction, ``gamma = 1`` the posterior mean of ``M`` under the prior. The correction assumes a
uniform sample; it is applied to the uniform sampler only.

A query's ``n`` is its filtered candidate count, which differs between queries: one correction is solved per group of
queries (:func:`corrected_values`), at the group's median ``n``; a query that drew all its negatives gets ``M`` of its
rank exactly (``A`` is then the identity).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import special

from kgeval.lp.sampled.estimators import rank_columns

__all__ = ["hypergeometric_matrix", "bv_correction", "corrected_values"]


def hypergeometric_matrix(n: int, m: int) -> np.ndarray:
    """``A[r - 1, j] = P(j | r)`` for full ranks ``r = 1..n`` and ``j = 0..m`` (``m <= n - 1``), shape (n, m + 1)."""
    if not 0 <= m <= n - 1:
        raise ValueError(f"a sample of {m} negatives needs 0 <= m <= n - 1 = {n - 1}")
    r = np.arange(1, n + 1, dtype=np.float64)[:, None]
    j = np.arange(m + 1, dtype=np.float64)[None, :]
    good, bad = r - 1.0, n - r
    with np.errstate(invalid="ignore"):
        log = (
            special.gammaln(good + 1) - special.gammaln(j + 1) - special.gammaln(good - j + 1)
            + special.gammaln(bad + 1) - special.gammaln(m - j + 1) - special.gammaln(bad - m + j + 1)
            - (special.gammaln(n) - special.gammaln(m + 1) - special.gammaln(n - m))
        )
    feasible = (j <= good) & (m - j <= bad)
    return np.where(feasible, np.exp(np.where(feasible, log, 0.0)), 0.0)


@lru_cache(maxsize=8)
def _system(n: int, m: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """The BV system's matrix and ``A^T P`` for ``n`` candidates and ``m`` drawn negatives (shared by the metrics)."""
    a = hypergeometric_matrix(n, m)
    weighted = a / n
    gram = (1.0 - gamma) * (a.T @ weighted) + gamma * np.diag(weighted.sum(axis=0))
    return gram, weighted.T


@lru_cache(maxsize=64)
def bv_correction(n: int, m: int, metric: str, gamma: float) -> np.ndarray:
    """The corrected value of each sampled rank ``1..m + 1`` (module docstring), shape (m + 1,).

    :param metric: a key of :func:`~kgeval.lp.sampled.estimators.rank_columns` (``mrr``, ``hits@10``, ...)
    """
    n, m = int(n), min(int(m), int(n) - 1)
    full = rank_columns(np.arange(1, n + 1, dtype=np.float64))[metric]
    if m == n - 1:
        return full
    gram, weighted_t = _system(n, m, float(gamma))
    return np.linalg.lstsq(gram, weighted_t @ full, rcond=None)[0]


def _lookup(table: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """``table`` at sampled ranks (1-based), linear between neighbours for a half rank (a tie)."""
    position = np.clip(ranks - 1.0, 0.0, len(table) - 1.0)
    low = np.floor(position).astype(np.int64)
    high = np.minimum(low + 1, len(table) - 1)
    share = position - low
    return (1.0 - share) * table[low] + share * table[high]


def corrected_values(sampled_ranks, drawn, num_candidates, metric, gamma: float, buckets: int) -> np.ndarray:
    """Per query, the BV-corrected value of its sampled rank (module docstring).

    :param sampled_ranks: shape: (q,) ``1 + b`` (half ranks for ties)
    :param drawn: shape: (q,) negatives drawn ``d``
    :param num_candidates: shape: (q,) filtered candidates ``N``
    :param metric: a key of :func:`~kgeval.lp.sampled.estimators.rank_columns`
    :param buckets: the most groups of queries by ``N`` that get a correction of their own
    """
    ranks = np.asarray(sampled_ranks, dtype=np.float64)
    drawn = np.asarray(drawn, dtype=np.int64)
    n = np.asarray(num_candidates, dtype=np.int64)
    out = rank_columns(ranks)[metric].copy()
    partial = drawn < n - 1
    for m in np.unique(drawn[partial]):
        rows = np.flatnonzero(partial & (drawn == m))
        values = n[rows]
        edges = np.unique(np.quantile(values, np.linspace(0.0, 1.0, int(buckets) + 1), method="lower"))
        group = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, max(len(edges) - 2, 0))
        for g in np.unique(group):
            inside = rows[group == g]
            centre = int(np.median(n[inside]))
            table = bv_correction(max(centre, int(m) + 1), int(m), metric, float(gamma))
            out[inside] = _lookup(table, ranks[inside])
    return out
