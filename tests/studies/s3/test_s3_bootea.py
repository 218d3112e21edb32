"""BootEA-style bootstrapping: mutual nearest neighbours by hand, parameter swapping, and recovery of a known
alignment of two isomorphic graphs from structure alone."""

from __future__ import annotations

import numpy as np
import torch

from kgeval.studies.s3.bootea import (
    BootEAConfig,
    edit_labels,
    mutual_nearest,
    nearest_in_graph,
    swapped_triples,
    train_bootea,
)
from kgeval.studies.s3.models import fit_scorer


def test_mutual_nearest_by_hand():
    left = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.1]]), dim=1)
    right = torch.nn.functional.normalize(torch.tensor([[1.0, 0.02], [0.0, 1.0], [-1.0, 0.0]]), dim=1)
    # left 0 and left 2 both prefer right 0; right 0 prefers left 0 (angle 0.02 vs 0.08); left 1 <-> right 1
    assert mutual_nearest(left, right, 0.5, chunk=2).tolist() == [[0, 0], [1, 1]]
    assert mutual_nearest(left, right, 0.5, exclude1=[1], exclude2=[1]).tolist() == [[0, 0]]
    assert mutual_nearest(left, right, 1.01).tolist() == []  # the threshold


def test_swapped_triples():
    triples = np.array([[0, 0, 1], [2, 1, 3], [3, 0, 0]])  # graph 1 ids 0, 1; graph 2 ids 2, 3 (offset 2)
    out = swapped_triples(triples, np.array([[0, 1]]), offset=2)  # 0 <-> 3
    assert sorted(map(tuple, out.tolist())) == [(0, 0, 0), (2, 1, 0), (3, 0, 1), (3, 0, 3)]


def test_bootea_recovers_an_isomorphic_alignment_from_structure(make_pair, hits_at_1):
    s3pair = make_pair(names=False)  # no names: structure only
    alignment = s3pair.pair.alignment
    train, test = alignment[:20], alignment[20:]
    spec = {"embedding_dim": 32, "num_epochs": 200, "batch_size": 256, "lr": 0.01, "bootstrap_every": 20, "threshold": 0.8}
    scorer, info = fit_scorer("bootea", s3pair, train, spec, seed=0)
    assert hits_at_1(scorer, test, 40) >= 0.9
    assert max(info["num_labelled"]) > 0  # bootstrapping labelled new mappings
    again, _ = fit_scorer("bootea", s3pair, train, spec, seed=0)
    assert torch.equal(scorer.left, again.left)  # deterministic by seed


def test_edit_labels_keeps_the_more_similar_of_conflicting_mappings():
    left = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), dim=1)
    right = torch.nn.functional.normalize(torch.tensor([[1.0, 0.1], [0.0, 1.0], [1.0, 0.0]]), dim=1)
    # labelled: (0, 0) cos 0.995, (1, 1) cos 1.0; proposed: (0, 2) cos 1.0 conflicts with (0, 0) and wins it;
    # (2, 0) cos 0.77 (0.707 * 1.09...) does not conflict once (0, 0) is gone
    previous = np.array([[0, 0], [1, 1]])
    proposed = np.array([[0, 2], [2, 0]])
    out = edit_labels(previous, proposed, left, right, threshold=0.5)
    assert out.tolist() == [[0, 2], [1, 1], [2, 0]]
    # brute force: one-to-one, and the kept set has the largest total similarity among the one-to-one choices here
    assert len(set(out[:, 0])) == len(out) == len(set(out[:, 1]))
    # a labelled mapping whose similarity fell below the threshold is dropped
    assert edit_labels(previous, np.zeros((0, 2)), left, right, threshold=0.999).tolist() == [[1, 1]]


def test_nearest_in_graph_against_brute_force():
    x = torch.nn.functional.normalize(torch.randn(50, 6, generator=torch.Generator().manual_seed(1)), dim=1)
    out = nearest_in_graph(x, 5, chunk=7)
    sims = (x @ x.T).numpy()
    np.fill_diagonal(sims, -np.inf)
    expected = np.argsort(-sims, axis=1)[:, :5]
    assert np.array_equal(np.sort(out, axis=1), np.sort(expected, axis=1))
    assert not (out == np.arange(50)[:, None]).any()  # never the entity itself


def test_early_stopping_keeps_the_best_validation_round(make_pair):
    s3pair = make_pair(names=False)
    pair, alignment = s3pair.pair, s3pair.pair.alignment
    config = BootEAConfig(
        embedding_dim=16, num_epochs=400, batch_size=256, bootstrap_every=5, patience=2, threshold=0.8
    )
    result = train_bootea(pair.triples1, pair.triples2, 40, 40, alignment[:20], config, 0, valid_pairs=alignment[20:25])
    rounds = len(result.valid_hits)
    assert len(result.losses) == 5 * rounds < 400  # stopped early, at a round
    best = int(np.argmax(result.valid_hits))
    assert rounds - 1 - best == 2  # two rounds without improvement after the best
    valid = alignment[20:25]
    sims = result.left[torch.as_tensor(valid[:, 0])] @ result.right[torch.as_tensor(valid[:, 1])].T
    hits = float((sims.argmax(dim=1) == torch.arange(5)).float().mean())
    assert hits == result.valid_hits[best]  # the returned embeddings are the best round's
