"""The exact filtered ranking engine: every rank type, candidate counts, true scores and top-k in one pass.

Scores are produced batch by batch by a *score function* (a fast :mod:`kgeval.lp.scoring` scorer for link prediction,
a similarity function for entity alignment, ...) and reduced immediately, so memory stays within a budget and no
dense ``(queries x candidates)`` matrix of a whole split is ever held.

Conventions (docs/design.md), for a query with true candidate ``c`` and true score ``s_c``, over the candidates left
after filtering (the true candidate is never filtered):

* optimistic rank ``= 1 + #{j : s_j > s_c}``;
* pessimistic rank ``= #{j : s_j >= s_c}`` (the true candidate included);
* realistic rank ``= (optimistic + pessimistic) / 2``;
* non-deterministic rank = the position of ``c`` after ``torch.sort(scores, stable=True, descending=True)`` of the
  filtered scores in candidate-ID order. A stable descending sort puts every larger score first and keeps equal
  scores in ID order, so this position is ``1 + #{j : s_j > s_c} + #{j < c : s_j = s_c}``; the engine counts that
  instead of sorting (the tests check it against an actual sort);
* ``num_candidates`` = the true candidate plus every candidate not filtered.

Filtered entries are set to NaN before counting, as PyKEEN's evaluator does: NaN compares false with everything, so
filtered candidates drop out of every count. The true score is read from the same score row before filtering, so
it is consistent with the candidates' scores. (Difference from PyKEEN: a candidate whose *model* score is NaN or
infinite still counts in ``num_candidates`` here; PyKEEN counts only finite scores.)

Link prediction groups queries that share ``(anchor, relation)``: one score row serves all of them (each still gets
its own rank, since the other true answers of the group are known triples and thus filtered).
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import numpy as np
import torch

from kgeval.lp.filtering import CSRIndex, FilterIndex, Side, as_triples_array, expand_csr
from kgeval.runtime.memory import reuse_freed_memory
from kgeval.lp.engine.rowcount import MaskBuffer
from kgeval.lp.scoring import RowBlocks, Scorer, make_scorer, resolve_device, single_threaded
from kgeval.runtime.workers import submit_all, worker_pool

if TYPE_CHECKING:  # only a type hint here; PyKEEN's models cost ~3.5 s of CPU to import, which EA ranking never needs
    from pykeen.models import Model

__all__ = [
    "RankResult",
    "RowExclusions",
    "block_rows",
    "rank_batches",
    "rank_from_score_fn",
    "rank_lp",
    "rows_per_batch",
]

#: a score function: (b,) long row positions -> (b, C) float scores of all C candidates of those rows
ScoreFn = Callable[[torch.Tensor], torch.Tensor]


@dataclass
class RankResult:
    """Ranks of a set of queries, numpy arrays with one entry per query, in input order.

    :ivar rank_optimistic: shape: (n,) int64
    :ivar rank_pessimistic: shape: (n,) int64
    :ivar rank_realistic: shape: (n,) float64, ``(optimistic + pessimistic) / 2``
    :ivar rank_nondeterministic: shape: (n,) int64, position after a stable descending sort in candidate-ID order
    :ivar num_candidates: shape: (n,) int64, the true candidate plus the unfiltered others
    :ivar score: shape: (n,) float32, the true candidate's score
    :ivar topk_ids: shape: (n, k) int64 candidate IDs, best first, ``-1`` padding; ``None`` unless ``top_k > 0``
    :ivar topk_scores: shape: (n, k) float32, NaN padding; ``None`` unless ``top_k > 0``
    """

    rank_optimistic: np.ndarray
    rank_pessimistic: np.ndarray
    rank_realistic: np.ndarray
    rank_nondeterministic: np.ndarray
    num_candidates: np.ndarray
    score: np.ndarray
    topk_ids: np.ndarray | None = None
    topk_scores: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.rank_optimistic)

    def ranks(self) -> dict[str, np.ndarray]:
        """The four rank types by their short names (``optimistic``, ``realistic``, ...)."""
        return {
            "optimistic": self.rank_optimistic,
            "realistic": self.rank_realistic,
            "pessimistic": self.rank_pessimistic,
            "nondeterministic": self.rank_nondeterministic,
        }

    def take(self, indices: np.ndarray) -> RankResult:
        """A new result holding only the given queries, in the given order."""
        return RankResult(
            **{
                field.name: (None if getattr(self, field.name) is None else getattr(self, field.name)[indices])
                for field in fields(self)
            }
        )


@dataclass(frozen=True)
class RowExclusions:
    """Candidates excluded from each score row, as ranges into a shared sorted value array.

    :ivar starts: shape: (num_rows,) start of each row's range in ``values``
    :ivar lengths: shape: (num_rows,) number of excluded candidates of each row (unique within a row)
    :ivar values: shape: (nnz,) excluded candidate IDs
    """

    starts: np.ndarray
    lengths: np.ndarray
    values: np.ndarray

    @classmethod
    def from_index(cls, index: CSRIndex, row_keys: np.ndarray) -> RowExclusions:
        """Exclusions of rows identified by their keys in a :class:`~kgeval.lp.filtering.CSRIndex`."""
        starts, lengths = index.ranges(row_keys)
        return cls(starts=starts, lengths=lengths, values=index.values)

    @classmethod
    def from_filter(cls, index: FilterIndex, side: Side, anchors: np.ndarray, relations: np.ndarray) -> RowExclusions:
        """Known answers of link-prediction score rows ``(anchor, relation)`` from a filter index."""
        starts, lengths = index.ranges(side, anchors, relations)
        return cls(starts=starts, lengths=lengths, values=index.csr(side).values)

    @classmethod
    def from_pairs(cls, rows: np.ndarray, candidates: np.ndarray, num_rows: int) -> tuple[RowExclusions, CSRIndex]:
        """Exclusions from (row, candidate) pairs (duplicates allowed); also returns the CSR index built."""
        index = CSRIndex.from_pairs(keys=rows, values=candidates)
        return cls.from_index(index, np.arange(num_rows, dtype=np.int64)), index

    def batch(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Flat (local row, candidate) pairs of rows ``start..stop-1``; local rows count from 0."""
        rows, positions = expand_csr(self.starts[start:stop], self.lengths[start:stop])
        return rows, self.values[positions]


