"""TransE's L1 interaction for PyKEEN's training step in one compiled pass each way, with torch's bits.

PyKEEN scores TransE with the L1 norm as ``-norm(0 + h + r + (-t), p=1)`` (``TransEInteraction.forward`` through
``negative_norm_of_sum``: Python's ``sum`` from 0, then ``Tensor.norm``): five tensor operations of the batch's size
forward and four backward (``-t``, three additions, the norm and its sign times the upstream gradient, the negation
back to ``t``), each one a pass over memory. With the real tier's batches on FB15k-237 (1,024 positives x 32
negatives, 100 dimensions, one thread) they are a large share of an epoch's CPU time (torch's profiler).

:class:`TransEL1` computes the same values in one pass forward and one backward (numba), with the same IEEE
operations in the same order: each element ``x = ((h + 0) + r) + (-t)``, its absolute values summed over the
dimensions in order from 0 in float32 (torch's norm reduces a row sequentially; checked), the score negated; backward,
``sign(x) * (-g)`` for ``h`` and ``r`` and its negation for ``t``, ``sign`` as torch's (``(0 < x) - (x < 0)``). No
``fastmath``, so the bits are torch's. Because that rests on how torch reduces a row on this machine, the first call
in a process compares scores and gradients with PyKEEN's own interaction on a sample and on that call's inputs, and
uses PyKEEN's from then on if a bit differs. Written by hand because no maintained library fuses these operations
with torch's bits.

:func:`patched_forward` replaces ``TransEInteraction.forward`` inside :func:`kgeval.lp.training.fast_training` for
float32 CPU inputs of one shape ``(n, d)`` with ``p = 1`` and no power norm (the shape of PyKEEN's sLCWA batches);
any other call goes to PyKEEN's forward.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numba
import numpy as np
import torch

from kgeval.runtime.first_use import FirstUseCheck, same_passes

__all__ = ["TransEL1", "l1_scores", "l1_gradients", "patched_forward"]

logger = logging.getLogger(__name__)

#: whether the fused pass gives PyKEEN's bits here, decided on first use
_first_use = FirstUseCheck(logger, "TransE L1: the fused pass differs from PyKEEN's interaction; using PyKEEN's")


@numba.njit(nogil=True, cache=True, boundscheck=False)
def l1_scores(h: np.ndarray, r: np.ndarray, t: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[i] = -sum_k |((h[i, k] + 0) + r[i, k]) + (-t[i, k])|``, summed over ``k`` in order in float32.

    :param h: shape: (n, d) float32, C-contiguous; ``r`` and ``t`` the same
    :param out: shape: (n,) float32, written
    """
    n, d = h.shape
    zero = np.float32(0.0)
    for i in range(n):
        total = zero
        for k in range(d):
            total += abs(((h[i, k] + zero) + r[i, k]) + (-t[i, k]))
        out[i] = -total


@numba.njit(nogil=True, cache=True, boundscheck=False)
def l1_gradients(
    h: np.ndarray, r: np.ndarray, t: np.ndarray, upstream: np.ndarray, grad_hr: np.ndarray, grad_t: np.ndarray
) -> None:  # pragma: no cover - compiled
    """``grad_hr[i, k] = sign(x) * (-upstream[i])`` and ``grad_t[i, k] = -grad_hr[i, k]`` with ``x`` as in
    :func:`l1_scores` and ``sign(x) = (0 < x) - (x < 0)``.

    :param upstream: shape: (n,) float32, the gradient of the scores
    :param grad_hr: shape: (n, d) float32, written (the gradient of ``h`` and of ``r``)
    :param grad_t: shape: (n, d) float32, written
    """
    n, d = h.shape
    zero, one = np.float32(0.0), np.float32(1.0)
    for i in range(n):
        back = -upstream[i]
        for k in range(d):
            x = ((h[i, k] + zero) + r[i, k]) + (-t[i, k])
            sign = (one if zero < x else zero) - (one if x < zero else zero)
            value = sign * back
            grad_hr[i, k] = value
            grad_t[i, k] = -value


def _arrays(*tensors: torch.Tensor) -> list[np.ndarray]:
    return [tensor.detach().contiguous().numpy() for tensor in tensors]


class TransEL1(torch.autograd.Function):
    """``-||h + r - t||_1`` of rows of equal shape (n, d), as PyKEEN computes it, in one pass each way."""

    @staticmethod
    def forward(ctx, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> torch.Tensor:  # noqa: D102
        ctx.save_for_backward(h, r, t)
        out = torch.empty(h.shape[0], dtype=torch.float32)
        l1_scores(*_arrays(h, r, t), out.numpy())
        return out

    @staticmethod
    def backward(ctx, upstream: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # noqa: D102
        h, r, t = ctx.saved_tensors
        grad_hr, grad_t = torch.empty_like(h), torch.empty_like(t)
        l1_gradients(*_arrays(h, r, t, upstream), grad_hr.numpy(), grad_t.numpy())
        return grad_hr, grad_hr, grad_t


def _agrees(original: Callable, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> bool:
    """Whether the fused pass gives PyKEEN's scores and gradients, bit for bit, on these rows."""
    return same_passes(original, TransEL1.apply, h, r, t)


def _agrees_on_first_use(original: Callable, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> bool:
    """The first use's comparison: the fused pass against PyKEEN's on a sample (values over 30 orders of magnitude,
    exact zeros) and on this call's rows."""
    generator = torch.Generator().manual_seed(0)
    sample = [torch.randn((257, h.shape[1]), generator=generator) * torch.logspace(-15, 15, h.shape[1])
              for _ in range(3)]
    sample[2][:8] = sample[0][:8] + sample[1][:8]  # rows whose elements are exactly zero
    with torch.enable_grad():
        return _agrees(original, *sample) and _agrees(original, h, r, t)


def patched_forward(original: Callable) -> Callable:
    """A replacement of ``TransEInteraction.forward`` (``original``): :class:`TransEL1` where it applies."""

    def forward(self, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        fused = (
            self.p == 1
            and not self.power_norm
            and h.dim() == 2
            and h.shape == r.shape == t.shape
            and all(x.device.type == "cpu" and x.dtype == torch.float32 for x in (h, r, t))
        )
        if fused and _first_use.passes(lambda: _agrees_on_first_use(lambda *x: original(self, *x), h, r, t)):
            return TransEL1.apply(h, r, t)
        return original(self, h, r, t)

    return forward


def _load() -> None:
    """Compile (or load from numba's cache) both passes now, once per process (the fork server preloads this module)."""
    one = np.zeros((1, 1), np.float32)
    l1_scores(one, one, one, np.zeros(1, np.float32))
    l1_gradients(one, one, one, np.zeros(1, np.float32), np.zeros((1, 1), np.float32), np.zeros((1, 1), np.float32))


_load()
