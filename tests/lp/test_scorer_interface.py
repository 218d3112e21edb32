"""kgeval.lp.scorer_interface: resolve_device, and the Scorer base class (side dispatch, row blocks, defaults) on a toy
scorer whose scores are a lookup table."""

from __future__ import annotations

import pytest
import torch
from pykeen.models import model_resolver

from kgeval.lp.scorer_interface import Scorer, resolve_device
from kgeval.lp.scoring import make_scorer
from test_scoring import datasets  # noqa: F401  (a fixture)


class TableScorer(Scorer):
    """Scores from a table ``T[r, h, t]`` (one score per triple), the simplest Scorer there is."""

    name = "table"
    is_fast = False

    def __init__(self, table: torch.Tensor) -> None:
        self.table = table
        self.num_entities = table.shape[1]
        self.device = torch.device("cpu")

    def score_tails(self, heads, relations):
        return self.table[relations, heads, :]

    def score_heads(self, relations, tails):
        return self.table[relations, :, tails]


@pytest.fixture
def toy():
    generator = torch.Generator().manual_seed(0)
    return TableScorer(torch.randn(3, 7, 7, generator=generator))


def test_resolve_device(monkeypatch, caplog):
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device(None) == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cpu")
    with caplog.at_level("WARNING", logger="kgeval.lp.scorer_interface"):
        assert resolve_device("cuda:1") == torch.device("cpu")
    assert "CUDA is not available" in caplog.text
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device(None) == torch.device("cuda")
    assert resolve_device("auto") == torch.device("cuda")
    assert resolve_device("cuda:1") == torch.device("cuda", 1)


def test_score_dispatches_by_side(toy):
    anchors, relations = torch.tensor([0, 6, 3]), torch.tensor([2, 0, 1])
    for i, (a, r) in enumerate(zip(anchors.tolist(), relations.tolist())):
        # tail side: every entity e as (a, r, e); head side: every entity e as (e, r, a)
        expected_tail = torch.stack([toy.table[r, a, e] for e in range(7)])
        expected_head = torch.stack([toy.table[r, e, a] for e in range(7)])
        torch.testing.assert_close(toy.score("tail", anchors, relations)[i], expected_tail)
        torch.testing.assert_close(toy.score("head", anchors, relations)[i], expected_head)
    with pytest.raises(ValueError, match="side"):
        toy.score("relation", anchors, relations)
    with pytest.raises(ValueError, match="side"):
        toy.prepare("both", anchors, relations)


@pytest.mark.parametrize("side", ["head", "tail"])
def test_row_blocks_are_slices_of_the_scores(toy, side):
    """``prepare(side, a, r)(i, j) == score(side, a, r)[i:j]``: consecutive blocks tile the whole batch."""
    anchors, relations = torch.tensor([1, 2, 3, 4, 5, 0, 6]), torch.tensor([0, 1, 2, 0, 1, 2, 0])
    full = toy.score(side, anchors, relations)
    blocks = toy.prepare(side, anchors, relations)
    assert blocks(0, 7).shape == (7, toy.num_entities)
    assert blocks(3, 3).shape == (0, toy.num_entities)
    torch.testing.assert_close(torch.cat([blocks(0, 2), blocks(2, 5), blocks(5, 7)]), full)
    torch.testing.assert_close(blocks(4, 6), full[4:6])


def test_defaults_and_repr(toy):
    assert toy.bytes_per_query() == 0
    assert repr(toy) == "TableScorer(name='table', is_fast=False, device=cpu)"
    with pytest.raises(TypeError):
        Scorer()  # abstract: score_tails and score_heads are missing


def test_score_dispatch_by_side(datasets):
    model = model_resolver.make("ComplEx", triples_factory=datasets[False].training, random_seed=0, embedding_dim=8)
    scorer = make_scorer(model, device="cpu")
    a, r = torch.tensor([0, 3]), torch.tensor([1, 2])
    torch.testing.assert_close(scorer.score("tail", a, r), scorer.score_tails(a, r))
    torch.testing.assert_close(scorer.score("head", a, r), scorer.score_heads(r, a))
    with pytest.raises(ValueError, match="side"):
        scorer.score("relation", a, r)


def test_score_array_is_score_as_a_float32_array_of_id_arrays(toy):
    import numpy as np

    anchors, relations = np.array([0, 3, 6]), np.array([2, 0, 1])
    for side in ("head", "tail"):
        got = toy.score_array(side, anchors, relations)
        want = toy.score(side, torch.as_tensor(anchors), torch.as_tensor(relations)).numpy()
        assert isinstance(got, np.ndarray) and got.dtype == np.float32 and got.shape == (3, 7)
        np.testing.assert_array_equal(got, want)