def rows_per_batch(
    num_candidates: int,
    memory_budget_mb: float,
    extra_bytes_per_row: int = 0,
    device: str | torch.device = "cpu",
    fused: bool = False,
) -> int:
    """How many score rows one batch holds.

    Each row holds its float32 scores plus about as much again in temporaries (the comparison masks, the copy
    made for queries that share a row, top-k workspace), plus what the scorer needs per row. On CPU, batches are
    further capped at ``_CPU_BATCH_BYTES`` of scores: blocks that stay in the last-level cache are as fast as larger
    ones. Fused batches (each block of rows scored where it is reduced, see :func:`rank_batches`) never hold all
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
        rows = min(rows, max(1, _CPU_BATCH_BYTES // (4 * columns)))
    return rows


def _as_long_array(x, name: str) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    array = np.asarray(x)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold integer IDs, got dtype {array.dtype}")
    return array.astype(np.int64, copy=False)


def rank_batches(
    score_rows: ScoreFn,
    row_of_query: np.ndarray,
    true_candidates: np.ndarray,
    num_candidates_total: int,
    *,
    exclusions: RowExclusions | None = None,
    true_excluded: np.ndarray | None = None,
    topk_exclusions: RowExclusions | None = None,
    top_k: int = 0,
    memory_budget_mb: float = 256.0,
    device: str | torch.device | None = None,
    extra_bytes_per_row: int = 0,
    prepare_rows: Callable[[torch.Tensor], RowBlocks] | None = None,
) -> RankResult:
    """The engine: rank queries whose score rows are computed batch by batch.

    Several queries may share one score row (same anchor and relation); each query has its own true candidate.

    Per batch: score the rows, read the true scores, set the filtered entries to NaN, count (per query) the
    candidates scoring above and at least the true score and the ties with smaller IDs, then restore the filtered
    scores, set the top-k exclusions to ``-inf`` and take the top k. On CPU all of that runs block by block of rows,
    each block while it is in cache (:func:`_reduce_cpu`), the counting in numpy (several times faster than torch's
    comparisons here), on a pool of ``torch.get_num_threads()`` threads, while every torch operation runs
    single-threaded (see :func:`kgeval.lp.scoring.single_threaded`) and the batches' memory is reused
    (:func:`kgeval.runtime.memory.reuse_freed_memory`). With ``prepare_rows``, each worker also scores its block (one
    matrix product per block, on its thread) right before reducing it, and the next batch is prepared and queued
    while the workers still reduce this one; with ``score_rows`` alone, the whole batch is scored first, its matrix
    product on all threads. When ``device`` is ``None``, the score function is called once on
    one row to learn its device.

    :param score_rows: ``score_rows(rows)`` with ``rows`` a (b,) long tensor of row positions returns the (b, C)
        scores of all candidates of these rows (larger is better)
    :param row_of_query: shape: (n,) the score row of each query, in ``0..num_rows-1``; rows are numbered densely
        and ``num_rows = row_of_query.max() + 1``
    :param true_candidates: shape: (n,) the true candidate of each query
    :param num_candidates_total: C, the number of candidates per row
    :param exclusions: candidates filtered from each row (may include the true ones; those stay in)
    :param true_excluded: shape: (n,) whether each query's true candidate is listed in its row's exclusions;
        computed from ``exclusions`` when omitted
    :param topk_exclusions: candidates removed from each row's top-k list only
    :param top_k: length of the top-k lists (0: none)
    :param memory_budget_mb: bound on the score batch and its temporaries
    :param device: device for the reduction (scores are moved there); ``None`` keeps the scores' device
    :param extra_bytes_per_row: memory the score function needs per row, counted against the budget
    :param prepare_rows: optional, used on CPU instead of ``score_rows``: ``prepare_rows(rows)`` does a batch's
        per-row work and returns ``blocks`` with ``blocks(i, j) == score_rows(rows)[i:j]``
        (:meth:`kgeval.lp.scoring.Scorer.prepare`); each block of rows is then scored on the worker thread that
        reduces it, while its scores are in cache
    :return: one entry per query, in input order; top-k lists are those of the query's row
    """
    row_of_query = _as_long_array(row_of_query, "row_of_query")
    true_candidates = _as_long_array(true_candidates, "true_candidates")
    n = len(row_of_query)
    C = int(num_candidates_total)
    if len(true_candidates) != n:
        raise ValueError(f"true_candidates has {len(true_candidates)} entries but row_of_query has {n}")
    if n and ((true_candidates < 0).any() or (true_candidates >= C).any()):
        bad = int(np.flatnonzero((true_candidates < 0) | (true_candidates >= C))[0])
        raise ValueError(f"true candidate {true_candidates[bad]} of query {bad} is outside 0..{C - 1}")
    if top_k < 0:
        raise ValueError(f"top_k must be >= 0, got {top_k}")
    k = min(int(top_k), C)
    num_rows = int(row_of_query.max()) + 1 if n else 0
    if n and row_of_query.min() < 0:
        raise ValueError("row_of_query must be non-negative")

    # queries sorted by row (stable: input order within a row), and each row's query range
    order = np.argsort(row_of_query, kind="stable")
    sorted_rows = row_of_query[order]
    sorted_true = true_candidates[order]
    query_ptr = np.searchsorted(sorted_rows, np.arange(num_rows + 1, dtype=np.int64))

    if exclusions is None:
        num_excluded = np.zeros(num_rows, dtype=np.int64)
        true_excluded = np.zeros(n, dtype=bool)
    else:
        if len(exclusions.lengths) != num_rows:
            raise ValueError(f"exclusions cover {len(exclusions.lengths)} rows, expected {num_rows}")
        num_excluded = exclusions.lengths
        if true_excluded is None:
            true_excluded = _contains(exclusions, row_of_query, true_candidates)
    true_excluded = np.asarray(true_excluded, dtype=bool)
    sorted_true_excluded = true_excluded[order]

    out_opt = np.empty(n, dtype=np.int64)
    out_pess = np.empty(n, dtype=np.int64)
    out_nd = np.empty(n, dtype=np.int64)
    out_score = np.empty(n, dtype=np.float32)
    row_topk_ids = np.full((num_rows, k), -1, dtype=np.int64) if k else None
    row_topk_scores = np.full((num_rows, k), np.nan, dtype=np.float32) if k else None

    target = torch.device(device) if device is not None else None
    reduce_device = target or _probe_device(score_rows, num_rows)
    on_cpu = reduce_device.type == "cpu"
    # on CPU with a preparing function, each block of rows is scored on a worker right before it is reduced
    fused = on_cpu and prepare_rows is not None
    batch_rows = rows_per_batch(C, memory_budget_mb, extra_bytes_per_row, device=reduce_device, fused=fused)
    threads = torch.get_num_threads() if on_cpu else 1
    # score batches are tens of MB: on CPU keep them in malloc's heap instead of faulting in fresh pages per batch
    keep_memory = reuse_freed_memory() if on_cpu else contextlib.nullcontext()
    # fused: every torch operation of the loop runs on one thread (the workers' products and top-k lists, the
    # per-batch preparation on this thread), so that the next batch can be prepared and queued while the workers
    # still reduce this one; the workers then never wait for this thread between batches
    loop_threads = single_threaded() if fused else contextlib.nullcontext()
    # batches queued on the workers but not yet stored: at most one more than the batch being stored
    pending: deque[tuple[Callable[[], tuple], int, int, int, int, np.ndarray]] = deque()
    lookahead = 1 if fused else 0

    def store(counts: tuple, q_start: int, q_stop: int, row_start: int, row_stop: int, unexcluded_true) -> None:
        greater, greater_equal, equal_before, true_scores, topk_ids, topk_scores = counts
        if np.isnan(true_scores).any():
            bad = q_start + int(np.flatnonzero(np.isnan(true_scores))[0])
            raise ValueError(f"the model scored the true candidate of query {int(order[bad])} as NaN")
        out = order[q_start:q_stop]
        # the true candidate is counted in greater_equal if it was not filtered, else added here
        out_opt[out] = greater + 1
        out_pess[out] = greater_equal + ~unexcluded_true
        out_nd[out] = greater + equal_before + 1
        out_score[out] = true_scores
        if k:
            row_topk_ids[row_start:row_stop], row_topk_scores[row_start:row_stop] = topk_ids, topk_scores

    with torch.no_grad(), keep_memory, worker_pool(threads, "kgeval-rank") as pool, loop_threads:
        for row_start in range(0, num_rows, batch_rows):
            row_stop = min(row_start + batch_rows, num_rows)
            b = row_stop - row_start
            q_start, q_stop = int(query_ptr[row_start]), int(query_ptr[row_stop])
            rows = torch.arange(row_start, row_stop, dtype=torch.long)
            if fused:
                block_scores = _checked_blocks(prepare_rows(rows), C)
            else:
                # the score function may use every thread (matrix products); the reduction below runs on the pool
                scores = _checked_scores(score_rows(rows), b, C, target)
            # filter: NaN compares false with everything, so filtered candidates drop out of every count
            unexcluded_true = sorted_true_excluded[q_start:q_stop] == 0
            ex = exclusions.batch(row_start, row_stop) if exclusions is not None else None
            tk = topk_exclusions.batch(row_start, row_stop) if k and topk_exclusions is not None else None
            local_rows = sorted_rows[q_start:q_stop] - row_start
            true = sorted_true[q_start:q_stop]
            if on_cpu:
                if not fused:
                    block_scores = _checked_blocks(scores.contiguous(), C)
                with single_threaded():
                    finish = _reduce_cpu(block_scores, b, C, local_rows, true, unexcluded_true, ex, tk, k, pool)
                    pending.append((finish, q_start, q_stop, row_start, row_stop, unexcluded_true))
                    while len(pending) > lookahead:
                        finish, *batch = pending.popleft()
                        store(finish(), *batch)
            else:
                dev = scores.device
                with single_threaded(dev):
                    local_rows_t = torch.from_numpy(local_rows).to(dev)
                    true_t = torch.from_numpy(true).to(dev)
                    true_scores_t = scores[local_rows_t, true_t]
                    greater, greater_equal, equal_before, topk_ids, topk_scores = _reduce_torch(
                        scores, local_rows_t, true_t, true_scores_t, unexcluded_true, ex, tk, k, batch_rows
                    )
                    true_scores = true_scores_t.float().cpu().numpy()
                counts = (greater, greater_equal, equal_before, true_scores, topk_ids, topk_scores)
                store(counts, q_start, q_stop, row_start, row_stop, unexcluded_true)
        while pending:
            finish, *batch = pending.popleft()
            store(finish(), *batch)

    num_candidates = C - num_excluded[row_of_query] + true_excluded.astype(np.int64)
    result = RankResult(
        rank_optimistic=out_opt,
        rank_pessimistic=out_pess,
        rank_realistic=(out_opt + out_pess) / 2.0,
        rank_nondeterministic=out_nd,
        num_candidates=num_candidates.astype(np.int64),
        score=out_score,
    )
    if k:
        available = C - (topk_exclusions.lengths if topk_exclusions is not None else np.zeros(num_rows, np.int64))
        padding = np.arange(k)[None, :] >= available[:, None]
        row_topk_ids[padding] = -1
        row_topk_scores[padding] = np.nan
        result.topk_ids = row_topk_ids[row_of_query]
        result.topk_scores = row_topk_scores[row_of_query]
    elif top_k:
        result.topk_ids = np.zeros((n, 0), dtype=np.int64)
        result.topk_scores = np.zeros((n, 0), dtype=np.float32)
    return result


#: bytes of scores per batch on CPU at most (the memory budget may lower it further)
_CPU_BATCH_BYTES = 2**25
#: bytes of scores and mask per block of the CPU reduction (a block and its mask stay in the last-level cache). 8 MiB
#: (115 FB15k-237 rows): side by side with 4 MiB on a 2-core AMD EPYC host (32 MiB L3), the fused engine took 2.49 s
#: against 2.75 s (DistMult) and 3.63 s against 4.26 s (ComplEx), same ranks, scores and top-k lists: a block's
#: matrix product of more rows runs closer to the speed of a whole batch's
_CPU_BLOCK_BYTES = 2**23


def block_rows(num_candidates: int) -> int:
    """Score rows per block of the CPU reduction: ``_CPU_BLOCK_BYTES`` of float32 scores and their byte mask."""
    return max(1, _CPU_BLOCK_BYTES // (5 * max(num_candidates, 1)))


def _probe_device(score_rows: ScoreFn, num_rows: int) -> torch.device:
    """The device a score function returns scores on (scores one row; CPU when there are no rows)."""
    if not num_rows:
        return torch.device("cpu")
    return score_rows(torch.zeros(1, dtype=torch.long)).device


def _contains(exclusions: RowExclusions, row_of_query: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Whether each query's candidate is among its row's exclusions. shape: (n,) bool."""
    rows, positions = expand_csr(exclusions.starts[row_of_query], exclusions.lengths[row_of_query])
    hits = exclusions.values[positions] == candidates[rows]
    return np.bincount(rows[hits], minlength=len(row_of_query)) > 0


