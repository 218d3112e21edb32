"""Tests of kgeval.lp.engine.topk: the two-stage top-k against a full sort."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgeval.lp.engine.topk import TOPK_GROUP, topk, topk_candidates


@pytest.mark.parametrize("C", [10, 8 * TOPK_GROUP * 5 - 1, 8 * TOPK_GROUP * 5, 3001])
def test_topk_equals_a_full_sort(C):
    """The k best scores, best first; each ID has its score, IDs are distinct and ascending among equal scores (which
    of several candidates tied at the k-th score make the list is not specified)."""
    rng = np.random.default_rng(C)
    scores = rng.integers(0, 50, size=(6, C)).astype(np.float32)  # many ties
    scores[rng.random(scores.shape) < 0.2] = -np.inf
    k = 5
    ids, values = topk(torch.as_tensor(scores), k)
    for r in range(len(scores)):
        check_list(scores[r], ids[r], values[r], k)


def check_list(row: np.ndarray, ids: np.ndarray, values: np.ndarray, k: int) -> None:
    np.testing.assert_array_equal(values, np.sort(row)[::-1][:k])
    np.testing.assert_array_equal(row[ids], values)
    assert len(set(ids.tolist())) == k
    for a in range(k - 1):
        if values[a] == values[a + 1]:
            assert ids[a] < ids[a + 1]


def test_two_stage_candidates_hold_the_top_values():
    rng = np.random.default_rng(0)
    scores = torch.as_tensor(rng.standard_normal((4, 5000)).astype(np.float32))
    values, ids = topk_candidates(scores, 7)
    for r in range(4):
        assert sorted(values[r].tolist()) == sorted(torch.topk(scores[r], 7).values.tolist())
        np.testing.assert_array_equal(scores[r, ids[r]].numpy(), values[r].numpy())
