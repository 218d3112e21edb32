"""ComplEx's fused interaction: PyKEEN's scores and gradients bit for bit, PyKEEN's forward where it does not apply,
and a whole training run equal to ``pipeline()``'s with the fused pass in use."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from pykeen.nn.modules import ComplExInteraction

import kgeval.lp.engine.training.complex_interaction_kernel as complex_interaction
from kgeval.lp.engine.training.complex_interaction_kernel import ComplExScores, _agrees, _agrees_on_first_use, applies, patched_forward
from training_reference import assert_a_differing_pass_is_not_used, assert_trains_like_pipeline, count_calls


def rows(n: int, d: int, seed: int) -> list[torch.Tensor]:
    """Complex rows with parts over many magnitudes."""
    generator = torch.Generator().manual_seed(seed)
    return [
        torch.view_as_complex(torch.randn((n, d, 2), generator=generator) * torch.logspace(-6, 6, d).unsqueeze(-1))
        for _ in range(3)
    ]


def pykeen_complex():
    interaction = ComplExInteraction()
    return lambda *x: ComplExInteraction.forward(interaction, *x)


def _bits(x: torch.Tensor) -> np.ndarray:
    return torch.view_as_real(x.detach().resolve_conj()).contiguous().numpy().view(np.int32)


@pytest.mark.parametrize(("n", "d"), [(8, 2), (16, 3), (256, 32), (96, 32), (64, 200), (48, 399)])
def test_scores_and_gradients_have_pykeens_bits(n, d):
    h, r, t = rows(n, d, seed=n + d)
    assert applies(h, r, t)
    assert _agrees(pykeen_complex(), h, r, t)
    assert _agrees_on_first_use(pykeen_complex(), h, r, t)


def _reference(h: torch.Tensor, r: torch.Tensor, t: torch.Tensor, g: torch.Tensor) -> list[np.ndarray]:
    """The documented operations, one complex number at a time in numpy float32 scalars (no fused multiply-add):
    the score, then the gradients of h, r and t for the score gradient g."""

    def mul(a, b):  # (a c - b d, a d + b c), each product rounded
        return (a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0])

    def add(a, b):
        return (a[0] + b[0], a[1] + b[1])

    def conj(a):
        return (a[0], -a[1])

    hp, rp, tp = (torch.view_as_real(x).numpy() for x in (h, r, t))
    n, d = hp.shape[:2]
    zero = np.float32(0.0)
    scores = np.empty(n, np.float32)
    grads = [np.empty((n, d, 2), np.float32) for _ in range(3)]
    for i in range(n):
        total = (zero, zero)
        big_g = (np.float32(g[i]), zero)
        for k in range(d):
            hk, rk, tk = (tuple(x[i, k]) for x in (hp, rp, tp))
            total = add(total, mul(mul(hk, rk), conj(tk)))
            u = add((zero, zero), mul(big_g, tk))
            v = add((zero, zero), mul(conj(mul(hk, rk)), big_g))
            grads[0][i, k], grads[1][i, k], grads[2][i, k] = mul(u, conj(rk)), mul(u, conj(hk)), conj(v)
        scores[i] = total[0]
    return [scores.view(np.int32), *(grad.view(np.int32) for grad in grads)]


def test_the_documented_operations_are_the_kernels_and_pykeens():
    """An element-by-element reference of the module's formulas equals the compiled pass and PyKEEN's, bit for bit."""
    h, r, t = rows(16, 5, seed=7)
    h[0] = 0.0
    g = torch.linspace(-2.0, 3.0, 16)
    expected = _reference(h, r, t, g)
    for forward in (ComplExScores.apply, pykeen_complex()):
        leaves = [x.clone().requires_grad_() for x in (h, r, t)]
        scores = forward(*leaves)
        scores.backward(g)
        got = [scores.detach().numpy().view(np.int32), *(_bits(leaf.grad) for leaf in leaves)]
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b)


def test_a_fused_multiply_add_shows_in_the_bits():
    """The bit test can fail: the scores with each product's real part formed by a fused multiply-add (exact
    products, one rounding) differ from PyKEEN's somewhere."""
    h, r, t = rows(256, 32, seed=1)
    hp, rp, tp = (torch.view_as_real(x).numpy().astype(np.float64) for x in (h, r, t))
    p_re = (hp[..., 0] * rp[..., 0] - hp[..., 1] * rp[..., 1]).astype(np.float32).astype(np.float64)
    p_im = (hp[..., 0] * rp[..., 1] + hp[..., 1] * rp[..., 0]).astype(np.float32).astype(np.float64)
    fused = np.zeros(256, np.float32)
    for k in range(32):
        fused = fused + (p_re[:, k] * tp[:, k, 0] + p_im[:, k] * tp[:, k, 1]).astype(np.float32)
    assert not np.array_equal(fused.view(np.int32), pykeen_complex()(h, r, t).numpy().view(np.int32))


def test_other_calls_go_to_pykeen(monkeypatch):
    calls = []
    monkeypatch.setattr(complex_interaction, "complex_scores", lambda *args: calls.append(args))
    h, r, t = rows(16, 4, seed=2)
    interaction = ComplExInteraction()
    for inputs in (
        (h.unsqueeze(1), r.unsqueeze(1), t.unsqueeze(0)),  # broadcast shapes (scoring all tails)
        rows(16, 1, seed=3),  # one dimension: einsum broadcasts it
        rows(5, 3, seed=4),  # 15 elements: not whole vectors
        [x.to(torch.complex128) for x in (h, r, t)],
    ):
        assert not applies(*inputs)
        forward = patched_forward(ComplExInteraction.forward)
        assert torch.equal(forward(interaction, *inputs), ComplExInteraction.forward(interaction, *inputs))
    assert calls == []


def test_large_products_in_pieces_go_to_pykeen(monkeypatch):
    """Products of 32,768 or more elements run in pieces on several threads, whose edges torch computes in scalar code
    (possibly with a fused multiply-add): PyKEEN's path there, the fused one on one thread."""
    h, r, t = rows(2048, 16, seed=5)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    assert not applies(h, r, t)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    assert applies(h, r, t)


def test_a_pass_that_differs_is_not_used(monkeypatch, caplog):
    interaction = ComplExInteraction()
    h, r, t = rows(16, 4, seed=6)

    def passes():
        patched = patched_forward(ComplExInteraction.forward)(interaction, h, r, t)
        return patched, ComplExInteraction.forward(interaction, h, r, t)

    assert_a_differing_pass_is_not_used(
        monkeypatch, caplog, complex_interaction, "complex_scores", passes, "differs from PyKEEN's interaction"
    )


def test_training_equals_pipeline_with_the_fused_pass_in_use(monkeypatch):
    """ComplEx (Kinships' shape: 32 complex dimensions, batches of 256) trained in ``fast_training`` equals
    ``pipeline()``'s model bit for bit, and the fused pass ran both ways."""
    scores = count_calls(monkeypatch, complex_interaction, "complex_scores")
    gradients = count_calls(monkeypatch, complex_interaction, "complex_gradients")
    spec = {
        "model": "ComplEx",
        "model_kwargs": {"embedding_dim": 32},
        "loss": "softplus",
        "optimizer_kwargs": {"lr": 0.01},
        "training_kwargs": {"num_epochs": 2, "batch_size": 256},
    }
    assert_trains_like_pipeline(spec, seed=5)
    assert scores[0] > 0 and gradients[0] > 0
