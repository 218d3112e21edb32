"""The reduction of whole batches of score rows with torch, where the scores live on a GPU.

The same counts and top-k lists as :mod:`kgeval.lp.engine.cpu_blocks` (which the tests check), done step by step over
each batch, with everything a batch needs already on the device: a side's queries and its filtered candidates are
copied there once (:class:`DeviceQueries`), each batch's filtered entries are expanded from their row ranges on the
device, and the results stay there until the last batch is done (:func:`fetch`). So the host only queues kernels: it
waits for the device twice per batch (the rare ties and top-k boundaries that need a second look) and copies results
back once per side. (Expanding each batch's filters with numpy, copying them over and copying each count back on its
own would make the host's work per batch several times the device's.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from kgeval.lp.engine.topk import topk_tensors

__all__ = ["DeviceCounts", "DeviceQueries", "DeviceRanges", "count_torch", "fetch", "reduce_torch"]


class DeviceRanges:
    """Each row's filtered candidates, as ranges into a shared value array, on the device.

    Built from a :class:`kgeval.lp.ranking.RowExclusions` (anything with ``starts``, ``lengths`` and ``values``).
    """

    def __init__(self, exclusions, device: torch.device) -> None:
        lengths = np.asarray(exclusions.lengths, dtype=np.int64)
        self.starts = torch.from_numpy(np.asarray(exclusions.starts, dtype=np.int64)).to(device)
        self.lengths = torch.from_numpy(lengths).to(device)
        self.values = torch.from_numpy(np.asarray(exclusions.values, dtype=np.int64)).to(device)
        #: on the host: where each row's entries start among all rows' (the sizes of a batch's flat indices)
        self.offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)

    def flat(self, start: int, stop: int, C: int) -> torch.Tensor:
        """Flat positions ``local_row * C + candidate`` of rows ``start..stop-1`` in their (stop - start, C) batch.

        Expanded on the device; the output's size comes from the host's offsets, so nothing waits for the device.
        """
        total = int(self.offsets[stop] - self.offsets[start])
        dev = self.values.device
        lengths = self.lengths[start:stop]
        local = torch.repeat_interleave(torch.arange(stop - start, device=dev), lengths, output_size=total)
        first = torch.cumsum(lengths, 0) - lengths  # each row's first entry among the batch's
        position = torch.arange(total, device=dev) - first[local] + self.starts[start:stop][local]
        return local * C + self.values[position]


@dataclass
class DeviceCounts:
    """One batch's results, on the device: greater, greater_equal and equal_before per query (``counts``, (3, q)
    int64), the true scores (q,), and the top-k ids and scores of its rows ((b, k), or ``None`` when ``k == 0``)."""

    counts: torch.Tensor
    true_scores: torch.Tensor
    topk_ids: torch.Tensor | None
    topk_scores: torch.Tensor | None


class DeviceQueries:
    """A side's queries (sorted by row) and filters, copied to the device once; :meth:`reduce` takes each batch.

    :param queries: a :class:`kgeval.lp.engine.batches.SortedQueries`: each query's row (ascending), true candidate
        and whether it is among its row's exclusions, and each row's range of queries (``ptr``)
    :param exclusions: the filtered candidates of each row (a ``RowExclusions``), or ``None``
    :param topk_exclusions: the candidates removed from each row's top-k list, or ``None``
    """

    def __init__(self, queries, exclusions, topk_exclusions, device: torch.device) -> None:
        self.device = device
        self.rows_host, self.ptr = queries.rows, queries.ptr
        self.rows = torch.from_numpy(np.ascontiguousarray(queries.rows, dtype=np.int64)).to(device)
        self.true = torch.from_numpy(np.ascontiguousarray(queries.true, dtype=np.int64)).to(device)
        self.unexcluded_true = torch.from_numpy(~np.asarray(queries.true_excluded, dtype=bool)).to(device)
        self.exclusions = DeviceRanges(exclusions, device) if exclusions is not None else None
        self.topk_exclusions = (
            self.exclusions
            if topk_exclusions is exclusions
            else DeviceRanges(topk_exclusions, device) if topk_exclusions is not None else None
        )

    def reduce(self, scores: torch.Tensor, row_start: int, row_stop: int, k: int, chunk: int) -> DeviceCounts:
        """Counts and top-k lists of rows ``row_start..row_stop-1`` from their (b, C) scores (modified in place)."""
        q_start, q_stop = int(self.ptr[row_start]), int(self.ptr[row_stop])
        local_host = self.rows_host[q_start:q_stop] - row_start
        # rows with one query each, in order: the rows themselves are compared, without copying them per query
        identity = len(local_host) == scores.shape[0] and bool((local_host == np.arange(len(local_host))).all())
        C = scores.shape[1]
        ex = self.exclusions.flat(row_start, row_stop, C) if self.exclusions is not None else None
        tk = None
        if k and self.topk_exclusions is not None:
            tk = ex if self.topk_exclusions is self.exclusions else self.topk_exclusions.flat(row_start, row_stop, C)
        return reduce_torch(
            scores,
            self.rows[q_start:q_stop] - row_start,
            self.true[q_start:q_stop],
            self.unexcluded_true[q_start:q_stop],
            ex,
            tk,
            k,
            chunk,
            identity=identity,
        )


def count_torch(
    scores: torch.Tensor,
    local_rows: torch.Tensor,
    true: torch.Tensor,
    true_scores: torch.Tensor,
    unexcluded_true: torch.Tensor,
    chunk: int,
    identity: bool = False,
) -> torch.Tensor:
    """Per query: #{s > s_c}, #{s >= s_c} and #{j < c : s_j = s_c} over its (NaN-filtered) row, with torch (GPU).

    :param scores: shape: (b, C) the batch's score rows, filtered entries NaN
    :param local_rows: shape: (q,) row of each query within the batch, ascending
    :param true: shape: (q,) true candidate of each query
    :param true_scores: shape: (q,)
    :param unexcluded_true: shape: (q,) bool, whether the true candidate is still in its row
    :param chunk: queries compared at once
    :param identity: whether ``local_rows`` is ``0..b-1`` (the rows are then compared without a copy)
    :return: shape: (3, q) int64 on the scores' device: greater, greater_equal, equal_before
    """
    q = local_rows.shape[0]
    counts = torch.zeros((3, q), dtype=torch.long, device=scores.device)
    for start in range(0, q, chunk):
        stop = min(start + chunk, q)
        rows = scores[start:stop] if identity else scores.index_select(0, local_rows[start:stop])
        threshold = true_scores[start:stop].unsqueeze(1)
        torch.sum(rows > threshold, dim=1, out=counts[0, start:stop])
        torch.sum(rows >= threshold, dim=1, out=counts[1, start:stop])
    # ties with other candidates exist only where greater_equal exceeds greater plus the true candidate itself: rare
    # with real scores, so they are looked for (one wait for the device) and only their rows compared again
    tied = torch.nonzero(counts[1] - counts[0] - unexcluded_true.long() > 0, as_tuple=True)[0]
    if tied.numel():
        candidate_ids = torch.arange(scores.shape[1], device=scores.device)
        for start in range(0, tied.numel(), chunk):
            queries = tied[start : start + chunk]
            rows = scores.index_select(0, local_rows[queries])
            before = candidate_ids.unsqueeze(0) < true[queries].unsqueeze(1)
            equal = (rows == true_scores[queries].unsqueeze(1)) & before
            counts[2].index_copy_(0, queries, torch.count_nonzero(equal, dim=1))
    return counts


def reduce_torch(
    scores: torch.Tensor,
    local_rows: torch.Tensor,
    true: torch.Tensor,
    unexcluded_true: torch.Tensor,
    exclusions: torch.Tensor | None,
    topk_exclusions: torch.Tensor | None,
    k: int,
    chunk: int,
    identity: bool = False,
) -> DeviceCounts:
    """The reduction of one batch with torch: true scores, filter with NaN, count (:func:`count_torch`), restore,
    exclude from the top-k lists, top-k (:func:`kgeval.lp.engine.topk.topk_tensors`). Nothing is copied to the host.

    :param scores: shape: (b, C), modified in place
    :param local_rows: shape: (q,) row of each query within the batch, ascending
    :param true: shape: (q,) true candidate of each query
    :param unexcluded_true: shape: (q,) bool
    :param exclusions: flat positions ``row * C + candidate`` of the batch's filtered entries, or ``None``
    :param topk_exclusions: flat positions removed from the top-k lists (the same tensor as ``exclusions`` when the
        same entries are removed from both), or ``None``
    :param identity: whether ``local_rows`` is ``0..b-1``
    """
    flat_scores = scores.view(-1)
    true_scores = scores[local_rows, true]
    # the filtered entries' scores are kept for the top-k lists, unless the same entries leave those lists too
    saved = None
    if exclusions is not None:
        saved = flat_scores[exclusions] if k and topk_exclusions is not exclusions else None
        flat_scores.index_fill_(0, exclusions, float("nan"))
    counts = count_torch(scores, local_rows, true, true_scores, unexcluded_true, chunk, identity)
    if not k:
        return DeviceCounts(counts, true_scores, None, None)
    if saved is not None:
        flat_scores.index_copy_(0, exclusions, saved)
    if topk_exclusions is not None:
        flat_scores.index_fill_(0, topk_exclusions, float("-inf"))
    ids, values = topk_tensors(scores, k)
    return DeviceCounts(counts, true_scores, ids, values)


def fetch(results: list[DeviceCounts]) -> list[tuple]:
    """The batches' results on the host, in two transfers (the integers, the scores), each batch's as
    ``(greater, greater_equal, equal_before, true_scores, topk_ids, topk_scores)`` numpy arrays."""
    if not results:
        return []
    with_topk = results[0].topk_ids is not None
    integers = [r.counts.reshape(-1) for r in results]
    floats = [r.true_scores.float() for r in results]
    if with_topk:
        integers += [r.topk_ids.reshape(-1) for r in results]
        floats += [r.topk_scores.float().reshape(-1) for r in results]
    integers_host = np.split(torch.cat(integers).cpu().numpy(), np.cumsum([x.numel() for x in integers])[:-1])
    floats_host = np.split(torch.cat(floats).cpu().numpy(), np.cumsum([x.numel() for x in floats])[:-1])
    n = len(results)
    out = []
    for i, r in enumerate(results):
        greater, greater_equal, equal_before = integers_host[i].reshape(3, -1)
        ids = values = None
        if with_topk:
            ids = integers_host[n + i].reshape(r.topk_ids.shape)
            values = floats_host[n + i].reshape(r.topk_scores.shape)
        out.append((greater, greater_equal, equal_before, floats_host[i], ids, values))
    return out
