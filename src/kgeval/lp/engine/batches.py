"""The ranking engine's batch loop: score rows batch by batch under a memory budget and reduce each batch at once.

:func:`reduce_batches` scores a batch of rows, slices its filters and hands it to the CPU block reduction
(:mod:`kgeval.lp.engine.cpu_blocks`) or the whole-batch torch reduction (:mod:`kgeval.lp.engine.device_batch`); the
caller (:func:`kgeval.lp.ranking.rank_batches`) turns each batch's counts into ranks. Only speed is decided here:
batch sizes, threads, memory reuse, and queueing the next batch while the workers still reduce this one.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from kgeval.config import MEMORY_BUDGET_MB
from kgeval.engine.memory import reuse_freed_memory
from kgeval.lp.engine.cpu_blocks import BatchCounts, BatchQueries, RowRanges, reduce_cpu
from kgeval.lp.engine.device_batch import DeviceCounts, DeviceQueries, fetch
from kgeval.lp.engine.products import RowBlocks, single_threaded
from kgeval.runtime.workers import worker_pool

__all__ = [
    "CPU_BATCH_BYTES",
    "ScoreFn",
    "ScoreRows",
    "SortedQueries",
    "checked_blocks",
    "batch_ranges",
    "checked_scores",
    "probe_device",
    "reduce_batches",
    "rows_per_batch",
]

#: a score function: (b,) long row positions -> (b, C) float scores of all C candidates of those rows
ScoreFn = Callable[[torch.Tensor], torch.Tensor]
#: bytes of scores per batch on CPU at most (the memory budget may lower it further)
CPU_BATCH_BYTES = 2**25
#: fused CPU batches queued on the workers beyond the one being stored (the next batches are prepared meanwhile).
#: More than one keeps the workers busy while the main thread prepares a batch (ComplEx's take it longest), with the
#: same ranks, scores and top-k lists (measured against one:
#: benchmarks/results/ranking_scaling_h200host_cpu16_threads.tsv)
LOOKAHEAD_BATCHES = 3


@dataclass(frozen=True)
class ScoreRows:
    """Where the score rows come from.

    :ivar score: ``score(rows)`` with ``rows`` a (b,) long tensor of row positions returns the (b, C) scores of all
        candidates of these rows (larger is better)
    :ivar num_candidates: C, the number of candidates per row
    :ivar prepare: optional, used on CPU instead of ``score``: ``prepare(rows)`` does a batch's per-row work and
        returns ``blocks`` with ``blocks(i, j) == score(rows)[i:j]``
        (:meth:`kgeval.lp.scorer_interface.Scorer.prepare`);
        each block of rows is then scored on the worker thread that reduces it, while its scores are in cache
    :ivar extra_bytes_per_row: memory the score function needs per row, counted against the budget
    """

    score: ScoreFn
    num_candidates: int
    prepare: Callable[[torch.Tensor], RowBlocks] | None = None
    extra_bytes_per_row: int = 0


@dataclass(frozen=True)
class SortedQueries:
    """Queries sorted by score row (stable: input order within a row).

    :ivar rows: shape: (n,) the score row of each query, ascending
    :ivar true: shape: (n,) the true candidate of each query
    :ivar true_excluded: shape: (n,) whether the true candidate is among its row's exclusions
    :ivar ptr: shape: (num_rows + 1,) each row's range of queries
    """

    rows: np.ndarray
    true: np.ndarray
    true_excluded: np.ndarray
    ptr: np.ndarray

    @property
    def num_rows(self) -> int:
        return len(self.ptr) - 1


#: ``store(counts, q_start, q_stop, row_start, row_stop, unexcluded_true)``: takes one batch's counts
Store = Callable[[BatchCounts, int, int, int, int, np.ndarray], None]


def rows_per_batch(
    num_candidates: int,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
    extra_bytes_per_row: int = 0,
    device: str | torch.device = "cpu",
    fused: bool = False,
) -> int:
    """How many score rows one batch holds.

    Each row holds its float32 scores plus about as much again in temporaries (the comparison masks, the copy
    made for queries that share a row, top-k workspace), plus what the scorer needs per row. On CPU, batches are
    further capped at ``CPU_BATCH_BYTES`` of scores: blocks that stay in the last-level cache are as fast as larger
    ones. Fused batches (each block of rows scored where it is reduced, see :func:`reduce_batches`) never hold all
    their scores at once and are not capped: fewer batches mean fewer waits for the slowest worker.

    :param num_candidates: number of candidates per row
    :param memory_budget_mb: budget in MiB
    :param extra_bytes_per_row: the scorer's temporaries per row
    :param device: the device the scores live on
    :param fused: whether the batch is scored block by block on CPU
    :return: at least 1
    """
    if memory_budget_mb <= 0:
        raise ValueError(f"memory_budget_mb must be positive, got {memory_budget_mb}")
    columns = max(num_candidates, 1)
    bytes_per_row = 2 * 4 * columns + 2 * columns + int(extra_bytes_per_row)
    rows = max(1, int(memory_budget_mb * 2**20) // bytes_per_row)
    if torch.device(device).type == "cpu" and not fused:
        rows = min(rows, max(1, CPU_BATCH_BYTES // (4 * columns)))
    return rows


def probe_device(score_rows: ScoreFn, num_rows: int) -> torch.device:
    """The device a score function returns scores on (scores one row; CPU when there are no rows)."""
    if not num_rows:
        return torch.device("cpu")
    return score_rows(torch.zeros(1, dtype=torch.long)).device


def checked_scores(scores: torch.Tensor, b: int, C: int, target: torch.device | None) -> torch.Tensor:
    """A score function's output for ``b`` rows, moved to ``target``, checked for shape, as floats.

    Only the calls that change something are made: each torch call releases and takes back the GIL, which the
    engine's workers call this for every block.
    """
    if target is not None and scores.device != target:
        scores = scores.to(target)
    if scores.shape != (b, C):
        raise ValueError(f"score function returned shape {tuple(scores.shape)}, expected {(b, C)}")
    return scores if scores.is_floating_point() else scores.float()


def checked_blocks(source: torch.Tensor | RowBlocks, C: int) -> Callable[[int, int], np.ndarray]:
    """Rows ``a..z-1`` of a batch of scores as a writable C-contiguous numpy array, for
    :func:`kgeval.lp.engine.cpu_blocks.reduce_cpu`.

    :param source: the batch's (b, C) C-contiguous CPU scores (blocks are views into it), or a prepared batch's
        :data:`~kgeval.lp.engine.products.RowBlocks` (each block is scored when asked for, on the calling thread)
    """
    if isinstance(source, torch.Tensor):
        array = source.numpy()
        return lambda a, z: array[a:z]
    cpu = torch.device("cpu")

    def block(a: int, z: int) -> np.ndarray:
        scores = checked_scores(source(a, z), z - a, C, cpu)
        return (scores if scores.is_contiguous() else scores.contiguous()).numpy()

    return block


def reduces_in_blocks(device: torch.device) -> bool:
    """Whether scores on ``device`` are reduced block by block on CPU threads (else whole batches with torch)."""
    return device.type == "cpu"


def batch_ranges(exclusions, start: int, stop: int) -> RowRanges | None:
    """Rows ``start..stop-1`` of a :class:`~kgeval.lp.ranking.RowExclusions` (or ``None``) as
    :data:`~kgeval.lp.engine.cpu_blocks.RowRanges`: slices of its starts and lengths, its shared values."""
    if exclusions is None:
        return None
    return exclusions.starts[start:stop], exclusions.lengths[start:stop], exclusions.values


def _reduce_on_device(
    scores: torch.Tensor, on_device: DeviceQueries, row_start: int, row_stop: int, k: int, chunk: int
) -> DeviceCounts:
    """One batch's counts with torch where its scores are (a GPU); they stay there (:func:`device_batch.fetch`)."""
    with single_threaded(scores.device):
        return on_device.reduce(scores, row_start, row_stop, k, chunk)


