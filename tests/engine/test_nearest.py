"""row_column_max and topk_indices against torch's own max and topk: the same values and indices, ties, NaN and the
cases torch answers itself."""

from __future__ import annotations

import pytest
import torch

from kgeval.engine.nearest import row_column_max, topk_indices


def unit_sims(rows: int, cols: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    a = torch.nn.functional.normalize(torch.randn(rows, 16, generator=g), dim=1)
    b = torch.nn.functional.normalize(torch.randn(cols, 16, generator=g), dim=1)
    return a @ b.T


def assert_same(got, expected):
    for x, y in zip(got, expected, strict=True):
        assert x.dtype == y.dtype and torch.equal(x, y)


@pytest.mark.parametrize("rows, cols", [(1, 1), (3, 50), (64, 700), (700, 64)])
def test_row_column_max_is_torch_max(rows, cols):
    sims = unit_sims(rows, cols, rows + cols)
    assert_same(row_column_max(sims), (*sims.max(dim=1), *sims.max(dim=0)))
    ties = (sims * 4).round()  # many equal maxima: torch documents the first index
    assert_same(row_column_max(ties), (*ties.max(dim=1), *ties.max(dim=0)))


def test_row_column_max_hands_nan_and_other_types_to_torch():
    sims = unit_sims(20, 30, 1)
    sims[4, 9] = float("nan")
    got = row_column_max(sims)
    expected = (*sims.max(dim=1), *sims.max(dim=0))
    for x, y in zip(got, expected):
        assert torch.equal(x.nan_to_num(7.0), y.nan_to_num(7.0))
    double = unit_sims(5, 6, 2).double()
    assert_same(row_column_max(double), (*double.max(dim=1), *double.max(dim=0)))


@pytest.mark.parametrize("rows, cols, k", [(1, 1, 1), (5, 40, 1), (30, 500, 100), (8, 120, 120), (50, 2000, 7)])
def test_topk_indices_is_torch_topk(rows, cols, k):
    sims = unit_sims(rows, cols, k)
    sims[0, 0] = -float("inf")
    assert torch.equal(topk_indices(sims, k), sims.topk(k, dim=1).indices)


def test_rows_with_ties_or_nan_get_torch_answer():
    sims = (unit_sims(40, 300, 3) * 8).round()  # few distinct values: ties in almost every row's top 10
    sims[5, 3] = float("nan")
    assert torch.equal(topk_indices(sims, 10), sims.topk(10, dim=1).indices)


def test_topk_indices_outside_the_compiled_path():
    sims = unit_sims(4, 9, 4)
    assert torch.equal(topk_indices(sims, 0), sims.topk(0, dim=1).indices)
    double = sims.double()
    assert torch.equal(topk_indices(double, 3), double.topk(3, dim=1).indices)
    with pytest.raises(RuntimeError):
        topk_indices(sims, 10)  # more than the row holds: torch's own error