def _count_torch(
    scores: torch.Tensor,
    local_rows: torch.Tensor,
    true: torch.Tensor,
    true_scores: torch.Tensor,
    unexcluded_true: torch.Tensor,
    chunk: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query: #{s > s_c}, #{s >= s_c} and #{j < c : s_j = s_c} over its (NaN-filtered) row, with torch (GPU).

    :param scores: shape: (b, C) the batch's score rows, filtered entries NaN
    :param local_rows: shape: (q,) row of each query within the batch, ascending
    :param true: shape: (q,) true candidate of each query
    :param true_scores: shape: (q,)
    :param unexcluded_true: shape: (q,) bool, whether the true candidate is still in its row
    :param chunk: queries compared at once
    :return: three (q,) int64 arrays
    """
    q = local_rows.shape[0]
    greater = torch.empty(q, dtype=torch.long, device=scores.device)
    greater_equal = torch.empty_like(greater)
    identity = q == scores.shape[0] and bool((local_rows == torch.arange(q, device=scores.device)).all())
    for start in range(0, q, chunk):
        stop = min(start + chunk, q)
        rows = scores[start:stop] if identity else scores.index_select(0, local_rows[start:stop])
        threshold = true_scores[start:stop].unsqueeze(1)
        greater[start:stop] = torch.count_nonzero(rows > threshold, dim=1)
        greater_equal[start:stop] = torch.count_nonzero(rows >= threshold, dim=1)
    # ties with other candidates exist only where greater_equal exceeds greater plus the true candidate itself
    equal_before = torch.zeros_like(greater)
    tied = torch.nonzero(greater_equal - greater - unexcluded_true.long() > 0, as_tuple=True)[0]
    candidate_ids = torch.arange(scores.shape[1], device=scores.device)
    for start in range(0, tied.numel(), chunk):
        queries = tied[start : start + chunk]
        rows = scores.index_select(0, local_rows[queries])
        before = candidate_ids.unsqueeze(0) < true[queries].unsqueeze(1)
        equal_before[queries] = torch.count_nonzero((rows == true_scores[queries].unsqueeze(1)) & before, dim=1)
    return greater.cpu().numpy(), greater_equal.cpu().numpy(), equal_before.cpu().numpy()


_buffers = threading.local()


def _mask_buffer(rows: int, columns: int) -> MaskBuffer:
    """A per-thread reusable boolean mask buffer of at least (rows, columns), rows padded for fast counting."""
    buffer = getattr(_buffers, "mask", None)
    if buffer is None or buffer.capacity < rows or buffer.columns != columns:
        buffer = _buffers.mask = MaskBuffer(rows, columns)
    return buffer


def _reduce_torch(
    scores: torch.Tensor,
    local_rows: torch.Tensor,
    true: torch.Tensor,
    true_scores: torch.Tensor,
    unexcluded_true: np.ndarray,
    exclusions: tuple[np.ndarray, np.ndarray] | None,
    topk_exclusions: tuple[np.ndarray, np.ndarray] | None,
    k: int,
    chunk: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """GPU reduction of one batch: filter with NaN, count (:func:`_count_torch`), restore, exclude, top-k.

    :param exclusions: the batch's filtered (local row, candidate) pairs, or ``None``
    :param topk_exclusions: the batch's (local row, candidate) pairs removed from the top-k lists, or ``None``
    :return: greater, greater_equal and equal_before per query; top-k ids and scores per row (``None`` if ``k == 0``)
    """
    dev = scores.device
    C = scores.shape[1]
    flat_scores = scores.view(-1)
    if exclusions is not None:
        ex_flat = torch.from_numpy(exclusions[0] * C + exclusions[1]).to(dev)
        saved = flat_scores[ex_flat] if k else None
        flat_scores.index_fill_(0, ex_flat, float("nan"))
    counts = _count_torch(scores, local_rows, true, true_scores, torch.from_numpy(unexcluded_true).to(dev), chunk)
    if not k:
        return *counts, None, None
    if exclusions is not None:
        flat_scores.index_copy_(0, ex_flat, saved)
    if topk_exclusions is not None:
        tk_flat = torch.from_numpy(topk_exclusions[0] * C + topk_exclusions[1]).to(dev)
        flat_scores.index_fill_(0, tk_flat, float("-inf"))
    return *counts, *_topk(scores, k)


def _checked_scores(scores: torch.Tensor, b: int, C: int, target: torch.device | None) -> torch.Tensor:
    """A score function's output for ``b`` rows, moved to ``target``, checked for shape, as floats."""
    if target is not None:
        scores = scores.to(target)
    if scores.shape != (b, C):
        raise ValueError(f"score function returned shape {tuple(scores.shape)}, expected {(b, C)}")
    return scores if scores.is_floating_point() else scores.float()


def _checked_blocks(source: torch.Tensor | RowBlocks, C: int) -> Callable[[int, int], np.ndarray]:
    """Rows ``a..z-1`` of a batch of scores as a writable C-contiguous numpy array, for :func:`_reduce_cpu`.

    :param source: the batch's (b, C) C-contiguous CPU scores (blocks are views into it), or a prepared batch's
        :data:`~kgeval.lp.scoring.RowBlocks` (each block is scored when asked for, on the calling thread)
    """
    if isinstance(source, torch.Tensor):
        array = source.numpy()
        return lambda a, z: array[a:z]
    cpu = torch.device("cpu")
    return lambda a, z: _checked_scores(source(a, z), z - a, C, cpu).contiguous().numpy()


def _block_bounds(num_rows: int, block: int) -> np.ndarray:
    """Row bounds of blocks of ``block`` rows; a last block shorter than half a block joins the one before.

    No block is then much smaller than the others: a matrix library may use another kernel for a product of very
    few rows (MKL does for 1-3), which need not round alike.
    """
    bounds = np.append(np.arange(0, num_rows, block), num_rows)
    if len(bounds) > 2 and num_rows - bounds[-2] < (block + 1) // 2:
        bounds = np.delete(bounds, -2)
    return bounds


def _reduce_cpu(
    block_scores: Callable[[int, int], np.ndarray],
    num_rows: int,
    C: int,
    rows_of: np.ndarray,
    c: np.ndarray,
    unexcluded_true: np.ndarray,
    exclusions: tuple[np.ndarray, np.ndarray] | None,
    topk_exclusions: tuple[np.ndarray, np.ndarray] | None,
    k: int,
    pool: ThreadPoolExecutor | None,
) -> Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]]:
    """CPU version of :func:`_reduce_torch`, block by block of rows on the worker pool.

    The blocks are queued on the pool and this returns at once; the returned function waits for them and returns
    the batch's results. Meanwhile the caller may queue the next batch: the workers go on with it without a pause.

    Each block of rows is small enough to stay in cache while everything is done to it: its scores are fetched
    (computed right there when the scorer prepared the batch, :meth:`kgeval.lp.scoring.Scorer.prepare`), the true
    scores read, its filtered entries set to NaN, the counts of every query of its rows (:func:`_count_torch`'s
    definitions, on numpy, several times faster than torch's comparisons on CPU), the ties, then the filtered entries
    restored, the top-k exclusions set to ``-inf`` and the top k taken. A batch of score rows is larger than the
    last-level cache, so doing each step over the whole batch (as on the GPU) would read it from memory once per step;
    scoring the block where it is reduced saves writing it to memory and reading it back. The blocks are modified in
    place.

    :param block_scores: ``block_scores(a, z)``: the (z - a, C) C-contiguous float32 scores of rows ``a..z-1``
    :param num_rows: rows in the batch
    :param C: candidates per row
    :param rows_of: shape: (q,) row of each query within the batch, ascending
    :param c: shape: (q,) true candidate of each query
    :param unexcluded_true: shape: (q,) whether each query's true candidate is not among its row's exclusions
    :param exclusions: the batch's filtered (local row, candidate) pairs, rows ascending, or ``None``
    :param topk_exclusions: the batch's top-k exclusions in the same form, or ``None``
    :param k: length of the top-k lists (0: none)
    :param pool: worker threads (``None``: this thread, before returning)
    :return: a function returning greater, greater_equal and equal_before per query; the true score of each query
        (read before filtering); top-k ids and scores per row (``None`` if ``k == 0``)
    """
    q = len(rows_of)
    greater = np.empty(q, dtype=np.int64)
    greater_equal = np.empty(q, dtype=np.int64)
    equal_before = np.zeros(q, dtype=np.int64)
    t = np.empty(q, dtype=np.float32)
    topk_ids = np.empty((num_rows, k), dtype=np.int64) if k else None
    topk_scores = np.empty((num_rows, k), dtype=np.float32) if k else None
    block = block_rows(C)
    bounds = _block_bounds(num_rows, block)
    query_ptr = np.searchsorted(rows_of, bounds)
    ex_ptr = np.searchsorted(exclusions[0], bounds) if exclusions is not None else None
    tk_ptr = np.searchsorted(topk_exclusions[0], bounds) if topk_exclusions is not None else None
    candidate_ids = np.arange(C)

    def count(rows: np.ndarray, thresholds: np.ndarray, queries: slice | np.ndarray) -> None:
        buffer = _mask_buffer(len(rows), C)
        mask = buffer.view(len(rows))
        np.greater(rows, thresholds[:, None], out=mask)
        greater[queries] = buffer.row_counts(len(rows))
        np.greater_equal(rows, thresholds[:, None], out=mask)
        greater_equal[queries] = buffer.row_counts(len(rows))

    def reduce_block(i: int) -> None:
        a, z = int(bounds[i]), int(bounds[i + 1])
        qa, qz = int(query_ptr[i]), int(query_ptr[i + 1])
        rows = block_scores(a, z)
        flat = rows.reshape(-1)
        local = rows_of[qa:qz] - a
        t[qa:qz] = rows[local, c[qa:qz]]
        if exclusions is not None:
            ea, ez = int(ex_ptr[i]), int(ex_ptr[i + 1])
            ex_flat = (exclusions[0][ea:ez] - a) * C + exclusions[1][ea:ez]
            saved = flat[ex_flat] if k else None
            flat[ex_flat] = np.nan

        # the first query of each row compares against the row in place; others (shared rows) against a copy
        first = np.ones(len(local), dtype=bool)
        first[1:] = local[1:] != local[:-1]
        first_idx = np.flatnonzero(first)
        if len(first_idx) == z - a and np.array_equal(local[first_idx], np.arange(z - a)):
            count(rows, t[qa + first_idx], qa + first_idx)
            rest = np.flatnonzero(~first)
        else:
            rest = np.arange(len(local))
        for r in range(0, len(rest), block):
            part = rest[r : r + block]
            count(rows[local[part]], t[qa + part], qa + part)

        # ties with other candidates exist only where greater_equal exceeds greater plus the true candidate itself
        tied = np.flatnonzero(greater_equal[qa:qz] - greater[qa:qz] - unexcluded_true[qa:qz] > 0)
        for r in range(0, len(tied), block):
            part = qa + tied[r : r + block]
            before = candidate_ids[None, :] < c[part, None]
            equal_before[part] = ((rows[local[part - qa]] == t[part, None]) & before).sum(axis=1)

        if k:
            if exclusions is not None:
                flat[ex_flat] = saved
            if topk_exclusions is not None:
                ta, tz = int(tk_ptr[i]), int(tk_ptr[i + 1])
                flat[(topk_exclusions[0][ta:tz] - a) * C + topk_exclusions[1][ta:tz]] = -np.inf
            topk_ids[a:z], topk_scores[a:z] = _topk(torch.from_numpy(rows), k)

    wait = submit_all(pool, reduce_block, range(len(bounds) - 1))

    def finish() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        wait()  # re-raises a block's error
        return greater, greater_equal, equal_before, t, topk_ids, topk_scores

    return finish


