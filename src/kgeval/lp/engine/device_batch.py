"""The reduction of one whole batch of score rows with torch, where the scores live on a GPU.

The same counts as :mod:`kgeval.lp.engine.cpu_blocks` (which the tests check), done step by step over the batch.
"""

from __future__ import annotations

import numpy as np
import torch

from kgeval.lp.engine.topk import topk

__all__ = ["count_torch", "reduce_torch"]


def count_torch(
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


def reduce_torch(
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
    """GPU reduction of one batch: filter with NaN, count (:func:`count_torch`), restore, exclude, top-k.

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
    counts = count_torch(scores, local_rows, true, true_scores, torch.from_numpy(unexcluded_true).to(dev), chunk)
    if not k:
        return *counts, None, None
    if exclusions is not None:
        flat_scores.index_copy_(0, ex_flat, saved)
    if topk_exclusions is not None:
        tk_flat = torch.from_numpy(topk_exclusions[0] * C + topk_exclusions[1]).to(dev)
        flat_scores.index_fill_(0, tk_flat, float("-inf"))
    return *counts, *topk(scores, k)
