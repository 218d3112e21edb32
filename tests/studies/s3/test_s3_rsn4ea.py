"""RSN4EA-style recurrent skipping network: the walks' depth and cross-KG biases counted on a tiny graph, the skip
connection by hand, determinism by seed, and recovery of a planted alignment from shared structure alone."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgeval.studies.s3.anchors import anchor_for
from kgeval.studies.s3.models import METHOD_FAMILIES, MODELS, fit_scorer
from kgeval.studies.s3.rsn4ea import (
    RecurrentSkippingNetwork,
    RSN4EAConfig,
    WalkGraph,
    biased_walks,
    joined_graph,
    walk_tokens,
)


def _star_graph(graph_of: list[int]) -> WalkGraph:
    """Entity 0 - 1, and 1 - 2, 1 - 3, 3 - 0 (so 3 is adjacent to 0; 2 is two hops from 0); one relation."""
    triples = np.array([[0, 0, 1], [1, 0, 2], [1, 0, 3], [3, 0, 0]])
    return WalkGraph.from_triples(triples, 4, 1, np.array(graph_of))


def _third_steps(graph: WalkGraph, depth: float, cross: float, n: int = 20000) -> np.ndarray:
    """Counts of the third entity of walks 0 -> 1 -> ? (walks whose first step went to 1)."""
    config = RSN4EAConfig(walk_length=3, depth_bias=depth, cross_bias=cross)
    entities, _ = biased_walks(graph, np.zeros(n, dtype=np.int64), config, np.random.default_rng(0))
    via_one = entities[entities[:, 1] == 1]
    return np.bincount(via_one[:, 2], minlength=4) / len(via_one)


def test_depth_bias_by_counting():
    # from 1 (coming from 0): back to 0 (distance 0), to 3 (a neighbour of 0) or to 2 (two hops): weights
    # 1 - a, 1 - a, a; one graph, so the cross-KG bias weighs all alike
    shares = _third_steps(_star_graph([0, 0, 0, 0]), depth=0.8, cross=0.5)
    assert shares[2] == pytest.approx(0.8 / 1.2, abs=0.02)
    assert shares[0] == pytest.approx(0.2 / 1.2, abs=0.02) and shares[3] == pytest.approx(0.2 / 1.2, abs=0.02)
    deep_off = _third_steps(_star_graph([0, 0, 0, 0]), depth=0.2, cross=0.5)
    assert deep_off[2] == pytest.approx(0.2 / 1.8, abs=0.02)  # depth bias < 0.5 keeps walks close


def test_cross_bias_by_counting():
    # 0 and 3 in graph 1, 1 a merged seed (both graphs), 2 in graph 2: from 1 (coming from 0) the step to 2 crosses
    # (weight a * b), back to 0 and to 3 stays ((1 - a)(1 - b) each)
    shares = _third_steps(_star_graph([0, 2, 1, 0]), depth=0.5, cross=0.9)
    assert shares[2] == pytest.approx(0.45 / (0.45 + 0.05 + 0.05), abs=0.02)
    flipped = _third_steps(_star_graph([0, 2, 1, 0]), depth=0.5, cross=0.1)
    assert flipped[2] == pytest.approx(0.05 / (0.05 + 0.45 + 0.45), abs=0.02)


def test_joined_graph_merges_the_seeds_and_adds_reverse_edges():
    t1 = np.array([[0, 0, 1]])
    t2 = np.array([[0, 0, 1], [1, 1, 2]])
    graph, map1, map2 = joined_graph(t1, t2, 2, 3, np.array([[1, 0]]), num_relations1=1)
    assert map1.tolist() == [0, 1] and map2.tolist() == [1, 2, 3]  # graph-2 entity 0 is merged into graph-1's 1
    assert graph.graph_of.tolist() == [0, 2, 1, 1]
    assert graph.num_relations == 3
    edges = {(u, int(graph.relations[k]), int(graph.targets[k])) for u in range(4)
             for k in range(graph.indptr[u], graph.indptr[u + 1])}
    assert edges == {(0, 0, 1), (1, 3, 0), (1, 1, 2), (2, 4, 1), (2, 2, 3), (3, 5, 2)}
    tokens = walk_tokens(np.array([[0, 1, 2]]), np.array([[0, 1]]), 4)
    assert tokens.tolist() == [[0, 4, 1, 5, 2]]


def test_skip_connection_by_hand():
    torch.manual_seed(0)
    model = RecurrentSkippingNetwork(num_tokens=10, dim=4)
    tokens = torch.tensor([[0, 6, 1, 7, 2]])  # e r e r e
    out = model(tokens)
    x = model.embedding(tokens)
    h, _ = model.rnn(x)
    w = model.skip.weight
    for t in (1, 3):  # relation steps: the LSTM output plus W times the subject entity's embedding
        assert torch.allclose(out[0, t], h[0, t] + w @ x[0, t - 1], atol=1e-6)
    for t in (0, 2, 4):  # entity steps: the LSTM output alone
        assert torch.allclose(out[0, t], h[0, t], atol=1e-6)
    assert not torch.allclose(out[0, 1], h[0, 1])  # the skip does add something


def _spec(**changes) -> dict:
    base = {"embedding_dim": 32, "num_epochs": 30, "walks_per_entity": 4, "walk_length": 6, "batch_size": 64,
            "lr": 0.01, "num_negatives": 32, "patience": 0}
    return {**base, **changes}


def test_rsn4ea_aligns_a_shared_structure_far_above_chance(make_pair, hits_at_1):
    s3pair = make_pair(names=False)  # two isomorphic graphs of 40 entities, no names: structure only
    alignment = s3pair.pair.alignment
    train, test = alignment[:20], alignment[20:]
    scorer, info = fit_scorer("rsn4ea", s3pair, train, _spec(), seed=0)
    assert hits_at_1(scorer, test, 40) >= 0.5  # chance: 1 / 40
    assert info["losses"][-1] < info["losses"][0]
    again, _ = fit_scorer("rsn4ea", s3pair, train, _spec(), seed=0)
    assert torch.equal(scorer.left, again.left) and torch.equal(scorer.right, again.right)  # deterministic by seed
    other, _ = fit_scorer("rsn4ea", s3pair, train, _spec(), seed=1)
    assert not torch.equal(scorer.left, other.left)


def test_rsn4ea_is_a_structure_method_with_a_published_figure():
    assert "rsn4ea" in MODELS and METHOD_FAMILIES["rsn4ea"] == "structure"
    anchor, like_for_like = anchor_for("rsn4ea", "srprs_en_fr")
    assert anchor.hits_at_1 == pytest.approx(0.350) and like_for_like and "RSNs" in anchor.paper
    other, like_elsewhere = anchor_for("rsn4ea", "dbp15k_fr_en")
    assert other is anchor and not like_elsewhere  # no RSN4EA figure on DBP15k fr-en
    with pytest.raises(ValueError, match="depth_bias"):
        RSN4EAConfig(depth_bias=1.0)
    with pytest.raises(TypeError):
        RSN4EAConfig.from_dict({"unknown": 1})
