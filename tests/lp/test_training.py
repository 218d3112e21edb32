"""Training: PyKEEN's loop with pipeline()'s random draws; seeds matter."""

from __future__ import annotations

from conftest import SMALL_TRAINING_SPEC
from kgeval.lp.training import train_model

SPEC = SMALL_TRAINING_SPEC


def test_different_seeds_differ(nations_lp):
    a = train_model(nations_lp, SPEC, seed=0)
    b = train_model(nations_lp, SPEC, seed=1)
    assert a.losses != b.losses
