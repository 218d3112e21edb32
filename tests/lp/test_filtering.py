"""kgeval.lp.filtering: the CSR known-answer index against a brute-force set of known triples."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.lp.filtering import CSRIndex, FilterIndex, as_triples_array, expand_csr


def _random_triples(rng: np.random.Generator, m: int, num_entities: int, num_relations: int) -> np.ndarray:
    return np.stack(
        [rng.integers(0, num_entities, m), rng.integers(0, num_relations, m), rng.integers(0, num_entities, m)], axis=1
    )


def _brute_answers(triples: np.ndarray, side: str, anchor: int, relation: int) -> list[int]:
    """Known answers of one query by scanning every triple (duplicates removed, ascending)."""
    if side == "tail":
        return sorted({int(t) for h, r, t in triples if h == anchor and r == relation})
    return sorted({int(h) for h, r, t in triples if t == anchor and r == relation})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lookup_counts_and_contains_equal_a_scan_of_the_triples(seed):
    rng = np.random.default_rng(seed)
    num_entities, num_relations = 9, 3
    splits = [_random_triples(rng, 40, num_entities, num_relations), _random_triples(rng, 15, num_entities, 2)]
    everything = np.concatenate(splits)
    index = FilterIndex(splits, num_entities=num_entities, num_relations=num_relations)
    assert index.num_triples == len(everything)  # duplicates are counted as triples, not as answers
    anchors = rng.integers(0, num_entities, 60)
    relations = rng.integers(0, num_relations, 60)
    answers = rng.integers(0, num_entities, 60)
    for side in ("head", "tail"):
        expected = [_brute_answers(everything, side, a, r) for a, r in zip(anchors, relations)]
        rows, found = index.lookup(side, anchors, relations)
        got = [found[rows == i].tolist() for i in range(len(anchors))]
        assert got == expected
        assert np.all(np.diff(rows) >= 0)
        assert index.counts(side, anchors, relations).tolist() == [len(e) for e in expected]
        member = index.contains(side, anchors, relations, answers)
        assert member.tolist() == [int(x) in e for x, e in zip(answers, expected)]
        starts, lengths = index.ranges(side, anchors, relations)
        values = index.csr(side).values
        assert [values[s : s + n].tolist() for s, n in zip(starts, lengths)] == expected


def test_contains_is_false_for_answers_outside_the_known_range():
    index = FilterIndex([[0, 0, 1], [0, 0, 2]], num_entities=50, num_relations=1)
    assert index.contains("tail", [0, 0, 0, 0], [0, 0, 0, 0], [1, 2, 3, 49]).tolist() == [True, True, False, False]
    assert index.contains("head", [1, 2, 7], [0, 0, 0], [0, 0, 0]).tolist() == [True, True, False]


def test_empty_index_knows_nothing():
    index = FilterIndex(np.zeros((0, 3), dtype=np.int64), num_entities=5, num_relations=2)
    rows, answers = index.lookup("tail", [0, 1], [0, 1])
    assert rows.size == answers.size == 0
    assert index.counts("head", [0, 4], [1, 0]).tolist() == [0, 0]
    assert not index.contains("tail", [0], [0], [0]).any()


def test_csr_from_pairs_groups_sorted_unique_values_per_key():
    rng = np.random.default_rng(5)
    keys, values = rng.integers(0, 20, 300), rng.integers(0, 30, 300)
    csr = CSRIndex.from_pairs(keys, values)
    expected = {int(k): sorted({int(v) for kk, v in zip(keys, values) if kk == k}) for k in set(keys.tolist())}
    assert csr.keys.tolist() == sorted(expected)
    for i, key in enumerate(csr.keys.tolist()):
        assert csr.values[csr.indptr[i] : csr.indptr[i + 1]].tolist() == expected[key]
    # keys too large for one combined integer take the lexsort path, with the same result
    big = CSRIndex.from_pairs(keys + 2**61, values)
    assert big.keys.tolist() == [k + 2**61 for k in sorted(expected)]
    assert np.array_equal(big.indptr, csr.indptr) and np.array_equal(big.values, csr.values)


def test_expand_csr_lists_every_position_of_every_row():
    starts, lengths = np.array([5, 0, 2, 9]), np.array([2, 0, 3, 1])
    rows, positions = expand_csr(starts, lengths)
    expected = [(i, p) for i, (s, n) in enumerate(zip(starts, lengths)) for p in range(s, s + n)]
    assert list(zip(rows.tolist(), positions.tolist())) == expected
    rows, positions = expand_csr(np.array([3]), np.array([0]))
    assert rows.size == positions.size == 0


def test_malformed_triples_and_ids_out_of_range_are_refused():
    with pytest.raises(ValueError, match="shape"):
        as_triples_array([[0, 1], [2, 3]])
    with pytest.raises(ValueError, match="integer"):
        as_triples_array([[0.5, 1, 2]])
    with pytest.raises(ValueError, match="negative"):
        as_triples_array([[0, 0, 1], [0, -1, 1]])
    assert as_triples_array([]).shape == (0, 3)
    with pytest.raises(ValueError, match="num_entities"):
        FilterIndex([[0, 0, 5]], num_entities=5, num_relations=1)
    with pytest.raises(ValueError, match="num_relations"):
        FilterIndex([[0, 2, 1]], num_entities=5, num_relations=2)
    with pytest.raises(ValueError, match="side"):
        FilterIndex([[0, 0, 1]]).lookup("relation", [0], [0])
