"""L1 distance matrices with the bits of ``torch.cdist(p=1)``, several times faster on the CPU.

``torch.cdist(p=1)`` computes each distance alone in a scalar loop. :class:`L1Candidates` keeps a fixed candidate matrix
transposed and computes the same float32 sums, in the same order, with the compiled kernel of
:mod:`kgeval.engine.l1_kernel` (numba, imported on the first CPU call), every distance bit-equal (timed against torch:
``benchmarks/results/l1_distances.tsv``). Anything else (a GPU tensor, float64, a tensor that needs gradients, batched
inputs) goes to ``torch.cdist`` itself, so a caller can use :func:`l1_cdist` wherever it would call
``torch.cdist(x1, x2, p=1)``.

Every call computes on the calling thread (the kernel releases the GIL): the ranking engine already spreads its
blocks over its worker threads. :func:`l1_cdist` splits a large matrix's rows over ``threads`` for callers outside
the engine.
"""

from __future__ import annotations

import numpy as np
import torch

from kgeval.runtime.workers import run_all, worker_pool

__all__ = ["L1Candidates", "l1_cdist"]

#: query rows per task when :func:`l1_cdist` splits over threads
ROWS_PER_TASK = 256


def _fast(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` takes the compiled path: a 2-D float32 CPU tensor outside autograd."""
    return (
        tensor.device.type == "cpu"
        and tensor.dtype == torch.float32
        and tensor.dim() == 2
        and not (tensor.requires_grad and torch.is_grad_enabled())
    )


class L1Candidates:
    """A fixed candidate matrix, shape (c, d), whose L1 distances to query rows are asked many times.

    :param candidates: shape: (c, d)
    """

    def __init__(self, candidates: torch.Tensor) -> None:
        self.candidates = candidates
        self._transposed: np.ndarray | None = None
        if _fast(candidates):
            self._transposed = np.ascontiguousarray(candidates.detach().numpy().T)

    def compiled(self, queries: torch.Tensor) -> bool:
        """Whether the distances to ``queries`` take the compiled path (else ``torch.cdist``); checks the widths."""
        if self._transposed is None or not _fast(queries):
            return False
        if queries.shape[1] != self._transposed.shape[0]:
            raise ValueError(f"queries have {queries.shape[1]} dimensions, the candidates {self._transposed.shape[0]}")
        return True

    def distances(self, queries: torch.Tensor) -> torch.Tensor:
        """``torch.cdist(queries, candidates, p=1)``: shape (b, c), the same bits, computed on this thread.

        :param queries: shape: (b, d)
        """
        if not self.compiled(queries):
            return torch.cdist(queries, self.candidates, p=1)
        out = torch.empty((queries.shape[0], self._transposed.shape[1]), dtype=torch.float32)
        self._into(queries, out)
        return out

    def _into(self, queries: torch.Tensor, out: torch.Tensor) -> None:
        """Write the distances of ``queries`` (b, d) into ``out`` (b, c), a C-contiguous float32 CPU tensor."""
        from kgeval.engine.l1_kernel import l1_rows  # numba loads on the first CPU call only

        l1_rows(np.ascontiguousarray(queries.detach().numpy()), self._transposed, out.numpy())


def l1_cdist(queries: torch.Tensor, candidates: torch.Tensor, threads: int = 1) -> torch.Tensor:
    """``torch.cdist(queries, candidates, p=1)`` with the same bits; a CPU float32 matrix is computed by the compiled
    kernel, its rows split over ``threads`` threads.

    :param queries: shape: (b, d)
    :param candidates: shape: (c, d)
    :param threads: threads for the compiled path (1: the calling thread only)
    """
    scorer = L1Candidates(candidates)
    if threads <= 1 or len(queries) <= ROWS_PER_TASK or not scorer.compiled(queries):
        return scorer.distances(queries)
    out = torch.empty((len(queries), len(candidates)), dtype=torch.float32)

    def fill(start: int) -> None:
        stop = min(start + ROWS_PER_TASK, len(queries))
        scorer._into(queries[start:stop], out[start:stop])

    with worker_pool(threads, "kgeval-l1") as pool:
        run_all(pool, fill, range(0, len(queries), ROWS_PER_TASK))
    return out
