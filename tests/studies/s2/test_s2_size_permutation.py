"""The exact permutation test of S2's size correlation over the datasets, and the verdicts judged on it."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from kgeval.claims import DIFFERS, HOLDS, INCONCLUSIVE, NOT_CHECKABLE
from kgeval.studies.s2.size_permutation import (
    describe_tests,
    judge_size_correlation,
    size_permutation_test,
    size_permutation_tests,
)
from kgeval.uncertainty.resampling import BootstrapSettings

SETTINGS = BootstrapSettings(resamples=50, permutations=10, level=0.95, seed=1)


def _frame(sizes: dict[str, float], values: dict[str, list[float]]) -> pd.DataFrame:
    """One row per model x dataset point: each dataset's size and its models' values."""
    rows = [(name, sizes[name], v) for name in sizes for v in values[name]]
    return pd.DataFrame(rows, columns=["dataset", "num_entities", "base"])


def _one_model(values: list[float]) -> pd.DataFrame:
    """One model per dataset, datasets ``d0, d1, ...`` of growing size."""
    names = [f"d{i}" for i in range(len(values))]
    return _frame({n: 10.0 ** (i + 1) for i, n in enumerate(names)}, {n: [v] for n, v in zip(names, values)})


def _brute_force(frame: pd.DataFrame) -> tuple[float, list[float]]:
    """rho as observed and under every assignment of the datasets' sizes, by a loop over a dict dataset -> size."""
    size_of = frame.groupby("dataset")["num_entities"].first().to_dict()
    names = list(size_of)
    observed = stats.spearmanr(frame["num_entities"], frame["base"]).statistic
    null = []
    for order in itertools.permutations([size_of[n] for n in names]):
        assigned = dict(zip(names, order))
        null.append(stats.spearmanr(frame["dataset"].map(assigned), frame["base"]).statistic)
    return float(observed), null


MIXED = _frame(
    {"a": 14, "b": 104, "c": 14505, "d": 40559, "e": 2000},
    {"a": [0.5, 0.61, 0.7], "b": [0.3, 0.35, 0.2], "c": [0.45, 0.3, 0.25], "d": [0.2, 0.25, 0.5],
     "e": [0.35, 0.3, 0.1]},
)


def test_p_values_match_a_brute_force_enumeration():
    observed, null = _brute_force(MIXED)
    tests = size_permutation_tests(MIXED, "base")
    assert tests["less"].rho == pytest.approx(observed)
    assert tests["less"].p_value == pytest.approx(np.mean([r <= observed + 1e-12 for r in null]))
    assert tests["greater"].p_value == pytest.approx(np.mean([r >= observed - 1e-12 for r in null]))
    assert tests["less"].smallest_p == pytest.approx(np.mean([r <= min(null) + 1e-12 for r in null]))
    assert tests["greater"].smallest_p == pytest.approx(np.mean([r >= max(null) - 1e-12 for r in null]))
    assert tests["less"].permutations == 120 and tests["less"].datasets == 5
    assert size_permutation_test(MIXED, "base", "greater") == tests["greater"]


def test_scipy_pairings_reach_this_null_only_on_the_dataset_sizes():
    """The module docstring's reason for enumerating by hand, checked: SciPy's "pairings" test agrees when given the
    dataset sizes and a statistic that spreads them over the models, and not when given the points."""
    sizes = MIXED.groupby("dataset")["num_entities"].first()
    counts = MIXED.groupby("dataset").size().loc[sizes.index].to_numpy()
    y = np.concatenate([MIXED.loc[MIXED["dataset"] == n, "base"].to_numpy(float) for n in sizes.index])

    def spread(a):
        return stats.spearmanr(np.repeat(a, counts), y).statistic

    by_datasets = stats.permutation_test((sizes.to_numpy(float),), spread, permutation_type="pairings",
                                         alternative="less", n_resamples=np.inf, vectorized=False)
    ours = size_permutation_test(MIXED, "base", "less")
    assert by_datasets.pvalue == pytest.approx(ours.p_value)
    by_points = stats.permutation_test((MIXED["num_entities"].to_numpy(float),),
                                       lambda a: stats.spearmanr(a, MIXED["base"]).statistic,
                                       permutation_type="pairings", alternative="less", n_resamples=2000,
                                       vectorized=False, rng=0)
    assert by_points.pvalue < ours.p_value / 2  # points treated as independent: far too small


def test_smallest_reachable_p_is_one_over_n_factorial_with_one_model_and_distinct_values():
    three, four = size_permutation_tests(_one_model([0.3, 0.2, 0.1]), "base"), size_permutation_tests(
        _one_model([0.4, 0.1, 0.3, 0.2]), "base"
    )
    for alternative in ("less", "greater"):
        assert three[alternative].smallest_p == pytest.approx(1 / 6)
        assert four[alternative].smallest_p == pytest.approx(1 / 24)
    assert three["less"].p_value == pytest.approx(1 / 6)  # the identity is the most extreme ordering
    assert three["greater"].p_value == pytest.approx(1.0)


