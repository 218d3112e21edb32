"""Table 4's seed-free lexical matcher: predictions and precision / recall / F1 per split against a hand count."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgeval.studies.s3.conventional import PARIS_NOTE, conventional_scores, lexical_matches

NAMES1 = [("Paris",), ("Berlin",), ("Rome",), ("Oslo",), ()]
NAMES2 = [("paris",), ("berlin",), ("rome",), ("lisbon",), ("nice",)]
FEATURES = pd.DataFrame(
    {
        "id1": [0, 1, 2, 3],
        "id2": [0, 1, 3, 4],
        "name_split": ["same", "same", "close", "close"],
        "attr_split": ["small", "large", "large", "small"],
    }
)


def test_lexical_matches_are_mutual_best_above_the_threshold():
    matches = lexical_matches(NAMES1, NAMES2, threshold=0.8, chunk=2)
    assert list(zip(matches["id1"], matches["id2"])) == [(0, 0), (1, 1), (2, 2)]  # Oslo: nothing >= 0.8; entity 4: no name
    assert lexical_matches(NAMES1, NAMES2, threshold=1.01).empty


def test_table4_values_by_hand():
    table = conventional_scores(lexical_matches(NAMES1, NAMES2, 0.8), FEATURES, "tiny")
    ours = table[table["system"] == "lexical_matcher"].set_index("metric")
    # predictions (0,0) and (1,1) correct, (2,2) wrong (the reference has (2,3)); 4 reference mappings
    expected = {
        "precision": {"all": 2 / 3, "same": 1.0, "close": 0.0, "small": 1.0, "large": 0.5},
        "recall": {"all": 0.5, "same": 1.0, "close": 0.0, "small": 0.5, "large": 0.5},
        "f1": {"all": 4 / 7, "same": 1.0, "close": 0.0, "small": 2 / 3, "large": 0.5},
    }
    for metric, values in expected.items():
        for split, value in values.items():
            assert ours.loc[metric, split] == pytest.approx(value, abs=1e-4), (metric, split)
    assert np.isnan(ours.loc["precision", "different"])  # no mapping in "different"
    assert ours.loc["precision", "n_all"] == 4 and ours.loc["precision", "num_predicted"] == 3
    assert "same" in ours.loc["precision", "too_small"]  # every split of 4 mappings is under 30
    paris = table[table["system"] == "PARIS"]
    assert len(paris) == 3 and (paris["note"] == PARIS_NOTE).all() and paris["all"].isna().all()


def test_without_attributes_the_attribute_columns_are_empty():
    features = FEATURES.assign(attr_split=None)
    table = conventional_scores(lexical_matches(NAMES1, NAMES2, 0.8), features, "tiny")
    ours = table[table["system"] == "lexical_matcher"]
    assert ours[["small", "medium", "large"]].isna().all().all()
    assert ours["all"].notna().all()
