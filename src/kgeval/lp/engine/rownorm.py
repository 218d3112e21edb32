"""Row-wise 2-norms for PyKEEN's training step, several times faster than torch's kernels and with torch's bits.

Two costs of the 2-norm dominate the complex models' training step on FB15k-237 batches (131,072 rows), found with
torch's profiler on one thread:

* **torch's CPU kernel for complex input is a scalar loop**: per element ``|z|`` through ``std::abs`` (glibc's
  ``hypotf``, which rounds ``sqrt(re^2 + im^2)`` evaluated in double to float), that value squared in float and
  added to a float accumulator in order, and the square root of the sum. At about 4-10 ns per element it was 43% of
  a RotatE step (the interaction is ``-||h * r - t||``) and 54% of a ComplEx step (its L2 regularizer).
  :func:`row_norm` does the same IEEE operations in the same order, vectorized over rows with numpy: the rows are
  transposed so that each row's accumulation over its ``d`` elements becomes ``d`` vector additions, each rounded
  to float as torch's accumulator is. Every step is an exactly rounded IEEE operation, so the result has the same
  bits. Because that rests on how torch's kernel is compiled on this machine (it would differ if the compiler
  fused the multiply and add), the first use in a process checks the emulation against torch's kernel on a
  calibration sample and on that call's own rows, and uses torch's kernel from then on if any bit differs; rows
  whose norm is not finite are always recomputed by torch.
* **a regularizer's rows repeat**: PyKEEN regularizes the embeddings looked up for a batch, 131,072 rows drawn from
  14,541 entities or 237 relations. :func:`unique_row_norm` computes the norm, and its gradient, once per distinct
  row and copies the results to the repeated rows.

Backward passes use torch's own formula for the gradient of the 2-norm (``grad * (z / norm)``, zero where the norm
is zero, as ``norm_backward`` in ``torch/csrc/autograd/FunctionsManual.cpp``), with the same operations on equal
rows, so the gradients have torch's bits too (``tests/lp/test_rownorm.py`` compares them; the training tests
compare whole trained models with ``pipeline()``).

Written by hand because no maintained library computes these norms faster with torch's bits.
"""

from __future__ import annotations

import logging
import threading

import numpy as np
import torch

from kgeval.runtime.first_use import FirstUseCheck
from kgeval.runtime.workers import run_all, worker_pool

__all__ = ["emulation_status", "row_norm", "unique_row_norm"]

logger = logging.getLogger(__name__)

#: elements (rows x d) below which torch's own kernel is used: the fixed costs of the emulation (about 0.1 ms) and
#: of finding the distinct rows exceed what they save on small batches (Nations and Kinships at batch size 256)
MIN_ELEMENTS = 2**16

#: rows per chunk of the emulation: a chunk's float64 temporaries (about ``36 * d`` bytes per row) are reused
_CHUNK_ROWS = 2048

#: whether the emulation reproduces torch's kernel on this machine, decided on first use
_emulation = FirstUseCheck(logger, "the complex-norm emulation differs from torch's kernel here; using torch's kernel")


def emulation_status() -> bool | None:
    """Whether the emulation matched torch's kernel (``None``: not checked yet in this process)."""
    return _emulation.verdict


class _Workspace:
    """One thread's reusable buffers for chunks of up to ``rows`` rows of ``d`` complex elements."""

    def __init__(self, rows: int, d: int) -> None:
        self.rows, self.d = rows, d
        self.transposed = np.empty((d, rows), dtype=np.complex64)
        self.squares = np.empty((d, rows, 2), dtype=np.float64)
        self.magnitude = np.empty((d, rows), dtype=np.float64)
        self.square = np.empty((d, rows), dtype=np.float32)


_workspaces = threading.local()


def _workspace(rows: int, d: int) -> _Workspace:
    space = getattr(_workspaces, "space", None)
    if space is None or space.rows < rows or space.d != d:
        space = _workspaces.space = _Workspace(max(rows, _CHUNK_ROWS), d)
    return space