#: group size of the two-stage top-k on CPU
_TOPK_GROUP = 16


def _topk_candidates(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k values and IDs of each row, in any order.

    On CPU with many candidates, two stages: split each row's columns into ``m`` strided groups
    ``{j, j + m, j + 2m, ...}``, take each group's maximum (a vectorized elementwise maximum over ``_TOPK_GROUP``
    slices), and look for the top k only inside the k groups with the largest maxima. This is exact: a candidate in
    any other group is beaten by the k group maxima above it.
    """
    b, C = scores.shape
    m = C // _TOPK_GROUP
    if scores.device.type != "cpu" or m < 8 * k:
        return torch.topk(scores, k, dim=1, largest=True, sorted=False)
    main = m * _TOPK_GROUP
    maxima = scores[:, :main].reshape(b, _TOPK_GROUP, m).amax(dim=1)
    groups = torch.topk(maxima, k, dim=1, largest=True, sorted=False).indices
    columns = (groups.unsqueeze(2) + torch.arange(_TOPK_GROUP, device=scores.device).mul_(m)).reshape(b, -1)
    if main < C:
        columns = torch.cat([columns, torch.arange(main, C, device=scores.device).expand(b, -1)], dim=1)
    values, positions = torch.topk(scores.gather(1, columns), k, dim=1, largest=True, sorted=False)
    return values, columns.gather(1, positions)


def _topk(scores: torch.Tensor, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k candidates of each row, best first, ties within the list ordered by candidate ID.

    On CPU it is called per block of rows from the worker pool (:func:`_reduce_cpu`), so it runs on one thread.

    :param scores: shape: (b, C), excluded entries ``-inf``
    :return: ids (b, k) int64 and scores (b, k) float32
    """
    values, ids = _topk_candidates(scores, k)
    ids, values = ids.cpu().numpy(), values.float().cpu().numpy()
    # make the order within the list deterministic: by score descending (NaN first, as torch.topk ranks it), ties by
    # ascending ID; one lexsort on the small (b, k) lists
    descending = np.where(np.isnan(values), -np.inf, -values)
    order = np.lexsort((ids, descending), axis=1)
    return np.take_along_axis(ids, order, axis=1), np.take_along_axis(values, order, axis=1)


