"""MultiKE-style views: the weighted combination equals the weighted mean of cosine similarities; recovery of a
known alignment with names, and with structure alone."""

from __future__ import annotations

import numpy as np
import torch

from kgeval.studies.s3.models import fit_scorer
from kgeval.studies.s3.multike import combine_views


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
