"""MultiKE-style views: the weighted combination equals the weighted mean of cosine similarities, over the views
available for each pair (a candidate's lack of attributes alone does not move it in the ranking); recovery of a
known alignment with names, and with structure alone."""

from __future__ import annotations

import numpy as np
import torch

from kgeval.studies.s3.models import DistanceScorer, fit_scorer
from kgeval.studies.s3.multike import (
    MultiKEConfig,
    View,
    ViewScorer,
    align_attributes,
    aligned_attribute_vectors,
    combine_views,
    train_multike,
)


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def _all_scores(scorer, side: str, n_queries: int, n_candidates: int) -> np.ndarray:
    return scorer.for_candidates(side, np.arange(n_candidates))(np.arange(n_queries)).numpy()


def test_combination_is_the_weighted_mean_of_cosines():
    rng = np.random.default_rng(0)
    a1, a2, b1, b2 = (rng.normal(size=(4, 3)) for _ in range(4))
    left, right = combine_views([(a1, a2, 1.0), (b1, b2, 3.0), (a1, a2, 0.0)])
    norm = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    expected = 0.25 * norm(a1) @ norm(a2).T + 0.75 * norm(b1) @ norm(b2).T
    np.testing.assert_allclose((left @ right.T).numpy(), expected, atol=1e-5)


def test_multike_recovers_a_known_alignment(make_pair, hits_at_1):
    s3pair = make_pair()
    alignment = s3pair.pair.alignment
    spec = {"name_vectors": {"dim": 32}, "structure": {"embedding_dim": 16, "num_epochs": 20}}
    scorer, info = fit_scorer("multike", s3pair, alignment[:4], spec, seed=0)
    assert hits_at_1(scorer, alignment[4:], 40) >= 0.8  # 4 seeds: the barely trained structure view adds noise
    assert info["views"] == {"name": 1.0, "structure": 1.0}  # no attributes on this pair
    structure_only = {"name_weight": 0.0, "structure": {"embedding_dim": 32, "num_epochs": 150, "batch_size": 256}}
    scorer, _ = fit_scorer("multike", make_pair(names=False), alignment[:20], structure_only, seed=0)
    assert hits_at_1(scorer, alignment[20:], 40) >= 0.7
    assert isinstance(scorer, ViewScorer)


def test_multike_end_to_end_on_the_embedded_two_view_pair():
    """The embedded pair has no attributes: train_multike gives a name and a structure view, and fit_scorer's
    ViewScorer ranks both sides."""
    from kgeval.studies.s3.data import load_s3_pair
    from kgeval.studies.s3.models import rank_test_pairs

    s3pair = load_s3_pair("nations_two_view", {"source": "two_view", "dataset": "nations", "keep_fraction": 0.6,
                                               "seed": 0})
    pair = s3pair.pair
    train, test = pair.alignment[:5], pair.alignment[5:]
    config = MultiKEConfig(structure={"embedding_dim": 8, "num_epochs": 2})
    names = (np.ones((pair.num_entities1, 4)), np.ones((pair.num_entities2, 4)))
    views, info = train_multike(names, None, pair.triples1, pair.triples2, pair.num_entities1, pair.num_entities2,
                                train, config, seed=0)
    assert [v.name for v in views] == ["name", "structure"] and all(v.present1 is None for v in views)
    assert info["views"] == {"name": 1.0, "structure": 1.0}
    spec = {"name_vectors": {"dim": 8}, "structure": {"embedding_dim": 8, "num_epochs": 2}}
    scorer, info = fit_scorer("multike", s3pair, train, spec, seed=0)
    assert isinstance(scorer, ViewScorer) and info["views"] == {"name": 1.0, "structure": 1.0}
    results = rank_test_pairs(scorer, test, pair.num_entities1, pair.num_entities2, candidates="all")
    for side in ("left", "right"):
        ranks = np.asarray(results[side].rank_realistic)
        assert len(ranks) == len(test) and (ranks >= 1).all()


def _random_views(rng: np.random.Generator, n1: int, n2: int, coverage: float) -> list[View]:
    """A name, an attribute (entities with attributes drawn at ``coverage``, zero rows for the others) and a
    structure view of random vectors, weights 1, 2, 0.5."""
    present1, present2 = rng.random(n1) < coverage, rng.random(n2) < coverage
    attrs = rng.normal(size=(n1, 5)) * present1[:, None], rng.normal(size=(n2, 5)) * present2[:, None]
    return [
        View("name", rng.normal(size=(n1, 4)), rng.normal(size=(n2, 4)), 1.0),
        View("attr", attrs[0], attrs[1], 2.0, present1, present2),
        View("structure", rng.normal(size=(n1, 3)), rng.normal(size=(n2, 3)), 0.5),
    ]


