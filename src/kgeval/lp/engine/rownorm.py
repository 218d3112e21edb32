"""Row-wise 2-norms for PyKEEN's training step, several times faster than torch's kernels and with torch's bits.

Two costs of the 2-norm dominate the complex models' training step on FB15k-237 batches (131,072 rows), found with
torch's profiler on one thread:

* **torch's CPU kernel for complex input is a scalar loop**: per element ``|z|`` through ``std::abs`` (glibc's
  ``hypotf``, which rounds ``sqrt(re^2 + im^2)`` evaluated in double to float), that value squared in float and added to
  a float accumulator in order, and the square root of the sum. It dominates a RotatE step (the interaction is
  ``-||h * r - t||``) and a ComplEx step (its L2 regularizer). :func:`row_norm` does the same IEEE operations in the
  same order in a compiled loop (:mod:`~kgeval.lp.engine.rownorm_kernel`), rows split over threads (timed against
  torch's kernel: ``benchmarks/results/row_norms.tsv``). Every step is an exactly rounded IEEE operation, so the result
  has the same bits. Because that rests on how torch's kernel is compiled on this machine (it would differ if the
  compiler fused the multiply and add), the first use in a process checks the emulation against torch's kernel on a
  calibration sample and on that call's own rows, and uses torch's kernel from then on if any bit differs; rows whose
  norm is not finite are always recomputed by torch.
* **a regularizer's rows repeat**: PyKEEN regularizes the embeddings looked up for a batch, 131,072 rows drawn from
  14,541 entities or 237 relations. :func:`unique_row_norm` computes the norm, and its gradient, once per distinct
  row and copies the results to the repeated rows.

Backward passes use torch's own formula for the gradient of the 2-norm (``grad * (z / norm)``, zero where the norm
is zero, as ``norm_backward`` in ``torch/csrc/autograd/FunctionsManual.cpp``), with the same operations on equal
rows, so the gradients have torch's bits too (``tests/lp/engine/test_rownorm.py`` compares them; the training tests
compare whole trained models with ``pipeline()``).

Written by hand because no maintained library computes these norms faster with torch's bits.
"""

from __future__ import annotations

import functools
import logging
import operator
from collections.abc import Callable

import numpy as np
import torch

from kgeval.runtime.first_use import FirstUseCheck
from kgeval.runtime.workers import run_all, worker_pool

__all__ = ["row_norm", "unique_row_norm"]

logger = logging.getLogger(__name__)

#: elements (rows x d) below which torch's own kernel is used: there the autograd function's fixed cost in Python
#: is more than the compiled loop saves (forward and backward timed against torch's on one core:
#: ``benchmarks/results/row_norms.tsv``)
MIN_ELEMENTS = 2**11

#: elements below which :func:`unique_row_norm` does not look for the distinct rows: finding them (a sort and a
#: scatter) costs more than the norms of the repeated rows it saves
UNIQUE_MIN_ELEMENTS = 2**16

#: rows per task when a large tensor's rows are split over threads
_CHUNK_ROWS = 2048

#: whether the emulation reproduces torch's kernel on this machine, decided on first use
_emulation = FirstUseCheck(logger, "the complex-norm emulation differs from torch's kernel here; using torch's kernel")


def _over_chunks(n: int, work: Callable[[int, int], int]) -> list[int]:
    """``work(start, stop)`` over rows ``0..n`` in chunks of :data:`_CHUNK_ROWS`: on torch's threads when there are
    several chunks (the loop releases the GIL), in the calling thread when there is one (every training batch: there
    a pool's context and ``run_all`` would add a fixed cost to a small batch's norms)."""
    if n <= _CHUNK_ROWS:
        return [work(0, n)]
    starts = range(0, n, _CHUNK_ROWS)
    with worker_pool(min(torch.get_num_threads(), len(starts)), "kgeval-rownorm") as pool:
        return run_all(pool, lambda start: work(start, min(start + _CHUNK_ROWS, n)), starts)


def _emulate(z: torch.Tensor) -> tuple[torch.Tensor, bool, bool]:
    """The emulated norms of a contiguous complex64 CPU tensor's rows, shape ``z.shape[:-1]``, whether they are all
    finite and whether one is zero: the compiled loop of :mod:`~kgeval.lp.engine.rownorm_kernel`."""
    from kgeval.lp.engine import rownorm_kernel as kernel  # numba loads on the first emulated norm only

    d = z.shape[-1]
    pairs = torch.view_as_real(z).reshape(-1, d, 2).numpy()
    out = np.empty(pairs.shape[0], dtype=np.float32)

    def run(start: int, stop: int) -> int:
        return int(kernel.complex_row_norms(pairs[start:stop], out[start:stop]))

    flags = functools.reduce(operator.or_, _over_chunks(len(out), run), 0)
    norms = torch.from_numpy(out).reshape(z.shape[:-1])
    return norms, not flags & kernel.NOT_FINITE, bool(flags & kernel.ZERO)


def _calibration_sample(d: int) -> torch.Tensor:
    """Rows of widely different magnitudes (subnormal to 1e18), zeros and exact ties: where rounding differs."""
    generator = torch.Generator().manual_seed(0)
    values = torch.randn(256, d, 2, generator=generator)
    values *= torch.exp(torch.randn(256, 1, 1, generator=generator) * 8).clamp(1e-40, 1e18)
    values[0] = 0.0
    values[1] = 1.0
    values[2, :, 1] = 0.0
    return torch.view_as_complex(values.contiguous())


