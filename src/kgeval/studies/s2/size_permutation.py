"""The exact permutation test of S2's size correlations (Sec. 4.3, Fig. 1): Spearman's rho of a metric against
#entities, with the datasets as the unit.

Dataset size is a property of the dataset, and the models of one dataset share it: the independent unit is the
dataset (docs/reproducing.md, "Intervals and verdicts"). Under the null hypothesis the datasets' sizes are
exchangeable across the datasets: any assignment of the n sizes to the n datasets is as likely as the observed one.
The test enumerates all n! assignments, gives every model x dataset point of a dataset that dataset's assigned size,
recomputes rho over all the points, and counts the assignments at least as extreme as the observed one.

With few datasets the test cannot reach a small p whatever the data: at 3 datasets with one model each the smallest
one-sided p is 1/6. :attr:`SizePermutationTest.smallest_p` is that floor, found by enumeration (several models per
dataset or tied values make the most extreme rho reachable by more than one assignment), so a claim can be called
not checkable when even the most extreme data could not be significant.

A directional claim is judged by both one-sided tests (:func:`judge_direction`): it holds when the test in its
direction is significant, differs when the one in the opposite direction is, and is inconclusive otherwise
(:mod:`kgeval.studies.s2.claims` says how the claims of no anti-correlation read this).

Written by hand rather than with :func:`scipy.stats.permutation_test`: that function permutes the observations it is
given. With ``permutation_type="pairings"`` on the model x dataset points it shuffles the sizes point by point, so a
dataset's models would get different sizes (all orderings of the points, not of the datasets), which is not this
null. It reaches this null only when given the n dataset sizes as its one sample together with a statistic that
closes over the points to spread each dataset's permuted size over its models; it then only enumerates the n!
orderings, and it does not report the smallest reachable p-value, which the verdict needs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from kgeval.claims import DIFFERS, HOLDS, INCONCLUSIVE, NOT_CHECKABLE, Judgement, format_interval
from kgeval.studies.s2.size_bootstrap import DATASET, SIZE, rho_over_datasets, rho_over_points, spearman
from kgeval.uncertainty.resampling import BootstrapSettings, stream_seed

__all__ = [
    "ALTERNATIVES",
    "MIN_DATASETS",
    "MAX_DATASETS",
    "SizePermutationTest",
    "size_permutation_test",
    "size_permutation_tests",
    "describe_tests",
    "judge_direction",
    "JudgedRho",
    "judge_size_correlation",
]

#: the one-sided alternatives: ``less`` for an anti-correlation (rho < 0), ``greater`` for a correlation (rho > 0)
ALTERNATIVES: tuple[str, ...] = ("less", "greater")
#: the fewest datasets on which a correlation with dataset size is defined at all (with one, the size is constant)
MIN_DATASETS = 2
#: the most datasets whose n! orderings are enumerated (8! = 40,320)
MAX_DATASETS = 8
#: how far a permuted rho may lie beyond the observed one and still count as reaching it (rounding of equal rhos),
#: and how far below the level a p-value must lie to be significant (rounding of 1 - level)
TOLERANCE = 1e-12


@dataclass(frozen=True)
class SizePermutationTest:
    """One exact one-sided permutation test of rho(metric, #entities) over the datasets.

    :ivar rho: rho over all model x dataset points as observed
    :ivar alternative: ``less`` (p = P(rho_perm <= rho)) or ``greater`` (p = P(rho_perm >= rho))
    :ivar p_value: the share of the orderings whose rho is at least as extreme as the observed one in the direction
        of ``alternative`` (the identity ordering included); NaN when rho is undefined
    :ivar smallest_p: the smallest p-value the design can reach in that direction: the share of the orderings that
        reach the most extreme rho attainable
    :ivar permutations: the orderings enumerated, n!
    :ivar datasets: the number of datasets n
    """

    rho: float
    alternative: str
    p_value: float
    smallest_p: float
    permutations: int
    datasets: int

    def describe(self) -> str:
        """The test for a claims table, e.g. ``exact permutation test over 4 datasets (24 orderings)``."""
        return f"exact permutation test over {self.datasets} datasets ({self.permutations:,} orderings of their sizes)"


def _blocks(frame: pd.DataFrame, column: str) -> tuple[list[float], list[np.ndarray]]:
    """Each dataset's size and its points' values of ``column``, datasets in sorted order."""
    names = sorted(set(frame[DATASET]))
    if len(names) < MIN_DATASETS:
        raise ValueError(
            f"{len(names)} dataset(s): a correlation with dataset size needs at least {MIN_DATASETS} datasets"
        )
    if len(names) > MAX_DATASETS:
        raise ValueError(
            f"{len(names)} datasets: the exact permutation test would enumerate {len(names)}! = "
            f"{math.factorial(len(names)):,} orderings; it enumerates at most {MAX_DATASETS}! = "
            f"{math.factorial(MAX_DATASETS):,}"
        )
    sizes, values = [], []
    for name in names:
        rows = frame.loc[frame[DATASET] == name]
        size = rows[SIZE].to_numpy(dtype=float)
        if np.ptp(size) != 0:
            raise ValueError(f"dataset {name!r} has several sizes ({sorted(set(size.tolist()))}); it must have one")
        sizes.append(float(size[0]))
        values.append(rows[column].to_numpy(dtype=float))
    return sizes, values


def _null(frame: pd.DataFrame, column: str) -> tuple[float, np.ndarray]:
    """The observed rho and rho under every ordering of the datasets' sizes (the identity first)."""
    sizes, values = _blocks(frame, column)
    y = np.concatenate(values)
    counts = [len(v) for v in values]
    rhos = np.array([
        spearman(np.repeat(np.asarray(order, dtype=float), counts), y)
        for order in itertools.permutations(sizes)
    ])
    return float(rhos[0]), rhos


def _test(rho: float, rhos: np.ndarray, alternative: str, datasets: int) -> SizePermutationTest:
    sign = 1.0 if alternative == "less" else -1.0
    # NaN compares false: an ordering with an undefined rho is never as extreme, but counts in the denominator
    signed = sign * rhos
    defined = signed[~np.isnan(signed)]
    if math.isnan(rho) or defined.size == 0:
        p_value = float("nan")
    else:
        p_value = float(np.mean(signed <= sign * rho + TOLERANCE))
    smallest = float(np.mean(signed <= defined.min() + TOLERANCE)) if defined.size else float("nan")
    return SizePermutationTest(rho, alternative, p_value, smallest, len(rhos), datasets)


def size_permutation_test(frame: pd.DataFrame, column: str, alternative: str) -> SizePermutationTest:
    """The exact one-sided permutation test of rho(``column``, #entities) over the datasets.

    :param frame: one row per model x dataset point: ``dataset``, ``num_entities`` (one value per dataset) and
        ``column``
    :param column: the metric correlated with the size
    :param alternative: ``less`` (anti-correlation) or ``greater`` (correlation)
    :raises ValueError: for fewer than 2 or more than :data:`MAX_DATASETS` datasets, a dataset with several sizes, or
        an unknown alternative
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative {alternative!r} is not one of {ALTERNATIVES}")
    return size_permutation_tests(frame, column)[alternative]


def size_permutation_tests(frame: pd.DataFrame, column: str) -> dict[str, SizePermutationTest]:
    """Both one-sided tests (:data:`ALTERNATIVES`) on one enumeration of the orderings.

    :param frame: as :func:`size_permutation_test`
    :param column: the metric correlated with the size
    :raises ValueError: as :func:`size_permutation_test`
    """
    rho, rhos = _null(frame, column)
    datasets = frame[DATASET].nunique()
    return {alternative: _test(rho, rhos, alternative, datasets) for alternative in ALTERNATIVES}


def _p(value: float) -> str:
    return f"{value:.3g}"


def describe_tests(tests: Mapping[str, SizePermutationTest]) -> str:
    """Both one-sided tests for the ``interval`` column: the orderings, each p and its smallest reachable value.

    :param tests: :func:`size_permutation_tests`
    """
    less, greater = tests["less"], tests["greater"]
    return (
        f"{less.describe()}: p = {_p(less.p_value)} for rho < 0 (smallest reachable {_p(less.smallest_p)}), "
        f"p = {_p(greater.p_value)} for rho > 0 (smallest reachable {_p(greater.smallest_p)})"
    )


def judge_direction(tests: Mapping[str, SizePermutationTest], direction: str, alpha: float, name: str) -> Judgement:
    """The verdict of a directional size claim on the exact tests at level ``alpha``.

    ``not checkable`` when rho is undefined, or when neither one-sided test can reach a p-value below ``alpha``
    whatever the data (too few datasets); else ``holds`` when the test in the claim's direction is significant,
    ``differs`` when the one in the opposite direction is, ``inconclusive`` otherwise.

    :param tests: :func:`size_permutation_tests`
    :param direction: the claim's direction, ``less`` (rho < 0) or ``greater`` (rho >= 0, judged on rho > 0)
    :param alpha: the significance level, 1 - the interval level
    :param name: the statistic in the evidence, e.g. ``rho(MRR, #entities)``
    """
    supporting = tests[direction]
    opposing = tests["greater" if direction == "less" else "less"]
    if math.isnan(supporting.rho):
        return Judgement(NOT_CHECKABLE, f"{name} is undefined (a constant metric or one size) on these data")
    count, orderings = supporting.datasets, supporting.permutations
    floor = min(supporting.smallest_p, opposing.smallest_p)
    if not floor < alpha - TOLERANCE:
        return Judgement(
            NOT_CHECKABLE,
            f"{count} datasets: an exact permutation test over {count}! = {orderings:,} orderings of their sizes "
            f"cannot reach p below {_p(floor)} (the level needs p < {_p(alpha)}); too few units",
        )
    p_less, p_greater = tests["less"].p_value, tests["greater"].p_value
    found = f"{name} = {supporting.rho:.4f}, one-sided p = {_p(p_less)} for rho < 0, {_p(p_greater)} for rho > 0"
    if supporting.p_value < alpha - TOLERANCE:
        return Judgement(HOLDS, f"{found}: significant at {_p(alpha)} in the claim's direction")
    if opposing.p_value < alpha - TOLERANCE:
        return Judgement(DIFFERS, f"{found}: significant at {_p(alpha)} against the claim")
    if direction == "greater":
        return Judgement(
            INCONCLUSIVE,
            f"{found}: neither is below {_p(alpha)}; no significant anti-correlation, but its absence is no evidence "
            "that there is none",
        )
    side = "holds" if supporting.rho < 0 else "differs"
    return Judgement(INCONCLUSIVE, f"{found}: neither is below {_p(alpha)}; the point estimate lies on the {side} side")


@dataclass(frozen=True)
class JudgedRho:
    """A size correlation as judged: rho, the ``interval`` column's text, the points' bootstrap, the verdict.

    :ivar rho: rho over all model x dataset points (NaN when undefined)
    :ivar interval: the exact permutation test's p-values, then the bootstrap interval over the datasets as context
    :ivar naive: the bootstrap interval over the model x dataset points, for the ``kgeval`` column
    :ivar judgement: the verdict of the exact test and its evidence
    """

    rho: float
    interval: str
    naive: str
    judgement: Judgement


def judge_size_correlation(
    frame: pd.DataFrame, column: str, direction: str, settings: BootstrapSettings, label: str
) -> JudgedRho:
    """rho of ``column`` against #entities judged by the exact permutation tests over the datasets
    (:func:`judge_direction`), with the bootstrap intervals over the datasets and over the points as context
    (:mod:`kgeval.studies.s2.size_bootstrap`); ``not checkable`` with fewer than :data:`MIN_DATASETS` datasets.

    :param frame: one row per model x dataset point: ``dataset``, ``num_entities`` and ``column``
    :param column: the metric correlated with the size
    :param direction: ``less`` for a claim of anti-correlation, ``greater`` for a claim of no anti-correlation
    :param settings: the bootstrap of the context intervals; ``1 - settings.level`` is the tests' level
    :param label: the metric's name in the evidence, e.g. ``MRR``
    """
    name = f"rho({label}, #entities)"
    count = frame[DATASET].nunique()
    if count < MIN_DATASETS:
        return JudgedRho(float("nan"), "", "not resampled (rho is undefined)", Judgement(
            NOT_CHECKABLE,
            f"{count} dataset(s): a correlation with dataset size needs at least {MIN_DATASETS} (with one, the size "
            "is constant and rho is undefined)",
        ))
    seed = stream_seed(settings.seed, "s2", "size_correlation")  # the same draws for every claim on a frame
    datasets = rho_over_datasets(frame, column, replace(settings, seed=seed))
    points = rho_over_points(frame, column, replace(settings, seed=seed))
    tests = size_permutation_tests(frame, column)
    interval = f"{describe_tests(tests)}; as context, {format_interval(datasets.low, datasets.high, datasets.unit())}"
    naive = f"bootstrap over the {points.units} instead: {format_interval(points.low, points.high)}"
    judgement = judge_direction(tests, direction, 1.0 - settings.level, name)
    return JudgedRho(tests["less"].rho, interval, naive, judgement)
