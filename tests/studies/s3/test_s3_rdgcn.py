"""RDGCN-style highway GCN: functionality weights by hand, identity start, recovery of a known alignment."""

from __future__ import annotations

import numpy as np
import torch

from kgeval.studies.s3.models import fit_scorer
from kgeval.studies.s3.rdgcn import HighwayGCN, functionality_adjacency


def test_functionality_adjacency_by_hand():
    # relation 0: heads {0}, tails {1, 2} -> fun = 1/2, ifun = 1
    a = functionality_adjacency(np.array([[0, 0, 1], [0, 0, 2]]), 3).to_dense().numpy()
    # row 0 receives from 1 and 2 with fun = 0.5 each and itself with 1: normalised 0.25, 0.25, 0.5
    np.testing.assert_allclose(a[0], [0.5, 0.25, 0.25])
    # row 1 receives from 0 with ifun = 1 and itself with 1
    np.testing.assert_allclose(a[1], [0.5, 0.5, 0.0])
    np.testing.assert_allclose(a.sum(axis=1), 1.0, rtol=1e-6)


def test_highway_gcn_without_layers_is_the_identity():
    x = torch.randn(5, 3)
    adjacency = functionality_adjacency(np.array([[0, 0, 1]]), 5)
    assert torch.equal(HighwayGCN(3, 0)(x, adjacency), x)


def test_rdgcn_recovers_a_known_alignment_from_names(make_pair, hits_at_1):
    s3pair = make_pair()
    alignment = s3pair.pair.alignment
    train, test = alignment[:4], alignment[4:]  # few seeds: the name vectors carry it
    spec = {"num_epochs": 20, "name_vectors": {"kind": "char_ngrams", "dim": 32}}
    scorer, info = fit_scorer("rdgcn", s3pair, train, spec, seed=0)
    assert hits_at_1(scorer, test, 40) >= 0.9
    assert len(info["losses"]) == 20


def _noisy_names(s3pair, share: float, seed: int):
    """The pair with a share of its graph-2 names replaced by random strings (names no longer tell those apart)."""
    import dataclasses

    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    names2 = [("".join(rng.choice(letters, size=7)),) if rng.random() < share else n for n in s3pair.names2]
    return dataclasses.replace(s3pair, names2=names2)


def test_rdgcn_training_beats_its_untrained_start_on_noisy_names(make_pair, hits_at_1):
    """Half the graph-2 names are noise: the untrained network ranks by the names; training on the seeds must use
    them (and the structure) to do better."""
    s3pair = _noisy_names(make_pair(n=120, m=600, seed=1), share=0.5, seed=2)
    alignment = s3pair.pair.alignment
    train, test = alignment[:60], alignment[60:]
    spec = {"num_epochs": 200, "name_vectors": {"kind": "char_ngrams", "dim": 32}}
    trained, _ = fit_scorer("rdgcn", s3pair, train, spec, seed=0)
    untrained, _ = fit_scorer("rdgcn", s3pair, train, {**spec, "num_epochs": 0}, seed=0)
    trained_hits, untrained_hits = hits_at_1(trained, test, 120), hits_at_1(untrained, test, 120)
    assert trained_hits > untrained_hits + 0.05, (trained_hits, untrained_hits)
    uniform, _ = fit_scorer("rdgcn", s3pair, train, {**spec, "negatives": "uniform", "lr": 0.001}, seed=0)
    assert hits_at_1(uniform, test, 120) < trained_hits  # the old training (uniform negatives) gains less
