import numpy as np
import pandas as pd
from sampled_tables import TEST, TableModel, brute_force, setup

from kgeval.lp.sampled.counts import SampledCandidates, sampled_counts
from kgeval.lp.sampled.estimates import ESTIMATE_COLUMNS, METRICS, RANK_TYPES, estimates_table
from kgeval.uncertainty.resampling import BootstrapSettings

BOOT = BootstrapSettings(resamples=200, permutations=10, level=0.95, seed=0)


def _table(sampler="uniform", k=20, seed=0):
    known, positions = setup()
    settings = SampledCandidates(sampler, k, seed)
    counts = sampled_counts(TableModel(), TEST, known, positions, settings, ("d", "test"))
    return estimates_table(counts, settings, BOOT, ("d", "m", 0, "test"))


def _full_metrics(tie: float) -> dict[str, float]:
    """MR, MRR, Hits@k and AMRI of the brute-force full ranks, both sides."""
    full = brute_force()
    ranks = 1.0 + full["greater"] + tie * full["equal"]
    n = full["num_candidates"]
    out = {"mr": ranks.mean(), "mrr": (1 / ranks).mean(), "amri": 1 - (ranks.mean() - 1) / ((n + 1) / 2 - 1).mean(),
           "drawn": (n - 1).mean()}
    return out | {f"hits@{k}": (ranks <= k).mean() for k in (1, 3, 10)}


def _value(table: pd.DataFrame, **match) -> float:
    rows = table
    for key, value in match.items():
        rows = rows[rows[key] == value]
    assert len(rows) == 1, match
    return float(rows["value"].iloc[0])


def test_a_sample_of_every_candidate_gives_the_full_metrics():
    table = _table(k=20)
    assert list(table.columns) == list(ESTIMATE_COLUMNS)
    for rank_type, tie in RANK_TYPES.items():
        expected = _full_metrics(tie)
        for metric in METRICS:
            assert np.isclose(_value(table, side="both", rank_type=rank_type, estimator="scaled", metric=metric),
                              expected[metric]), (rank_type, metric)
            if metric != "amri":  # the naive AMRI uses the sample's expectation, equal here to the full one
                assert np.isclose(_value(table, side="both", rank_type=rank_type, estimator="naive", metric=metric),
                                  expected[metric])


def test_the_scaled_mean_rank_is_unbiased_and_the_naive_mrr_overestimates():
    """Over 300 seeds of a uniform sample of 2 candidates, the scaled MR's mean lies within 4 standard errors of the
    full MR; the naive MRR's mean lies above the full MRR."""
    known, positions = setup()
    full = brute_force()
    scaled, naive_mrr = [], []
    for seed in range(300):
        counts = sampled_counts(TableModel(), TEST, known, positions, SampledCandidates("uniform", 2, seed), ("d", "t"))
        b = counts["greater"] + 0.5 * counts["equal"]
        ranks = 1 + (counts["num_candidates"] - 1) * b / counts["drawn"]
        scaled.append(ranks.mean())
        naive_mrr.append((1 / (1 + b)).mean())
    full_ranks = 1.0 + full["greater"] + 0.5 * full["equal"]
    assert abs(np.mean(scaled) - full_ranks.mean()) < 4 * np.std(scaled) / np.sqrt(len(scaled))
    assert np.mean(naive_mrr) > (1 / full_ranks).mean()


def test_drawn_is_the_mean_sample_size():
    table = _table(k=3)
    full = brute_force()
    want = np.minimum(3, full["num_candidates"] - 1).mean()
    assert np.isclose(_value(table, side="both", rank_type="realistic", estimator="naive", metric="drawn"), want)


def test_unbiased_marks_only_the_scaled_mr_and_amri_of_the_uniform_sampler():
    table = _table(k=3)
    marked = table[table["unbiased"]]
    assert set(marked["metric"]) == {"mr", "amri"} and set(marked["estimator"]) == {"scaled"}
    assert not _table("static", k=3)["unbiased"].any()


def test_intervals_hold_the_point_and_every_row_is_there():
    table = _table(k=3)
    assert len(table) == 3 * len(RANK_TYPES) * 2 * len(METRICS)
    ok = (table["ci_low"] <= table["value"] + 1e-12) & (table["value"] <= table["ci_high"] + 1e-12)
    assert ok.mean() > 0.9  # a percentile interval need not hold the point, but nearly always does here
    assert table["ci_method"].str.contains("not the estimator's bias").all()
