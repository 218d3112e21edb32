"""kgeval.ea.pair: the EA pair container checks its arrays against its graphs and counts what it holds."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.ea.pair import EADataError, EAPair


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
