"""The gradient of an embedding lookup for PyKEEN's training step, with torch's bits, faster on the CPU.

Every training batch looks up rows of the entity and relation embeddings several times (PyKEEN scores the positive and
the negative triples in separate calls: six lookups per sLCWA batch), and each lookup's backward pass builds a dense
``(num_embeddings, d)`` gradient: ``aten::embedding_dense_backward`` starts from zeros and, for each looked-up position
``i`` in order, adds the incoming gradient row ``i`` to row ``indices[i]``. On the CPU it does each row's addition
through a TensorIterator of its own (ATen's ``Embedding.cpp``), a dispatch per row: with TransE on FB15k-237 (batches of
1,024 positives x 32 negatives, 100 dimensions, one thread) that backward is a large share of an epoch's CPU time
(torch's profiler).

:func:`embedding_gradient` makes the same additions in the same order (each row of the result is summed over its
positions in increasing ``i``, from zeros) in one compiled loop (numba), so the gradient has the same bits; with more
than one thread, each thread takes a range of rows and walks every position, as torch's kernel does. Written by hand
because no maintained library gives these bits faster. The first call in a process checks the loop against torch's
kernel on a sample and on that call's own gradient, and uses torch's kernel from then on if a bit differs.

:func:`lookup` is ``torch.nn.functional.embedding`` for a float32 CPU weight that needs its gradient, whose backward
pass is :func:`embedding_gradient`; :func:`kgeval.lp.training.fast_training` puts it in place of
``F.embedding`` for the duration of a training run (the training tests compare the trained models with
``pipeline()``'s, bit for bit).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numba
import numpy as np
import torch

from kgeval.runtime.first_use import FirstUseCheck
from kgeval.runtime.workers import run_all, worker_pool

__all__ = ["add_rows", "embedding_gradient", "lookup", "patched_embedding"]

logger = logging.getLogger(__name__)

#: looked-up positions below which the lookup and its gradient are left to torch: the custom autograd function
#: has a fixed cost per call in Python, more than the compiled loop saves on Kinships' batches (256 x 8 negatives:
#: 2,048 positions; measured: ``benchmarks/results/train_epochs.tsv``), while FB15k-237's negatives (32,768) gain
MIN_POSITIONS = 8192

#: whether the compiled loop gives torch's bits here, decided on first use
_first_use = FirstUseCheck(logger, "embedding gradients: the compiled loop differs from torch's kernel; using torch's")


@numba.njit(nogil=True, cache=True, boundscheck=False)
def add_rows(grad: np.ndarray, indices: np.ndarray, out: np.ndarray, start: int, stop: int) -> None:  # pragma: no cover
    """``out[indices[i]] += grad[i]`` for ``i = 0, 1, ...`` in order, for the indices in ``[start, stop)`` only.

    :param grad: shape: (n, d) float32, C-contiguous
    :param indices: shape: (n,) int64
    :param out: shape: (num_embeddings, d) float32, C-contiguous, written in rows ``start..stop-1``
    """
    d = grad.shape[1]
    for i in range(indices.shape[0]):
        k = indices[i]
        if start <= k < stop:
            row = out[k]
            source = grad[i]
            for j in range(d):
                row[j] += source[j]


def _compiled_gradient(grad: torch.Tensor, indices: torch.Tensor, num_embeddings: int) -> torch.Tensor:
    """The dense gradient from the compiled loop, rows split over torch's thread count."""
    flat_grad = grad.contiguous().view(-1, grad.shape[-1]).numpy()
    flat_indices = indices.contiguous().view(-1).numpy()
    out = torch.zeros((num_embeddings, grad.shape[-1]), dtype=torch.float32)
    rows = out.numpy()
    threads = min(torch.get_num_threads(), max(1, num_embeddings // 1000))  # torch's grain: 1,000 rows
    step = -(-num_embeddings // threads)
    with worker_pool(threads, "kgeval-embedding-grad") as pool:
        run_all(pool, lambda start: add_rows(flat_grad, flat_indices, rows, start, start + step), range(0, num_embeddings, step))
    return out


def _torch_gradient(grad: torch.Tensor, indices: torch.Tensor, num_embeddings: int) -> torch.Tensor:
    """torch's own kernel (no padding index, no scaling by frequency)."""
    return torch.ops.aten.embedding_dense_backward(grad, indices, num_embeddings, -1, False)


def _agrees(grad: torch.Tensor, indices: torch.Tensor, num_embeddings: int) -> bool:
    """Whether the compiled loop gives torch's bits on these inputs."""
    ours = _compiled_gradient(grad, indices, num_embeddings)
    return torch.equal(ours.view(torch.int32), _torch_gradient(grad, indices, num_embeddings).view(torch.int32))


def _agrees_on_first_use(grad: torch.Tensor, indices: torch.Tensor, num_embeddings: int) -> bool:
    """The first use's comparison: the loop against torch's kernel on a sample with repeated rows and on this call's
    own gradient."""
    generator = torch.Generator().manual_seed(0)
    sample = torch.randn((4096, 33), generator=generator) * torch.logspace(-20, 20, 33)
    sample_indices = torch.randint(0, 50, (4096,), generator=generator)
    return _agrees(sample, sample_indices, 50) and _agrees(grad, indices, num_embeddings)


def embedding_gradient(grad: torch.Tensor, indices: torch.Tensor, num_embeddings: int) -> torch.Tensor:
    """``aten::embedding_dense_backward(grad, indices, num_embeddings, -1, False)``, the same bits.

    :param grad: shape: (*indices.shape, d), the gradient of the looked-up rows
    :param indices: the looked-up rows
    :param num_embeddings: rows of the embedding
    :returns: shape: (num_embeddings, d)
    """
    compiled = grad.device.type == "cpu" and grad.dtype == torch.float32 and indices.numel() >= MIN_POSITIONS
    if compiled and _first_use.passes(lambda: _agrees_on_first_use(grad, indices, num_embeddings)):
        return _compiled_gradient(grad, indices, num_embeddings)
    return _torch_gradient(grad, indices, num_embeddings)


class _Lookup(torch.autograd.Function):
    """``torch.embedding(weight, indices)`` whose backward pass is :func:`embedding_gradient`."""

    @staticmethod
    def forward(ctx, indices: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:  # noqa: D102
        ctx.save_for_backward(indices)
        ctx.num_embeddings = weight.shape[0]
        return torch.embedding(weight, indices, -1, False, False)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[None, torch.Tensor]:  # noqa: D102
        (indices,) = ctx.saved_tensors
        return None, embedding_gradient(grad, indices, ctx.num_embeddings)


def lookup(indices: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``torch.nn.functional.embedding(indices, weight)`` with the backward pass of :func:`embedding_gradient`."""
    return _Lookup.apply(indices, weight)


def patched_embedding(original: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """A replacement of ``torch.nn.functional.embedding`` (``original``): :func:`lookup` for a float32 CPU weight
    that needs its gradient and a plain lookup (no padding index, no max norm, no scaling, dense gradient) of at
    least :data:`MIN_POSITIONS` positions; the original call otherwise."""

    def embedding(
        input: torch.Tensor,
        weight: torch.Tensor,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> torch.Tensor:
        plain = padding_idx is None and max_norm is None and not scale_grad_by_freq and not sparse
        if (
            plain
            and input.numel() >= MIN_POSITIONS
            and weight.requires_grad
            and torch.is_grad_enabled()
            and weight.device.type == "cpu"
            and weight.dtype == torch.float32
            and weight.dim() == 2
            and not input.is_floating_point()
        ):
            return lookup(input, weight)
        return original(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)

    return embedding


def _load() -> None:
    """Compile (or load from numba's cache) the loop now, once per process (the fork server preloads this module)."""
    add_rows(np.zeros((1, 1), np.float32), np.zeros(1, np.int64), np.zeros((1, 1), np.float32), 0, 1)


_load()