def _agrees(z: torch.Tensor, emulated: torch.Tensor) -> bool:
    """Whether the emulation equals torch's kernel on a calibration sample and on ``z`` itself."""
    sample = _calibration_sample(z.shape[-1])
    return torch.equal(_emulate(sample)[0], torch.linalg.vector_norm(sample, dim=-1)) and torch.equal(
        emulated, torch.linalg.vector_norm(z, dim=-1)
    )


def _norm_values(z: torch.Tensor) -> tuple[torch.Tensor, bool]:
    """``torch.linalg.vector_norm(z, dim=-1)`` without autograd (emulated for complex64 CPU tensors, else torch's),
    and whether a norm may be zero (``False`` only where the emulation saw none)."""
    z = z.detach()
    if _emulates(z) and _emulation.verdict is not False:
        emulated, finite, zeros = _emulate(z.contiguous())
        # inf or NaN inside: torch's own handling of those
        if finite and _emulation.passes(lambda: _agrees(z, emulated)):
            return emulated, zeros
    return torch.linalg.vector_norm(z, dim=-1), True


def _norm_gradient_factor(z: torch.Tensor, norm: torch.Tensor, zeros: bool = True) -> torch.Tensor:
    """``z / norm`` with zero where the norm is zero: the factor of ``norm_backward`` for p = 2 (``norm``: (..., 1)).

    :param zeros: whether a norm may be zero; without any, the mask would change nothing and is not applied
    """
    factor = z / norm
    return factor.masked_fill_(norm == 0, 0) if zeros else factor


def _emulates(z: torch.Tensor) -> bool:
    """Whether the norm of ``z``'s rows is emulated (complex64 on CPU, at least :data:`MIN_ELEMENTS`); else torch's.

    Rows of one element are left to torch, which takes their absolute value with its vectorized ``abs`` (not
    ``hypotf``: it differs in the last bit for about one value in 10^7).
    """
    return (
        z.dtype == torch.complex64
        and z.device.type == "cpu"
        and z.dim() >= 1
        and z.shape[-1] >= 2
        and z.numel() >= MIN_ELEMENTS
    )


class _RowNorm(torch.autograd.Function):
    """``torch.linalg.vector_norm(z, dim=-1)``: forward :func:`_norm_values`, backward torch's formula."""

    @staticmethod
    def forward(ctx, z: torch.Tensor) -> torch.Tensor:  # noqa: D102
        norm, ctx.zeros = _norm_values(z)
        ctx.save_for_backward(z, norm)
        return norm

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:  # noqa: D102
        z, norm = ctx.saved_tensors
        # norm_backward of FunctionsManual.cpp for p = 2, with grad and norm unsqueezed over the reduced dimension
        return grad.unsqueeze(-1) * _norm_gradient_factor(z, norm.unsqueeze(-1), ctx.zeros)


def row_norm(z: torch.Tensor) -> torch.Tensor:
    """``torch.linalg.vector_norm(z, dim=-1)`` with the same bits and gradients; faster for complex64 CPU tensors.

    :param z: shape: (..., d)
    :return: shape: (...), float32 for complex64 input
    """
    if not _emulates(z):
        return torch.linalg.vector_norm(z, dim=-1)
    return _RowNorm.apply(z)


def _take_rows(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``x[rows]`` for a (n, d) tensor, copying complex rows as float rows (torch's complex gather is slower)."""
    if x.is_complex():
        real = torch.view_as_real(x).reshape(x.shape[0], -1)
        return torch.view_as_complex(real.index_select(0, rows).reshape(len(rows), x.shape[1], 2))
    return x.index_select(0, rows)


class _UniqueRowNorm(torch.autograd.Function):
    """Norms of (n, d) rows of which only the rows ``first`` differ: ``x[i] == x[first[inverse[i]]]`` bit for bit."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, first: torch.Tensor, inverse: torch.Tensor) -> torch.Tensor:  # noqa: D102
        distinct = _take_rows(x.detach(), first)
        norm, ctx.zeros = _norm_values(distinct)
        ctx.save_for_backward(distinct, norm, first, inverse)
        return norm.index_select(0, inverse)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:  # noqa: D102
        distinct, norm, first, inverse = ctx.saved_tensors
        factor = _norm_gradient_factor(distinct, norm.unsqueeze(-1), ctx.zeros)
        if torch.equal(grad.view(torch.int32), grad[:1].expand_as(grad).view(torch.int32)):
            # one gradient value for every row (a mean's): the whole row gradients repeat, copy them
            return _take_rows(grad.index_select(0, first).unsqueeze(-1) * factor, inverse), None, None
        return grad.unsqueeze(-1) * _take_rows(factor, inverse), None, None


def unique_row_norm(x: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """``torch.linalg.vector_norm(x, dim=-1)`` with the same bits and gradients, computed once per distinct row.

    :param x: shape: (..., d); rows with equal keys must be equal bit for bit (e.g. embeddings looked up by index)
    :param keys: shape: x.shape[:-1], integer keys of the rows (the looked-up indices)
    :return: shape: x.shape[:-1]
    """
    if keys.shape != x.shape[:-1] or x.dim() < 2 or x.numel() < UNIQUE_MIN_ELEMENTS:
        return row_norm(x)
    flat = x.reshape(-1, x.shape[-1])
    unique, inverse = torch.unique(keys.reshape(-1), return_inverse=True)
    positions = torch.arange(len(inverse), device=inverse.device)
    first = torch.full((len(unique),), len(inverse), dtype=positions.dtype, device=inverse.device)
    first.scatter_reduce_(0, inverse, positions, reduce="amin")
    return _UniqueRowNorm.apply(flat, first, inverse).reshape(x.shape[:-1])
