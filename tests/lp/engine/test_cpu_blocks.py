"""Tests of kgeval.lp.engine.cpu_blocks: block bounds and the block-wise CPU reduction against brute force."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgeval.lp.engine.batches import batch_ranges, checked_blocks
from kgeval.lp.engine.cpu_blocks import BatchQueries, block_bounds, block_rows, reduce_cpu
from kgeval.lp.engine.device_batch import fetch, reduce_torch
from kgeval.lp.ranking import RowExclusions
from kgeval.runtime.workers import worker_pool


def as_ranges(pairs: list[tuple[int, int]], num_rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, candidate) pairs as the CSR ranges :func:`reduce_cpu` reads (starts, lengths, shared values)."""
    rows = np.array([r for r, _ in pairs], dtype=np.int64)
    candidates = np.array([j for _, j in pairs], dtype=np.int64)
    return batch_ranges(RowExclusions.from_pairs(rows, candidates, num_rows)[0], 0, num_rows)


@pytest.mark.parametrize("num_rows", [0, 1, 3, 10, 11, 14, 15, 16, 100])
def test_block_bounds_cover_rows_without_tiny_blocks(num_rows):
    """Blocks of rows partition all rows in order; only a batch shorter than half a block gives a block that short."""
    block = 10
    bounds = block_bounds(num_rows, block)
    assert bounds[0] == 0 and bounds[-1] == num_rows and (np.diff(bounds) > 0).all()
    sizes = np.diff(bounds)
    assert (sizes <= block + block // 2).all()
    if num_rows >= block:
        assert (sizes >= (block + 1) // 2).all()


def test_block_rows_fit_the_block_bytes(monkeypatch):
    import kgeval.lp.engine.cpu_blocks as cpu_blocks

    monkeypatch.setattr(cpu_blocks, "CPU_BLOCK_BYTES", 10_000)
    assert block_rows(100) == 20  # 20 rows of 100 float32 scores and their byte mask: 20 * 500 bytes
    assert block_rows(10**6) == 1
    assert block_rows(0) == 2000


@pytest.mark.parametrize("threads", [1, 2])
def test_reduce_cpu_counts_equal_brute_force(threads):
    """Counts of every query (shared rows, NaN-filtered entries, ties) and top-k lists, block by block on a pool."""
    import kgeval.lp.engine.cpu_blocks as cpu_blocks

    rng = np.random.default_rng(11)
    b, C, q, k = 25, 60, 70, 3
    scores = rng.integers(0, 4, size=(b, C)).astype(np.float32)
    rows = np.sort(rng.integers(0, b, size=q))
    true = rng.integers(0, C, size=q)
    pairs = sorted({(int(r), int(j)) for r, j in zip(rng.integers(0, b, 200), rng.integers(0, C, 200))})
    pairs = [(r, j) for r, j in pairs if not any(rows[i] == r and true[i] == j for i in range(q))]
    ex = as_ranges(pairs, b)
    old = cpu_blocks.CPU_BLOCK_BYTES
    cpu_blocks.CPU_BLOCK_BYTES = 5 * C * 4  # blocks of 4 rows
    try:
        with worker_pool(threads) as pool:
            greater, greater_equal, equal_before, t, ids, values = reduce_cpu(
                checked_blocks(torch.as_tensor(scores.copy()), C), b, C,
                BatchQueries(rows, true), ex, None, k, pool,
            )()
    finally:
        cpu_blocks.CPU_BLOCK_BYTES = old
    excluded = {r: {j for rr, j in pairs if rr == r} for r in range(b)}
    for i in range(q):
        row = scores[rows[i]]
        keep = np.array([j not in excluded[rows[i]] for j in range(C)])
        s = row[true[i]]
        assert t[i] == s
        assert greater[i] == np.sum((row > s) & keep)
        assert greater_equal[i] == np.sum((row >= s) & keep)
        assert equal_before[i] == np.sum((row == s) & keep & (np.arange(C) < true[i]))
    for r in range(b):  # top-k lists ignore the filter (it is restored): the k best scores, ties by ascending ID
        np.testing.assert_array_equal(values[r], np.sort(scores[r])[::-1][:k])
        np.testing.assert_array_equal(scores[r, ids[r]], values[r])
        assert len(set(ids[r].tolist())) == k
        assert all(ids[r][a] < ids[r][a + 1] for a in range(k - 1) if values[r][a] == values[r][a + 1])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("k", [0, 3, 60])
def test_reduce_cpu_equals_the_torch_reduction(threads, k):
    """Block by block from CSR ranges, equal to the whole-batch torch reduction from flat pairs (the GPU path, here on
    CPU tensors): counts, true scores, top-k ids and values, with many exact ties, rows holding a NaN (their lists
    from torch), the true candidate filtered, top-k exclusions, rows with no queries, k = 0 and k = C."""
    import kgeval.lp.engine.cpu_blocks as cpu_blocks

    rng = np.random.default_rng(k + threads)
    b, C, q = 30, 60, 80
    scores = rng.integers(0, 4, size=(b, C)).astype(np.float32)
    scores[rng.random(scores.shape) < 0.05] = -np.inf
    scores[[4, 17], [9, 33]] = np.nan  # a diverged model's rows
    rows = np.sort(rng.choice(np.arange(b)[np.arange(b) % 5 != 2], size=q))  # every 5th row has no query
    true = rng.integers(0, C, size=q)
    scores[rows[7], true[7]] = np.nan  # a NaN true score
    pairs = sorted({(int(r), int(j)) for r, j in zip(rng.integers(0, b, 500), rng.integers(0, C, 500))})
    pairs = sorted(set(pairs) | {(int(rows[i]), int(true[i])) for i in range(0, q, 3)})  # true candidates filtered
    tk_pairs = sorted({(int(r), int(j)) for r, j in zip(rng.integers(0, b, 400), rng.integers(0, C, 400))})
    tk_pairs = [pair for pair in tk_pairs if pair not in {(4, 9), (17, 33)}]  # the NaNs stay in the lists
    cpu_blocks_bytes = cpu_blocks.CPU_BLOCK_BYTES
    cpu_blocks.CPU_BLOCK_BYTES = 5 * C * 4  # blocks of 4 rows
    try:
        with worker_pool(threads) as pool:
            got = reduce_cpu(
                checked_blocks(torch.as_tensor(scores.copy()), C), b, C, BatchQueries(rows, true),
                as_ranges(pairs, b), as_ranges(tk_pairs, b), k, pool,
            )()
    finally:
        cpu_blocks.CPU_BLOCK_BYTES = cpu_blocks_bytes
    listed = set(pairs)
    unexcluded = np.array([(int(r), int(c)) not in listed for r, c in zip(rows, true)])
    ex, tk = (tuple(np.array(x, dtype=np.int64) for x in zip(*p)) for p in (pairs, tk_pairs))
    C = scores.shape[1]
    flat = lambda pairs: torch.as_tensor(pairs[0] * C + pairs[1])  # noqa: E731
    (expected,) = fetch([reduce_torch(
        torch.as_tensor(scores.copy()), torch.as_tensor(rows), torch.as_tensor(true), torch.as_tensor(unexcluded),
        flat(ex), flat(tk), k, chunk=7,
    )])
    np.testing.assert_array_equal(got[3], scores[rows, true])
    np.testing.assert_array_equal(expected[3], scores[rows, true])
    for a, e in zip(got[:3] + got[4:], expected[:3] + expected[4:]):
        if e is None:
            assert a is None
        else:
            np.testing.assert_array_equal(a, e)
    if k:
        assert np.isnan(got[5][[4, 17], 0]).all()  # NaN first, as torch.topk ranks it


def test_reduce_cpu_with_k_above_the_candidates_raises_as_torch():
    """k > C: every row goes to torch's top-k, which refuses it, as before the compiled kernel."""
    scores = np.zeros((3, 5), dtype=np.float32)
    queries = BatchQueries(np.array([0, 2]), np.array([1, 4]))
    with pytest.raises(RuntimeError, match="out of range"):
        reduce_cpu(checked_blocks(torch.as_tensor(scores), 5), 3, 5, queries, None, None, 6, None)()
