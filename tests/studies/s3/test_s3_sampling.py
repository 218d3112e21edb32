"""The biased seed sampler of paper 002 (Sec. 3.2): known outputs, the literal iterative loop, uniform tie-breaking,
sizes, determinism and the direction of every bias."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from kgeval.studies.s3.features import attr_splits, name_splits
from kgeval.studies.s3.sampling import (
    MissingFeatureError,
    bias_scores,
    bias_summary,
    biased_order,
    sample_roles,
    seed_set_sizes,
)

# a hand-made mapping set: (name split, attribute split) -> score under "both" = z_name + z_attr
HAND = [
    ("same", "large"),  # 8
    ("different", "small"),  # 2
    ("close", "large"),  # 7
    ("same", "small"),  # 5
    ("close", "medium"),  # 6
    ("different", "large"),  # 5
    ("same", "medium"),  # 7
    ("close", "small"),  # 4
]


def _splits():
    names = np.array([n for n, _ in HAND], dtype=object)
    attrs = np.array([a for _, a in HAND], dtype=object)
    return names, attrs


def test_scores_are_the_papers():
    names, attrs = _splits()
    assert bias_scores(names, attrs, "both").tolist() == [8, 2, 7, 5, 6, 5, 7, 4]
    assert bias_scores(names, attrs, "name").tolist() == [4, 1, 3, 4, 3, 1, 4, 3]
    assert bias_scores(names, attrs, "attr").tolist() == [4, 1, 4, 1, 3, 4, 3, 1]
    assert bias_scores(names, attrs, "none").tolist() == [0] * 8
    # "all the mappings are assigned a score of 8, 7, 6, 5, 4, or 2"
    every = [(n, a) for n in ("same", "close", "different") for a in ("large", "medium", "small")]
    scores = bias_scores(np.array([n for n, _ in every]), np.array([a for _, a in every]), "both")
    assert set(scores.tolist()) == {8, 7, 6, 5, 4, 2}


def test_known_output_without_ties():
    names, attrs = _splits()
    # the top-3 "both" scores are 8, 7, 7 (mappings 0, 2, 6): whatever the seed, those are the seed mappings
    for seed in range(5):
        roles = sample_roles(names, attrs, "both", train_ratio=0.25, valid_fraction=0.5, seed=seed)
        assert sorted(np.flatnonzero(roles != "test").tolist()) == [0, 2, 6]
        assert (roles == "train").sum() == 2 and (roles == "valid").sum() == 1


def test_known_output_for_a_seed_with_ties():
    names, attrs = _splits()
    # name bias, N_seed = 3 of the three score-4 mappings {0, 3, 6}: all of them; N_seed = 4 adds one of the
    # score-3 mappings {2, 4, 7}, picked by the largest tie-breaking key of numpy's default_rng(11)
    keys = np.random.default_rng(11).random(8)
    expected_fourth = max([2, 4, 7], key=lambda i: keys[i])
    roles = sample_roles(names, attrs, "name", train_ratio=0.375, valid_fraction=1 / 3, seed=11)
    assert sorted(np.flatnonzero(roles != "test").tolist()) == sorted([0, 3, 6, expected_fourth])


def _literal_loop(scores: np.ndarray, keys: np.ndarray, n_seed: int) -> list[int]:
    """Steps (1)-(4) of the paper, literally: move the highest-scored remaining mapping until N_seed are moved
    (ties: the largest random key, i.e. a uniformly random one among them)."""
    remaining = list(range(len(scores)))
    seeds: list[int] = []
    while len(seeds) < n_seed:
        best = max(remaining, key=lambda i: (scores[i], keys[i]))
        remaining.remove(best)
        seeds.append(best)
    return seeds


def test_order_equals_the_literal_iterative_loop():
    rng = np.random.default_rng(3)
    for _ in range(20):
        scores = rng.choice([8, 7, 6, 5, 4, 2], size=50)
        keys = rng.random(50)
        assert biased_order(scores, keys)[:30].tolist() == _literal_loop(scores, keys, 30)


def test_ties_are_broken_uniformly():
    # one score-4 mapping, then a tie of 6 score-3 mappings of which 2 are needed: each has probability 1/3
    names = np.array(["same"] + ["close"] * 6 + ["different"] * 3, dtype=object)
    counts = np.zeros(len(names))
    runs = 1200
    for seed in range(runs):
        roles = sample_roles(names, None, "name", train_ratio=0.2, valid_fraction=0.5, seed=seed)
        assert roles[0] != "test" and (roles[7:] == "test").all()
        counts += roles != "test"
    observed = counts[1:7]
    assert observed.sum() == 2 * runs
    # chi-square goodness of fit against the uniform 2*runs/6 per tied mapping
    assert stats.chisquare(observed).pvalue > 1e-3


def test_sizes_determinism_and_nesting():
    rng = np.random.default_rng(0)
    names = rng.choice(["same", "close", "different"], size=1000).astype(object)
    attrs = rng.choice(["large", "medium", "small"], size=1000).astype(object)
    assert seed_set_sizes(1000, 0.02) == (20, 10)
    assert seed_set_sizes(1000, 0.2) == (200, 100)
    a = sample_roles(names, attrs, "both", 0.02, 0.5, seed=4)
    assert (a == "train").sum() == 20 and (a == "valid").sum() == 10 and (a == "test").sum() == 970
    np.testing.assert_array_equal(a, sample_roles(names, attrs, "both", 0.02, 0.5, seed=4))
    assert not np.array_equal(
        sample_roles(names, attrs, "none", 0.02, 0.5, seed=4), sample_roles(names, attrs, "none", 0.02, 0.5, seed=5)
    )
    # the seed set of 2% is contained in the seed set of 20% (same seed, same bias: prefixes of one order)
    b = sample_roles(names, attrs, "both", 0.2, 0.5, seed=4)
    assert set(np.flatnonzero(a != "test")) <= set(np.flatnonzero(b != "test"))
    with pytest.raises(ValueError, match="train_ratio"):
        seed_set_sizes(10, 0.7)


def test_attribute_bias_needs_attributes():
    names = np.array(["same", "close", "different", "same"], dtype=object)
    with pytest.raises(MissingFeatureError, match="attribute"):
        sample_roles(names, None, "attr", 0.25, 0.0, seed=0)
    with pytest.raises(MissingFeatureError):
        sample_roles(names, np.array([None] * 4, dtype=object), "both", 0.25, 0.0, seed=0)
    assert (sample_roles(names, None, "name", 0.25, 0.0, seed=0) != "test").sum() == 1


@pytest.fixture(scope="module")
def random_features() -> pd.DataFrame:
    """2,000 synthetic mappings: s_name (10% NA), n_attr, and the splits with the paper's D-W-15K thresholds."""
    rng = np.random.default_rng(1)
    n = 2000
    s = np.where(rng.random(n) < 0.3, 1.0, rng.random(n))
    s[rng.random(n) < 0.1] = np.nan
    n_attr = rng.gamma(2.0, 4.0, size=n)
    return pd.DataFrame(
        {"s_name": s, "n_attr": n_attr, "name_split": name_splits(s), "attr_split": attr_splits(n_attr, 10, 4)}
    )


