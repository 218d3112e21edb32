"""Helpers of the link-prediction tests: counting calls of a compiled kernel, a training compared with pipeline()."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import torch

#: TransE with the L1 norm and the nssa loss, 32 negatives of batches of 256 positives: 8,192 negative triples a batch
#: (the size from which the compiled lookups and TransE's fused passes apply)
TRANSE_L1_SPEC: dict[str, Any] = {
    "model": "TransE",
    "model_kwargs": {"embedding_dim": 16, "scoring_fct_norm": 1},
    "loss": "nssa",
    "optimizer_kwargs": {"lr": 0.01},
    "negative_sampler_kwargs": {"num_negs_per_pos": 32},
    "training_kwargs": {"num_epochs": 2, "batch_size": 256},
}


def count_calls(monkeypatch, module: Any, name: str) -> list[int]:
    """Replace ``module.name`` by a wrapper that counts its calls; the returned one-element list holds the count."""
    calls = [0]
    original = getattr(module, name)

    def counted(*args):
        calls[0] += 1
        return original(*args)

    monkeypatch.setattr(module, name, counted)
    return calls


def assert_a_differing_pass_is_not_used(
    monkeypatch, caplog, module: Any, kernel: str, passes: Callable[[], tuple[torch.Tensor, torch.Tensor]], message: str
) -> None:
    """With ``module.kernel`` replaced by one that writes 1.0 into its output (its last argument), the first use of
    the compiled pass finds that it differs, warns with ``message`` and answers with PyKEEN's own scores.

    :param passes: computes (the patched pass's scores, PyKEEN's scores), in that order
    """

    def off_by_one(*args):
        args[-1][:] = 1.0

    monkeypatch.setattr(module, kernel, off_by_one)
    monkeypatch.setattr(module._first_use, "verdict", None)
    with caplog.at_level(logging.WARNING, logger=module.__name__):
        scores, expected = passes()
    assert torch.equal(scores, expected)
    assert message in caplog.text
    assert module._first_use.verdict is False


def assert_trains_like_pipeline(spec: dict[str, Any], seed: int, data: Any = None) -> None:
    """``train_model`` on Nations (``data``: loaded when not given) with ``spec`` (``fast_training``) equals
    ``pipeline()``'s model bit for bit: the same losses and every parameter. Both on the CPU, also on a GPU host: the
    compiled passes are CPU code, and CUDA's embedding backward adds a large lookup's rows with atomics, in no fixed
    order."""
    from pykeen.pipeline import pipeline

    from kgeval.lp.datasets import load_dataset
    from kgeval.lp.training import train_model

    if data is None:
        data = load_dataset("nations", {"source": "pykeen", "name": "Nations"})
    ours = train_model(data, spec, seed=seed, fast=True, device="cpu")
    reference = pipeline(
        dataset="nations", device="cpu", model=spec["model"], model_kwargs=spec["model_kwargs"], loss=spec.get("loss"),
        optimizer="adam", optimizer_kwargs=spec["optimizer_kwargs"], training_loop=spec.get("training_loop", "slcwa"),
        negative_sampler_kwargs=spec.get("negative_sampler_kwargs"),
        training_kwargs={**spec["training_kwargs"], "use_tqdm": False}, evaluation_kwargs={"use_tqdm": False},
        random_seed=seed,
    )
    assert ours.losses == reference.losses
    reference_state = reference.model.state_dict()
    for name, value in ours.model.state_dict().items():
        assert torch.equal(value.view(torch.int32), reference_state[name].view(torch.int32)), name