def _brute_force(views: list[View], i: int, j: int, side: str) -> float:
    """The weighted mean cosine of entities ``i`` (query side) and ``j`` over the views both have."""
    total = weights = 0.0
    for view in views:
        q, c = (view.left, view.right) if side == "left" else (view.right, view.left)
        pq, pc = (view.present1, view.present2) if side == "left" else (view.present2, view.present1)
        if (pq is not None and not pq[i]) or (pc is not None and not pc[j]):
            continue
        cosine = float(q[i] @ c[j] / (np.linalg.norm(q[i]) * np.linalg.norm(c[j])))
        total, weights = total + view.weight * cosine, weights + view.weight
    return total / weights


def test_view_scorer_equals_the_per_pair_weighted_mean_over_available_views():
    rng = np.random.default_rng(1)
    views = _random_views(rng, 7, 9, coverage=0.5)
    scorer = ViewScorer(views + [View("unused", rng.normal(size=(7, 2)), rng.normal(size=(9, 2)), 0.0)])
    for side, n_q, n_c in (("left", 7, 9), ("right", 9, 7)):
        got = _all_scores(scorer, side, n_q, n_c)
        expected = np.array([[_brute_force(views, i, j, side) for j in range(n_c)] for i in range(n_q)])
        np.testing.assert_allclose(got, expected, atol=1e-6)
    some = scorer.for_candidates("left", np.array([8, 2, 2]))(np.array([3, 0]))
    np.testing.assert_allclose(some.numpy(), _all_scores(scorer, "left", 7, 9)[[3, 0]][:, [8, 2, 2]], atol=1e-6)
    assert torch.equal(some[:, 1], some[:, 2])  # the same candidate twice: the same bits


def test_a_candidate_without_attributes_is_not_told_apart_by_that_absence():
    rng = np.random.default_rng(2)
    name, structure, attr = (_unit(rng.normal(size=(1, d))) for d in (4, 3, 5))
    # graph 2: candidate 0 has the query's attributes, candidate 1 none; both the query's name and structure
    attrs2 = np.concatenate([attr, np.zeros_like(attr)])
    views = [
        View("name", name, np.repeat(name, 2, axis=0), 1.0),
        View("attr", attr, attrs2, 1.0, np.array([True]), np.array([True, False])),
        View("structure", structure, np.repeat(structure, 2, axis=0), 1.0),
    ]
    scores = _all_scores(ViewScorer(views), "left", 1, 2)[0]
    np.testing.assert_allclose(scores, [1.0, 1.0], atol=1e-6)
    # the concatenation (negative Euclidean distance) ranks the candidate without attributes second
    left, right = combine_views([(v.left, v.right, v.weight) for v in views])
    distances = DistanceScorer(left, right, p=2.0).for_candidates("left", np.arange(2))(np.array([0]))[0]
    assert distances[0] > distances[1] + 0.1

    # in general: attributes whose cosine to the query is the query's mean over the other views leave a score alone
    other_name, other_structure = _unit(rng.normal(size=(1, 4))), _unit(rng.normal(size=(1, 3)))
    mean = (1.0 * (name @ other_name.T).item() + 3.0 * (structure @ other_structure.T).item()) / 4.0
    orthogonal = _unit(rng.normal(size=(1, 5)))
    orthogonal = _unit(orthogonal - (orthogonal @ attr.T) * attr)
    with_mean_cosine = mean * attr + (1 - mean**2) ** 0.5 * orthogonal
    candidates = [
        View("name", name, np.repeat(other_name, 2, axis=0), 1.0),
        View("attr", attr, np.concatenate([np.zeros_like(attr), with_mean_cosine]), 2.0,
             np.array([True]), np.array([False, True])),
        View("structure", structure, np.repeat(other_structure, 2, axis=0), 3.0),
    ]
    scores = _all_scores(ViewScorer(candidates), "left", 1, 2)[0]
    np.testing.assert_allclose(scores, [mean, mean], atol=1e-6)


def test_view_scorer_ranks_as_the_concatenation_when_every_entity_has_attributes():
    rng = np.random.default_rng(3)
    views = _random_views(rng, 30, 40, coverage=1.0)
    left, right = combine_views([(v.left, v.right, v.weight) for v in views])
    for side, n_q, n_c in (("left", 30, 40), ("right", 40, 30)):
        mean_cosine = _all_scores(ViewScorer(views), side, n_q, n_c)
        distance = _all_scores(DistanceScorer(left, right, p=2.0), side, n_q, n_c)
        np.testing.assert_array_equal(np.argsort(-mean_cosine, axis=1), np.argsort(-distance, axis=1))
        np.testing.assert_allclose(distance, -np.sqrt(np.maximum(2 - 2 * mean_cosine, 0)), atol=1e-5)


