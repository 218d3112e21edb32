"""kgeval.ea.two_view: the seeded two-view sampler and the embedded pair built from a PyKEEN-bundled graph."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from kgeval.ea.data import EADataError, load_ea_pair
from kgeval.ea.two_view import sample_two_views, two_view_pair


def _graph(seed: int = 0, n: int = 40, m: int = 300) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(n, size=m), rng.integers(5, size=m), rng.integers(n, size=m)], axis=1)


def test_two_view_sampler_is_deterministic_by_seed():
    triples = _graph()
    a, b, c = (sample_two_views(triples, 0.6, seed) for seed in (3, 3, 4))
    for field in ("triples1", "triples2", "entities1", "entities2", "alignment"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.triples2, c.triples2)


def test_two_view_sampler_semantics():
    triples = _graph()
    views = sample_two_views(triples, 0.6, seed=1)
    original = {tuple(t) for t in triples.tolist()}
    k = round(0.6 * len(triples))
    assert len(views.triples1) == k and len(views.triples2) == k
    for tri, ents in ((views.triples1, views.entities1), (views.triples2, views.entities2)):
        back = np.stack([ents[tri[:, 0]], tri[:, 1], ents[tri[:, 2]]], axis=1)
        assert {tuple(t) for t in back.tolist()} <= original  # every view triple is an original triple
        assert set(np.unique(tri[:, [0, 2]]).tolist()) == set(range(len(ents)))  # ids are contiguous
    # the alignment is exactly the shared entities, and it maps an entity to itself
    shared = set(views.entities1.tolist()) & set(views.entities2.tolist())
    assert len(views.alignment) == len(shared)
    np.testing.assert_array_equal(views.entities1[views.alignment[:, 0]], views.entities2[views.alignment[:, 1]])
    # view 2's ids are fresh: not the sorted order of the original ids
    assert not np.array_equal(views.entities2, np.sort(views.entities2))


def test_two_view_pair_from_bundled_graph():
    pair = load_ea_pair("k", {"source": "two_view", "dataset": "kinships", "keep_fraction": 0.5, "seed": 2})
    again = two_view_pair("k", "kinships", 0.5, 2)
    np.testing.assert_array_equal(pair.triples2, again.triples2)
    assert pair.num_entities1 <= 104 and len(pair.alignment) > 0
    labels = [(pair.entity_labels1[i], pair.entity_labels2[j]) for i, j in pair.alignment]
    assert all(a == b for a, b in labels)
    with pytest.raises(EADataError, match="keep_fraction"):
        sample_two_views(_graph(), 0.0, 0)


@pytest.mark.parametrize("keep_fraction", [0.25, 0.5, 0.77, 1.0])
def test_each_view_keeps_the_rounded_share(keep_fraction):
    triples = _graph(seed=5, m=201)
    views = sample_two_views(triples, keep_fraction, seed=0)
    k = int(round(keep_fraction * len(triples)))
    assert len(views.triples1) == len(views.triples2) == k
    # each view draws without replacement: its triples, mapped back, are a sub-multiset of the original rows
    original = Counter(map(tuple, triples.tolist()))
    for tri, ents in ((views.triples1, views.entities1), (views.triples2, views.entities2)):
        back = np.stack([ents[tri[:, 0]], tri[:, 1], ents[tri[:, 2]]], axis=1)
        assert Counter(map(tuple, back.tolist())) <= original


def test_keeping_everything_gives_two_copies_of_the_graph():
    """keep_fraction=1: both views are the whole graph (view 1 in its original ids' order), every entity aligned."""
    triples = _graph(seed=2)
    views = sample_two_views(triples, 1.0, seed=9)
    entities = np.unique(triples[:, [0, 2]])
    back1 = np.stack([views.entities1[views.triples1[:, 0]], views.triples1[:, 1], views.entities1[views.triples1[:, 2]]], 1)
    back2 = np.stack([views.entities2[views.triples2[:, 0]], views.triples2[:, 1], views.entities2[views.triples2[:, 2]]], 1)
    np.testing.assert_array_equal(back1, triples)
    np.testing.assert_array_equal(back2, triples)
    np.testing.assert_array_equal(views.entities1, entities)
    assert sorted(views.entities2.tolist()) == entities.tolist()
    np.testing.assert_array_equal(views.alignment[:, 0], np.arange(len(entities)))
    np.testing.assert_array_equal(views.entities2[views.alignment[:, 1]], entities)


def test_views_follow_the_documented_draws():
    """An independent reading of the module doc (two draws without replacement, then a permutation of view 2's ids)."""
    triples, fraction, seed = _graph(seed=3, n=25, m=120), 0.4, 11
    views = sample_two_views(triples, fraction, seed)
    rng = np.random.default_rng(seed)
    k = round(fraction * len(triples))
    kept1 = triples[sorted(rng.choice(len(triples), size=k, replace=False))]
    kept2 = triples[sorted(rng.choice(len(triples), size=k, replace=False))]
    ids1 = {e: i for i, e in enumerate(sorted({int(x) for x in kept1[:, [0, 2]].ravel()}))}
    sorted2 = sorted({int(x) for x in kept2[:, [0, 2]].ravel()})
    fresh = rng.permutation(len(sorted2))
    ids2 = {e: int(fresh[i]) for i, e in enumerate(sorted2)}
    expected1 = [[ids1[int(h)], int(r), ids1[int(t)]] for h, r, t in kept1]
    expected2 = [[ids2[int(h)], int(r), ids2[int(t)]] for h, r, t in kept2]
    assert views.triples1.tolist() == expected1
    assert views.triples2.tolist() == expected2
    assert views.alignment.tolist() == [[ids1[e], ids2[e]] for e in sorted(ids1) if e in ids2]


@pytest.mark.parametrize("keep_fraction", [-0.1, 1.5, 0.001])
def test_bad_keep_fraction(keep_fraction):
    with pytest.raises(EADataError, match="keep_fraction"):
        sample_two_views(_graph(), keep_fraction, 0)


def test_only_bundled_graphs():
    with pytest.raises(EADataError, match="bundled"):
        two_view_pair("x", "fb15k237")
