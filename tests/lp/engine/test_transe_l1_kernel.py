"""TransE's fused L1 interaction: PyKEEN's scores and gradients bit for bit, PyKEEN's forward where it does not apply,
and a whole training run equal to ``pipeline()``'s with the fused pass and the compiled embedding gradients in use."""

from __future__ import annotations

import pytest
import torch
from pykeen.nn.modules import TransEInteraction

import kgeval.lp.engine.training.embedding_gradients_kernel as embedding_gradients
import kgeval.lp.engine.training.transe_l1_kernel as transe_l1
from kgeval.lp.engine.training.transe_l1_kernel import TransEL1, _agrees, patched_forward
from training_reference import (
    TRANSE_L1_SPEC,
    assert_a_differing_pass_is_not_used,
    assert_trains_like_pipeline,
    count_calls,
)


def rows(n: int, d: int, seed: int, scale: float = 10.0) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn((n, d), generator=generator) * scale for _ in range(3)]


def pykeen_l1():
    interaction = TransEInteraction(p=1)
    return lambda *x: TransEInteraction.forward(interaction, *x)


@pytest.mark.parametrize(("n", "d"), [(1, 1), (5, 3), (300, 7), (4096, 100), (64, 1000)])
def test_scores_and_gradients_have_pykeens_bits(n, d):
    assert _agrees(pykeen_l1(), *rows(n, d, seed=n + d))


def test_zeros_and_nan_follow_pykeen():
    h = torch.tensor([[0.0, -0.0, 1.0, float("nan"), 2.0]])
    r = torch.tensor([[0.0, 0.0, -1.0, 1.0, float("inf")]])
    t = torch.tensor([[0.0, -0.0, 0.0, 0.0, float("inf")]])
    assert _agrees(pykeen_l1(), h, r, t)


def test_the_order_of_the_sum_shows_in_the_bits():
    """The bit test can fail: the same absolute values summed in reverse order give other scores somewhere."""
    h, r, t = rows(500, 100, seed=1)
    reverse = -(h + r - t).abs().flip(1).cumsum(1)[:, -1]
    assert not torch.equal(TransEL1.apply(h, r, t), reverse)


def test_other_calls_go_to_pykeen(monkeypatch):
    calls = []
    monkeypatch.setattr(transe_l1, "l1_scores", lambda *args: calls.append(args))
    h, r, t = rows(4, 6, seed=2)
    for interaction, inputs in (
        (TransEInteraction(p=2), (h, r, t)),
        (TransEInteraction(p=1, power_norm=True), (h, r, t)),
        (TransEInteraction(p=1), (h.unsqueeze(1), r.unsqueeze(1), t.unsqueeze(0))),  # broadcast shapes
        (TransEInteraction(p=1), (h.double(), r.double(), t.double())),
    ):
        forward = patched_forward(TransEInteraction.forward)
        assert torch.equal(forward(interaction, *inputs), TransEInteraction.forward(interaction, *inputs))
    assert calls == []


def test_a_pass_that_differs_is_not_used(monkeypatch, caplog):
    interaction = TransEInteraction(p=1)
    h, r, t = rows(8, 5, seed=3)

    def passes():
        patched = patched_forward(TransEInteraction.forward)(interaction, h, r, t)
        return patched, TransEInteraction.forward(interaction, h, r, t)

    assert_a_differing_pass_is_not_used(
        monkeypatch, caplog, transe_l1, "l1_scores", passes, "differs from PyKEEN's interaction"
    )


def test_training_equals_pipeline_with_the_compiled_passes_in_use(monkeypatch):
    """TransE (L1, 32 negatives: 8,192 looked-up rows per lookup) trained in ``fast_training`` equals
    ``pipeline()``'s model, and both compiled passes ran."""
    scores = count_calls(monkeypatch, transe_l1, "l1_scores")
    gradients = count_calls(monkeypatch, embedding_gradients, "add_rows")
    assert_trains_like_pipeline(TRANSE_L1_SPEC, seed=5)
    assert scores[0] > 0 and gradients[0] > 0
