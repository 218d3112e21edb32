"""Tests of kgeval.lp.engine.topk: the two-stage top-k and the tie rule against a full sort."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgeval.lp.engine.topk import TOPK_GROUP, smallest_ids_at_the_boundary, topk, topk_candidates
from topk_reference import sorted_lists


@pytest.mark.parametrize("C", [10, 8 * TOPK_GROUP * 5 - 1, 8 * TOPK_GROUP * 5, 3001])
@pytest.mark.parametrize("nan_share", [0.0, 0.01])
def test_topk_equals_a_full_sort(C, nan_share):
    """The lists equal a full stable sort, also where candidates tie at the k-th score (many ties here)."""
    rng = np.random.default_rng(C)
    scores = rng.integers(0, 50, size=(6, C)).astype(np.float32)
    scores[rng.random(scores.shape) < 0.2] = -np.inf
    scores[rng.random(scores.shape) < nan_share] = np.nan
    scores[0, :] = 7.0  # every candidate tied
    k = 5
    ids, values = topk(torch.as_tensor(scores), k)
    expected_ids, expected_values = sorted_lists(scores, k)
    np.testing.assert_array_equal(ids, expected_ids)
    np.testing.assert_array_equal(values, expected_values)


def test_boundary_rule_keeps_lists_without_a_left_out_tie():
    """A list whose k-th score no other candidate shares comes back as it went in (the same object)."""
    scores = torch.tensor([[3.0, 1.0, 2.0, 0.5], [1.0, 1.0, 0.0, 0.0]])
    values, ids = torch.tensor([[3.0, 2.0], [1.0, 1.0]]), torch.tensor([[0, 2], [1, 0]])
    out_values, out_ids = smallest_ids_at_the_boundary(scores, values, ids)
    assert out_ids is ids and out_values is values


def test_boundary_rule_takes_the_smallest_tied_ids():
    scores = torch.tensor([[0.0, 2.0, 1.0, 1.0, 1.0], [float("nan"), 0.0, float("nan"), float("nan"), 5.0]])
    values, ids = torch.tensor([[2.0, 1.0], [float("nan"), float("nan")]]), torch.tensor([[1, 4], [3, 2]])
    out_values, out_ids = smallest_ids_at_the_boundary(scores, values, ids)
    assert out_ids.tolist() == [[1, 2], [0, 2]]
    assert out_values[0].tolist() == [2.0, 1.0] and out_values[1].isnan().all()


def test_two_stage_candidates_hold_the_top_values():
    rng = np.random.default_rng(0)
    scores = torch.as_tensor(rng.standard_normal((4, 5000)).astype(np.float32))
    values, ids = topk_candidates(scores, 7)
    for r in range(4):
        assert sorted(values[r].tolist()) == sorted(torch.topk(scores[r], 7).values.tolist())
        np.testing.assert_array_equal(scores[r, ids[r]].numpy(), values[r].numpy())


def test_topk_tensors_order_by_score_then_id():
    """Lists ordered as a Python sort orders them: score descending with NaN first, equal scores (the two zeros too)
    by ascending ID; checked on rows of few distinct values, both zeros, NaN and infinities."""
    from kgeval.lp.engine.topk import topk_tensors

    rng = np.random.default_rng(11)
    levels = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan], dtype=np.float32)
    scores = levels[rng.integers(0, len(levels), size=(40, 300))]
    ids, values = topk_tensors(torch.as_tensor(scores), 12)

    def key(j, row):
        s = row[j]
        return (not np.isnan(s), 0.0 if np.isnan(s) else -s, j)

    for r, row in enumerate(scores):
        expected = sorted(range(len(row)), key=lambda j: key(j, row))[:12]
        assert ids[r].tolist() == expected
        np.testing.assert_array_equal(values[r].numpy(), row[expected])
