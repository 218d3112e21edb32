"""Candidate counts and expectations from the dataset alone equal those of a model's ranks table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from pykeen.models import DistMult

from kgeval.lp.candidates import candidate_counts, dataset_expectations
from kgeval.lp.datasets import load_dataset
from kgeval.lp.ranking import rank_lp
from kgeval.lp.ranks import ranks_frame
from kgeval.metrics import expectations_table


@pytest.fixture(scope="module")
def nations():
    return load_dataset("nations", {"source": "pykeen", "name": "Nations"})


def test_counts_by_enumeration(nations):
    """num_candidates = entities that are not a known answer, plus the true one: counted by brute force."""
    known = {tuple(map(int, t)) for f in nations.all_mapped_triples() for t in f.tolist()}
    test = nations.factory("test").mapped_triples.numpy()
    table = candidate_counts(nations, "test")
    n = nations.num_entities
    expected_head = [sum((e, r, t) not in known for e in range(n)) + 1 for _, r, t in test]
    expected_tail = [sum((h, r, e) not in known for e in range(n)) + 1 for h, r, _ in test]
    assert table["side"].tolist() == ["head"] * len(test) + ["tail"] * len(test)
    assert table["num_candidates"].tolist() == expected_head + expected_tail


def test_equal_to_a_models_ranks_table(nations):
    torch.manual_seed(0)
    model = DistMult(triples_factory=nations.training, embedding_dim=8, random_seed=0)
    for split in ("valid", "test"):
        triples = nations.factory(split).mapped_triples
        with torch.no_grad():
            results = rank_lp(model, triples, filter_triples=nations.all_mapped_triples(), top_k=0)
        ranks = ranks_frame(nations, triples, results)
        counts = candidate_counts(nations, split)
        np.testing.assert_array_equal(ranks["side"].to_numpy(), counts["side"].to_numpy())
        np.testing.assert_array_equal(ranks["num_candidates"].to_numpy(), counts["num_candidates"].to_numpy())
        # Monte-Carlo draws follow the row order, so the tables agree exactly
        pd.testing.assert_frame_equal(
            expectations_table(ranks, "nations", split),
            dataset_expectations(nations, "nations", [split]),
        )
