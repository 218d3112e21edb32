"""ComplEx's interaction for PyKEEN's training step in one compiled pass each way, with torch's bits.

PyKEEN scores ComplEx as ``Re(einsum("...d,...d,...d->...", h, r, conj(t)))`` (``ComplExInteraction.forward``). For
sLCWA batches, rows of one shape ``(n, d)``, torch's einsum multiplies ``h * r`` (a vectorized complex product),
materializes ``conj(t)`` and contracts with a batched product ``bmm`` of (n, 1, d) by (n, d, 1); the backward pass runs
two more ``bmm``, two conjugate copies and two complex products, through about twenty autograd nodes and views. On
Kinships batches (256 x 32) torch's small-``bmm`` kernel (a scalar loop over ``c10::complex``) and the copies make the
interaction a large share of a ComplEx training step (torch's profiler).

:class:`ComplExScores` computes the same values in one pass forward and one backward (numba), with the same IEEE
operations in the same order:

* forward, per row, ``acc = 0`` and for each ``k`` in order ``acc += Re((h_k * r_k) * conj(t_k))``, each complex
  product ``(a c - b d, a d + b c)`` with every product rounded (ATen's vectorized complex product and the ``bmm``
  kernel's ``c10::complex`` product form it so, without a fused multiply-add);
* backward, with ``G = (g, +0)`` the gradient of a score (the real part's): ``u = 0 + G * t`` (``bmm`` of ``G`` with
  ``conj(conj(t))``), ``v = 0 + conj(h * r) * G``, and the gradients ``u * conj(r)`` of ``h``, ``u * conj(h)`` of
  ``r`` and ``conj(v)`` of ``t``, as autograd's ``BmmBackward0``, ``MulBackward0`` and ``ConjBackward0`` form them.

No ``fastmath``, so nothing is reordered or fused. The products are ATen's vectorized ones only where a tensor's
elements fill whole vectors (its scalar remainder may be compiled with a fused multiply-add) and the contraction takes
the ``bmm`` kernel's small-matrix loop only below 400 elements, so :func:`patched_forward` takes this path only for
``n * d`` a multiple of 16 and run in one piece, and ``2 <= d < 400``. Because all this rests on how torch is built, the
first call in a process compares scores and gradients with PyKEEN's own interaction, bit for bit, on a sample and on
that call's inputs, and uses PyKEEN's from then on if a bit differs. Written by hand because no maintained library
fuses these operations with torch's bits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numba
import numpy as np
import torch

from kgeval.runtime.first_use import FirstUseCheck, same_passes

__all__ = ["ComplExScores", "complex_gradients", "complex_scores", "patched_forward"]

logger = logging.getLogger(__name__)

#: whether the fused pass gives PyKEEN's bits here, decided on first use
_first_use = FirstUseCheck(logger, "ComplEx: the fused pass differs from PyKEEN's interaction; using PyKEEN's")

#: elements of one vectorized loop step of ATen's complex products (2 vectors of 8 on AVX-512, 2 of 4 on AVX2)
_VECTOR_STEP = 16
#: elements below which ATen runs an elementwise product in one piece (``at::internal::GRAIN_SIZE``)
_GRAIN_SIZE = 32768
#: contraction sizes below which ATen's ``bmm`` takes its small-matrix loop
_SMALL_BMM = 400


@numba.njit(nogil=True, cache=True, boundscheck=False)
def complex_scores(h: np.ndarray, r: np.ndarray, t: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    """``out[i] = Re(sum_k (h[i, k] * r[i, k]) * conj(t[i, k]))``, summed over ``k`` in order from 0 in float32.

    :param h: shape: (n, d, 2) float32, C-contiguous (real, imaginary) pairs; ``r`` and ``t`` the same
    :param out: shape: (n,) float32, written
    """
    n, d = h.shape[0], h.shape[1]
    zero = np.float32(0.0)
    for i in range(n):
        total = zero
        for k in range(d):
            h_re, h_im, r_re, r_im = h[i, k, 0], h[i, k, 1], r[i, k, 0], r[i, k, 1]
            p_re = h_re * r_re - h_im * r_im
            p_im = h_re * r_im + h_im * r_re
            total = total + (p_re * t[i, k, 0] - p_im * -t[i, k, 1])
        out[i] = total


@numba.njit(nogil=True, cache=True, boundscheck=False)
def complex_gradients(  # pragma: no cover - compiled
    h: np.ndarray,
    r: np.ndarray,
    t: np.ndarray,
    upstream: np.ndarray,
    grad_h: np.ndarray,
    grad_r: np.ndarray,
    grad_t: np.ndarray,
) -> None:
    """The gradients of :func:`complex_scores` for the gradient ``upstream`` of the scores, as autograd forms them.

    :param upstream: shape: (n,) float32
    :param grad_h: shape: (n, d, 2) float32, written; ``grad_r`` and ``grad_t`` the same
    """
    n, d = h.shape[0], h.shape[1]
    zero = np.float32(0.0)
    for i in range(n):
        g = upstream[i]
        for k in range(d):
            h_re, h_im, r_re, r_im = h[i, k, 0], h[i, k, 1], r[i, k, 0], r[i, k, 1]
            t_re, t_im = t[i, k, 0], t[i, k, 1]
            # the gradient of h * r: 0 + (g, +0) * t
            u_re = zero + (g * t_re - zero * t_im)
            u_im = zero + (g * t_im + zero * t_re)
            # the gradient of conj(t): 0 + conj(h * r) * (g, +0); t's is its conjugate
            c_re = h_re * r_re - h_im * r_im
            c_im = -(h_re * r_im + h_im * r_re)
            grad_t[i, k, 0] = zero + (c_re * g - c_im * zero)
            grad_t[i, k, 1] = -(zero + (c_re * zero + c_im * g))
            # u * conj(r) and u * conj(h), as ATen's vectorized product: (a c - b d, a d - b (-c))
            grad_h[i, k, 0] = u_re * r_re - u_im * -r_im
            grad_h[i, k, 1] = u_re * -r_im - u_im * -r_re
            grad_r[i, k, 0] = u_re * h_re - u_im * -h_im
            grad_r[i, k, 1] = u_re * -h_im - u_im * -h_re


def _pairs(x: torch.Tensor) -> np.ndarray:
    """A complex64 CPU tensor of shape (n, d) as a (n, d, 2) float32 array (copied only if not contiguous)."""
    return torch.view_as_real(x.detach().resolve_conj().contiguous()).numpy()


class ComplExScores(torch.autograd.Function):
    """``Re(sum_d h * r * conj(t))`` of complex rows of equal shape (n, d), as PyKEEN computes it, one pass each way."""

    @staticmethod
    def forward(ctx, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> torch.Tensor:  # noqa: D102
        ctx.save_for_backward(h, r, t)
        out = torch.empty(h.shape[0], dtype=torch.float32)
        complex_scores(_pairs(h), _pairs(r), _pairs(t), out.numpy())
        return out

    @staticmethod
    def backward(ctx, upstream: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # noqa: D102
        h, r, t = ctx.saved_tensors
        grads = [torch.empty((*h.shape, 2), dtype=torch.float32) for _ in range(3)]
        complex_gradients(
            _pairs(h), _pairs(r), _pairs(t), upstream.contiguous().numpy(), *(grad.numpy() for grad in grads)
        )
        grad_h, grad_r, grad_t = (torch.view_as_complex(grad) for grad in grads)
        return grad_h, grad_r, grad_t


def _agrees(original: Callable, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> bool:
    """Whether the fused pass gives PyKEEN's scores and gradients, bit for bit, on these rows."""
    return same_passes(original, ComplExScores.apply, h, r, t)


