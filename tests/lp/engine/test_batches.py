"""Tests of kgeval.lp.engine.batches: batch sizes under the memory budget, checked scores and blocks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgeval.lp.engine.batches import checked_blocks, checked_scores, probe_device, rows_per_batch
from kgeval.lp.ranking import rank_from_score_fn


def test_memory_budget_bounds_batches():
    n, C, budget_mb = 1000, 500, 0.25
    scores = torch.randn(n, C, generator=torch.Generator().manual_seed(0))
    calls = []

    def score_fn(rows):
        calls.append(len(rows))
        return scores[rows]

    result = rank_from_score_fn(score_fn, torch.zeros(n, dtype=torch.long), C, memory_budget_mb=budget_mb)
    assert max(calls) * C * 4 <= budget_mb * 2**20
    assert max(calls) == rows_per_batch(C, budget_mb) < n
    assert sum(calls) >= n
    expected = (scores > scores[:, :1]).sum(1) + 1
    np.testing.assert_array_equal(result.rank_optimistic, expected.numpy())


def test_rows_per_batch_by_hand():
    # 1 MiB; each row of 100 candidates holds 2 * 4 * 100 + 2 * 100 = 1000 bytes plus 48 of the scorer's
    assert rows_per_batch(100, 1.0, extra_bytes_per_row=48, fused=True) == 2**20 // 1048
    # unfused CPU batches are capped at CPU_BATCH_BYTES of scores
    assert rows_per_batch(100, 10_000.0) == 2**25 // 400
    assert rows_per_batch(10**9, 1.0) == 1
    with pytest.raises(ValueError, match="positive"):
        rows_per_batch(100, 0)


def test_checked_scores_and_blocks():
    scores = torch.arange(12, dtype=torch.int64).reshape(3, 4)
    checked = checked_scores(scores, 3, 4, torch.device("cpu"))
    assert checked.dtype == torch.float32 and torch.equal(checked, scores.float())
    with pytest.raises(ValueError, match="shape"):
        checked_scores(scores, 2, 4, None)
    blocks = checked_blocks(checked, 4)
    np.testing.assert_array_equal(blocks(1, 3), scores[1:3].numpy())
    prepared = checked_blocks(lambda a, z: scores[a:z], 4)  # a prepared batch: each block scored when asked for
    block = prepared(0, 2)
    assert block.dtype == np.float32 and block.flags.c_contiguous and block.flags.writeable
    np.testing.assert_array_equal(block, scores[:2].numpy())
    assert probe_device(lambda rows: torch.zeros(len(rows), 4), 5).type == "cpu"
    assert probe_device(lambda rows: 1 / 0, 0).type == "cpu"  # no rows: never called
