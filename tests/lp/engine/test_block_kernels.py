"""Tests of kgeval.lp.engine.block_kernels (the fused block reduction) against brute-force numpy."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.engine.topk_kernel import TOPK_GROUP
from kgeval.lp.engine.block_kernels import reduce_rows
from topk_reference import sorted_lists


def csr_ranges(rng: np.random.Generator, sets: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's candidates as (start, length) ranges into one shared value array, the rows' ranges stored in a
    shuffled order with unused values between them (so that a kernel must follow the starts)."""
    values, starts = [rng.integers(0, 3, size=2).tolist()], np.zeros(len(sets), dtype=np.int64)
    position = len(values[0])
    for r in rng.permutation(len(sets)):
        starts[r] = position
        padding = rng.integers(0, 3, size=int(rng.integers(0, 3))).tolist()
        values.append(list(sets[r]) + padding)
        position += len(sets[r]) + len(padding)
    lengths = np.array([len(s) for s in sets], dtype=np.int64)
    return starts, lengths, np.array([v for chunk in values for v in chunk], dtype=np.int64)


def random_block(rng: np.random.Generator, b: int, C: int, q: int):
    """Rows of few distinct values (many exact ties) and some ``-inf``, a row of one value, a row with a NaN and a
    row whose true candidate is NaN, rows without queries; filters (unique per row) that often list the true
    candidate; top-k exclusions."""
    rows = rng.integers(0, 4, size=(b, C)).astype(np.float32)
    rows[rng.random(rows.shape) < 0.1] = -np.inf
    rows[1] = 2.0
    query_rows = np.sort(rng.choice(np.arange(b)[np.arange(b) % 4 != 3], size=q))  # every 4th row has none
    true = rng.integers(0, C, size=q)
    rows[2, rng.integers(0, C)] = np.nan
    rows[query_rows[-1], true[-1]] = np.nan
    excluded = [sorted(set(rng.choice(C, size=int(rng.integers(0, C // 2 + 1))).tolist())) for _ in range(b)]
    for i in range(0, q, 3):  # the true candidate listed among its row's filters
        excluded[query_rows[i]] = sorted(set(excluded[query_rows[i]]) | {int(true[i])})
    topk_excluded = [sorted(set(rng.choice(C, size=int(rng.integers(0, C // 3 + 1))).tolist())) for _ in range(b)]
    return rows, query_rows, true, excluded, topk_excluded


def run(rows, first_row, query_rows, true, ex, tk, k):
    """The kernel on copies of its inputs, outputs prefilled with markers: (rows after, t, counts, ids, values,
    flags)."""
    rows = rows.copy()
    q, b = len(query_rows), len(rows)
    t = np.full(q, -7.0, dtype=np.float32)
    counts = [np.full(q, -1, dtype=np.int64) for _ in range(3)]
    ids = np.full((b, k), -1, dtype=np.int64)
    values = np.full((b, k), -7.0, dtype=np.float32)
    queries = (query_rows + first_row, true)
    flags = reduce_rows(rows, first_row, queries, tuple(ex), tuple(tk), k, (t, *counts), (ids, values))
    return rows, t, counts, ids, values, flags


@pytest.mark.parametrize(
    "C, k",
    # k = 3 with C = 1 is the k > C case that "C+1" covers already
    [
        (C, k)
        for C in (1, 7, TOPK_GROUP, 300, 8 * TOPK_GROUP * 5 - 1)
        for k in (0, 1, 3, "C", "C+1")
        if (C, k) != (1, 3)
    ],
)
def test_reduce_rows_equals_brute_force(C, k):
    """True scores read before filtering, the counts over the NaN-filtered rows (ties before the true ID), the rows
    restored with their top-k exclusions at -inf, the top-k lists of a stable sort; rows with a NaN, and every row
    when k > C, flagged and their lists left alone."""
    k = {"C": C, "C+1": C + 1}.get(k, k)
    rng = np.random.default_rng(C * 10 + k)
    b, q = 12, 30
    rows, query_rows, true, excluded, topk_excluded = random_block(rng, b, C, q)
    ex, tk = csr_ranges(rng, excluded), csr_ranges(rng, topk_excluded)
    after, t, (greater, greater_equal, equal_before), ids, values, flags = run(rows, 5, query_rows, true, ex, tk, k)

    np.testing.assert_array_equal(t, rows[query_rows, true])
    for i in range(q):
        row = rows[query_rows[i]].copy()
        row[excluded[query_rows[i]]] = np.nan
        s = rows[query_rows[i], true[i]]
        assert greater[i] == np.sum(row > s)
        assert greater_equal[i] == np.sum(row >= s)
        assert equal_before[i] == np.sum(row[: true[i]] == s)
    expected_rows = rows.copy()
    if k:
        for r in range(b):
            expected_rows[r, topk_excluded[r]] = -np.inf
    np.testing.assert_array_equal(after, expected_rows)
    has_nan = np.isnan(expected_rows).any(axis=1)
    assert flags.tolist() == ([bool(k)] * b if k > C else (has_nan & bool(k)).tolist())
    if 0 < k <= C:
        expected_ids, expected_values = sorted_lists(expected_rows, k)
        np.testing.assert_array_equal(ids[~has_nan], expected_ids[~has_nan])
        np.testing.assert_array_equal(values[~has_nan], expected_values[~has_nan])
    assert (ids[flags] == -1).all() and (values[flags] == -7.0).all()


def test_reduce_rows_without_queries_or_filters():
    """No queries and empty filters: only the top-k lists, those of a stable sort, also on real-valued scores."""
    rng = np.random.default_rng(1)
    rows = rng.standard_normal((5, 14_505)).astype(np.float32)
    none = np.zeros(5, dtype=np.int64), np.zeros(5, dtype=np.int64), np.zeros(0, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    after, t, _, ids, values, flags = run(rows, 0, empty, empty, none, none, 10)
    assert not flags.any() and len(t) == 0
    np.testing.assert_array_equal(after, rows)
    expected_ids, expected_values = sorted_lists(rows, 10)
    np.testing.assert_array_equal(ids, expected_ids)
    np.testing.assert_array_equal(values, expected_values)


def test_reduce_rows_rejects_candidates_outside_the_row():
    """A filtered candidate or true candidate outside 0..C-1, or queries outside the block, raise (no stray write)."""
    rows = np.zeros((2, 4), dtype=np.float32)
    zeros = np.zeros(2, dtype=np.int64)
    none = zeros, zeros, np.zeros(0, dtype=np.int64)
    one = np.zeros(1, dtype=np.int64)
    with pytest.raises(IndexError):
        run(rows, 0, one, one, (zeros, np.array([1, 0]), np.array([4])), none, 0)
    with pytest.raises(IndexError):
        run(rows, 0, one, one, none, (zeros, np.array([0, 1]), np.array([-1])), 1)
    with pytest.raises(IndexError):
        run(rows, 0, one, one + 4, none, none, 0)
    with pytest.raises(ValueError):
        run(rows, 0, one + 2, one, none, none, 0)


@pytest.mark.parametrize("chunk", [1, 3, 16, 1000])
def test_counts_in_chunks_equal_numpy_counts(chunk):
    """Each chunk's float32 counts, summed: the numpy counts of ``>``, ``>=`` and the ties before the true ID, on rows
    with NaN, infinities and many ties, for chunks that split the row anywhere (also one candidate a chunk)."""
    from kgeval.lp.engine.block_kernels import _count

    rng = np.random.default_rng(chunk)
    for C in (1, 2, 17, 250, 1001):
        row = rng.integers(-2, 3, size=C).astype(np.float32)
        row[rng.random(C) < 0.1] = np.nan
        row[rng.random(C) < 0.05] = np.inf
        for c in rng.integers(0, C, size=5):
            t = row[c]
            expected = (np.sum(row > t), np.sum(row >= t), np.sum(row[:c] == t))
            assert _count(row, t, int(c), chunk) == expected


def test_float32_counts_stay_exact_beyond_float32_integers():
    """More candidates above the true score than float32 holds as integers (2**24 + 3): the chunked counts are exact
    (one float32 sum over the row would stop at 2**24)."""
    from kgeval.lp.engine.block_kernels import COUNT_CHUNK, _count

    assert COUNT_CHUNK <= 2**24
    C = 2**24 + 3
    row = np.ones(C, dtype=np.float32)
    row[7] = 0.0
    assert _count(row, np.float32(0.0), 7, COUNT_CHUNK) == (C - 1, C, 0)