def _agrees_on_first_use(original: Callable, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> bool:
    """The first use's comparison: the fused pass against PyKEEN's on a sample of the call's shape (parts over 30
    orders of magnitude, exact zeros, sums that cancel) and on this call's rows."""
    generator = torch.Generator().manual_seed(0)
    n, d = h.shape
    scale = torch.logspace(-15, 15, d).unsqueeze(-1)
    sample = [torch.view_as_complex(torch.randn((n, d, 2), generator=generator) * scale) for _ in range(3)]
    sample[0][: n // 4] = 0.0
    sample[2][n // 4 : n // 2] = sample[0][n // 4 : n // 2] * sample[1][n // 4 : n // 2]
    with torch.enable_grad():
        return _agrees(original, *sample) and _agrees(original, h, r, t)


def applies(h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> bool:
    """Whether :class:`ComplExScores` gives PyKEEN's bits for these inputs (the first use's check aside): complex64 CPU
    rows of one shape (n, d) whose elementwise products ATen vectorizes whole and runs in one piece, and
    ``2 <= d < 400`` (einsum treats a dimension of size 1 as a broadcast, not a contraction)."""
    if not (h.dim() == 2 and h.shape == r.shape == t.shape):
        return False
    if not all(x.device.type == "cpu" and x.dtype == torch.complex64 for x in (h, r, t)):
        return False
    elements = h.numel()
    one_piece = elements < _GRAIN_SIZE or torch.get_num_threads() == 1
    return elements > 0 and elements % _VECTOR_STEP == 0 and one_piece and 2 <= h.shape[1] < _SMALL_BMM


def patched_forward(original: Callable) -> Callable:
    """A replacement of ``ComplExInteraction.forward`` (``original``): :class:`ComplExScores` where it applies."""

    def forward(self, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        if applies(h, r, t) and _first_use.passes(lambda: _agrees_on_first_use(lambda *x: original(self, *x), h, r, t)):
            return ComplExScores.apply(h, r, t)
        return original(self, h, r, t)

    return forward


def _load() -> None:
    """Compile (or load from numba's cache) both passes now, once per process (the fork server preloads this module)."""
    one = np.zeros((1, 1, 2), np.float32)
    complex_scores(one, one, one, np.zeros(1, np.float32))
    complex_gradients(one, one, one, np.zeros(1, np.float32), one.copy(), one.copy(), one.copy())


_load()
