"""Top-k lists of score rows with torch (GPUs, rows holding a NaN): the first k by score, ties by ascending ID."""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["TOPK_GROUP", "smallest_ids_at_the_boundary", "topk", "topk_candidates", "topk_tensors"]

#: group size of the two-stage top-k on CPU
TOPK_GROUP = 16


def topk_candidates(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k values and IDs of each row, in any order.

    With many candidates, two stages: split each row's columns into ``m`` strided groups
    ``{j, j + m, j + 2m, ...}``, take each group's maximum (a vectorized elementwise maximum over ``TOPK_GROUP``
    slices), and look for the top k only inside the k groups with the largest maxima. This is exact: a candidate in
    any other group is beaten by the k group maxima above it. (On a GPU too: one pass for the maxima and a top-k of a
    sixteenth of the columns instead of ``torch.topk``'s radix selection over all of them.)
    """
    b, C = scores.shape
    m = C // TOPK_GROUP
    if m < 8 * k:
        return torch.topk(scores, k, dim=1, largest=True, sorted=False)
    main = m * TOPK_GROUP
    maxima = scores[:, :main].reshape(b, TOPK_GROUP, m).amax(dim=1)
    groups = torch.topk(maxima, k, dim=1, largest=True, sorted=False).indices
    columns = (groups.unsqueeze(2) + torch.arange(TOPK_GROUP, device=scores.device).mul_(m)).reshape(b, -1)
    if main < C:
        columns = torch.cat([columns, torch.arange(main, C, device=scores.device).expand(b, -1)], dim=1)
    values, positions = torch.topk(scores.gather(1, columns), k, dim=1, largest=True, sorted=False)
    return values, columns.gather(1, positions)


def smallest_ids_at_the_boundary(
    scores: torch.Tensor, values: torch.Tensor, ids: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Make each row's top-k list hold the smallest IDs among the candidates tied at its ``k``-th score.

    ``torch.topk`` picks any of several candidates tied at the ``k``-th score. Rows where a tied candidate was left
    out (rare with real scores: found by one comparison pass) are taken again: every candidate scored above the
    ``k``-th score (NaN ranks above every number, as in ``torch.topk``), then the tied ones by ascending ID.

    :param scores: shape: (b, C)
    :param values: shape: (b, k) the top k of each row, in any order
    :param ids: shape: (b, k) their candidate IDs
    :return: values and IDs, in any order within a row
    """
    nan = values.isnan()
    numbers = torch.where(nan, torch.full_like(values, float("inf")), values)
    kth = torch.where(nan.all(dim=1), torch.full_like(values[:, 0], float("nan")), numbers.amin(dim=1))
    kth_nan = kth.isnan()
    tied_all, tied_listed = (scores == kth[:, None]).sum(dim=1), (values == kth[:, None]).sum(dim=1)
    if kth_nan.any():  # a list of NaNs only: its ties are the row's NaNs (a second pass only where one exists)
        tied_all = torch.where(kth_nan, scores.isnan().sum(dim=1), tied_all)
        tied_listed = torch.where(kth_nan, nan.sum(dim=1), tied_listed)
    fix = torch.nonzero(tied_all > tied_listed).flatten().tolist()
    if not fix:
        return values, ids
    values, ids = values.clone(), ids.clone()
    k = values.shape[1]
    for r in fix:
        row = scores[r]
        if kth_nan[r]:
            above, tied = row.new_zeros(0, dtype=torch.long), torch.nonzero(row.isnan()).flatten()
        else:
            above = torch.nonzero((row > kth[r]) | row.isnan()).flatten()
            tied = torch.nonzero(row == kth[r]).flatten()
        ids[r] = torch.cat([above, tied[: k - len(above)]])
        values[r] = row[ids[r]]
    return values, ids


def topk_tensors(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k candidates of each row, ordered, on the scores' device: the first ``k`` by score descending (NaN first),
    ties by ascending ID. Used on a GPU (:mod:`kgeval.lp.engine.device_batch`); CPU rows take the same lists from
    :func:`kgeval.lp.engine.block_kernels.reduce_rows`, or from :func:`topk` where they hold a NaN.

    :param scores: shape: (b, C), excluded entries ``-inf``
    :return: ids (b, k) int64 and scores (b, k), the scores' dtype
    """
    values, ids = smallest_ids_at_the_boundary(scores, *topk_candidates(scores, k))
    # order each list: by ascending ID, then (stably) by score descending, NaN first (torch.sort ranks NaN above
    # every number, as torch.topk does); -0.0 + 0.0 is +0.0, so that a radix sort, which orders the two zeros by their
    # bits, sees them equal as a comparison does
    ids, by_id = torch.sort(ids, dim=1)
    values = values.gather(1, by_id)
    by_score = torch.sort(values + 0.0, dim=1, descending=True, stable=True).indices
    return ids.gather(1, by_score), values.gather(1, by_score)


def topk(scores: torch.Tensor, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`topk_tensors` as numpy arrays on the host: ids (b, k) int64 and scores (b, k) float32.

    Used for CPU rows holding a NaN; other CPU rows take the same lists from
    :func:`kgeval.lp.engine.block_kernels.reduce_rows`.
    """
    ids, values = topk_tensors(scores, k)
    return ids.cpu().numpy(), values.float().cpu().numpy()
