"""S3's published figures (kgeval.studies.s3.anchors): every figure names its paper, table and where it was read, and
the anchor of a strength-table row is the like-for-like one on the row's pair where one exists."""

from __future__ import annotations

import pytest

from kgeval.studies.s3.anchors import ANCHORS, NO_ANCHOR, anchor_for
from kgeval.studies.s3.models import MODELS


def test_every_figure_names_its_paper_table_and_copy_and_none_is_recalled():
    for anchor in ANCHORS:
        assert anchor.paper and anchor.table and anchor.read_from, anchor
        assert "recalled" not in anchor.source(anchor.dataset)
        if anchor.hits_at_1 is not None:
            assert 0 < anchor.hits_at_1 < 1 and anchor.dataset
            assert anchor.like_for_like or anchor.differs, anchor  # what differs is said where it is not alike
    assert {a.method for a in ANCHORS} <= set(MODELS)


def test_gcn_align_is_set_against_its_structure_only_figure():
    anchor, like = anchor_for("gcn_align", "dbp15k_fr_en")
    assert like and anchor.hits_at_1 == pytest.approx(0.3887) and "structure-only" in anchor.paper
    full = [a for a in ANCHORS if a.method == "gcn_align" and not a.like_for_like]
    assert [a.hits_at_1 for a in full] == [pytest.approx(0.373)]
    assert "not like for like: structure plus attribute" in full[0].source("dbp15k_fr_en")


def test_rdgcn_figure_is_not_like_for_like_and_says_why():
    anchor, like = anchor_for("rdgcn", "dbp15k_fr_en")
    assert not like and anchor.hits_at_1 == pytest.approx(0.886)
    source = anchor.source("dbp15k_fr_en")
    assert "not like for like" in source and "machine-translated" in source and "GloVe" in source


def test_another_pair_is_never_like_for_like():
    anchor, like = anchor_for("bootea", "srprs_en_fr")
    assert not like and anchor.dataset == "dbp15k_fr_en"
    assert "a figure on dbp15k_fr_en, the row is on srprs_en_fr" in anchor.source("srprs_en_fr")
    assert anchor_for("bootea", "dbp15k_fr_en") == (anchor, True)


def test_methods_without_a_figure():
    multike, like = anchor_for("multike", "dbp15k_fr_en")
    assert multike.hits_at_1 is None and not like and "no DBP15k or SRPRS figure" in multike.source("dbp15k_fr_en")
    assert anchor_for("not_a_method", "dbp15k_fr_en") == (NO_ANCHOR, False)
