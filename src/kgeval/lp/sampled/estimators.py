"""Estimators of the full filtered metrics from a sample of ``k`` candidates per query.

A query with ``N`` filtered candidates (its true answer and ``N - 1`` negatives) is evaluated on ``d`` sampled negatives
(``d = k``, or fewer where fewer can be drawn). ``b`` counts the sampled negatives scored above the true answer plus
half of those scored equal to it (the realistic rank's tie rule, as in the full ranks table). Per query:

- ``naive``: the sampled rank ``1 + b`` among ``d + 1`` candidates, and the metrics of those ranks, as a sampled
  evaluation reports them;
- ``scaled``: the rank estimate ``1 + (N - 1) b / d`` (each sampled negative stands for ``(N - 1) / d``; unbiased for
  the full rank under uniform sampling) and the metrics computed from it;
- ``corrected``: Krichene and Rendle's corrected metric, a value per sampled rank (:mod:`~kgeval.lp.sampled.correction`);
- ``adjusted``: the adjusted indices of the sampled ranks with the sample's own expectation (uniform ranks among
  ``d + 1``: expected rank ``(d + 2) / 2``), set against the adjusted indices of the full ranks.

With ``d = N - 1`` the sample is every candidate and every estimator returns the full ranks' values.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "BASE_METRICS",
    "ADJUSTED_METRICS",
    "sample_counts",
    "naive_ranks",
    "scaled_ranks",
    "rank_columns",
    "expectation_columns",
    "amri",
    "adjusted_values",
]

#: the metrics each estimator estimates (each a mean of per-query values of the rank)
BASE_METRICS: tuple[str, ...] = ("mr", "mrr", "hits@1", "hits@10")
#: the adjusted indices and their base metric (Hoyt et al. 2022)
ADJUSTED_METRICS: dict[str, str] = {"amri": "mr", "amrr": "mrr", "ah@10": "hits@10"}
#: the smallest distance of the expectation from the metric's best value that leaves an adjusted index defined
_NO_ROOM = 1e-9


def sample_counts(true_scores: np.ndarray, sampled_scores: np.ndarray, ks) -> tuple[np.ndarray, np.ndarray]:
    """For each ``k``, the better count ``b`` and the number drawn ``d`` of each query's first ``k`` candidates.

    :param true_scores: shape: (q,) the true answer's score
    :param sampled_scores: shape: (q, w) the scores of the candidates in draw order, NaN where none was drawn
    :param ks: the sample sizes
    :return: ``(better, drawn)``, each of shape (len(ks), q); ``better`` float64, ``drawn`` int64
    """
    true = np.asarray(true_scores, dtype=np.float64)[:, None]
    scores = np.asarray(sampled_scores, dtype=np.float64)
    present = ~np.isnan(scores)
    value = np.where(scores > true, 1.0, 0.0) + np.where(scores == true, 0.5, 0.0)
    better_cum = np.cumsum(value, axis=1)
    drawn_cum = np.cumsum(present, axis=1)
    width = scores.shape[1]
    better = np.zeros((len(ks), len(true)))
    drawn = np.zeros((len(ks), len(true)), dtype=np.int64)
    for i, k in enumerate(ks):
        column = min(int(k), width) - 1
        if column >= 0:
            better[i], drawn[i] = better_cum[:, column], drawn_cum[:, column]
    return better, drawn


def naive_ranks(better: np.ndarray) -> np.ndarray:
    """The realistic rank among the sampled candidates: ``1 + b``."""
    return 1.0 + np.asarray(better, dtype=np.float64)


def scaled_ranks(better: np.ndarray, drawn: np.ndarray, num_candidates: np.ndarray) -> np.ndarray:
    """The rank estimate ``1 + (N - 1) b / d`` (rank 1 where nothing was drawn: no evidence against the answer)."""
    drawn = np.asarray(drawn, dtype=np.float64)
    scale = np.divide(np.asarray(num_candidates, dtype=np.float64) - 1.0, drawn, out=np.zeros_like(drawn), where=drawn > 0)
    return 1.0 + scale * np.asarray(better, dtype=np.float64)


def rank_columns(ranks: np.ndarray, hits: tuple[int, ...] = (1, 10)) -> dict[str, np.ndarray]:
    """The per-query values whose means are MR, MRR and Hits@k for each k of ``hits`` (by default
    :data:`BASE_METRICS`)."""
    ranks = np.asarray(ranks, dtype=np.float64)
    return {"mr": ranks, "mrr": 1.0 / ranks} | {f"hits@{k}": (ranks <= float(k)).astype(float) for k in hits}


def expectation_columns(num_candidates: np.ndarray) -> dict[str, np.ndarray]:
    """Per query, the expectation of each base metric's value under a uniformly random rank among ``n`` candidates
    (``(n + 1) / 2``, ``H_n / n``, ``min(1, K / n)``)."""
    n = np.asarray(num_candidates, dtype=np.int64)
    top = int(n.max()) if n.size else 1
    harmonic = np.cumsum(1.0 / np.arange(1, top + 1))
    nf = n.astype(np.float64)
    return {
        "mr": 0.5 * (nf + 1.0),
        "mrr": harmonic[np.maximum(n, 1) - 1] / np.maximum(nf, 1.0),
        "hits@1": np.minimum(1.0 / nf, 1.0),
        "hits@10": np.minimum(10.0 / nf, 1.0),
    }


def amri(mean_rank, expected_rank):
    """The adjusted mean rank index ``1 - (MR - 1) / (E[MR] - 1)`` (any shape, elementwise); NaN where ``E[MR]`` leaves
    no room (a single candidate)."""
    room = np.asarray(expected_rank, dtype=float) - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1.0 - (np.asarray(mean_rank, dtype=float) - 1.0) / room
    return np.where(np.isfinite(value) & (room > _NO_ROOM), value, np.nan)


def adjusted_values(means: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The adjusted indices from the means of the base values and of their expectations (any shape, elementwise):
    AMRI ``1 - (MR - 1) / (E[MR] - 1)``, AMRR and AH@10 ``(v - E) / (1 - E)``; NaN where the expectation leaves no
    room (a single candidate; Hits@10 among at most 10)."""
    out = {"amri": amri(means["mr"], expected["mr"])}
    for key in ("amrr", "ah@10"):
        base = ADJUSTED_METRICS[key]
        room = 1.0 - np.asarray(expected[base], dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = (means[base] - expected[base]) / room
        # no room (e.g. Hits@10 among 10 or fewer candidates: 1 whatever the model, up to rounding): undefined
        out[key] = np.where(np.isfinite(value) & (room > _NO_ROOM), value, np.nan)
    return out
