"""Top-k lists of score rows with torch (GPUs, rows holding a NaN): the first k by score, ties by ascending ID."""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["TOPK_GROUP", "smallest_ids_at_the_boundary", "topk", "topk_candidates"]

#: group size of the two-stage top-k on CPU
TOPK_GROUP = 16


def topk_candidates(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k values and IDs of each row, in any order.

    On CPU with many candidates, two stages: split each row's columns into ``m`` strided groups
    ``{j, j + m, j + 2m, ...}``, take each group's maximum (a vectorized elementwise maximum over ``TOPK_GROUP``
    slices), and look for the top k only inside the k groups with the largest maxima. This is exact: a candidate in
    any other group is beaten by the k group maxima above it.
    """
    b, C = scores.shape
    m = C // TOPK_GROUP
    if scores.device.type != "cpu" or m < 8 * k:
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


def topk(scores: torch.Tensor, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k candidates of each row: the first ``k`` by score descending (NaN first), ties by ascending ID.

    Used on a GPU (:mod:`kgeval.lp.engine.device_batch`) and for CPU rows holding a NaN; other CPU rows take the
    same lists from :func:`kgeval.lp.engine.block_kernels.reduce_rows`.

    :param scores: shape: (b, C), excluded entries ``-inf``
    :return: ids (b, k) int64 and scores (b, k) float32
    """
    values, ids = smallest_ids_at_the_boundary(scores, *topk_candidates(scores, k))
    ids, values = ids.cpu().numpy(), values.float().cpu().numpy()
    # order the list: by score descending (NaN first, as torch.topk ranks it), ties by ascending ID; one lexsort on
    # the small (b, k) lists
    descending = np.where(np.isnan(values), -np.inf, -values)
    order = np.lexsort((ids, descending), axis=1)
    return np.take_along_axis(ids, order, axis=1), np.take_along_axis(values, order, axis=1)
