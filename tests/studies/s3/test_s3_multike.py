"""MultiKE-style views: the weighted combination equals the weighted mean of cosine similarities; recovery of a
known alignment with names, and with structure alone."""

from __future__ import annotations

import numpy as np
import torch

from kgeval.studies.s3.models import fit_scorer
from kgeval.studies.s3.multike import MultiKEConfig, align_attributes, aligned_attribute_vectors, combine_views


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
    assert isinstance(scorer.left, torch.Tensor)


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
    left, right = aligned_attribute_vectors(pair, pair.alignment[:40], config, seed=0)
    a, b = pair.alignment[:, 0], pair.alignment[:, 1]
    np.testing.assert_allclose(left[a], right[b], atol=1e-5)  # every renamed attribute found through 40 seeds
    assert aligned_attribute_vectors(dataclasses.replace(pair, attributes1=None, attributes2=None), pair.alignment,
                                      config) is None
