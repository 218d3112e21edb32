"""The CPU reduction of a batch of score rows, block by block of rows, each block while it is in cache.

A batch of score rows is larger than the last-level cache, so doing each step over the whole batch (as on the GPU,
:mod:`kgeval.lp.engine.device_batch`) would read it from memory once per step. Here each block of rows is small
enough to stay in cache while everything is done to it, on a pool of worker threads, with the counts and top-k lists
in compiled kernels (:mod:`kgeval.lp.engine.block_kernels`).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import torch

from kgeval.lp.engine.topk import topk
from kgeval.runtime.workers import submit_all

__all__ = ["CPU_BLOCK_BYTES", "BatchQueries", "block_bounds", "block_rows", "reduce_cpu"]

#: bytes of scores and mask per block of the CPU reduction (a block and its mask stay in the last-level cache). 8 MiB
#: (115 FB15k-237 rows): side by side with 4 MiB on a 2-core AMD EPYC host (32 MiB L3), the fused engine took 2.49 s
#: against 2.75 s (DistMult) and 3.63 s against 4.26 s (ComplEx), same ranks, scores and top-k lists: a block's
#: matrix product of more rows runs closer to the speed of a whole batch's. The compiled kernels write no mask, but
#: the rows per block are still counted at 5 bytes per candidate (:func:`block_rows`): the blocks, and so the
#: rounding of their products, stay those measured
CPU_BLOCK_BYTES = 2**23

#: a batch's (local row, candidate) pairs, rows ascending
Pairs = tuple[np.ndarray, np.ndarray]
#: greater, greater_equal, equal_before and the true score per query; top-k ids and scores per row (or ``None``)
BatchCounts = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]


def block_rows(num_candidates: int) -> int:
    """Score rows per block of the CPU reduction: ``CPU_BLOCK_BYTES`` at 5 bytes per candidate (float32 scores and the
    byte mask the reduction once wrote)."""
    return max(1, CPU_BLOCK_BYTES // (5 * max(num_candidates, 1)))


def block_bounds(num_rows: int, block: int) -> np.ndarray:
    """Row bounds of blocks of ``block`` rows; a last block shorter than half a block joins the one before.

    No block is then much smaller than the others: a matrix library may use another kernel for a product of very
    few rows (MKL does for 1-3), which need not round alike.
    """
    bounds = np.append(np.arange(0, num_rows, block), num_rows)
    if len(bounds) > 2 and num_rows - bounds[-2] < (block + 1) // 2:
        bounds = np.delete(bounds, -2)
    return bounds


@dataclass(frozen=True)
class BatchQueries:
    """The queries of one batch of score rows.

    :ivar rows: shape: (q,) row of each query within the batch, ascending
    :ivar true: shape: (q,) true candidate of each query
    """

    rows: np.ndarray
    true: np.ndarray


class _BlockReduction:
    """The per-query counts and per-row top-k lists of one batch, filled in block by block (any order, any thread)."""

    def __init__(
        self,
        block_scores: Callable[[int, int], np.ndarray],
        num_rows: int,
        C: int,
        queries: BatchQueries,
        exclusions: Pairs | None,
        topk_exclusions: Pairs | None,
        k: int,
    ) -> None:
        from kgeval.lp.engine import block_kernels  # numba and the compiled kernels load only where blocks are reduced

        self.kernels = block_kernels
        self.block_scores, self.C, self.queries, self.k = block_scores, C, queries, k
        self.exclusions, self.topk_exclusions = exclusions, topk_exclusions
        q = len(queries.rows)
        self.greater = np.empty(q, dtype=np.int64)
        self.greater_equal = np.empty(q, dtype=np.int64)
        self.equal_before = np.zeros(q, dtype=np.int64)
        self.t = np.empty(q, dtype=np.float32)
        self.topk_ids = np.empty((num_rows, k), dtype=np.int64) if k else None
        self.topk_scores = np.empty((num_rows, k), dtype=np.float32) if k else None
        self.block = block_rows(C)
        self.bounds = block_bounds(num_rows, self.block)
        self.query_ptr = np.searchsorted(queries.rows, self.bounds)
        self.ex_ptr = np.searchsorted(exclusions[0], self.bounds) if exclusions is not None else None
        self.tk_ptr = np.searchsorted(topk_exclusions[0], self.bounds) if topk_exclusions is not None else None

    def results(self) -> BatchCounts:
        return self.greater, self.greater_equal, self.equal_before, self.t, self.topk_ids, self.topk_scores

    def reduce_block(self, i: int) -> None:
        a, z = int(self.bounds[i]), int(self.bounds[i + 1])
        qa, qz = int(self.query_ptr[i]), int(self.query_ptr[i + 1])
        rows = self.block_scores(a, z)
        flat = rows.reshape(-1)
        local = self.queries.rows[qa:qz] - a
        true = self.queries.true[qa:qz]
        self.t[qa:qz] = rows[local, true]
        saved = ex_flat = None
        if self.exclusions is not None:
            ea, ez = int(self.ex_ptr[i]), int(self.ex_ptr[i + 1])
            ex_flat = (self.exclusions[0][ea:ez] - a) * self.C + self.exclusions[1][ea:ez]
            saved = flat[ex_flat] if self.k else None
            flat[ex_flat] = np.nan
        self.kernels.count_queries(
            rows, local, self.t[qa:qz], true, self.greater[qa:qz], self.greater_equal[qa:qz], self.equal_before[qa:qz]
        )
        if self.k:
            if self.exclusions is not None:
                flat[ex_flat] = saved
            if self.topk_exclusions is not None:
                ta, tz = int(self.tk_ptr[i]), int(self.tk_ptr[i + 1])
                flat[(self.topk_exclusions[0][ta:tz] - a) * self.C + self.topk_exclusions[1][ta:tz]] = -np.inf
            self._topk(rows, self.topk_ids[a:z], self.topk_scores[a:z])

    def _topk(self, rows: np.ndarray, ids: np.ndarray, values: np.ndarray) -> None:
        # the compiled kernel; rows holding a NaN (a diverged model) go to torch.topk, which ranks NaN first
        if self.k > self.C:
            ids[:], values[:] = topk(torch.from_numpy(rows), self.k)
            return
        nan_rows = np.flatnonzero(self.kernels.topk_rows(rows, self.k, ids, values))
        if len(nan_rows):
            ids[nan_rows], values[nan_rows] = topk(torch.from_numpy(rows[nan_rows]), self.k)


def reduce_cpu(
    block_scores: Callable[[int, int], np.ndarray],
    num_rows: int,
    C: int,
    queries: BatchQueries,
    exclusions: Pairs | None,
    topk_exclusions: Pairs | None,
    k: int,
    pool: ThreadPoolExecutor | None,
) -> Callable[[], BatchCounts]:
    """CPU version of :func:`kgeval.lp.engine.device_batch.reduce_torch`, block by block of rows on the worker pool.

    The blocks are queued on the pool and this returns at once; the returned function waits for them and returns
    the batch's results. Meanwhile the caller may queue the next batch: the workers go on with it without a pause.

    Each block of rows is small enough to stay in cache while everything is done to it: its scores are fetched
    (computed right there when the scorer prepared the batch, :meth:`kgeval.lp.scorer_interface.Scorer.prepare`), the true
    scores read, its filtered entries set to NaN, the counts and ties of every query of its rows taken in one compiled
    pass per query (:func:`~kgeval.lp.engine.device_batch.count_torch`'s definitions,
    :func:`~kgeval.lp.engine.block_kernels.count_queries`), then the filtered entries restored, the top-k exclusions
    set to ``-inf`` and the top k taken (:func:`~kgeval.lp.engine.block_kernels.topk_rows`). Scoring the block where
    it is reduced saves writing it to memory and reading it back. The blocks are modified in place.

    :param block_scores: ``block_scores(a, z)``: the (z - a, C) C-contiguous float32 scores of rows ``a..z-1``
    :param num_rows: rows in the batch
    :param C: candidates per row
    :param queries: the batch's queries, sorted by row
    :param exclusions: the batch's filtered (local row, candidate) pairs, rows ascending, or ``None``
    :param topk_exclusions: the batch's top-k exclusions in the same form, or ``None``
    :param k: length of the top-k lists (0: none)
    :param pool: worker threads (``None``: this thread, before returning)
    :return: a function returning greater, greater_equal and equal_before per query; the true score of each query
        (read before filtering); top-k ids and scores per row (``None`` if ``k == 0``)
    """
    reduction = _BlockReduction(block_scores, num_rows, C, queries, exclusions, topk_exclusions, k)
    wait = submit_all(pool, reduction.reduce_block, range(len(reduction.bounds) - 1))

    def finish() -> BatchCounts:
        wait()  # re-raises a block's error
        return reduction.results()

    return finish
