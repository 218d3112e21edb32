import numpy as np

from kgeval.studies.s6.evaluation import draw_samples, full_and_sampled
from kgeval.studies.s6.tables import estimates_table, kendall_tau, ordering_table
from kgeval.uncertainty.resampling import BootstrapSettings
from s6_samples import TEST, TableScorer, settings, setup


def _runs(s):
    known, positions = setup()
    samples = draw_samples(TEST, known, positions, s, "tiny")
    runs = {}
    for model in ("a", "b"):
        full, sampled = full_and_sampled(TableScorer(), TEST, known, samples, s, model)
        runs["tiny", model, 0] = (full, sampled)
    return runs


def test_full_sample_estimates_equal_the_full_values():
    s = settings(ks=(8,), samplers=("uniform",))
    table, reps = estimates_table(_runs(s), s, BootstrapSettings(50, 10, 0.95, 0))
    base = table[table["estimator"].isin(["naive", "scaled", "corrected"])]
    assert np.allclose(base["error"], 0.0) and len(reps) == 50 * len(table)
    ordering = ordering_table(table, reps, 0.95)
    assert set(ordering["models"]) == {2}


def test_kendall_tau():
    assert kendall_tau(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0])) == 1.0
    assert kendall_tau(np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])) == -1.0
    assert np.isnan(kendall_tau(np.array([1.0, 1.0]), np.array([1.0, 2.0])))
