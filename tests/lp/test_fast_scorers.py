"""kgeval.lp.fast_scorers: AffineScorer and DistanceScorer, built directly on small random models, against a brute-force
loop over PyKEEN's ``model.score_hrt`` and against ``predict_t`` / ``predict_h``."""

from __future__ import annotations

import pytest
import torch
from pykeen.models import model_resolver

from kgeval.lp.fast_scorers import AffineScorer, DistanceScorer, affine_interactions
from kgeval.lp.scoring import make_scorer
from test_scoring import assert_scores_match, datasets, perturb  # noqa: F401  (datasets: a fixture)

#: the fast scorer class each family gets
FAMILIES = {"TransE": DistanceScorer, "DistMult": AffineScorer, "ComplEx": AffineScorer, "RotatE": DistanceScorer}


def brute_force(model, side: str, anchors: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:
    """score_hrt of every entity in the missing slot, one query at a time. shape: (b, num_entities)."""
    entities = torch.arange(model.num_entities)
    rows = []
    with torch.no_grad():
        for a, r in zip(anchors.tolist(), relations.tolist()):
            fixed_a, fixed_r = torch.full_like(entities, a), torch.full_like(entities, r)
            hrt = (fixed_a, fixed_r, entities) if side == "tail" else (entities, fixed_r, fixed_a)
            rows.append(model.score_hrt(torch.stack(hrt, dim=1)).reshape(-1))
    return torch.stack(rows)


@pytest.mark.parametrize("name", list(FAMILIES))
@pytest.mark.parametrize("seed", [0, 1])
def test_scores_equal_score_hrt(name, seed, datasets):
    model = model_resolver.make(name, triples_factory=datasets[False].training, random_seed=seed, embedding_dim=12)
    perturb(model, seed=seed)
    scorer = FAMILIES[name](model, device="cpu")
    assert scorer.is_fast and scorer.num_entities == model.num_entities
    generator = torch.Generator().manual_seed(seed)
    anchors = torch.randint(model.num_entities, (9,), generator=generator)
    relations = torch.randint(model.num_relations, (9,), generator=generator)
    for side in ("head", "tail"):
        expected = brute_force(model, side, anchors, relations)
        got = scorer.score(side, anchors, relations)
        assert got.dtype == torch.float32 and got.shape == expected.shape
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5 * float(expected.abs().max()))
        # the row blocks tile the same scores
        blocks = scorer.prepare(side, anchors, relations)
        torch.testing.assert_close(torch.cat([blocks(0, 4), blocks(4, 9)]), got)


def test_unsupported_interactions_are_refused(datasets):
    training = datasets[False].training
    transe = model_resolver.make("TransE", triples_factory=training, random_seed=0, embedding_dim=8)
    distmult = model_resolver.make("DistMult", triples_factory=training, random_seed=0, embedding_dim=8)
    with pytest.raises(TypeError, match="affine"):
        AffineScorer(transe, device="cpu")
    with pytest.raises(TypeError, match="distance"):
        DistanceScorer(distmult, device="cpu")
    transe_l3 = model_resolver.make("TransE", triples_factory=training, random_seed=0, embedding_dim=8, scoring_fct_norm=3)
    with pytest.raises(TypeError, match="p=3"):
        DistanceScorer(transe_l3, device="cpu")


def test_affine_interactions_lists_convE_for_tails_only():
    from pykeen.nn import modules

    table = affine_interactions()
    assert table[modules.ConvEInteraction] == frozenset({"tail"})
    assert table[modules.DistMultInteraction] == frozenset({"head", "tail"})
    assert modules.TransEInteraction not in table and modules.RotatEInteraction not in table


@pytest.mark.parametrize(
    "kwargs",
    [dict(scoring_fct_norm=1), dict(scoring_fct_norm=2), dict(scoring_fct_norm=2, power_norm=True)],
    ids=["L1", "L2", "L2-squared"],
)
def test_transe_norms(kwargs, datasets):
    model = model_resolver.make(
        "TransE", triples_factory=datasets[False].training, random_seed=1, embedding_dim=32, **kwargs
    )
    scorer = make_scorer(model, device="cpu")
    assert isinstance(scorer, DistanceScorer)
    assert_scores_match(scorer, model)


def test_transe_l2_small_distances_are_exact(datasets):
    """With zero relations, q = h: the candidate h itself is at distance 0, where the expansion cancels."""
    model = model_resolver.make(
        "TransE", triples_factory=datasets[False].training, random_seed=0, embedding_dim=32, scoring_fct_norm=2
    )
    with torch.no_grad():
        model.relation_representations[0]._embeddings.weight.zero_()
        # two nearly identical entities
        weight = model.entity_representations[0]._embeddings.weight
        weight[1] = weight[0] + 1e-4
    scorer = make_scorer(model, device="cpu")
    entities = torch.arange(model.num_entities)
    with torch.no_grad():
        expected = model.predict_t(torch.stack([entities, torch.zeros_like(entities)], dim=1))
        got = scorer.score_tails(entities, torch.zeros_like(entities))
    # relative to each score itself, not to the row's largest one
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-7)
    assert float(got[0, 0]) == 0.0


def test_inverse_triples_and_sigmoid(datasets):
    """Heads through inverse relations (as PyKEEN scores them), and predict_with_sigmoid."""
    model = model_resolver.make("DistMult", triples_factory=datasets[True].training, random_seed=0, embedding_dim=32)
    model.predict_with_sigmoid = True
    scorer = make_scorer(model, device="cpu")
    assert isinstance(scorer, AffineScorer) and scorer.use_inverse
    assert_scores_match(scorer, model)
