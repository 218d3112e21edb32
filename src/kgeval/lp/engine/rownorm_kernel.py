"""Compiled kernel of :mod:`kgeval.lp.engine.rownorm`: 2-norms of complex rows with the bits of torch's CPU kernel.

Written by hand (compiled with numba) because no maintained library gives these bits fast. torch's CPU kernel for
``torch.linalg.vector_norm(z, dim=-1)`` on complex64 input takes per element ``|z|`` through ``std::abs`` (glibc's
``hypotf``: ``sqrt(re^2 + im^2)`` evaluated in double, rounded to float), squares that in float, adds it to a float
accumulator in order, and takes the square root of the sum. This loop makes the same IEEE operations in the same
order, one row at a time: the squares of the parts are exact in double, their sum and its square root are rounded
once in double and once to float, as ``hypotf``'s are; the square and the running sum are rounded to float at every
step. No ``fastmath``, so nothing is reordered or fused. :mod:`~kgeval.lp.engine.rownorm` checks the result against
torch's kernel at first use in a process and leaves non-finite rows to torch.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["NOT_FINITE", "ZERO", "complex_row_norms"]


#: :func:`complex_row_norms`' flags: some norm is infinite or NaN; some norm is zero
NOT_FINITE, ZERO = 1, 2


@numba.njit(nogil=True, cache=True, boundscheck=False)
def complex_row_norms(pairs: np.ndarray, out: np.ndarray) -> int:  # pragma: no cover - compiled
    """``out[i] = ||z_i||``: the 2-norm of each complex row ``z_i`` given as (real, imaginary) float32 pairs.

    :param pairs: shape: (n, d, 2) float32, C-contiguous: ``pairs[i, j] = (re, im)`` of the row's j-th element
    :param out: shape: (n,) float32, written
    :return: :data:`NOT_FINITE` if some norm is infinite or NaN, plus :data:`ZERO` if some norm is zero
    """
    flags = 0
    n, d = pairs.shape[0], pairs.shape[1]
    for i in range(n):
        total = np.float32(0.0)
        for j in range(d):
            re = np.float64(pairs[i, j, 0])
            im = np.float64(pairs[i, j, 1])
            magnitude = np.float32(np.sqrt(re * re + im * im))  # hypotf: exact squares, sum and root in double
            total = np.float32(total + np.float32(magnitude * magnitude))
        norm = np.float32(np.sqrt(total))
        out[i] = norm
        if not np.isfinite(norm):
            flags |= NOT_FINITE
        elif norm == 0:
            flags |= ZERO
    return flags


def _load() -> None:
    """Compile (or load from numba's cache) the kernel now, not inside a training step."""
    complex_row_norms(np.zeros((1, 1, 2), np.float32), np.empty(1, np.float32))


_load()