def test_smallest_reachable_p_counts_tied_orderings():
    # two datasets share a value: the most negative rho is reached by 2 of the 6 orderings, not by 1
    tests = size_permutation_tests(_one_model([0.5, 0.5, 0.1]), "base")
    assert tests["less"].smallest_p == pytest.approx(2 / 6)
    assert tests["less"].p_value == pytest.approx(2 / 6)  # the identity reaches it too: counted with a tolerance


def test_constant_metric_has_no_p_value():
    tests = size_permutation_tests(_one_model([0.2, 0.2, 0.2, 0.2]), "base")
    assert math.isnan(tests["less"].rho) and math.isnan(tests["less"].p_value)
    judged = judge_size_correlation(_one_model([0.2, 0.2, 0.2, 0.2]), "base", "less", SETTINGS, "MRR")
    assert judged.judgement.verdict == NOT_CHECKABLE and "undefined" in judged.judgement.evidence


def test_three_datasets_are_not_checkable():
    judged = judge_size_correlation(_one_model([0.3, 0.2, 0.1]), "base", "less", SETTINGS, "MRR")
    assert judged.judgement.verdict == NOT_CHECKABLE
    assert judged.judgement.evidence == (
        "3 datasets: an exact permutation test over 3! = 6 orderings of their sizes cannot reach p below 0.167 "
        "(the level needs p < 0.05); too few units"
    )
    assert judged.interval.startswith(
        "exact permutation test over 3 datasets (6 orderings of their sizes): p = 0.167 for rho < 0 (smallest "
        "reachable 0.167), p = 1 for rho > 0 (smallest reachable 0.167); as context, ["
    )
    assert "(bootstrap over 3 datasets, 50 resamples" in judged.interval
    assert judged.naive.startswith("bootstrap over the 3 points instead: [")


def test_five_datasets_hold_and_fail():
    falling = _one_model([0.5, 0.4, 0.3, 0.2, 0.1])
    anti = judge_size_correlation(falling, "base", "less", SETTINGS, "MRR").judgement
    assert anti.verdict == HOLDS and "p = 0.00833 for rho < 0" in anti.evidence
    # the claim of no anti-correlation differs when the anti-correlation is significant
    assert judge_size_correlation(falling, "base", "greater", SETTINGS, "AMRR").judgement.verdict == DIFFERS
    rising = _one_model([0.1, 0.2, 0.3, 0.4, 0.5])
    assert judge_size_correlation(rising, "base", "less", SETTINGS, "MRR").judgement.verdict == DIFFERS
    assert judge_size_correlation(rising, "base", "greater", SETTINGS, "AMRR").judgement.verdict == HOLDS


def test_five_datasets_without_a_significant_trend_are_inconclusive():
    mixed = _one_model([0.5, 0.3, 0.45, 0.2, 0.35])
    anti = judge_size_correlation(mixed, "base", "less", SETTINGS, "MRR").judgement
    assert anti.verdict == INCONCLUSIVE and "the point estimate lies on the holds side" in anti.evidence
    absent = judge_size_correlation(mixed, "base", "greater", SETTINGS, "AMRR").judgement
    assert absent.verdict == INCONCLUSIVE
    assert "no significant anti-correlation, but its absence is no evidence that there is none" in absent.evidence


def test_describe_tests_names_both_directions():
    text = describe_tests(size_permutation_tests(_one_model([0.4, 0.1, 0.3, 0.2]), "base"))
    assert text.startswith("exact permutation test over 4 datasets (24 orderings of their sizes): p = ")
    assert "for rho < 0 (smallest reachable 0.0417)" in text and "for rho > 0 (smallest reachable 0.0417)" in text


def test_refusals():
    with pytest.raises(ValueError, match=r"9 datasets: .* 9! = 362,880 orderings; it enumerates at most 8! = 40,320"):
        size_permutation_tests(_one_model([0.1 * i for i in range(9)]), "base")
    with pytest.raises(ValueError, match="needs at least 2 datasets"):
        size_permutation_tests(_one_model([0.1]), "base")
    with pytest.raises(ValueError, match="several sizes"):
        size_permutation_tests(MIXED.assign(num_entities=range(len(MIXED))), "base")
    with pytest.raises(ValueError, match="alternative 'two-sided'"):
        size_permutation_test(MIXED, "base", "two-sided")
    one = judge_size_correlation(_one_model([0.1]), "base", "greater", SETTINGS, "AMRR")
    assert one.judgement.verdict == NOT_CHECKABLE and one.interval == ""
