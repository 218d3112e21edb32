"""Brute-force top-k lists for the tests of kgeval.lp.engine.topk and kgeval.lp.engine.block_kernels."""

from __future__ import annotations

import numpy as np


def sorted_lists(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's first k candidates of a full stable sort: score descending (NaN first), ties by ascending ID."""
    ids = np.empty((len(scores), k), dtype=np.int64)
    for r, row in enumerate(scores):
        not_nan = ~np.isnan(row)  # False (a NaN) sorts first
        descending = np.where(not_nan, -row.astype(np.float64), 0.0)
        ids[r] = np.lexsort((np.arange(len(row)), descending, not_nan))[:k]
    return ids, np.take_along_axis(scores, ids, axis=1)
