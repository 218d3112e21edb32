"""Kendall's tau between system rankings of S4: against pooling depth (Figs. 4-5), per relation category (Table 3),
with relation re-weighting (Table 4).

A system ranking by a metric is the order of the systems' values; Kendall's tau between two rankings is SciPy's
``kendalltau`` (tau-b) of the two value vectors over the same systems. Both vectors always come from the same metric,
so the direction (MR: lower is better) cancels out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from kgeval.studies.s4.labels import level_depth
from kgeval.studies.s4.categories import CATEGORIES

from kgeval.studies.s4.metrics import answer_values, micro_metric_names, weighted_micro

__all__ = [
    "KendallTau",
    "kendall_tau",
    "kendall_tau_batch",
    "system_vector",
    "tau_by_depth",
    "tau_by_category",
    "tau_reweighted",
    "deepest_level",
]


class KendallTau(NamedTuple):
    """Kendall's tau-b between two system rankings, its two-sided p-value, and the systems it was computed on."""

    tau: float
    pvalue: float
    #: systems with a finite value in both rankings (a system missing from either is left out, and counted out here)
    num_systems: int


def kendall_tau(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> KendallTau:
    """Kendall's tau-b and its two-sided p-value (SciPy) over the systems with a finite value in both vectors.

    A system with a missing (NaN) value in either vector is left out of the ranking; ``num_systems`` says how many
    remain, so a table never reports more systems than the tau was computed on. NaN when fewer than two systems
    remain or a ranking is constant.

    :param x: shape: (s,)
    :param y: shape: (s,), the same systems in the same order
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"kendall_tau: shapes differ, {x.shape} vs {y.shape}")
    ok = np.isfinite(x) & np.isfinite(y)
    n = int(ok.sum())
    if n < 2 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return KendallTau(float("nan"), float("nan"), n)
    from scipy import stats  # here, not at the top: most S4 jobs never need SciPy

    result = stats.kendalltau(x[ok], y[ok])
    return KendallTau(float(result.statistic), float(result.pvalue), n)


def kendall_tau_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of many rankings ``x[..., :, m]`` against one ranking ``y[:, m]``, vectorised.

    Equal to ``scipy.stats.kendalltau`` (tau-b, ties included; the tests check it), which has no batched form: with
    ``dx``, ``dy`` the signs of the pairwise differences, tau-b = ``sum(dx * dy) / sqrt(sum(dx**2) * sum(dy**2))``
    (``sum(dx**2)`` counts the pairs not tied in ``x``). NaN where a ranking is constant.

    :param x: shape: (..., S, M), the S systems' values of M metrics in many settings
    :param y: shape: (S, M), the reference values
    :return: shape: (..., M)
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    first, second = np.triu_indices(y.shape[0], k=1)
    dx = np.sign(x[..., first, :] - x[..., second, :])
    dy = np.sign(y[first, :] - y[second, :])
    numerator = np.einsum("...pm,pm->...m", dx, dy)
    denominator = np.sqrt((dx * dx).sum(axis=-2) * (dy * dy).sum(axis=-2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)


def system_vector(metrics: pd.DataFrame, level: str, family: str, metric: str) -> pd.Series:
    """Values of one metric at one level, indexed by system (sorted).

    :param metrics: the long table of :func:`kgeval.studies.s4.metrics.aggregate_metrics`
    :raises KeyError: when the combination is absent
    """
    rows = metrics.loc[(metrics["level"] == level) & (metrics["family"] == family) & (metrics["metric"] == metric)]
    if rows.empty:
        raise KeyError(f"no {family} {metric} at level {level!r} in the metrics table")
    return rows.set_index("system")["value"].sort_index()


def deepest_level(levels: Sequence[str]) -> str:
    """The deepest ``depth<d>`` level among ``levels``."""
    depths = [(level_depth(level), level) for level in levels if level.startswith("depth")]
    if not depths:
        raise ValueError(f"no pooled level among {list(levels)}")
    return max(depths)[1]


def tau_by_depth(metrics: pd.DataFrame, reference: str = "sparse") -> pd.DataFrame:
    """Kendall's tau between the ranking at ``reference`` and at every pooled level (and ``original``), per metric.

    :param metrics: the long metrics table (``level, system, family, metric, value``)
    :param reference: the level compared against (the sparse labels)
    :return: ``level, depth, family, metric, tau, pvalue, num_systems`` (depth 0 = the reference itself, -1 for
        ``original``; ``num_systems``: the systems with a value at both levels, those the tau ranks), sorted by
        family, metric, depth
    """
    rows = []
    levels = sorted(set(metrics["level"]))
    for (family, metric), group in metrics.groupby(["family", "metric"], sort=True):
        ref = system_vector(group, reference, family, metric)
        for level in levels:
            other = system_vector(group, level, family, metric).reindex(ref.index)
            result = kendall_tau(ref.to_numpy(), other.to_numpy())
            depth = -1 if level == "original" else level_depth(level)
            rows.append((level, depth, family, metric, result.tau, result.pvalue, result.num_systems))
    out = pd.DataFrame(rows, columns=["level", "depth", "family", "metric", "tau", "pvalue", "num_systems"])
    return out.sort_values(["family", "metric", "depth"], kind="stable").reset_index(drop=True)


def _micro_values(answers: pd.DataFrame, hits_at: Sequence[int]) -> pd.DataFrame:
    """Micro metrics per (level, system, side, category) of an answers table that carries ``category``."""
    values = answer_values(answers["rank"], hits_at)
    keys = answers[["level", "system", "side", "category"]].reset_index(drop=True)
    return pd.concat([keys, values], axis=1).groupby(["level", "system", "side", "category"], sort=True).mean()


def tau_by_category(
    answers: pd.DataFrame,
    categories: Mapping[str, str] | pd.Series,
    *,
    reference: str = "sparse",
    level: str,
    hits_at: Sequence[int] = (1, 3, 10),
) -> pd.DataFrame:
    """Table 3: tau between system rankings at ``reference`` and ``level``, per question side and relation category.

    :param answers: the answers table of :func:`kgeval.studies.s4.metrics.evaluate_label_levels`
    :param categories: category (1-1, 1-N, N-1, N-N) per relation label
    :param reference: the sparse level
    :param level: the completed level (the deepest pool)
    :return: ``side, category, metric, tau, pvalue, num_systems, num_answers_reference, num_answers_level`` (answers
        of one system), sorted
    """
    categories = pd.Series(categories)
    subset = answers.loc[answers["level"].isin([reference, level])].copy()
    subset["category"] = subset["relation"].map(categories)
    if subset["category"].isna().any():
        missing = sorted(set(subset.loc[subset["category"].isna(), "relation"]))[:3]
        raise ValueError(f"tau_by_category: no category for relation(s) {missing}")
    means = _micro_values(subset, hits_at)
    counts = subset.groupby(["level", "system", "side", "category"]).size()
    first_system = sorted(set(subset["system"]))[0]
    rows = []
    for side in ("head", "tail"):
        for category in CATEGORIES:
            for metric in micro_metric_names(hits_at):
                try:
                    ref = means.xs((reference, side, category), level=["level", "side", "category"])[metric]
                    other = means.xs((level, side, category), level=["level", "side", "category"])[metric]
                except KeyError:
                    rows.append((side, category, metric, np.nan, np.nan, 0, 0, 0))
                    continue
                other = other.reindex(ref.index)
                result = kendall_tau(ref.to_numpy(), other.to_numpy())
                n_ref = int(counts.get((reference, first_system, side, category), 0))
                n_level = int(counts.get((level, first_system, side, category), 0))
                rows.append((side, category, metric, result.tau, result.pvalue, result.num_systems, n_ref, n_level))
    columns = [
        "side",
        "category",
        "metric",
        "tau",
        "pvalue",
        "num_systems",
        "num_answers_reference",
        "num_answers_level",
    ]
    return pd.DataFrame(rows, columns=columns)


def tau_reweighted(
    answers: pd.DataFrame, *, reference: str = "sparse", level: str, hits_at: Sequence[int] = (1, 3, 10)
) -> pd.DataFrame:
    """Table 4: tau between the ranking on ``reference`` and the micro metrics on ``level`` under two relation weights.

    ``distribution = complete``: Eq. 1 with ``psi`` = the relation distribution of ``level`` (the plain micro mean);
    ``distribution = sparse``: ``psi`` = the relation distribution of ``reference`` (relations absent there weigh 0).

    :return: ``distribution, metric, tau, pvalue, num_systems``, sorted
    """
    ref_answers = answers.loc[answers["level"] == reference]
    level_answers = answers.loc[answers["level"] == level]
    if ref_answers.empty or level_answers.empty:
        raise ValueError(f"tau_reweighted: the answers table lacks level {reference!r} or {level!r}")
    # relation distribution of the sparse labels: answers of one system (the same for all)
    first = sorted(set(ref_answers["system"]))[0]
    sparse_weights = ref_answers.loc[ref_answers["system"] == first].groupby("relation").size().astype(float)
    reference_values = {s: weighted_micro(g, hits_at) for s, g in ref_answers.groupby("system", sort=True)}
    variants = {
        "complete": {s: weighted_micro(g, hits_at) for s, g in level_answers.groupby("system", sort=True)},
        "sparse": {
            s: weighted_micro(g, hits_at, sparse_weights) for s, g in level_answers.groupby("system", sort=True)
        },
    }
    ref_frame = pd.DataFrame(reference_values).T.sort_index()
    rows = []
    for distribution, values in variants.items():
        frame = pd.DataFrame(values).T.reindex(ref_frame.index)
        for metric in micro_metric_names(hits_at):
            result = kendall_tau(ref_frame[metric].to_numpy(), frame[metric].to_numpy())
            rows.append((distribution, metric, result.tau, result.pvalue, result.num_systems))
    out = pd.DataFrame(rows, columns=["distribution", "metric", "tau", "pvalue", "num_systems"])
    return out.sort_values(["distribution", "metric"], kind="stable").reset_index(drop=True)
