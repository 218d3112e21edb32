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
    monkeypatch.setattr(products, "LAYOUT", "pieces")
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


@pytest.mark.parametrize("layout", ["whole", "auto"])
def test_every_layout_gives_one_products_bits(monkeypatch, layout):
    """One product ("whole") and the timed choice ("auto", through its trials of both layouts and after it settles)
    give the bits of one product; "whole" makes one call."""
    monkeypatch.setattr(products, "PIECE_COLUMNS", 64)
    monkeypatch.setattr(products, "LAYOUT", layout)
    monkeypatch.setattr(products, "_chooser", products.LayoutChooser(trials=2))
    generator = torch.Generator().manual_seed(1)
    q = torch.randn(40, 30, generator=generator)
    candidates_t = torch.randn(300, 30, generator=generator).t().contiguous()
    bias = torch.randn(40, 1, generator=generator)
    expected, expected_affine = torch.mm(q, candidates_t), torch.addmm(bias, q, candidates_t, alpha=-2.0)
    real_mm = torch.mm
    calls = []
    monkeypatch.setattr(torch, "mm", lambda *a, **k: calls.append(1) or real_mm(*a, **k))
    for _ in range(6):
        assert torch.equal(products.addmm_in_pieces(None, q, candidates_t), expected)
        assert torch.equal(products.addmm_in_pieces(bias, q, candidates_t, alpha=-2.0), expected_affine)
    if layout == "whole":
        assert len(calls) == 6
    else:
        assert set(products._chooser.chosen.values()) <= {"pieces", "whole"} and len(products._chooser.chosen) == 2


def test_layout_chooser_alternates_then_keeps_the_faster():
    chooser = products.LayoutChooser(trials=3)
    key = (200, 14_505, torch.float32, None)
    seen = []
    for _ in range(6):
        layout = chooser.layout(key)
        seen.append(layout)
        chooser.record(key, layout, {"pieces": 2.0, "whole": 1.0}[layout] + 0.1 * len(seen))
    assert seen == ["pieces", "whole"] * 3
    assert chooser.chosen == {key: "whole"} and chooser.layout(key) == "whole"
    chooser.record(key, "pieces", 0.0)  # after the choice, more timings change nothing
    assert chooser.layout(key) == "whole"
    other = (400, 14_505, torch.float32, None)
    for _ in range(6):
        layout = chooser.layout(other)
        chooser.record(other, layout, {"pieces": 1.0, "whole": 5.0}[layout])
    assert chooser.chosen[other] == "pieces"  # each shape chooses on its own timings


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
