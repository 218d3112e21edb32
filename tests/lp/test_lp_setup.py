"""Tests of kgeval.lp.lp_setup: the scorer, the checked triples and the filter indices that rank_lp ranks with."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from pykeen.models import model_resolver

from kgeval.lp.filtering import FilterIndex
from kgeval.lp.lp_setup import as_filter_index, as_triples_or_index, lp_setup
from kgeval.lp.scoring import make_scorer


@pytest.fixture(scope="module")
def nations():
    from pykeen.datasets import Nations

    return Nations()


@pytest.fixture(scope="module")
def model(nations):
    return model_resolver.make("DistMult", triples_factory=nations.training, embedding_dim=8, random_seed=0)


def test_indices_built_beside_the_scorer_equal_sequential_ones(nations, model):
    """The filter indices, built on a second thread while the scorer is made, equal indices built directly; without
    top-k triples the top-k index is the filter index itself."""
    test = nations.testing.mapped_triples
    known = [nations.training.mapped_triples, nations.validation.mapped_triples, test]
    setup = lp_setup(model, test, known, known[:2], "cpu", fast=True)
    direct = FilterIndex(known, num_entities=nations.num_entities, num_relations=nations.num_relations)
    for side in ("head", "tail"):
        for got, expected in zip(vars(setup.index.csr(side)).values(), vars(direct.csr(side)).values()):
            np.testing.assert_array_equal(got, expected)
    assert setup.topk_index is not setup.index and setup.topk_index.num_triples == sum(map(len, known[:2]))
    assert setup.scorer.is_fast and setup.num_relations == nations.num_relations
    np.testing.assert_array_equal(setup.triples, test.numpy())
    same = lp_setup(model, test, known, None, "cpu", fast=True)
    assert same.topk_index is same.index


def test_scorer_without_model_takes_relations_from_the_triples(nations, model):
    """A scorer that names no relation count: the relations present in the evaluation and filter triples."""
    scorer = make_scorer(model, device="cpu")
    scorer.model = None
    triples = np.array([[0, 2, 1], [3, 5, 4]])
    setup = lp_setup(scorer, triples, np.array([[1, 7, 2]]), None, "cpu", fast=True)
    assert setup.num_relations == 8


def test_bad_input_is_named(nations, model):
    with pytest.raises(ValueError, match="entity_to_id"):
        lp_setup(model, torch.tensor([[0, 0, 999]]), None, None, "cpu", fast=True)
    with pytest.raises(ValueError, match="filter_triples is a FilterIndex over 99 entities"):
        lp_setup(model, torch.tensor([[0, 0, 1]]), FilterIndex([[0, 0, 1]], num_entities=99), None, "cpu", fast=True)
    with pytest.raises(ValueError, match=r"filter_triples\[1\]"):
        as_triples_or_index([np.zeros((2, 3), dtype=int), np.zeros((2, 2), dtype=int)], "filter_triples")
    assert as_filter_index(None, 3, 2, "x") is None
    assert as_triples_or_index([], "x").shape == (0, 3)
