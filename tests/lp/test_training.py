"""Training: PyKEEN's loop with pipeline()'s random draws; seeds matter."""

from __future__ import annotations

import pytest

from kgeval.lp.datasets import load_dataset
from kgeval.lp.training import train_model

SPEC = {
    "model": "DistMult",
    "model_kwargs": {"embedding_dim": 8},
    "optimizer_kwargs": {"lr": 0.01},
    "training_kwargs": {"num_epochs": 3, "batch_size": 128},
}


@pytest.fixture(scope="module")
def nations():
    return load_dataset("nations", {"source": "pykeen", "name": "Nations"})


def test_different_seeds_differ(nations):
    a = train_model(nations, SPEC, seed=0)
    b = train_model(nations, SPEC, seed=1)
    assert a.losses != b.losses
