"""TransE's L1 score straight from the tables: PyKEEN's scores and both tables' gradients bit for bit, PyKEEN's path
wherever the fused pass does not apply, and a whole training run equal to ``pipeline()``'s with the fused pass in
use."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from pykeen.models import TransE

import kgeval.lp.engine.training.transe_lookup_kernel as transe_lookup
from kgeval.lp.engine.training.embedding_gradients_kernel import MIN_POSITIONS
from kgeval.lp.engine.training.transe_lookup_kernel import _agrees, _pykeens, fusable_tables, lookup_l1_gradients, patched_score_hrt
from training_reference import (
    TRANSE_L1_SPEC,
    assert_a_differing_pass_is_not_used,
    assert_trains_like_pipeline,
    count_calls,
)


@pytest.fixture
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def tables(num_entities: int, num_relations: int, d: int, n: int, seed: int) -> tuple[torch.Tensor, ...]:
    """Entity and relation tables (values over 20 orders of magnitude) and a batch with repeated triples, heads equal
    to tails, and exactly zero elements."""
    generator = torch.Generator().manual_seed(seed)
    scale = torch.logspace(-10, 10, d)
    entities = torch.randn((num_entities, d), generator=generator) * scale
    relations = torch.randn((num_relations, d), generator=generator) * scale
    batch = torch.stack(
        [torch.randint(0, num_entities, (n,), generator=generator),
         torch.randint(0, num_relations, (n,), generator=generator),
         torch.randint(0, num_entities, (n,), generator=generator)], dim=1
    )
    if num_entities > 1 and n > 8:
        entities[1] = entities[0] + relations[0]
        batch[: n // 4] = torch.tensor([0, 0, 1])
        batch[n // 4 : n // 4 + 3, 2] = batch[n // 4 : n // 4 + 3, 0]
    return entities, relations, batch


@pytest.mark.parametrize(
    ("num_entities", "num_relations", "d", "n"),
    [(1, 1, 1, 1), (3, 2, 5, 3), (50, 4, 7, 301), (20, 3, 100, 4097), (2000, 30, 64, 10_000)],
)
def test_scores_and_gradients_have_pykeens_bits(num_entities, num_relations, d, n):
    assert _agrees(*tables(num_entities, num_relations, d, n, seed=n + d))


def test_nan_follows_pykeen():
    entities, relations, batch = tables(30, 3, 9, 203, seed=1)
    entities[2, 4] = float("nan")
    relations[1, 0] = float("inf")
    assert _agrees(entities, relations, batch)


def test_the_order_of_the_additions_shows_in_the_bits():
    """The gradient summed over the batch in reverse order differs from PyKEEN's: the comparison can see an order."""
    entities, relations, batch = tables(5, 2, 16, 4000, seed=2)
    upstream = torch.randn(4000, generator=torch.Generator().manual_seed(3)) * torch.logspace(-6, 6, 4000)
    leaves = [entities.clone().requires_grad_(), relations.clone().requires_grad_()]
    _pykeens(*leaves, batch).backward(upstream)
    e, r, b, g = entities.numpy(), relations.numpy(), batch.numpy(), upstream.numpy()
    grads = [np.zeros_like(e), np.zeros_like(r), np.zeros_like(e)]
    lookup_l1_gradients(e, r, b, g, *grads)
    assert np.array_equal(grads[1], leaves[1].grad.numpy())
    reversed_grads = [np.zeros_like(e), np.zeros_like(r), np.zeros_like(e)]
    lookup_l1_gradients(e, r, np.ascontiguousarray(b[::-1]), np.ascontiguousarray(g[::-1]), *reversed_grads)
    assert not np.array_equal(reversed_grads[1], leaves[1].grad.numpy())


def model(**kwargs) -> TransE:
    from pykeen.datasets import Nations

    return TransE(triples_factory=Nations().training, embedding_dim=8, random_seed=0, **kwargs)


def a_batch(n: int = MIN_POSITIONS) -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    columns = [torch.randint(0, size, (n,), generator=generator) for size in (14, 55, 14)]
    return torch.stack(columns, dim=1)


def test_the_fused_pass_applies_to_plain_transe_on_one_thread(one_thread):
    scorer = model(scoring_fct_norm=1)
    assert fusable_tables(scorer, a_batch(), None) is not None
    patched = patched_score_hrt(type(scorer).score_hrt)
    scores = patched(scorer, a_batch())
    assert scores.shape == (MIN_POSITIONS, 1) and scores.grad_fn.next_functions[0][0].name() == "TransEL1LookupBackward"


@pytest.mark.parametrize(
    "case", ["l2", "power norm", "small batch", "mode", "two threads", "no grad", "regularizer", "frozen"]
)
def test_other_calls_go_to_pykeen(one_thread, case):
    kwargs = {"scoring_fct_norm": 2 if case == "l2" else 1, "power_norm": case == "power norm"}
    if case == "regularizer":
        kwargs["regularizer"] = "lp"
    scorer = model(**kwargs)
    batch = a_batch(MIN_POSITIONS - 1 if case == "small batch" else MIN_POSITIONS)
    if case == "frozen":
        scorer.entity_representations[0]._embeddings.weight.requires_grad_(False)
    if case == "two threads":
        torch.set_num_threads(2)
    with torch.set_grad_enabled(case != "no grad"):
        assert fusable_tables(scorer, batch, "training" if case == "mode" else None) is None
        expected = type(scorer).score_hrt(scorer, batch)
        assert torch.equal(patched_score_hrt(type(scorer).score_hrt)(scorer, batch), expected)


def test_a_pass_that_differs_is_not_used(one_thread, monkeypatch, caplog):
    scorer = model(scoring_fct_norm=1)

    def passes():
        patched = patched_score_hrt(type(scorer).score_hrt)(scorer, a_batch())
        return patched, type(scorer).score_hrt(scorer, a_batch())

    assert_a_differing_pass_is_not_used(
        monkeypatch, caplog, transe_lookup, "lookup_l1_scores", passes, "differs from PyKEEN's"
    )


def test_training_equals_pipeline_with_the_fused_pass_in_use(one_thread, monkeypatch):
    """TransE (L1, nssa, 32 negatives: 8,192 negative triples a batch) on one thread equals ``pipeline()``'s model:
    the entity table's four gradients a batch (the negatives' tails and heads, fused here, the positives' from
    PyKEEN's lookups) are added in PyKEEN's order."""
    monkeypatch.setattr(transe_lookup._first_use, "verdict", None)
    calls = count_calls(monkeypatch, transe_lookup, "lookup_l1_gradients")
    assert_trains_like_pipeline(TRANSE_L1_SPEC, seed=5)
    assert transe_lookup._first_use.verdict is True and calls[0] > 2
