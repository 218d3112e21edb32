"""Gradients of embedding lookups: torch's bits from the compiled loop, torch's kernel where it is not used."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import kgeval.lp.engine.training.embedding_gradients_kernel as gradients
from kgeval.lp.engine.training.embedding_gradients_kernel import MIN_POSITIONS, embedding_gradient, lookup, patched_embedding


def torch_gradient(grad, indices, num_embeddings):
    return torch.ops.aten.embedding_dense_backward(grad, indices, num_embeddings, -1, False)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.view(torch.int32), b.view(torch.int32))


def inputs(positions: int, num_embeddings: int, dims: int, seed: int, index_shape=None):
    generator = torch.Generator().manual_seed(seed)
    shape = index_shape or (positions,)
    indices = torch.randint(num_embeddings, shape, generator=generator)
    # magnitudes over 40 orders, so that the order of the additions shows in the bits
    grad = torch.randn((*shape, dims), generator=generator) * torch.logspace(-20, 20, dims)
    return grad, indices


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    ("positions", "num_embeddings", "dims"), [(MIN_POSITIONS, 7, 3), (10000, 237, 100), (33000, 14505, 33)]
)
def test_same_bits_as_torch(positions, num_embeddings, dims, threads):
    grad, indices = inputs(positions, num_embeddings, dims, seed=positions + dims)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        got = embedding_gradient(grad, indices, num_embeddings)
    finally:
        torch.set_num_threads(before)
    assert same_bits(got, torch_gradient(grad, indices, num_embeddings))


def test_batched_indices_and_non_contiguous_gradients():
    grad, indices = inputs(0, 50, 16, seed=1, index_shape=(128, 33))
    strided = grad.transpose(0, 1).contiguous().transpose(0, 1)  # same values, other strides
    assert not strided.is_contiguous()
    assert same_bits(embedding_gradient(strided, indices, 50), torch_gradient(grad, indices, 50))


def test_the_order_of_the_additions_shows_in_the_bits():
    """The bit tests above can fail: the same rows added in reverse order differ from torch's somewhere."""
    grad, indices = inputs(5000, 20, 8, seed=2)
    reverse = torch.zeros((20, 8))
    for i in reversed(range(len(indices))):
        reverse[indices[i]] += grad[i]
    assert not torch.equal(reverse, torch_gradient(grad, indices, 20))


def test_lookup_equals_f_embedding_forward_and_backward():
    generator = torch.Generator().manual_seed(3)
    weight = torch.randn((300, 24), generator=generator)
    indices = torch.randint(300, (256, 33), generator=generator)  # 8,448 positions: the compiled loop
    upstream = torch.randn((256, 33, 24), generator=generator)
    ours, theirs = weight.clone().requires_grad_(), weight.clone().requires_grad_()
    out_ours, out_theirs = lookup(indices, ours), F.embedding(indices, theirs)
    assert torch.equal(out_ours, out_theirs)
    (out_ours * upstream).sum().backward()
    (out_theirs * upstream).sum().backward()
    assert same_bits(ours.grad, theirs.grad)


def test_small_lookups_and_other_dtypes_use_torch(monkeypatch):
    calls = []
    monkeypatch.setattr(gradients, "_compiled_gradient", lambda *args: calls.append(args))
    grad, indices = inputs(MIN_POSITIONS - 1, 10, 4, seed=4)
    assert same_bits(embedding_gradient(grad, indices, 10), torch_gradient(grad, indices, 10))
    grad64, indices64 = inputs(MIN_POSITIONS, 10, 4, seed=5)
    grad64 = grad64.double()
    assert torch.equal(embedding_gradient(grad64, indices64, 10), torch_gradient(grad64, indices64, 10))
    assert calls == []


def test_a_loop_that_differs_is_not_used(monkeypatch, caplog):
    """The first-use check: a loop that adds each row twice is caught, and torch's kernel is used from then on."""

    def twice(grad, indices, out, start, stop):
        for i, k in enumerate(indices):
            if start <= k < stop:
                out[k] += 2 * grad[i]

    monkeypatch.setattr(gradients, "add_rows", twice)
    monkeypatch.setattr(gradients._first_use, "verdict", None)
    grad, indices = inputs(MIN_POSITIONS, 10, 4, seed=6)
    with caplog.at_level(logging.WARNING, logger="kgeval.lp.engine.training.embedding_gradients_kernel"):
        got = embedding_gradient(grad, indices, 10)
    assert same_bits(got, torch_gradient(grad, indices, 10))
    assert "differs from torch's kernel" in caplog.text
    assert gradients._first_use.verdict is False


def test_the_patch_leaves_other_lookups_to_the_original():
    """Padding index, max norm, sparse gradients, no gradient, fewer positions than MIN_POSITIONS: the original."""
    seen = []

    def original(*args):
        seen.append(args)
        return F.embedding(*args)

    embedding = patched_embedding(original)
    weight = torch.randn((10, 4)).requires_grad_()
    indices = torch.arange(MIN_POSITIONS).remainder(10).view(-1, 2)
    embedding(indices, weight, padding_idx=0)
    embedding(indices, weight, max_norm=1.0)
    embedding(indices, weight, sparse=True)
    embedding(indices, weight.detach())
    embedding(indices[:-1], weight)
    with torch.no_grad():
        embedding(indices, weight)
    assert len(seen) == 6
    out = embedding(indices, weight)
    assert len(seen) == 6 and out.grad_fn is not None and "Lookup" in type(out.grad_fn).__name__
    np.testing.assert_array_equal(out.detach().numpy(), weight.detach().numpy()[indices.numpy()])
