"""kgeval.lp.engine.products: the pieced matrix product gives exactly one product's bits."""

from __future__ import annotations

import pytest
import torch

from kgeval.lp.engine import products


@pytest.mark.parametrize("piece_columns", [64, 2048])
@pytest.mark.parametrize("bias_shape", ["row", "column", "none"])
def test_addmm_in_pieces_equals_one_product(monkeypatch, piece_columns, bias_shape):
    """Pieces of columns, each written into its columns of one result, give exactly one product's values (a row
    offset as the affine scorers pass it, a candidate offset as the distance scorer passes it, alpha included)."""
    monkeypatch.setattr(products, "PIECE_COLUMNS", piece_columns)
    generator = torch.Generator().manual_seed(0)
    b, D, E = 115, 200, 3 * piece_columns + 17
    q = torch.randn(b, D, generator=generator)
    candidates_t = torch.randn(E, D, generator=generator).t().contiguous()
    bias = {"row": torch.randn(b, 1, generator=generator), "column": torch.randn(1, E, generator=generator)}.get(
        bias_shape
    )
    calls = []
    real_addmm, real_mm = torch.addmm, torch.mm
    monkeypatch.setattr(torch, "addmm", lambda *a, **k: calls.append(1) or real_addmm(*a, **k))
    monkeypatch.setattr(torch, "mm", lambda *a, **k: calls.append(1) or real_mm(*a, **k))
    for alpha in (1.0,) if bias is None else (1.0, -2.0):
        calls.clear()
        got = products.addmm_in_pieces(bias, q, candidates_t, alpha=alpha)
        assert len(calls) == 4  # 3 full pieces and a bit: ceil(E / PIECE_COLUMNS) products
        expected = real_mm(q, candidates_t) if bias is None else real_addmm(bias, q, candidates_t, alpha=alpha)
        assert got.shape == (b, E) and torch.equal(got, expected)
    if bias is None:
        # the product alone equals the product plus a zero offset, as the affine scorers rely on
        assert torch.equal(got, real_addmm(torch.zeros(b, 1), q, candidates_t))
        with pytest.raises(ValueError, match="alpha needs a bias"):
            products.addmm_in_pieces(None, q, candidates_t, alpha=-2.0)
    empty_bias = bias[:0] if bias_shape == "row" else bias
    assert products.addmm_in_pieces(empty_bias, q[:0], candidates_t).shape == (0, E)


def test_single_threaded_runs_on_one_thread_and_restores_the_count():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with products.single_threaded("cpu"):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with pytest.raises(RuntimeError), products.single_threaded(torch.device("cpu")):
            raise RuntimeError("inside")
        assert torch.get_num_threads() == 2
        with products.single_threaded("meta"):  # not a CPU device: the count is left alone
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
