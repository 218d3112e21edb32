"""Tests of kgeval.lp.engine.device_batch (the GPU reduction, run on CPU tensors) against brute force and the
CPU block reduction."""

from __future__ import annotations

import numpy as np
import pytest
import torch



def as_pairs(pairs):
    """(row, candidate) pairs as two int64 arrays."""
    return np.array([r for r, _ in pairs], dtype=np.int64), np.array([j for _, j in pairs], dtype=np.int64)


def test_torch_reduction_equals_numpy():
    """The torch reduction (used on GPUs) and the numpy one (CPU) count alike, ties and shared rows included."""
    from kgeval.lp.engine.batches import checked_blocks
    from kgeval.lp.engine.cpu_blocks import BatchQueries, reduce_cpu
    from kgeval.lp.engine.device_batch import count_torch
    from kgeval.lp.engine.topk import topk

    rng = np.random.default_rng(0)
    scores = rng.integers(0, 5, size=(20, 300)).astype(np.float32)
    scores[rng.random(scores.shape) < 0.1] = np.nan  # filtered entries
    rows = np.sort(rng.integers(0, 20, size=50))
    true = rng.integers(0, 300, size=50)
    true_scores = np.nan_to_num(scores[rows, true], nan=1.0)
    scores[rows, true] = true_scores
    unexcluded = np.ones(50, dtype=bool)
    queries = BatchQueries(rows, true)
    reduced = reduce_cpu(checked_blocks(torch.as_tensor(scores.copy()), 300), 20, 300, queries, None, None, 0, None)()
    expected = reduced[:3]
    np.testing.assert_array_equal(reduced[3], true_scores)
    got = count_torch(
        torch.as_tensor(scores),
        torch.as_tensor(rows),
        torch.as_tensor(true),
        torch.as_tensor(true_scores),
        torch.as_tensor(unexcluded),
        chunk=7,
    ).numpy()
    for a, b in zip(expected, got):
        np.testing.assert_array_equal(a, b)
    # brute force for the counts
    for i in range(50):
        row = scores[rows[i]]
        assert expected[0][i] == np.sum(row > true_scores[i])
        assert expected[2][i] == np.sum(row[: true[i]] == true_scores[i])
    # two-stage top-k equals a plain top-k
    dense = torch.as_tensor(rng.standard_normal((8, 5000)).astype(np.float32))
    ids, values = topk(dense, 10)
    reference = torch.topk(dense, 10, dim=1)
    np.testing.assert_array_equal(values, reference.values.numpy())
    np.testing.assert_array_equal(ids, reference.indices.numpy())
    # a NaN score comes first, as torch.topk ranks it; equal scores by ascending ID
    dense[0, 4321], dense[1, 7], dense[1, 3] = float("nan"), 100.0, 100.0
    ids, values = topk(dense, 10)
    assert ids[0, 0] == 4321 and np.isnan(values[0, 0]) and not np.isnan(values[0, 1:]).any()
    assert list(ids[1, :2]) == [3, 7]


