"""kgeval.ea.pair: the EA pair container checks its arrays against its graphs and counts what it holds; the
graph-2 relabelling is a bijection applied to every field indexed by a graph-2 id."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.ea.pair import EADataError, EAPair, graph2_permutation, relabel_graph2, shuffle_graph2


def _pair(**changes) -> EAPair:
    fields = dict(
        name="toy",
        triples1=np.array([[0, 0, 1], [1, 2, 2]]),
        triples2=np.array([[0, 0, 1]]),
        entity_labels1=["a", "b", "c"],
        entity_labels2=["x", "y"],
        alignment=np.array([[0, 1], [2, 0]]),
    )
    fields.update(changes)
    return EAPair(**fields)


def test_summary_counts_what_the_pair_holds():
    pair = _pair(fixed_split={"train": np.array([[0, 1]]), "test": np.array([[2, 0]])})
    assert pair.summary() == {
        "name": "toy",
        "num_entities1": 3,
        "num_entities2": 2,
        "num_relations1": 3,  # max relation id 2, no labels
        "num_relations2": 1,
        "num_triples1": 2,
        "num_triples2": 1,
        "num_alignments": 2,
        "has_attributes": False,
        "fixed_split": "test=1,train=1",
    }
    labelled = _pair(relation_labels1=["r", "s", "t", "u"], relation_labels2=[])
    assert (labelled.num_relations1, labelled.num_relations2) == (4, 0)  # labels count even when unused
    empty = _pair(triples2=np.zeros((0, 3), dtype=np.int64))
    assert empty.num_relations2 == 0


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"triples1": np.array([[0, 0]])}, "triples1 must have shape"),
        ({"triples1": np.array([[0, 0, 3]])}, "triples1 refers to entity ids outside 0..2"),
        ({"triples2": np.array([[-1, 0, 0]])}, "triples2 refers"),
        ({"alignment": np.array([0, 1])}, "alignment must have shape"),
        ({"alignment": np.array([[3, 0]])}, "alignment refers"),
        ({"alignment": np.array([[0, 2]])}, "alignment refers"),
        ({"fixed_split": {"test": np.array([[0, 5]])}}, r"fixed_split\[test\] refers"),
        ({"names1": ["a", "b"]}, "names1 has 2 entries for 3 entities"),
        ({"attributes2": [np.array([0])]}, "attributes2 has 1 entries for 2 entities"),
    ],
)
def test_inconsistent_arrays_are_refused_with_the_field_named(changes, message):
    with pytest.raises(EADataError, match=message):
        _pair(**changes)


def test_relation_ids_are_not_bounded_by_entities():
    # a relation id may exceed the entity count: only the entity columns are checked
    assert _pair(triples1=np.array([[0, 7, 1]])).num_relations1 == 8


def _labelled_pair() -> EAPair:
    """Five graph-2 entities with names, attributes, a fixed split and a duplicated triple."""
    return _pair(
        triples2=np.array([[0, 0, 1], [1, 1, 2], [4, 0, 3], [2, 1, 0], [0, 0, 1]]),
        entity_labels2=["v", "w", "x", "y", "z"],
        alignment=np.array([[0, 3], [1, 0], [2, 4]]),
        names2=["V", "W", "X", "Y", "Z"],
        attributes2=[np.array([0]), np.array([], dtype=np.int64), np.array([1, 2]), np.array([2]), np.array([0, 1])],
        attribute_labels2=["p", "q", "r"],
        fixed_split={"train": np.array([[1, 0]]), "test": np.array([[0, 3], [2, 4]])},
    )


def _by_label(pair: EAPair) -> dict:
    """Everything about graph 2 in terms of labels, independent of its ids."""
    lab = pair.entity_labels2
    return {
        "triples": sorted((lab[h], r, lab[t]) for h, r, t in pair.triples2.tolist()),
        "alignment": sorted((a, lab[b]) for a, b in pair.alignment.tolist()),
        "split": {k: sorted((a, lab[b]) for a, b in v.tolist()) for k, v in pair.fixed_split.items()},
        "names": {lab[j]: pair.names2[j] for j in range(pair.num_entities2)},
        "attributes": {lab[j]: pair.attributes2[j].tolist() for j in range(pair.num_entities2)},
    }


def test_relabelling_moves_every_graph2_field_with_its_entity():
    pair = _labelled_pair()
    new_ids = np.array([2, 4, 0, 1, 3])
    out = relabel_graph2(pair, new_ids)
    # entity j is entity new_ids[j] afterwards: its label, name, attributes, triples and partner go with it
    for j in range(5):
        assert out.entity_labels2[new_ids[j]] == pair.entity_labels2[j]
        assert out.names2[new_ids[j]] == pair.names2[j]
        np.testing.assert_array_equal(out.attributes2[new_ids[j]], pair.attributes2[j])
    assert _by_label(out) == _by_label(pair)
    np.testing.assert_array_equal(out.alignment, [[0, 1], [1, 2], [2, 3]])  # sorted by graph-1 id
    np.testing.assert_array_equal(out.fixed_split["test"], [[0, 1], [2, 3]])
    # graph-2 triples sorted by their new ids (the duplicate kept), graph 1 and the label lists untouched
    assert out.triples2.tolist() == sorted(out.triples2.tolist()) and len(out.triples2) == 5
    assert out.triples1 is pair.triples1 and out.entity_labels1 == pair.entity_labels1
    assert out.attribute_labels2 == pair.attribute_labels2 and out.relation_labels2 == pair.relation_labels2
    # the inverse permutation gives the pair back (up to row order of the triples)
    back = relabel_graph2(out, np.argsort(new_ids))
    assert back.entity_labels2 == pair.entity_labels2 and back.names2 == pair.names2
    np.testing.assert_array_equal(back.alignment, pair.alignment)
    assert sorted(back.triples2.tolist()) == sorted(pair.triples2.tolist())


@pytest.mark.parametrize("new_ids", [np.array([0, 1, 1, 2, 3]), np.array([0, 1, 2, 3]), np.array([0, 1, 2, 3, 5])])
def test_relabelling_must_be_a_permutation(new_ids):
    with pytest.raises(EADataError, match="permutation of 0..4"):
        relabel_graph2(_labelled_pair(), new_ids)


def test_seeded_shuffle_is_fixed_by_its_keys():
    first = graph2_permutation(1000, "dbp15k", "fr_en")
    assert sorted(first.tolist()) == list(range(1000))
    np.testing.assert_array_equal(first, graph2_permutation(1000, "dbp15k", "fr_en"))  # same files, same ids
    assert not np.array_equal(first, graph2_permutation(1000, "dbp15k", "zh_en"))
    pair = _labelled_pair()
    shuffled, new_ids = shuffle_graph2(pair, "toy")
    np.testing.assert_array_equal(new_ids, graph2_permutation(5, "toy"))
    assert _by_label(shuffled) == _by_label(pair)