def _store_ready(pending: deque, keep: int, store: Store) -> None:
    """Store the oldest queued batches (each once its blocks are reduced) until at most ``keep`` are left."""
    while len(pending) > keep:
        finish, *stored = pending.popleft()
        store(finish(), *stored)


def reduce_batches(
    source: ScoreRows,
    queries: SortedQueries,
    exclusions,
    topk_exclusions,
    k: int,
    store: Store,
    *,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
    device: str | torch.device | None = None,
) -> None:
    """Score and reduce every batch of rows, handing each batch's counts to ``store`` in batch order.

    On CPU the reduction runs block by block of rows on a pool of ``torch.get_num_threads()`` threads while every
    torch operation runs single-threaded (:func:`kgeval.lp.engine.products.single_threaded`) and the batches' memory is
    reused (:func:`kgeval.engine.memory.reuse_freed_memory`). With ``source.prepare``, each worker also scores its
    block right before reducing it, and the next batch is prepared and queued while the workers still reduce this
    one; with ``source.score`` alone, the whole batch is scored first, its matrix product on all threads. When
    ``device`` is ``None``, the score function is called once on one row to learn its device.

    :param exclusions: a :class:`~kgeval.lp.ranking.RowExclusions` of the filtered candidates, or ``None``
    :param topk_exclusions: a :class:`~kgeval.lp.ranking.RowExclusions` removed from the top-k lists, or ``None``
    """
    C, num_rows = int(source.num_candidates), queries.num_rows
    target = torch.device(device) if device is not None else None
    reduce_device = target or probe_device(source.score, num_rows)
    on_cpu = reduces_in_blocks(reduce_device)
    # on CPU with a preparing function, each block of rows is scored on a worker right before it is reduced
    fused = on_cpu and source.prepare is not None
    batch_rows = rows_per_batch(C, memory_budget_mb, source.extra_bytes_per_row, device=reduce_device, fused=fused)
    threads = torch.get_num_threads() if on_cpu else 1
    # score batches are tens of MB: on CPU keep them in malloc's heap instead of faulting in fresh pages per batch
    keep_memory = reuse_freed_memory() if on_cpu else contextlib.nullcontext()
    # fused: every torch operation of the loop runs on one thread (the workers' products and top-k lists, the
    # per-batch preparation on this thread), so that the next batch can be prepared and queued while the workers
    # still reduce this one; the workers then never wait for this thread between batches
    loop_threads = single_threaded() if fused else contextlib.nullcontext()
    # batches queued on the workers but not yet stored: at most LOOKAHEAD_BATCHES more than the batch being stored
    pending: deque[tuple[Callable[[], BatchCounts], int, int, int, int, np.ndarray]] = deque()
    lookahead = LOOKAHEAD_BATCHES if fused else 0
    # on a device: the queries and filters copied there once, each batch's results kept there until the last
    on_device = None if on_cpu else DeviceQueries(queries, exclusions, topk_exclusions if k else None, reduce_device)
    device_results: list[tuple[DeviceCounts, int, int, int, int, np.ndarray]] = []

    # fused: the workers score blocks, each with torch on one thread (kgeval.runtime.workers.pin_torch_to_one_thread)
    pool_threads = worker_pool(threads, "kgeval-rank", one_torch_thread=fused)
    with torch.no_grad(), keep_memory, pool_threads as pool, loop_threads:
        for row_start in range(0, num_rows, batch_rows):
            row_stop = min(row_start + batch_rows, num_rows)
            b = row_stop - row_start
            q_start, q_stop = int(queries.ptr[row_start]), int(queries.ptr[row_stop])
            rows = torch.arange(row_start, row_stop, dtype=torch.long)
            if fused:
                block_scores = checked_blocks(source.prepare(rows), C)
            else:
                # the score function may use every thread (matrix products); the reduction below runs on the pool
                scores = checked_scores(source.score(rows), b, C, target)
            unexcluded_true = queries.true_excluded[q_start:q_stop] == 0
            if not on_cpu:
                counts = _reduce_on_device(scores, on_device, row_start, row_stop, k, batch_rows)
                device_results.append((counts, q_start, q_stop, row_start, row_stop, unexcluded_true))
                continue
            if not fused:
                block_scores = checked_blocks(scores.contiguous(), C)
            # filter: NaN compares false with everything, so filtered candidates drop out of every count. The filters
            # stay ranges into their shared values: the compiled kernel reads them row by row
            ex = batch_ranges(exclusions, row_start, row_stop)
            tk = batch_ranges(topk_exclusions, row_start, row_stop) if k else None
            with single_threaded():
                batch = BatchQueries(queries.rows[q_start:q_stop] - row_start, queries.true[q_start:q_stop])
                finish = reduce_cpu(block_scores, b, C, batch, ex, tk, k, pool)
                pending.append((finish, q_start, q_stop, row_start, row_stop, unexcluded_true))
                _store_ready(pending, lookahead, store)
        _store_ready(pending, 0, store)
        for counts, (_, *stored) in zip(fetch([r[0] for r in device_results]), device_results):
            store(counts, *stored)
