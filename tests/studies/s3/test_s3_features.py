"""S3 mapping features: the paper's name preprocessing, s_name against a brute-force edit distance, the split
thresholds at their boundaries, the derived names of the two-view pair, and the features table on a hand-made pair."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kgeval.ea.data import EAPair
from kgeval.studies.s3.data import S3DataError, S3Pair, degree_counts, load_s3_pair, perturb_names
from kgeval.studies.s3.features import (
    attr_splits,
    mapping_features,
    name_similarity,
    name_splits,
    preprocess_name,
    split_sizes,
    valid_names,
)


def _levenshtein(a: str, b: str) -> int:
    """Textbook dynamic programme (the reference the library's rapidfuzz call is checked against)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("National_Front_(France)", "national front france"),
        ("Kim_Dae-jung", "kim dae jung"),
        ("AC\\DC", "ac dc"),
        ("Hello, World!", "hello world"),
        ("O'Brien", "obrien"),
        ("民族陣線_(法國)", "民族陣線 法國"),  # underscore -> space; CJK parentheses are punctuation too
        ("阿卜杜拉·居尔", "阿卜杜拉居尔"),  # the middle dot is Unicode punctuation
        ("a - b", "a b"),  # runs of spaces collapse
        ("(...)", ""),  # nothing left: no valid name
        ("ÉCOLE_Normale", "école normale"),
    ],
)
def test_preprocess_name(raw, expected):
    assert preprocess_name(raw) == expected


def test_name_similarity_matches_brute_force_edit_distance():
    rng = np.random.default_rng(0)
    alphabet = list("abc_-")
    for _ in range(200):
        a = "".join(rng.choice(alphabet, size=rng.integers(1, 8)))
        b = "".join(rng.choice(alphabet, size=rng.integers(1, 8)))
        pa, pb = preprocess_name(a), preprocess_name(b)
        value = name_similarity([a], [b])
        if not pa or not pb:
            assert np.isnan(value)
        else:
            assert value == pytest.approx(1 - _levenshtein(pa, pb) / max(len(pa), len(pb)))


def test_name_similarity_best_pair_and_na():
    # several names: the best pair counts (paper: "the two names leading to the highest similarity")
    assert name_similarity(["Rome", "Roma"], ["ROMA"]) == 1.0
    assert name_similarity(["abcd"], ["abcx", "zzzz"]) == pytest.approx(0.75)
    assert np.isnan(name_similarity([], ["x"]))
    assert np.isnan(name_similarity(["!!"], ["x"]))  # only punctuation: no valid name
    assert valid_names(["A_b", "a b", "", "?"]) == ["a b"]


def test_name_splits_paper_and_extension():
    s = np.array([1.0, 0.999, 0.0, np.nan, 0.5, 0.49])
    assert name_splits(s).tolist() == ["same", "close", "close", "different", "close", "close"]
    assert name_splits(s, different_below=0.5).tolist() == ["same", "close", "different", "different", "close", "different"]
    with pytest.raises(ValueError, match="different_below"):
        name_splits(s, different_below=1.5)


def test_attr_splits_boundaries():
    # the paper's D-W-15K thresholds (k1, k2) = (10, 4): large n >= 10, medium 4 <= n < 10, small n < 4
    n = np.array([0, 3.5, 4, 9.5, 10, 25, np.nan])
    assert attr_splits(n, 10, 4).tolist() == ["small", "small", "medium", "medium", "large", "large", None]
    with pytest.raises(ValueError, match="k2 < k1"):
        attr_splits(n, 4, 10)


def _hand_pair(with_attributes: bool = True) -> S3Pair:
    pair = EAPair(
        name="hand",
        triples1=np.array([[0, 0, 1], [1, 0, 2], [2, 0, 0]]),
        triples2=np.array([[0, 0, 1], [2, 0, 1]]),
        entity_labels1=["a0", "a1", "a2"],
        entity_labels2=["b0", "b1", "b2"],
        alignment=np.array([[0, 2], [1, 0], [2, 1]]),
    )
    return S3Pair(
        pair=pair,
        names1=[("Paris",), ("Roma", "Rome"), ("X",)],
        names2=[("rome",), ("",), ("paris",)],
        num_attributes1=np.array([10.0, 2.0, 5.0]) if with_attributes else None,
        num_attributes2=np.array([4.0, 6.0, 12.0]) if with_attributes else None,
        names_source="hand",
        attributes_source="hand",
    )


def test_mapping_features_on_hand_made_pair():
    table = mapping_features(_hand_pair(), k1=10, k2=4)
    assert table["id1"].tolist() == [0, 1, 2]
    assert table["id2"].tolist() == [2, 0, 1]
    np.testing.assert_allclose(table["s_name"].to_numpy(), [1.0, 1.0, np.nan])
    assert table[["name1", "name2"]].values.tolist() == [["paris", "paris"], ["rome", "rome"], ["x", ""]]
    # n_attr = mean of the two entities: (10+12)/2, (2+4)/2, (5+6)/2
    np.testing.assert_allclose(table["n_attr"], [11.0, 3.0, 5.5])
    assert table["attr_split"].tolist() == ["large", "small", "medium"]
    assert table["name_split"].tolist() == ["same", "same", "different"]
    sizes = split_sizes(table, 10, 4).set_index(["kind", "split"])["num_alignments"]
    assert sizes.to_dict() == {
        ("name", "same"): 2,
        ("name", "close"): 0,
        ("name", "different"): 1,
        ("attr", "small"): 1,
        ("attr", "medium"): 1,
        ("attr", "large"): 1,
    }


