"""Training PyKEEN models: PyKEEN's own training loop, with the random draws of :func:`pykeen.pipeline.pipeline`.

:func:`train_model` builds the model, optimiser and training loop in the order ``pipeline()`` does, so a model trained
here with a seed equals the one ``pipeline()`` trains with that seed to the last bit. By default the loop runs inside
:func:`kgeval.lp.engine.training.patches.fast_training`, which only makes it faster (the same values, in the same
order, checked by ``tests/lp/engine/test_patches.py``); batching, negative sampling, loss, regularisation and optimiser
steps are PyKEEN's own.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from pykeen.models import Model, model_resolver
from pykeen.training import training_loop_resolver
from pykeen.training.callbacks import TrainingCallback
from pykeen.utils import set_random_seed

from kgeval.lp.datasets import LPData
from kgeval.lp.engine.training.patches import fast_training, load_fast_training
from kgeval.lp.scorer_interface import resolve_device

__all__ = [
    "TrainResult",
    "TrainingOutputs",
    "train_to_files",
    "build_model",
    "train_model",
]

logger = logging.getLogger(__name__)


class _EpochLogger(TrainingCallback):
    """Log one line per epoch (the loss), so that training progress shows in the job log."""

    def __init__(self, num_epochs: int, every: int = 1) -> None:
        super().__init__()
        self.num_epochs = num_epochs
        self.every = max(1, every)
        self.start = time.perf_counter()

    def post_epoch(self, epoch: int, epoch_loss: float, **kwargs: Any) -> None:  # noqa: D102
        if epoch % self.every == 0 or epoch == self.num_epochs:
            logger.info(
                "epoch %d/%d loss %.6f (%.1f s)", epoch, self.num_epochs, epoch_loss, time.perf_counter() - self.start
            )


@dataclass
class TrainResult:
    """What a training run produces.

    :param model: the trained model (on CPU or the device it was trained on)
    :param losses: one loss per epoch
    :param seconds: wall time of the training loop alone
    :param config: the resolved configuration (JSON-serialisable)
    """

    model: Model
    losses: list[float]
    seconds: float
    config: dict[str, Any]


def build_model(data: LPData, spec: dict[str, Any], seed: int, device: torch.device | None = None) -> Model:
    """Instantiate a PyKEEN model from a config entry, exactly as ``pipeline()`` would for the same seed.

    :param data: the dataset (its training factory defines the vocabulary)
    :param spec: one entry of the config's ``models`` section
    :param seed: the random seed
    :param device: where to put the model
    """
    set_random_seed(seed)
    kwargs = dict(spec.get("model_kwargs") or {})
    if spec.get("loss") is not None:
        kwargs["loss"] = spec["loss"]
        if spec.get("loss_kwargs"):
            kwargs["loss_kwargs"] = dict(spec["loss_kwargs"])
    model = model_resolver.make(spec["model"], kwargs, triples_factory=data.training, random_seed=seed)
    return model.to(device or torch.device("cpu"))


def train_model(
    data: LPData,
    spec: dict[str, Any],
    seed: int,
    device: str | None = None,
    fast: bool = True,
    log_every: int = 1,
    callbacks: Sequence[TrainingCallback] = (),
) -> TrainResult:
    """Train one model on one dataset with one seed.

    The sequence of calls (and hence of random draws) is that of :func:`pykeen.pipeline.pipeline` with
    ``random_seed=seed``: seed, model, optimiser, training loop (with its negative sampler), ``train()``.

    :param data: the dataset; a copy with inverse triples is used when ``spec['inverse_triples']`` is set
    :param spec: one entry of the config's ``models`` section
    :param seed: the random seed
    :param device: ``auto``, ``cpu`` or ``cuda``
    :param fast: apply :func:`fast_training` (``False`` runs PyKEEN's loop untouched, for comparison)
    :param log_every: log the loss every this many epochs
    :param callbacks: further PyKEEN training callbacks (e.g. a benchmark's checkpoint evaluation); they draw no
        random numbers of the training, so the parameters stay those of ``pipeline()``
    """
    from pykeen.optimizers import optimizer_resolver

    from kgeval.config import schema_default

    if spec.get("inverse_triples"):
        data = data.with_inverse_triples()
    torch_device = resolve_device(device)
    model = build_model(data, spec, seed, torch_device)
    optimizer = optimizer_resolver.make(
        spec.get("optimizer", schema_default("models.*.optimizer")),
        dict(spec.get("optimizer_kwargs") or {}),
        params=model.get_grad_params(),
    )
    loop_cls = training_loop_resolver.lookup(spec.get("training_loop", schema_default("models.*.training_loop")))
    loop_kwargs: dict[str, Any] = {}
    if spec.get("negative_sampler_kwargs") and loop_cls.__name__ == "SLCWATrainingLoop":
        loop_kwargs["negative_sampler_kwargs"] = dict(spec["negative_sampler_kwargs"])
    if spec.get("negative_sampler") is not None:
        loop_kwargs["negative_sampler"] = spec["negative_sampler"]
    loop = loop_cls(model=model, triples_factory=data.training, optimizer=optimizer, **loop_kwargs)
    training_kwargs = dict(spec.get("training_kwargs") or {})
    num_epochs = int(training_kwargs.get("num_epochs", 5))
    training_kwargs.setdefault("use_tqdm", False)
    callback = _EpochLogger(num_epochs, every=log_every)
    logger.info(
        "training %s on %s (seed %d, %d epochs, device %s)", spec["model"], data.name, seed, num_epochs, torch_device
    )
    if fast:  # loaded before the clock starts, as pipeline()'s train_seconds leaves PyKEEN's imports out
        load_fast_training()
    context = fast_training(model) if fast else contextlib.nullcontext()
    start = time.perf_counter()
    with context:
        losses = loop.train(triples_factory=data.training, callbacks=[callback, *callbacks], **training_kwargs)
    seconds = time.perf_counter() - start
    model.eval()
    config = {
        "dataset": data.name,
        "seed": seed,
        "device": str(torch_device),
        "spec": spec,
        "model_class": type(model).__name__,
        "num_parameters": int(sum(p.numel() for p in model.parameters())),
        "training_kwargs": {k: v for k, v in training_kwargs.items() if k != "use_tqdm"},
        "optimizer": type(optimizer).__name__,
        "optimizer_kwargs": {k: v for k, v in optimizer.defaults.items() if isinstance(v, (int, float, str, bool))},
        "training_loop": loop_cls.__name__,
        "torch_version": torch.__version__,
    }
    return TrainResult(model=model, losses=[float(x) for x in losses], seconds=seconds, config=config)


@dataclass(frozen=True)
class TrainingOutputs:
    """Where :func:`train_to_files` writes: the model, the loss curve, the resolved config and the timing."""

    model: str
    losses: str
    config: str
    timing: str


def train_to_files(
    dataset_key: str,
    dataset_spec: dict[str, Any],
    data_dir: str | None,
    model_spec: dict[str, Any],
    seed: int,
    outputs: TrainingOutputs,
    device: str | None = None,
) -> TrainResult:
    """Load the dataset, train, and write the model, the loss curve, the resolved config and the timing (atomically).

    :returns: the training result
    """
    import pandas as pd

    from kgeval.lp.datasets import load_dataset
    from kgeval.io import atomic_path, write_json, write_tsv

    start = time.perf_counter()
    data = load_dataset(dataset_key, dataset_spec, data_dir)
    load_seconds = time.perf_counter() - start
    result = train_model(data, model_spec, seed, device=device)
    with atomic_path(outputs.model) as tmp:
        torch.save(result.model.cpu(), tmp)
    write_tsv(pd.DataFrame({"epoch": range(1, len(result.losses) + 1), "loss": result.losses}), outputs.losses)
    write_json(result.config, outputs.config)
    write_json(
        {"load_seconds": load_seconds, "train_seconds": result.seconds, "epochs": len(result.losses)}, outputs.timing
    )
    return result