def _pairs_to_exclusions(pairs, num_rows: int, num_candidates: int, name: str) -> RowExclusions | None:
    if pairs is None:
        return None
    rows, candidates = pairs
    rows = _as_long_array(rows, f"{name}[0]")
    candidates = _as_long_array(candidates, f"{name}[1]")
    if len(rows) != len(candidates):
        raise ValueError(f"{name}: query positions ({len(rows)}) and candidates ({len(candidates)}) differ in length")
    if len(rows) and (rows.min() < 0 or rows.max() >= num_rows):
        raise ValueError(f"{name}: query positions must lie in 0..{num_rows - 1}")
    if len(candidates) and (candidates.min() < 0 or candidates.max() >= num_candidates):
        raise ValueError(f"{name}: candidates must lie in 0..{num_candidates - 1}")
    return RowExclusions.from_pairs(rows, candidates, num_rows)[0]


def rank_from_score_fn(
    score_fn: ScoreFn,
    true_candidates,
    num_candidates_total: int,
    *,
    exclude: tuple[np.ndarray, np.ndarray] | None = None,
    topk_exclude: tuple[np.ndarray, np.ndarray] | None = None,
    top_k: int = 0,
    memory_budget_mb: float = 256.0,
    device: str | torch.device | None = None,
) -> RankResult:
    """Rank one true candidate per query from a score function (entity alignment, S5's negatives, ...).

    :param score_fn: ``score_fn(query_positions)``, a (b,) long tensor, returns the (b, C) scores of all C
        candidates for those query rows (larger is better)
    :param true_candidates: shape: (n,) the correct candidate ID of each query
    :param num_candidates_total: C
    :param exclude: ``(query_positions, candidates)`` pairs removed from the candidate set; the true candidate is
        never removed even if listed
    :param topk_exclude: pairs removed from the top-k lists only
    :param top_k: length of the top-k lists (0: none)
    :param memory_budget_mb: bound on one batch of scores and its temporaries
    :param device: device for the reduction; ``None`` keeps the device ``score_fn`` returns
    :return: one entry per query, in input order
    """
    true_candidates = _as_long_array(true_candidates, "true_candidates")
    n = len(true_candidates)
    C = int(num_candidates_total)
    exclusions = _pairs_to_exclusions(exclude, n, C, "exclude")
    topk_exclusions = _pairs_to_exclusions(topk_exclude, n, C, "topk_exclude")
    return rank_batches(
        score_fn,
        row_of_query=np.arange(n, dtype=np.int64),
        true_candidates=true_candidates,
        num_candidates_total=C,
        exclusions=exclusions,
        topk_exclusions=topk_exclusions,
        top_k=top_k,
        memory_budget_mb=memory_budget_mb,
        device=device,
    )