@pytest.mark.parametrize(
    ("bias", "name_biased", "attr_biased"),
    [("name", True, False), ("attr", False, True), ("both", True, True)],
)
def test_bias_direction(random_features, bias, name_biased, attr_biased):
    f = random_features
    roles = sample_roles(f["name_split"].to_numpy(), f["attr_split"].to_numpy(), bias, 0.04, 0.5, seed=0)
    summary = bias_summary(f, roles).set_index("role")
    seed_rows, test_rows = summary.loc["seed"], summary.loc["test"]
    if name_biased:
        assert seed_rows["mean_s_name"] > test_rows["mean_s_name"]
        assert seed_rows["share_name_na"] < test_rows["share_name_na"]
        assert seed_rows["share_same"] == 1.0  # 120 seeds, ~540 "same" mappings: all seeds are "same"
    if attr_biased:
        assert seed_rows["mean_n_attr"] > test_rows["mean_n_attr"]
        assert seed_rows["share_large"] == 1.0
    assert summary.loc["train", "num_mappings"] == 80 and summary.loc["valid", "num_mappings"] == 40


def test_no_bias_is_a_uniform_random_subset(random_features):
    f = random_features
    # mean n_attr of random seed sets is unbiased: averaged over seeds it matches the population mean
    means = []
    for seed in range(40):
        roles = sample_roles(f["name_split"].to_numpy(), f["attr_split"].to_numpy(), "none", 0.1, 0.5, seed=seed)
        means.append(f.loc[roles != "test", "n_attr"].mean())
    sem = f["n_attr"].std() / np.sqrt(300) / np.sqrt(40)
    assert abs(np.mean(means) - f["n_attr"].mean()) < 4 * sem
