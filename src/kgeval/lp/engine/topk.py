"""Top-k candidate lists of score rows: a two-stage exact top-k on CPU and a deterministic order within the list."""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["TOPK_GROUP", "topk", "topk_candidates"]

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


def topk(scores: torch.Tensor, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k candidates of each row, best first, ties within the list ordered by candidate ID.

    On CPU it is called per block of rows from the worker pool (:func:`kgeval.lp.engine.cpu_blocks.reduce_cpu`), so
    it runs on one thread.

    :param scores: shape: (b, C), excluded entries ``-inf``
    :return: ids (b, k) int64 and scores (b, k) float32
    """
    values, ids = topk_candidates(scores, k)
    ids, values = ids.cpu().numpy(), values.float().cpu().numpy()
    # make the order within the list deterministic: by score descending (NaN first, as torch.topk ranks it), ties by
    # ascending ID; one lexsort on the small (b, k) lists
    descending = np.where(np.isnan(values), -np.inf, -values)
    order = np.lexsort((ids, descending), axis=1)
    return np.take_along_axis(ids, order, axis=1), np.take_along_axis(values, order, axis=1)
