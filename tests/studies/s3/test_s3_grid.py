"""The settings a method limited to the claims runs (``studies.s3.claim_settings_only``)."""

from __future__ import annotations

import itertools

import pytest

from kgeval.studies.s3.grid import claim_settings, settings_of

IDEAL = {"bias": "none", "train_ratio": 0.2}
INDUSTRIAL = {"bias": "both", "train_ratio": 0.02}


def test_claim_settings_of_the_paper_grid():
    # the ideal context is also the size ablation's largest ratio without bias: three settings, not four
    assert claim_settings(IDEAL, INDUSTRIAL, [0.2, 0.04, 0.02]) == (("both", 0.02), ("none", 0.02), ("none", 0.2))


def test_claim_settings_brute_force_over_contexts():
    """Every (ideal, industrial, grid): the set is exactly the two contexts plus the no-bias extremes."""
    grids = [[0.3, 0.1], [0.2, 0.04, 0.02], [0.5]]
    for ratios, ib, jb in itertools.product(grids, ["none", "name"], ["both", "attr"]):
        ideal, industrial = {"bias": ib, "train_ratio": max(ratios)}, {"bias": jb, "train_ratio": min(ratios)}
        got = set(claim_settings(ideal, industrial, ratios))
        expected = {(ib, max(ratios)), (jb, min(ratios)), ("none", max(ratios)), ("none", min(ratios))}
        assert got == expected
        assert list(claim_settings(ideal, industrial, ratios)) == sorted(got)


def test_claim_settings_needs_ratios():
    with pytest.raises(ValueError, match="train_ratios is empty"):
        claim_settings(IDEAL, INDUSTRIAL, [])


def test_settings_of_round_trip():
    assert settings_of(None) is None
    assert settings_of([["none", "0.2"], ["both", 0.02]]) == (("none", 0.2), ("both", 0.02))
