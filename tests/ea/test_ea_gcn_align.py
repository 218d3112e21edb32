"""GCN-Align: the message matrix, the custom propagation, the loss's negatives, determinism, learning, and how a
relabelling of graph 2 reaches its results."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgeval.ea.data import load_ea_pair
from kgeval.ea.evaluation import ea_ranks_frame, rank_alignment
from kgeval.ea.pair import relabel_graph2
from kgeval.ea.gcn_align import (
    GCNAlign,
    GCNAlignConfig,
    _sample_negatives,
    build_adjacency,
    sampled_margin_loss,
    train_gcn_align,
)
from kgeval.studies.s1.splits import split_alignment
from kgeval.ea.evaluation import ea_metrics


def test_adjacency_against_dense_construction():
    triples = np.array([[0, 0, 1], [0, 1, 1], [1, 0, 2], [3, 2, 3], [2, 1, 0]])
    n = 5
    dense = np.zeros((n, n))
    for h, _, t in triples:  # edge h->t, inverse t->h, deduplicated
        dense[t, h] = 1
        dense[h, t] = 1
    dense[np.arange(n), np.arange(n)] = 1  # self-loops
    dense = dense / dense.sum(axis=1, keepdims=True)  # receiver averages its incoming messages
    np.testing.assert_allclose(build_adjacency(triples, n).to_dense().numpy(), dense, rtol=1e-6)


def test_propagation_gradient_matches_dense_autograd():
    triples = np.array([[0, 0, 1], [1, 0, 2], [2, 0, 2], [3, 0, 0]])
    gen = torch.Generator().manual_seed(0)
    model = GCNAlign(build_adjacency(triples, 4), build_adjacency(triples[:2], 3), embedding_dim=5, generator=gen)
    left, right = model()
    (left.sum() + 2 * right.sum()).backward()
    grads = [p.grad.clone() for p in model.embeddings]
    # the same forward pass with dense matrices and plain autograd
    for emb, adj, grad, weight in zip(model.embeddings, model.adjacency, grads, (1, 2)):
        x = emb.detach().clone().requires_grad_()
        h = torch.nn.functional.normalize(x, dim=1)
        for _ in range(2):
            h = torch.relu(adj.to_dense() @ h)
        (weight * h.sum()).backward()
        torch.testing.assert_close(x.grad, grad)


def test_negatives_are_uniform_and_never_the_positive():
    gen = torch.Generator().manual_seed(0)
    positives = torch.tensor([0, 3, 6] * 2000)
    negatives = _sample_negatives(positives, 7, 20, gen)
    assert not (negatives == positives.unsqueeze(1)).any()
    assert negatives.min() >= 0 and negatives.max() <= 6
    # uniform over the 6 other entities: each appears ~1/6 of the time
    counts = np.bincount(negatives[positives == 3].flatten().numpy(), minlength=7) / negatives[positives == 3].numel()
    assert counts[3] == 0
    np.testing.assert_allclose(np.delete(counts, 3), 1 / 6, atol=0.01)


def test_loss_against_enumeration():
    # with one candidate besides the positive, every negative is that candidate: the loss is exact
    left = torch.tensor([[0.0, 0.0], [1.0, 1.0]])
    right = torch.tensor([[0.5, 0.0], [3.0, 0.0]])
    pairs = torch.tensor([[0, 0], [1, 1]])
    loss = sampled_margin_loss(left, right, pairs, num_negatives=4, margin=3.0)
    # left->right: a0: pos |0-.5|=.5, neg b1 3 -> max(0, 3+.5-3)=.5; a1: pos |1-3|+1=3, neg b0 .5+1=1.5 -> 4.5
    # right->left: b0: pos .5, neg a1 1.5 -> 2; b1: pos 3, neg a0 3 -> 3
    assert float(loss) == pytest.approx(0.5 * ((0.5 + 4.5) / 2 + (2 + 3) / 2))


@pytest.fixture(autouse=True)
def one_thread():
    """Small models train faster on one thread (and the machine's cores are shared)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def umls_pair():
    return load_ea_pair("umls_two_view", {"source": "two_view", "dataset": "umls", "keep_fraction": 0.5, "seed": 0})


def test_training_is_deterministic_by_seed(umls_pair):
    pair = umls_pair
    train, _ = split_alignment(pair.alignment, 20, 0)
    config = GCNAlignConfig(num_epochs=2)
    torch.set_num_threads(2)  # bit-identical also with several threads (the fixture restores the count)
    args = (pair.triples1, pair.triples2, pair.num_entities1, pair.num_entities2, train, config)
    a, b, c = train_gcn_align(*args, seed=1), train_gcn_align(*args, seed=1), train_gcn_align(*args, seed=2)
    torch.testing.assert_close(a.left, b.left)
    assert a.losses == b.losses
    assert not torch.equal(a.left, c.left)


def test_training_learns_the_alignment(umls_pair):
    pair = umls_pair
    train, pool = split_alignment(pair.alignment, 50, 0)
    args = (pair.triples1, pair.triples2, pair.num_entities1, pair.num_entities2)

    def amr(num_epochs: int) -> float:
        result = train_gcn_align(*args, train, GCNAlignConfig(num_epochs=num_epochs), seed=0)
        ranks = rank_alignment(result.left, result.right, pool)
        table = ea_ranks_frame(ranks, pool, pair.entity_labels1, pair.entity_labels2)
        metrics = ea_metrics(table, metrics=["amr"]).set_index(["side", "rank_type"])["value"]
        return metrics[("both", "realistic")], result.losses

    untrained, no_losses = amr(0)
    trained, losses = amr(100)
    assert no_losses == []
    assert losses[-1] < losses[0]
    assert trained < 0.5 * untrained


def test_no_training_pairs_keeps_initialisation(umls_pair):
    pair = umls_pair
    result = train_gcn_align(
        pair.triples1, pair.triples2, pair.num_entities1, pair.num_entities2, np.zeros((0, 2)), GCNAlignConfig(), seed=0
    )
    assert result.losses == [] and result.left.shape == (pair.num_entities1, 200)


def test_config_rejects_unknown_keys():
    with pytest.raises(ValueError, match="num_epoch"):
        GCNAlignConfig.from_dict({"num_epoch": 3})
    assert GCNAlignConfig.from_dict({"num_epochs": 3}).num_epochs == 3


def test_sampled_l1_distance_gradient_matches_autograd():
    from kgeval.ea.gcn_align import _SampledL1Distance

    gen = torch.Generator().manual_seed(3)
    anchor = torch.randn(30, 6, generator=gen, dtype=torch.float64, requires_grad=True)
    target = torch.randn(12, 6, generator=gen, dtype=torch.float64, requires_grad=True)
    negatives = torch.randint(12, (30, 5), generator=gen)
    weight = torch.randn(30, 5, generator=gen, dtype=torch.float64)
    weight[weight < 0.3] = 0.0  # zero incoming gradients, as from inactive hinge terms
    (_SampledL1Distance.apply(anchor, target, negatives) * weight).sum().backward()
    ours = anchor.grad.clone(), target.grad.clone()
    anchor.grad, target.grad = None, None
    reference = (anchor.unsqueeze(1) - target[negatives]).abs().sum(-1)
    (reference * weight).sum().backward()
    torch.testing.assert_close(ours[0], anchor.grad)
    torch.testing.assert_close(ours[1], target.grad)
    torch.testing.assert_close(_SampledL1Distance.apply(anchor, target, negatives), reference)


def test_graph2_relabelling_reaches_the_results_only_through_the_random_draws(umls_pair, monkeypatch):
    """GCN-Align draws two things by graph-2 id: the rows of the graph-2 embeddings (row j is entity j's start) and
    the uniform negatives on graph 2 (an index into 0..n2-1). Under a relabelling of graph 2 its results therefore
    change only through which entity gets which draw, not exactly. Drawn for the relabelled order instead (the same
    draws moved to the new ids: start row j at new_ids[j], a negative j returned as new_ids[j]), training on the
    relabelled pair gives the same representations moved to the new ids, up to float rounding (the message sums run
    over the rows in another order), and the same ranks for every test mapping."""
    import kgeval.ea.gcn_align as module

    pair = umls_pair
    new_ids = np.random.default_rng(0).permutation(pair.num_entities2)
    old_of = torch.as_tensor(np.argsort(new_ids))
    moved = relabel_graph2(pair, new_ids)
    train, pool = split_alignment(pair.alignment, 50, 0)

    def relabelled(pairs: np.ndarray) -> np.ndarray:
        return np.stack([pairs[:, 0], new_ids[pairs[:, 1]]], axis=1)

    config = GCNAlignConfig(embedding_dim=16, num_epochs=30, num_negatives=5)
    sizes = (pair.num_entities1, pair.num_entities2)
    before = train_gcn_align(pair.triples1, pair.triples2, *sizes, train, config, seed=3)

    draw_start, draw_negatives = module._truncated_normal, module._sample_negatives
    starts: list[tuple[int, int]] = []
    directions: list[int] = []

    def start(shape, generator):
        values = draw_start(shape, generator)
        starts.append(shape)
        return values[old_of] if len(starts) == 2 else values  # graph 2's rows are drawn second

    def negatives(positives, num_candidates, num_negatives, generator):
        directions.append(1)
        if len(directions) % 2 == 0:  # the loss's second direction ranks graph-1 candidates
            return draw_negatives(positives, num_candidates, num_negatives, generator)
        drawn = draw_negatives(old_of[positives.cpu()], num_candidates, num_negatives, generator)
        return torch.as_tensor(new_ids)[drawn]

    monkeypatch.setattr(module, "_truncated_normal", start)
    monkeypatch.setattr(module, "_sample_negatives", negatives)
    after = train_gcn_align(moved.triples1, moved.triples2, *sizes, relabelled(train), config, seed=3)
    assert len(directions) == 2 * config.num_epochs
    torch.testing.assert_close(after.left, before.left, rtol=0, atol=1e-5)
    torch.testing.assert_close(after.right[torch.as_tensor(new_ids)], before.right, rtol=0, atol=1e-5)
    np.testing.assert_allclose(after.losses, before.losses, rtol=1e-5)
    ranks_before = rank_alignment(before.left, before.right, pool)
    ranks_after = rank_alignment(after.left, after.right, relabelled(pool))
    for side in ("left", "right"):
        for rank in ("rank_optimistic", "rank_pessimistic", "rank_realistic"):
            np.testing.assert_array_equal(getattr(ranks_after[side], rank), getattr(ranks_before[side], rank))
