import itertools

import numpy as np

from kgeval.lp.sampled.estimators import adjusted_values, expectation_columns, naive_ranks, sample_counts, scaled_ranks


def test_rank_estimate_expectation_matches_enumeration_of_all_k_subsets():
    negatives = np.array([0.9, 0.5, 0.5, 0.1, 0.7, 0.2])  # scores of the N - 1 = 6 negatives
    true, k = 0.5, 3
    full = 1 + (negatives > true).sum() + 0.5 * (negatives == true).sum()
    estimates = []
    for subset in itertools.combinations(range(len(negatives)), k):
        better, drawn = sample_counts(np.array([true]), negatives[list(subset)][None, :], [k])
        estimates.append(scaled_ranks(better[0], drawn[0], np.array([len(negatives) + 1]))[0])
    assert np.isclose(np.mean(estimates), full)


def test_all_candidates_give_the_full_rank_exactly():
    rng = np.random.default_rng(0)
    scores = rng.random((5, 8))
    true = rng.random(5)
    full = 1 + (scores > true[:, None]).sum(axis=1)
    better, drawn = sample_counts(true, scores, [8])
    assert np.array_equal(naive_ranks(better[0]), full)
    assert np.allclose(scaled_ranks(better[0], drawn[0], np.full(5, 9)), full)


def test_padding_counts_only_drawn_candidates():
    better, drawn = sample_counts(np.array([0.5]), np.array([[0.9, np.nan, np.nan]]), [1, 3])
    assert better.tolist() == [[1.0], [1.0]] and drawn.tolist() == [[1], [1]]


def test_adjusted_indices_of_the_expectation_are_zero():
    e = {k: v.mean() for k, v in expectation_columns(np.array([11, 11])).items()}
    values = adjusted_values(e, e)
    assert np.allclose([values["amri"], values["amrr"], values["ah@10"]], 0.0)
    assert np.isclose(e["mr"], 6.0)  # (k + 2) / 2 for k = 10 sampled negatives


def test_hits_at_10_among_ten_or_fewer_candidates_has_no_adjusted_index():
    """Three candidates: every rank is a hit, whatever the model, so AH@10 is undefined (not 0); AMRI stays defined."""
    e = {k: v.mean() for k, v in expectation_columns(np.array([3, 3])).items()}
    perfect = {"mr": np.float64(1.0), "mrr": np.float64(1.0), "hits@10": np.float64(1.0)}
    values = adjusted_values(perfect, e)
    assert np.isnan(values["ah@10"])
    # a weighted mean may round both to just below 1: still undefined, not (a - b) / (1 - b) = 0
    rounded = np.float64(1.0) - np.finfo(float).eps
    assert np.isnan(adjusted_values(perfect | {"hits@10": rounded}, e | {"hits@10": rounded})["ah@10"])
    assert np.isclose(values["amri"], 1.0) and np.isclose(values["amrr"], 1.0)