def test_features_without_attributes_have_no_attribute_split():
    table = mapping_features(_hand_pair(with_attributes=False), k1=10, k2=4)
    assert table["attr_split"].isna().all() and table["n_attr"].isna().all()
    assert set(split_sizes(table, 10, 4)["kind"]) == {"name"}


def test_perturb_names_is_seeded_and_has_the_asked_rates():
    names = [f"entity_name_{i}" for i in range(4000)]
    a = perturb_names(names, missing=0.2, edited=0.3, max_edits=2, seed=5)
    assert a == perturb_names(names, missing=0.2, edited=0.3, max_edits=2, seed=5)
    assert a != perturb_names(names, missing=0.2, edited=0.3, max_edits=2, seed=6)
    dropped = np.mean([n == () for n in a])
    changed = np.mean([n != () and n[0] != original for n, original in zip(a, names)])
    assert dropped == pytest.approx(0.2, abs=0.03)
    # an edit can restore the name (e.g. substitute a letter by itself), so slightly fewer than 30% change
    assert 0.25 < changed <= 0.3 + 0.03
    for new, original in zip(a, names):
        if new:
            assert _levenshtein(new[0], original) <= 2
    with pytest.raises(S3DataError):
        perturb_names(names, missing=0.8, edited=0.5, max_edits=1, seed=0)


def test_degree_counts_brute_force():
    triples = np.array([[0, 0, 1], [1, 1, 1], [2, 0, 0]])
    expected = [sum((h == e) + (t == e) for h, _, t in triples.tolist()) for e in range(4)]
    np.testing.assert_array_equal(degree_counts(triples, 4), expected)


def test_two_view_pair_names_and_degrees_are_derived():
    spec = {"source": "two_view", "dataset": "nations", "keep_fraction": 0.5, "seed": 0}
    plain = load_s3_pair("nations_two_view", spec)
    assert "derived" in plain.names_source and "derived" in plain.attributes_source
    table = mapping_features(plain, k1=200, k2=100)
    assert (table["name_split"] == "same").all()  # identical labels: every mapping is "same"
    noisy = load_s3_pair("nations_two_view", spec, name_noise={"missing": 0.3, "edited": 0.3, "max_edits": 2, "seed": 1})
    assert set(mapping_features(noisy, 200, 100)["name_split"]) - {"same"}
    np.testing.assert_array_equal(
        noisy.num_attributes1, degree_counts(noisy.pair.triples1, noisy.pair.num_entities1)
    )
    with pytest.raises(S3DataError, match="name_noise"):
        load_s3_pair("x", {"source": "srprs", "subset": "en_fr_15k_V1"}, name_noise={"missing": 0.1})


def test_all_name_pairs_are_considered():
    names_a, names_b = ["abc", "xyz", "ab"], ["xyy", "abd"]
    best = max(1 - _levenshtein(x, y) / max(len(x), len(y)) for x, y in itertools.product(names_a, names_b))
    assert name_similarity(names_a, names_b) == pytest.approx(best)


@pytest.mark.parametrize(
    ("k1", "k2", "expected"),
    [
        (10, 4, {"small": 3, "medium": 4, "large": 3}),  # the paper's D-W-15K thresholds
        (5, 2, {"small": 1, "medium": 3, "large": 6}),  # the paper's MED-BBK-9K thresholds
    ],
)
def test_paper_thresholds_give_the_hand_counted_split_sizes(k1, k2, expected):
    import pandas as pd

    # n_attr by hand: small = n_attr < k2, medium = k2 <= n_attr < k1, large = n_attr >= k1
    n_attr = np.array([1, 2, 3, 4, 5, 6, 9, 10, 11, 20], dtype=float)
    # names: an entity without a valid name (empty, or only punctuation) makes the mapping "different"
    s_name = np.array([1.0, 1.0, 0.5, np.nan, 1.0, 0.9, np.nan, 1.0, 0.2, 1.0])
    features = pd.DataFrame(
        {
            "n_attr": n_attr,
            "name_split": name_splits(s_name),
            "name_split_paper": name_splits(s_name),
            "attr_split": attr_splits(n_attr, k1, k2),
        }
    )
    sizes = split_sizes(features, k1, k2).set_index(["kind", "split"])["num_alignments"]
    assert {s: int(sizes["attr", s]) for s in ("small", "medium", "large")} == expected
    assert {s: int(sizes["name", s]) for s in ("same", "close", "different")} == {"same": 5, "close": 3, "different": 2}
    assert "name_paper" not in sizes.index.get_level_values(0)  # no extension: one name split


def test_no_valid_name_is_different():
    assert np.isnan(name_similarity(["--_"], ["Paris"]))  # nothing left after preprocessing
    assert np.isnan(name_similarity([], ["Paris"]))
    assert name_splits(np.array([np.nan]))[0] == "different"


@pytest.mark.shared_data
def test_paper_config_thresholds_follow_the_stated_tertile_rule(shared_data):
    """config/paper_offline.yaml (the offline substitutes of config/paper.yaml's pairs): DBP15k fr-en's (k1, k2) =
    the rounded upper and lower tertile of n_attr."""
    from pathlib import Path

    import yaml

    repo = Path(__file__).resolve().parents[3]
    settings = yaml.safe_load((repo / "config" / "paper_offline.yaml").read_text())["studies"]["s3"]["datasets"]
    s3pair = load_s3_pair("dbp15k_fr_en", {"source": "dbp15k", "subset": "fr_en"}, shared_data)
    features = mapping_features(s3pair, None, None)
    low, high = np.quantile(features["n_attr"], [1 / 3, 2 / 3])
    assert settings["dbp15k_fr_en"] == {"k1": int(np.floor(high + 0.5)), "k2": int(np.floor(low + 0.5))}
    assert (features["name_split_paper"] == "different").sum() == 0  # every entity has a URI name
