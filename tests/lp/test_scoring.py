"""kgeval.lp.scoring: make_scorer picks a fast path for each family (equal to PyKEEN's own ``model.predict_t`` /
``model.predict_h``) or falls back to PyKEEN. The fast scorers themselves: test_fast_scorers.py."""

from __future__ import annotations

import logging

import pytest
import torch
from pykeen.datasets import Nations
from pykeen.models import model_resolver

from conftest import SMALL_KWARGS
from kgeval.lp.scoring import AffineScorer, PyKEENScorer, make_scorer

#: the default config's families, and whether a fast path is expected
EXPECTED_FAST = {
    "TransE": True,
    "DistMult": True,
    "ComplEx": True,
    "RotatE": True,
    "TuckER": True,
    "RESCAL": True,
    "ConvE": True,
    "HolE": True,
    "QuatE": True,
    "BoxE": False,
    "TorusE": False,
}


@pytest.fixture(scope="module")
def datasets():
    return {False: Nations(), True: Nations(create_inverse_triples=True)}


def all_queries(model):
    """Every (entity, relation) pair of the dataset (no inverse relations)."""
    entities = torch.arange(model.num_entities)
    relations = torch.arange(model.num_real_relations)
    grid = torch.cartesian_prod(entities, relations)
    return grid[:, 0], grid[:, 1]


def assert_scores_match(scorer, model, rtol: float = 1e-5) -> None:
    """Scores equal PyKEEN's predict_t / predict_h to ``rtol`` relative to the batch's largest absolute score."""
    entities, relations = all_queries(model)
    with torch.no_grad():
        expected_tails = model.predict_t(torch.stack([entities, relations], dim=1))
        expected_heads = model.predict_h(torch.stack([relations, entities], dim=1))
        tails = scorer.score_tails(entities, relations)
        heads = scorer.score_heads(relations, entities)
    for got, expected in ((tails, expected_tails), (heads, expected_heads)):
        assert got.shape == expected.shape == (len(entities), model.num_entities)
        scale = expected.abs().max()
        torch.testing.assert_close(got, expected, rtol=0, atol=rtol * float(scale))


def perturb(model, seed: int = 0) -> None:
    """Move every parameter and batch-norm statistic away from its initial value, as training would.

    The model's constrainers run afterwards (``post_parameter_update``), as after a training step.
    """
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            noise = torch.randn(parameter.shape, generator=generator, dtype=parameter.real.dtype)
            if parameter.is_complex():
                noise = torch.complex(noise, torch.randn(parameter.shape, generator=generator))
            parameter.add_(0.1 * noise)
        for module in model.modules():
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                module.running_mean.copy_(torch.randn(module.running_mean.shape, generator=generator))
                module.running_var.copy_(torch.rand(module.running_var.shape, generator=generator) + 0.5)
    model.post_parameter_update()


@pytest.mark.parametrize("name", list(EXPECTED_FAST))
def test_family_scores_match_pykeen(name, datasets):
    dataset = datasets[name == "ConvE"]
    model = model_resolver.make(name, triples_factory=dataset.training, random_seed=0, **SMALL_KWARGS[name])
    perturb(model)
    scorer = make_scorer(model, device="cpu")
    assert scorer.is_fast is EXPECTED_FAST[name], scorer
    assert_scores_match(scorer, model)


@pytest.mark.parametrize("name", ["DistMult", "ComplEx", "RotatE", "TransE", "ConvE", "TuckER"])
def test_prepared_blocks_equal_scores(name, datasets):
    """``prepare(side, a, r)(i, j)`` scores rows ``i..j-1`` as ``score(side, a, r)`` does, fast and slow scorers."""
    dataset = datasets[name == "ConvE"]
    model = model_resolver.make(name, triples_factory=dataset.training, random_seed=0, **SMALL_KWARGS[name])
    perturb(model)
    anchors = torch.arange(12) % dataset.training.num_entities
    relations = torch.arange(12) % dataset.training.num_relations
    for fast in (True, False):
        scorer = make_scorer(model, device="cpu", fast=fast)
        for side in ("head", "tail"):
            full = scorer.score(side, anchors, relations)
            blocks = scorer.prepare(side, anchors, relations)
            for start, stop in ((0, 5), (5, 12), (0, 12)):
                torch.testing.assert_close(blocks(start, stop), full[start:stop], rtol=1e-6, atol=1e-6)


def test_every_family_covered():
    assert set(EXPECTED_FAST) == set(SMALL_KWARGS)


def test_slow_path_is_pykeen(datasets):
    model = model_resolver.make("DistMult", triples_factory=datasets[False].training, random_seed=0, embedding_dim=8)
    scorer = make_scorer(model, fast=False, device="cpu")
    assert isinstance(scorer, PyKEENScorer) and not scorer.is_fast
    assert_scores_match(scorer, model, rtol=0)


def test_deviating_fast_path_falls_back(datasets, monkeypatch, caplog):
    """make_scorer compares a fast path with PyKEEN and refuses it if the scores differ."""
    model = model_resolver.make("DistMult", triples_factory=datasets[False].training, random_seed=0, embedding_dim=8)
    original = AffineScorer._prepare_slot

    def skewed(self, *args):
        blocks = original(self, *args)
        return lambda start, stop: blocks(start, stop) * 1.01

    monkeypatch.setattr(AffineScorer, "_prepare_slot", skewed)
    with caplog.at_level(logging.WARNING, logger="kgeval.lp.scoring"):
        scorer = make_scorer(model, device="cpu")
    assert isinstance(scorer, PyKEENScorer)
    assert "deviates" in caplog.text
