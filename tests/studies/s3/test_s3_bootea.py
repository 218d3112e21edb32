"""BootEA-style bootstrapping: mutual nearest neighbours by hand, parameter swapping, and recovery of a known
alignment of two isomorphic graphs from structure alone."""

from __future__ import annotations

import numpy as np
import torch

from kgeval.studies.s3.bootea import mutual_nearest, swapped_triples
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
