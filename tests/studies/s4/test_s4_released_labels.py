"""The label statistics of S4's release (Table 1, the pool of Sec. 3.1, KL divergences of Sec. 3.2, Table 2),
regenerated from the label files and checked against the numbers the paper prints, typed in from its text."""

from __future__ import annotations

import pytest

from kgeval.studies.s4.release_files import labels_folder
from kgeval.studies.s4.released_labels import (
    added_positive_examples,
    kl_divergences,
    label_set_statistics,
    pool_statistics,
    relation_distributions,
)

pytestmark = pytest.mark.shared_data

HITS = (1, 3, 10)


@pytest.fixture(scope="module")
def labels(shared_data):
    return labels_folder(shared_data, "kgc-sparsity")


@pytest.fixture(scope="module")
def fb15k237_splits(shared_data):
    from kgeval.lp.datasets import labeled_splits

    return labeled_splits("fb15k237", {"source": "pykeen", "name": "FB15k237", "local": "fb15k237"}, shared_data)


def test_table1_pool_and_kl(labels, fb15k237_splits) -> None:
    """Table 1, Sec. 3.1 (pool: 7,087 entities, 151 relations, 21,469 triples; 12,599 judged by hand; 287 positives
    added by depth 2) and Sec. 3.2 (224 relations; KL 0.0889, 0.2789, 0.2386)."""
    table1 = label_set_statistics(labels, fb15k237_splits["test"]).set_index("test_set")
    assert table1.loc["FB-Test-O"].tolist() == [20466, 20466, 0]
    assert table1.loc["FB-Test-S"].tolist() == [1023, 1023, 0]
    assert table1.loc["FB-Test-S-C"].tolist() == [22492, 2738, 19754]
    pool = pool_statistics(labels, fb15k237_splits["test"]).set_index("statistic")["value"]
    assert (pool["pool_entities"], pool["pool_relations"], pool["pool_triples"]) == (7087, 151, 21469)
    assert pool["human_labelled"] == 12599
    assert pool["added_positives_depth2"] == 287
    assert pool["test_relations"] == 224
    assert pool["added_positives_1-1"] == 0
    kl = kl_divergences(relation_distributions(labels, fb15k237_splits)).set_index(
        ["first", "second"]
    )["kl"]
    assert kl[("FB-Test-O", "FB-Test-S")] == pytest.approx(0.0889, abs=1e-4)
    assert kl[("FB15k-237", "FB-Test-O")] == pytest.approx(0.2789, abs=1e-4)
    assert kl[("FB-Test-O", "FB-Test-S-C")] == pytest.approx(0.2386, abs=1e-4)


def test_table2_examples(labels) -> None:
    """Table 2: the paper's answers appear with their roles (original, annotated) in the release."""
    questions = [
        {"side": "tail", "relation": "/people/person/profession", "anchor": "Shia LaBeouf"},
        {"side": "tail", "relation": "/location/location/contains", "anchor": "United States of America"},
    ]
    table = added_positive_examples(labels, questions).set_index("anchor")
    shia = table.loc["Shia LaBeouf"]
    assert shia["original_answers"] == "Actor"
    assert {"Voice Actor", "Comedian"} <= set(shia["added_positives"].split("; "))
    assert {"Model", "Television Director"} <= set(shia["judged_negatives"].split("; "))
    usa = table.loc["United States of America"]
    assert {"Valdosta", "Concord"} <= set(usa["original_answers"].split("; "))
    assert {"Manhattan", "Boston", "Chicago"} <= set(usa["added_positives"].split("; "))
    assert "Marrakesh" in usa["judged_negatives"].split("; ")
    with pytest.raises(ValueError, match="no such question"):
        added_positive_examples(labels, [{"side": "head", "relation": "/x", "anchor": "Actor"}])