def test_attribute_view_marks_the_entities_with_attributes(make_pair):
    import dataclasses

    s3pair = make_pair(n=30, m=120)
    pair = s3pair.pair
    rng = np.random.default_rng(4)
    empty = np.zeros(0, dtype=np.int64)
    attributes1 = [rng.choice(6, size=3, replace=False) if i % 3 else empty for i in range(pair.num_entities1)]
    attributes2 = [rng.choice(6, size=2, replace=False) if i % 2 else empty for i in range(pair.num_entities2)]
    pair = dataclasses.replace(pair, attributes1=attributes1, attributes2=attributes2,
                               attribute_labels1=[f"a{i}" for i in range(6)], attribute_labels2=[f"b{i}" for i in range(6)])
    attrs = aligned_attribute_vectors(pair, pair.alignment[:20], MultiKEConfig(attr_dim=4), seed=0)
    assert attrs.present1.tolist() == [bool(i % 3) for i in range(pair.num_entities1)]
    assert attrs.present2.tolist() == [bool(i % 2) for i in range(pair.num_entities2)]
    assert not np.any(attrs.left[~attrs.present1]) and not np.any(attrs.right[~attrs.present2])
    config = MultiKEConfig(structure={"embedding_dim": 8, "num_epochs": 2})
    names = (rng.normal(size=(pair.num_entities1, 4)), rng.normal(size=(pair.num_entities2, 4)))
    views, info = train_multike(names, attrs, pair.triples1, pair.triples2, pair.num_entities1, pair.num_entities2,
                                pair.alignment[:20], config, seed=0)
    assert info["views"] == {"name": 1.0, "attr": 1.0, "structure": 1.0}
    assert views[1].present1 is attrs.present1 and views[1].present2 is attrs.present2
    scores = _all_scores(ViewScorer(views), "left", pair.num_entities1, pair.num_entities2)
    assert scores.shape == (pair.num_entities1, pair.num_entities2) and np.isfinite(scores).all()


def test_align_attributes_by_hand():
    # graph 1: attributes 0 (birthDate), 1 (name); graph 2: 0 (nom), 1 (dateNaissance), 2 (rare)
    attributes1 = [np.array([0, 1]), np.array([1]), np.array([0, 1]), np.array([1])]
    attributes2 = [np.array([0, 1]), np.array([0]), np.array([0, 1, 2]), np.array([0])]
    seeds = np.array([[0, 0], [1, 1], [2, 2]])  # entity 3 is no seed: it does not count
    mapping = align_attributes(attributes1, attributes2, (2, 3), seeds, min_overlap=0.5)
    # a2 = 0 is on seeds {0, 1, 2}: a1 = 1 (on {0, 1, 2}) overlaps 3/3, a1 = 0 (on {0, 2}) 2/3 -> 1
    # a2 = 1 is on {0, 2}: a1 = 0 overlaps 2/2 -> 0; a2 = 2 is on {2}: at most 1/2 (a1 = 0), kept at 0.5
    assert mapping.tolist() == [1, 0, 0]
    assert align_attributes(attributes1, attributes2, (2, 3), seeds, min_overlap=0.6).tolist() == [1, 0, -1]
    assert align_attributes(attributes1, attributes2, (2, 3), np.zeros((0, 2)), 0.1).tolist() == [-1, -1, -1]


def test_aligned_attribute_view_recovers_renamed_attributes(make_pair):
    """Graph 2's attribute ids are a permutation of graph 1's with other names: aligned through the seeds, an entity
    and its counterpart get the same attribute vector; unaligned (n-grams of the names) they would not meet."""
    import dataclasses

    s3pair = make_pair(n=60, m=240)
    pair = s3pair.pair
    rng = np.random.default_rng(3)
    sets = [np.sort(rng.choice(30, size=rng.integers(2, 8), replace=False)) for _ in range(pair.num_entities1)]
    rename = rng.permutation(30)
    attributes2: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * pair.num_entities2
    for a, b in pair.alignment.tolist():
        attributes2[b] = np.sort(rename[sets[a]])
    pair = dataclasses.replace(
        pair, attributes1=sets, attributes2=attributes2,
        attribute_labels1=[f"http://en/a{i}" for i in range(30)],
        attribute_labels2=[f"http://fr/z{i}" for i in range(30)],
    )
    config = MultiKEConfig(attr_dim=16, attr_min_overlap=0.1)
    left, right, present1, _ = aligned_attribute_vectors(pair, pair.alignment[:40], config, seed=0)
    assert present1.all()
    a, b = pair.alignment[:, 0], pair.alignment[:, 1]
    np.testing.assert_allclose(left[a], right[b], atol=1e-5)  # every renamed attribute found through 40 seeds
    assert aligned_attribute_vectors(dataclasses.replace(pair, attributes1=None, attributes2=None), pair.alignment,
                                      config) is None


def test_a_pair_without_any_available_view_scores_zero():
    present = np.array([True, False])
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]])
    scorer = ViewScorer([View("attr", vectors, vectors, 1.0, present, present)])
    np.testing.assert_allclose(_all_scores(scorer, "left", 2, 2), [[1.0, 0.0], [0.0, 0.0]])
