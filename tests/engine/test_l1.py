"""L1 distance matrices: the bits of ``torch.cdist(p=1)`` on the compiled path, torch itself elsewhere."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgeval.engine.l1 import ROWS_PER_TASK, L1Candidates, l1_cdist


def random(shape, seed, scale=1.0, dtype=torch.float32):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=generator) * scale).to(dtype)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.view(torch.int32), b.view(torch.int32))


@pytest.mark.parametrize("shape", [(1, 1, 1), (5, 3, 7), (37, 1500, 64), (6, 2049, 128), (4, 10, 300)])
def test_same_bits_as_torch_cdist(shape):
    rows, num_candidates, dims = shape
    queries, candidates = random((rows, dims), 1, scale=3.0), random((num_candidates, dims), 2)
    expected = torch.cdist(queries, candidates, p=1)
    assert same_bits(L1Candidates(candidates).distances(queries), expected)
    assert same_bits(l1_cdist(queries, candidates), expected)


def test_rows_of_one_matrix_equal_the_whole_matrix():
    """The engine asks for blocks of rows: any slice of queries gives the rows of the whole matrix."""
    queries, candidates = random((50, 32), 3), random((700, 32), 4)
    scorer = L1Candidates(candidates)
    whole = scorer.distances(queries)
    for start, stop in ((0, 1), (3, 10), (10, 50)):
        assert same_bits(scorer.distances(queries[start:stop]), whole[start:stop])


def test_threads_split_the_rows_with_the_same_bits():
    queries, candidates = random((3 * ROWS_PER_TASK + 5, 16), 5), random((300, 16), 6)
    expected = torch.cdist(queries, candidates, p=1)
    assert same_bits(l1_cdist(queries, candidates, threads=2), expected)


def test_other_inputs_go_to_torch():
    """float64, batched inputs and inputs that need gradients: torch.cdist's own results and gradients."""
    queries64, candidates64 = random((4, 5), 7, dtype=torch.float64), random((6, 5), 8, dtype=torch.float64)
    result = L1Candidates(candidates64).distances(queries64)
    assert result.dtype == torch.float64
    assert torch.equal(result, torch.cdist(queries64, candidates64, p=1))
    batched, batched_candidates = random((2, 4, 5), 9), random((2, 6, 5), 10)
    assert torch.equal(l1_cdist(batched, batched_candidates), torch.cdist(batched, batched_candidates, p=1))
    queries = random((3, 5), 11).requires_grad_()
    candidates = random((4, 5), 12)
    L1Candidates(candidates).distances(queries).sum().backward()
    expected = queries.detach().clone().requires_grad_()
    torch.cdist(expected, candidates, p=1).sum().backward()
    assert torch.equal(queries.grad, expected.grad)


def test_float32_queries_against_float64_candidates_use_torch():
    candidates = random((6, 5), 13, dtype=torch.float64)
    queries = random((2 * ROWS_PER_TASK, 5), 14)
    with pytest.raises(RuntimeError):  # torch.cdist's own error for mixed dtypes
        l1_cdist(queries, candidates, threads=2)


def test_widths_that_differ_are_an_error():
    with pytest.raises(ValueError, match="queries have 3 dimensions, the candidates 4"):
        L1Candidates(random((5, 4), 15)).distances(random((2, 3), 16))


def test_non_contiguous_queries():
    """Non-contiguous queries (a column slice) give the same bits as their contiguous copy."""
    wide = random((20, 40), 17)
    candidates = random((30, 20), 18)
    sliced = wide[:, ::2]
    assert not sliced.is_contiguous()
    assert same_bits(L1Candidates(candidates).distances(sliced), torch.cdist(sliced.contiguous(), candidates, p=1))
    assert np.shares_memory(wide.numpy(), sliced.numpy())