def _as_triples_or_index(triples, name: str) -> FilterIndex | np.ndarray | None:
    """Known triples as one (m, 3) array (lists are concatenated), or the prebuilt index itself."""
    if triples is None or isinstance(triples, FilterIndex):
        return triples
    if isinstance(triples, (list, tuple)) and (not len(triples) or np.ndim(triples[0]) == 2):
        arrays = [as_triples_array(t, name=f"{name}[{i}]") for i, t in enumerate(triples)]
        return np.concatenate(arrays) if arrays else np.zeros((0, 3), dtype=np.int64)
    return as_triples_array(triples, name=name)


def _as_filter_index(
    triples: FilterIndex | np.ndarray | None, num_entities: int, num_relations: int, name: str
) -> FilterIndex | None:
    if triples is None:
        return None
    if isinstance(triples, FilterIndex):
        if triples.num_entities != num_entities:
            raise ValueError(
                f"{name} is a FilterIndex over {triples.num_entities} entities, the model has {num_entities}"
            )
        return triples
    return FilterIndex(triples, num_entities=num_entities, num_relations=num_relations)


def rank_lp(
    model: Model | Scorer,
    triples,
    *,
    filter_triples=None,
    topk_filter_triples=None,
    sides: Sequence[Side] = ("head", "tail"),
    top_k: int = 0,
    memory_budget_mb: float = 256.0,
    device: str | torch.device | None = None,
    fast: bool = True,
) -> dict[str, RankResult]:
    """Filtered link-prediction ranks of evaluation triples, on both sides, as PyKEEN's evaluator defines them.

    :param model: a trained PyKEEN model, or a :class:`~kgeval.lp.scoring.Scorer` made from one
    :param triples: shape: (n, 3) ID-based evaluation triples (dataset relation IDs, no inverse relations)
    :param filter_triples: known triples whose answers are filtered (e.g. ``[train, valid, test]``), as a list of
        (m, 3) tensors/arrays, one array, or a prebuilt :class:`~kgeval.lp.filtering.FilterIndex`; ``None``: raw ranks
    :param topk_filter_triples: known triples removed from the top-k lists only (e.g. ``[train, valid]``);
        ``None``: same as ``filter_triples``
    :param sides: which sides to rank: ``"head"`` predicts heads of ``(?, r, t)``, ``"tail"`` tails of ``(h, r, ?)``
    :param top_k: length of the top-k candidate lists (0: none)
    :param memory_budget_mb: bound on one batch of scores and its temporaries
    :param device: where to score and rank; ``None``: the GPU if present, else the CPU
    :param fast: use a matrix-product scorer where one exists (ignored when ``model`` is a scorer)
    :return: ``{side: RankResult}`` with one entry per triple, in input order
    """
    array = as_triples_array(triples, name="triples")
    if isinstance(model, Scorer):
        scorer = model
        inner = getattr(scorer, "model", None)
        num_relations = getattr(scorer, "num_relations", None) or getattr(inner, "num_real_relations", None)
    else:
        scorer = make_scorer(model, fast=fast, device=resolve_device(device))
        num_relations = model.num_real_relations
    num_entities = scorer.num_entities
    filter_arrays = _as_triples_or_index(filter_triples, "filter_triples")
    topk_arrays = _as_triples_or_index(topk_filter_triples, "topk_filter_triples")
    if num_relations is None:
        # a scorer without a model: the relations present in the evaluation and filter triples
        present = [array] + [a for a in (filter_arrays, topk_arrays) if isinstance(a, np.ndarray)]
        num_relations = max((int(a[:, 1].max()) + 1 for a in present if len(a)), default=1)
    if len(array) and (array[:, [0, 2]].max() >= num_entities or array[:, 1].max() >= num_relations):
        raise ValueError(
            f"triples use IDs outside the model's {num_entities} entities / {num_relations} relations; "
            "map them with the training factory's entity_to_id / relation_to_id"
        )
    index = _as_filter_index(filter_arrays, num_entities, num_relations, "filter_triples")
    topk_index = _as_filter_index(topk_arrays, num_entities, num_relations, "topk_filter_triples")
    if topk_index is None:
        topk_index = index

    results: dict[str, RankResult] = {}
    for side in sides:
        if side not in ("head", "tail"):
            raise ValueError(f"sides must be 'head' and/or 'tail', got {side!r}")
        anchor_col, answer_col = (0, 2) if side == "tail" else (2, 0)
        anchors, relations, answers = array[:, anchor_col], array[:, 1], array[:, answer_col]
        # one score row per unique (anchor, relation)
        keys = anchors * num_relations + relations
        unique_keys, row_of_query = np.unique(keys, return_inverse=True)
        row_anchors = torch.from_numpy(unique_keys // num_relations)
        row_relations = torch.from_numpy(unique_keys % num_relations)

        def score_rows(rows: torch.Tensor, side=side, a=row_anchors, r=row_relations) -> torch.Tensor:
            return scorer.score(side, a[rows], r[rows])

        exclusions = topk_exclusions = None
        true_excluded = None
        if index is not None:
            exclusions = RowExclusions.from_filter(index, side, row_anchors.numpy(), row_relations.numpy())
            true_excluded = index.contains(side, anchors, relations, answers)
        if top_k and topk_index is not None:
            topk_exclusions = RowExclusions.from_filter(topk_index, side, row_anchors.numpy(), row_relations.numpy())
        def prepare_rows(rows: torch.Tensor, side=side, a=row_anchors, r=row_relations) -> RowBlocks:
            return scorer.prepare(side, a[rows], r[rows])

        results[side] = rank_batches(
            score_rows,
            # PyKEEN's own scorer computes a whole batch at once: its blocks would only be slices of it
            prepare_rows=prepare_rows if scorer.is_fast else None,
            row_of_query=row_of_query,
            true_candidates=answers,
            num_candidates_total=num_entities,
            exclusions=exclusions,
            true_excluded=true_excluded,
            topk_exclusions=topk_exclusions,
            top_k=top_k,
            memory_budget_mb=memory_budget_mb,
            device=scorer.device,
            extra_bytes_per_row=scorer.bytes_per_query(),
        )
    return results
