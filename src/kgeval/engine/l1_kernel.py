"""Compiled kernel of :mod:`kgeval.engine.l1`: L1 distance matrices summed in ``torch.cdist``'s order.

Written by hand (compiled with numba) because no maintained library gives these bits fast: ``torch.cdist(p=1)`` on the
CPU sums ``|q_k - c_k|`` over ``k = 0, 1, ...`` for one pair at a time in a scalar float32 loop (ATen's
``Distance.cpp``, ``run_parallel_cdist``); SciPy's and scikit-learn's ``cityblock`` sum in float64. Here the same
float32 sums run in the same order for each pair, but many pairs side by side: the candidates are stored transposed,
``(d, c)``, so the loop over candidates vectorizes, and four query rows share each load of a candidate slice. No
``fastmath``: every pair's sum keeps its order, so each distance has torch's bits (``tests/engine/test_l1.py``).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["CANDIDATE_TILE", "l1_rows"]

#: candidates per tile: the four rows' running sums (4 x 1,024 float32) stay in the L1 cache while the tile's
#: transposed candidates (d x 1,024) stream from L2; tiles of 128 to 2,048 candidates time alike
CANDIDATE_TILE = 1024


@numba.njit(nogil=True, cache=True, boundscheck=False)
def l1_rows(queries: np.ndarray, candidates_t: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[i, j] = sum_k |queries[i, k] - candidates_t[k, j]|``, summed over ``k`` in increasing order.

    :param queries: shape: (b, d) float32, C-contiguous
    :param candidates_t: shape: (d, c) float32, C-contiguous (the candidates transposed)
    :param out: shape: (b, c) float32, written
    """
    b, d = queries.shape
    c = candidates_t.shape[1]
    for j0 in range(0, c, CANDIDATE_TILE):
        j1 = min(c, j0 + CANDIDATE_TILE)
        width = j1 - j0
        i = 0
        while i + 4 <= b:  # four rows per pass over the tile
            s0, s1, s2, s3 = out[i, j0:j1], out[i + 1, j0:j1], out[i + 2, j0:j1], out[i + 3, j0:j1]
            s0[:] = 0.0
            s1[:] = 0.0
            s2[:] = 0.0
            s3[:] = 0.0
            for k in range(d):
                column = candidates_t[k, j0:j1]
                q0, q1, q2, q3 = queries[i, k], queries[i + 1, k], queries[i + 2, k], queries[i + 3, k]
                for j in range(width):
                    value = column[j]
                    s0[j] += abs(q0 - value)
                    s1[j] += abs(q1 - value)
                    s2[j] += abs(q2 - value)
                    s3[j] += abs(q3 - value)
            i += 4
        while i < b:  # the last rows one by one
            s0 = out[i, j0:j1]
            s0[:] = 0.0
            for k in range(d):
                column = candidates_t[k, j0:j1]
                q0 = queries[i, k]
                for j in range(width):
                    s0[j] += abs(q0 - column[j])
            i += 1


def _load() -> None:
    """Compile (or load from numba's cache) the kernel now, not on a worker's first block."""
    l1_rows(np.zeros((1, 1), np.float32), np.zeros((1, 1), np.float32), np.empty((1, 1), np.float32))


_load()