def test_torch_batch_reduction_equals_cpu_blocks():
    """The GPU path's whole-batch reduction (run here on CPU tensors) equals the CPU's block-wise one: counts, ties,
    top-k lists, with filtered and top-k-excluded candidates."""
    from kgeval.lp.engine.batches import batch_ranges, checked_blocks
    from kgeval.lp.engine.cpu_blocks import BatchQueries, reduce_cpu
    from kgeval.lp.engine.device_batch import fetch, reduce_torch
    from kgeval.lp.ranking import RowExclusions

    rng = np.random.default_rng(3)
    b, C, q, k = 12, 200, 30, 5
    scores = rng.integers(0, 6, size=(b, C)).astype(np.float32)
    rows = np.sort(rng.integers(0, b, size=q))
    true = rng.integers(0, C, size=q)
    true_scores = scores[rows, true]
    ex_pairs = sorted({(int(r), int(j)) for r, j in zip(rng.integers(0, b, 300), rng.integers(0, C, 300))})
    ex_pairs = [(r, j) for r, j in ex_pairs if not any(rows[i] == r and true[i] == j for i in range(q))]
    tk_pairs = sorted({(int(r), int(j)) for r, j in zip(rng.integers(0, b, 400), rng.integers(0, C, 400))})
    ex, tk = as_pairs(ex_pairs), as_pairs(tk_pairs)
    unexcluded = np.ones(q, dtype=bool)
    blocks = checked_blocks(torch.as_tensor(scores.copy()), C)
    ranges = [batch_ranges(RowExclusions.from_pairs(*p, b)[0], 0, b) for p in (ex, tk)]
    expected = reduce_cpu(blocks, b, C, BatchQueries(rows, true), *ranges, k, None)()
    np.testing.assert_array_equal(expected[3], true_scores)
    expected = expected[:3] + expected[4:]
    flat = lambda pairs: torch.as_tensor(pairs[0] * C + pairs[1])  # noqa: E731
    reduced = reduce_torch(
        torch.as_tensor(scores.copy()),
        torch.as_tensor(rows),
        torch.as_tensor(true),
        torch.as_tensor(unexcluded),
        flat(ex),
        flat(tk),
        k,
        chunk=4,
    )
    (got,) = fetch([reduced])
    np.testing.assert_array_equal(got[3], true_scores)
    got = got[:3] + got[4:]
    for a, b_ in zip(expected, got):
        np.testing.assert_array_equal(a, b_)




def test_device_ranges_expand_like_numpy():
    """Each batch's filtered entries, expanded on the device from their row ranges, are the numpy expansion's
    (``RowExclusions.batch``), for batches that start and end anywhere, rows with none, and an index whose value array
    holds other rows' entries too."""
    from kgeval.lp.engine.device_batch import DeviceRanges
    from kgeval.lp.ranking import RowExclusions

    rng = np.random.default_rng(7)
    C, num_rows = 50, 40
    pairs = sorted({(int(r), int(j)) for r, j in zip(rng.integers(0, 60, 500), rng.integers(0, C, 500))})
    exclusions, index = RowExclusions.from_pairs(*as_pairs(pairs), 60)
    # rows keyed out of order, as a side's rows look up a shared index: ranges into index.values, not in order
    keys = rng.permutation(60)[:num_rows]
    exclusions = RowExclusions.from_index(index, keys)
    ranges = DeviceRanges(exclusions, torch.device("cpu"))
    for start, stop in [(0, num_rows), (0, 1), (3, 17), (17, 18), (20, num_rows), (5, 5)]:
        rows, candidates = exclusions.batch(start, stop)
        np.testing.assert_array_equal(ranges.flat(start, stop, C).numpy(), rows * C + candidates)


def test_fetch_splits_batches():
    """Results of several batches, copied back together, come apart batch by batch, with and without top-k lists."""
    from kgeval.lp.engine.device_batch import DeviceCounts, fetch

    def batch(q, b, k, shift):
        counts = torch.arange(3 * q).reshape(3, q) + shift
        ids = torch.arange(b * k).reshape(b, k) - shift if k else None
        values = torch.rand(b, k) if k else None
        return DeviceCounts(counts, torch.rand(q, dtype=torch.float64), ids, values)

    for k in (0, 3):
        results = [batch(4, 2, k, 0), batch(1, 1, k, 100), batch(6, 5, k, 200)]
        for got, r in zip(fetch(results), results):
            for a, b_ in zip(got[:3], r.counts.numpy()):
                np.testing.assert_array_equal(a, b_)
            np.testing.assert_array_equal(got[3], r.true_scores.float().numpy())
            assert got[3].dtype == np.float32
            if k:
                np.testing.assert_array_equal(got[4], r.topk_ids.numpy())
                np.testing.assert_array_equal(got[5], r.topk_scores.numpy())
            else:
                assert got[4] is None and got[5] is None
    assert fetch([]) == []
