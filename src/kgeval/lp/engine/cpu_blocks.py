"""The CPU reduction of a batch of score rows, block by block of rows, each block while it is in cache.

A batch of score rows is larger than the last-level cache, so doing each step over the whole batch (as on the GPU,
:mod:`kgeval.lp.engine.device_batch`) would read it from memory once per step. Here each block of rows is small
enough to stay in cache while everything is done to it, on a pool of worker threads, in one call of a compiled kernel
(:mod:`kgeval.lp.engine.block_kernels`) that releases the GIL.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import torch

from kgeval.lp.engine.topk import topk
from kgeval.runtime.workers import submit_all

__all__ = ["CPU_BLOCK_BYTES", "BatchQueries", "RowRanges", "block_bounds", "block_rows", "reduce_cpu"]

#: bytes of scores and mask per block of the CPU reduction (a block and its mask stay in the last-level cache). 8 MiB
#: (115 FB15k-237 rows) rather than 4 MiB: a block's matrix product of more rows runs closer to the speed of a whole
#: batch's, with the same ranks, scores and top-k lists (measured: docs/performance.md). The compiled kernels write
#: no mask, but the rows per block are still counted at 5 bytes per candidate (:func:`block_rows`): the blocks, and
#: so the rounding of their products, stay those measured
CPU_BLOCK_BYTES = 2**23

#: a batch's candidates excluded per row, as :class:`kgeval.lp.ranking.RowExclusions` holds them: each row's start
#: and length (shape: (b,) each) of its range in the shared values (candidate IDs, unique within a row)
RowRanges = tuple[np.ndarray, np.ndarray, np.ndarray]
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


def _int64_ranges(ranges: RowRanges | None, num_rows: int) -> RowRanges:
    """``ranges`` as int64 arrays (no copy if they are), or ranges of no candidates for ``None``."""
    if ranges is None:
        nothing = np.zeros(num_rows, dtype=np.int64)
        return nothing, nothing, np.zeros(0, dtype=np.int64)
    starts, lengths, values = (np.ascontiguousarray(x, dtype=np.int64) for x in ranges)
    if len(starts) != num_rows or len(lengths) != num_rows:
        raise ValueError(f"exclusion ranges cover {len(starts)} and {len(lengths)} rows, expected {num_rows}")
    return starts, lengths, values


class _BlockReduction:
    """The per-query counts and per-row top-k lists of one batch, filled in block by block (any order, any thread)."""

    def __init__(
        self,
        block_scores: Callable[[int, int], np.ndarray],
        num_rows: int,
        C: int,
        queries: BatchQueries,
        exclusions: RowRanges | None,
        topk_exclusions: RowRanges | None,
        k: int,
    ) -> None:
        from kgeval.lp.engine import block_kernels  # numba and the compiled kernel load only where blocks are reduced

        self.kernels = block_kernels
        self.block_scores, self.k = block_scores, k
        self.query_rows = np.ascontiguousarray(queries.rows, dtype=np.int64)
        self.true = np.ascontiguousarray(queries.true, dtype=np.int64)
        self.exclusions = _int64_ranges(exclusions, num_rows)
        self.topk_exclusions = _int64_ranges(topk_exclusions if k else None, num_rows)
        q = len(self.query_rows)
        self.greater = np.empty(q, dtype=np.int64)
        self.greater_equal = np.empty(q, dtype=np.int64)
        self.equal_before = np.zeros(q, dtype=np.int64)
        self.t = np.empty(q, dtype=np.float32)
        self.topk_ids = np.empty((num_rows, k), dtype=np.int64)
        self.topk_scores = np.empty((num_rows, k), dtype=np.float32)
        self.block = block_rows(C)
        self.bounds = block_bounds(num_rows, self.block)
        self.query_ptr = np.searchsorted(self.query_rows, self.bounds)

    def results(self) -> BatchCounts:
        """The batch's counts, true scores and top-k lists (``None`` if ``k == 0``), once every block is reduced."""
        lists = (self.topk_ids, self.topk_scores) if self.k else (None, None)
        return self.greater, self.greater_equal, self.equal_before, self.t, *lists

    def reduce_block(self, i: int) -> None:
        """Score and reduce block ``i``: one call of the compiled kernel, then torch's top-k for the rows it flags."""
        a, z = int(self.bounds[i]), int(self.bounds[i + 1])
        qa, qz = int(self.query_ptr[i]), int(self.query_ptr[i + 1])
        rows = self.block_scores(a, z)
        (ex_starts, ex_lengths, ex_values), (tk_starts, tk_lengths, tk_values) = self.exclusions, self.topk_exclusions
        ids, values = self.topk_ids[a:z], self.topk_scores[a:z]
        flagged = self.kernels.reduce_rows(
            rows, a, (self.query_rows[qa:qz], self.true[qa:qz]),
            (ex_starts[a:z], ex_lengths[a:z], ex_values), (tk_starts[a:z], tk_lengths[a:z], tk_values), self.k,
            (self.t[qa:qz], self.greater[qa:qz], self.greater_equal[qa:qz], self.equal_before[qa:qz]), (ids, values),
        )  # fmt: skip
        if flagged.any():  # rows holding a NaN (a diverged model), or all where k > C (torch.topk then raises)
            nan_rows = np.flatnonzero(flagged)
            ids[nan_rows], values[nan_rows] = topk(torch.from_numpy(rows[nan_rows]), self.k)


def reduce_cpu(
    block_scores: Callable[[int, int], np.ndarray],
    num_rows: int,
    C: int,
    queries: BatchQueries,
    exclusions: RowRanges | None,
    topk_exclusions: RowRanges | None,
    k: int,
    pool: ThreadPoolExecutor | None,
) -> Callable[[], BatchCounts]:
    """CPU version of :func:`kgeval.lp.engine.device_batch.reduce_torch`, block by block of rows on the worker pool.

    The blocks are queued on the pool and this returns at once; the returned function waits for them and returns
    the batch's results. Meanwhile the caller may queue the next batch: the workers go on with it without a pause.

    Each block of rows is small enough to stay in cache while everything is done to it: its scores are fetched
    (computed right there when the scorer prepared the batch, :meth:`kgeval.lp.scorer_interface.Scorer.prepare`), then
    one call of :func:`~kgeval.lp.engine.block_kernels.reduce_rows` does the rest, row by row: the true scores, the
    filtered entries set to NaN, the counts and ties of every query of the row
    (:func:`~kgeval.lp.engine.device_batch.count_torch`'s definitions), the filtered entries restored, the top-k
    exclusions set to ``-inf`` and the top k taken. Rows holding a NaN get their top-k lists from
    :func:`kgeval.lp.engine.topk.topk`. Scoring the block where it is reduced saves writing it to memory and reading it
    back. The blocks are modified in place.

    :param block_scores: ``block_scores(a, z)``: the (z - a, C) C-contiguous float32 scores of rows ``a..z-1``
    :param num_rows: rows in the batch
    :param C: candidates per row
    :param queries: the batch's queries, sorted by row
    :param exclusions: the batch's filtered candidates per row (:data:`RowRanges`: starts and lengths of the batch's
        rows, the shared values), or ``None``
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