def _emulate_chunk(pairs: np.ndarray, out: np.ndarray) -> None:
    """Norms of ``n`` complex rows given as (n, d, 2) float32 (real, imaginary), written into ``out`` (n,) float32."""
    n, d, _ = pairs.shape
    space = _workspace(n, d)
    # (d, n) complex values: row j of the transposed array holds the j-th element of every row
    transposed = space.transposed[:, :n]
    np.copyto(transposed, pairs.view(np.complex64).reshape(n, d).T)
    parts = transposed.view(np.float32).reshape(d, n, 2)
    squares = space.squares[:, :n]
    np.multiply(parts, parts, out=squares, dtype=np.float64)  # exact: a float's square fits in a double
    magnitude = space.magnitude[:, :n]
    np.add(squares[..., 0], squares[..., 1], out=magnitude)
    np.sqrt(magnitude, out=magnitude)
    square = space.square[:, :n]
    np.copyto(square, magnitude, casting="same_kind")  # rounded to float: hypotf(re, im)
    np.multiply(square, square, out=square)
    # in order, rounded to float at every step, as torch's accumulator (an explicit loop: numpy's own reductions
    # may sum pairwise)
    out[:] = square[0]
    for j in range(1, d):
        np.add(out, square[j], out=out)
    np.sqrt(out, out=out)


def _emulate(z: torch.Tensor) -> torch.Tensor:
    """The emulated norms of a contiguous complex64 CPU tensor's rows, shape ``z.shape[:-1]``."""
    d = z.shape[-1]
    pairs = torch.view_as_real(z).reshape(-1, d, 2).numpy()
    n = pairs.shape[0]
    out = np.empty(n, dtype=np.float32)
    starts = range(0, n, _CHUNK_ROWS)

    def run(start: int) -> None:
        stop = min(start + _CHUNK_ROWS, n)
        _emulate_chunk(pairs[start:stop], out[start:stop])

    threads = torch.get_num_threads() if len(starts) > 1 else 1
    with worker_pool(threads, "kgeval-rownorm") as pool:  # numpy releases the GIL in its kernels
        run_all(pool, run, starts)
    return torch.from_numpy(out).reshape(z.shape[:-1])


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
    return torch.equal(_emulate(sample), torch.linalg.vector_norm(sample, dim=-1)) and torch.equal(
        emulated, torch.linalg.vector_norm(z, dim=-1)
    )


def _norm_values(z: torch.Tensor) -> torch.Tensor:
    """``torch.linalg.vector_norm(z, dim=-1)`` without autograd: emulated for complex64 CPU tensors, else torch's."""
    z = z.detach()
    if _emulates(z) and _emulation.verdict is not False:
        emulated = _emulate(z.contiguous())
        # inf or NaN inside: torch's own handling of those
        if _emulation.passes(lambda: _agrees(z, emulated)) and torch.isfinite(emulated).all():
            return emulated
    return torch.linalg.vector_norm(z, dim=-1)


def _norm_gradient_factor(z: torch.Tensor, norm: torch.Tensor) -> torch.Tensor:
    """``z / norm`` with zero where the norm is zero: the factor of ``norm_backward`` for p = 2 (``norm``: (..., 1))."""
    return (z / norm).masked_fill_(norm == 0, 0)


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
        norm = _norm_values(z)
        ctx.save_for_backward(z, norm)
        return norm

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:  # noqa: D102
        z, norm = ctx.saved_tensors
        # norm_backward of FunctionsManual.cpp for p = 2, with grad and norm unsqueezed over the reduced dimension
        return grad.unsqueeze(-1) * _norm_gradient_factor(z, norm.unsqueeze(-1))


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
        norm = _norm_values(distinct)
        ctx.save_for_backward(distinct, norm, first, inverse)
        return norm.index_select(0, inverse)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:  # noqa: D102
        distinct, norm, first, inverse = ctx.saved_tensors
        factor = _norm_gradient_factor(distinct, norm.unsqueeze(-1))
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
    if keys.shape != x.shape[:-1] or x.dim() < 2 or x.numel() < MIN_ELEMENTS:
        return row_norm(x)
    flat = x.reshape(-1, x.shape[-1])
    unique, inverse = torch.unique(keys.reshape(-1), return_inverse=True)
    positions = torch.arange(len(inverse), device=inverse.device)
    first = torch.full((len(unique),), len(inverse), dtype=positions.dtype, device=inverse.device)
    first.scatter_reduce_(0, inverse, positions, reduce="amin")
    return _UniqueRowNorm.apply(flat, first, inverse).reshape(x.shape[:-1])
