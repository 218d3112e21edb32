import numpy as np
import pytest
from sampled_tables import TEST, TableModel, brute_force, setup

from kgeval.lp.sampled.counts import COUNT_COLUMNS, SampledCandidates, sampled_counts


def _counts(sampler="uniform", k=20, seed=0, split="test"):
    known, positions = setup()
    return sampled_counts(TableModel(), TEST, known, positions, SampledCandidates(sampler, k, seed), ("d", split))


def test_a_sample_of_every_candidate_counts_the_full_ranking():
    counts = _counts(k=20)
    full = brute_force()
    assert list(counts.columns) == list(COUNT_COLUMNS)
    assert counts["side"].tolist() == ["head"] * len(TEST) + ["tail"] * len(TEST)
    for key in ("greater", "equal", "num_candidates"):
        assert counts[key].tolist() == full[key].tolist(), key
    assert (counts["drawn"] == full["num_candidates"] - 1).all()


def test_a_small_sample_counts_at_most_the_full_counts():
    full = brute_force()
    for seed in range(10):
        counts = _counts(k=3, seed=seed)
        assert (counts["drawn"] == np.minimum(3, full["num_candidates"] - 1)).all()
        assert (counts["greater"] <= full["greater"]).all() and (counts["equal"] <= full["equal"]).all()
        assert (counts["num_candidates"] == full["num_candidates"]).all()


def test_draws_are_deterministic_by_seed_and_differ_between_splits():
    assert _counts(k=3, seed=4).equals(_counts(k=3, seed=4))
    different = [not _counts(k=3, seed=s).equals(_counts(k=3, seed=s, split="valid")) for s in range(5)]
    assert any(different)


def test_guided_samples_draw_from_the_training_pool_only():
    counts = _counts("static", k=20)
    # tail queries of relation 0 draw from its training range {1, 2, 5, 8, 10} less the known answers
    full = brute_force()
    assert (counts["drawn"] <= full["num_candidates"] - 1).all()
    assert (counts["drawn"] < full["num_candidates"] - 1).any()


def test_settings_name_the_config_key_of_an_unknown_sampler():
    with pytest.raises(ValueError, match="ranking.candidates.big.sampler"):
        SampledCandidates.from_config({"sampler": "hard", "k": 5, "seed": 0}, "big")
    settings = SampledCandidates.from_config({"sampler": "uniform", "k": 500, "seed": 1}, "big")
    assert settings == SampledCandidates("uniform", 500, 1)
    assert "k=500" in settings.describe()
