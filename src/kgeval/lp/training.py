"""Training PyKEEN models, faster than :func:`pykeen.pipeline.pipeline` with bit-identical results.

Profiling PyKEEN 1.11 on the bundled datasets shows that most of an epoch is spent outside the model:

- ``TrainingLoop._train_epoch`` ends every epoch with a full ``gc.collect()``, which walks every Python object
  (torch, pandas, PyKEEN's class registries ...). On Kinships with DistMult this was 60% of the training time.
- ``Model.device`` and ``Representation.device`` are properties that iterate over all parameters and buffers; they
  are read several times per batch.
- On FB15k-237-sized batches (4,096 positives x 32 negatives x 200 dimensions) every intermediate tensor is about
  100 MB. glibc's ``malloc`` serves blocks that large with a fresh ``mmap`` and returns them with ``munmap`` when
  freed, so every forward and backward pass page-faults (and the kernel zeroes) gigabytes of new pages: with DistMult
  this system time was 60-75% of an epoch's CPU time on a 2-core machine. Inside :func:`fast_training` large blocks
  come from, and go back to, malloc's heap instead (:func:`kgeval.runtime.memory.reuse_freed_memory`), so they are
  faulted in once.
- The 2-norm of complex rows (RotatE's interaction, the L2 regularizer of ComplEx) runs through torch's scalar
  complex kernel: 43% of a RotatE and 54% of a ComplEx step on FB15k-237. And the L2 regularizers (ComplEx's
  entities and relations, DistMult's relations) take the norm, and its gradient, of 131,072 looked-up rows of which
  at most 14,541 differ. Inside :func:`fast_training` PyKEEN's ``negative_norm`` and ``lp_norm`` compute these
  norms with :mod:`kgeval.lp.engine.rownorm`: the same IEEE operations vectorized, once per distinct row (same bits).
- Each embedding lookup's backward pass (six per sLCWA batch) adds the gradient rows into a dense matrix one
  TensorIterator per row: 19% of a TransE epoch on FB15k-237. Inside :func:`fast_training` the same additions, in
  the same order, run in one compiled loop (:mod:`kgeval.lp.embedding_gradients`; same bits).
- TransE with the L1 norm runs five batch-sized tensor operations forward and four backward, each a pass over
  memory: about 40% of its FB15k-237 epoch. Inside :func:`fast_training` one compiled pass each way computes the same
  IEEE operations in the same order (:mod:`kgeval.lp.transe_l1`; same bits). On one thread, a batch of at least
  8,192 triples (the negatives) is scored straight from the tables, without the three lookups' copies, and its
  backward pass adds into the tables' gradients directly (:mod:`kgeval.lp.transe_lookup`; same bits): an
  FB15k-237 epoch in 0.54x c91d6aa's time (``train_epochs.tsv``).
- ComplEx's interaction (an einsum: a complex product, a conjugate copy and a small batched matrix product, three
  more of those backward) was about a third of a Kinships ComplEx step. Inside :func:`fast_training` one compiled
  pass each way computes the same IEEE operations in the same order where torch's kernels are known to
  (:mod:`kgeval.lp.complex_interaction`; same bits).

:func:`fast_training` removes all of these for the duration of a training run only (the patches are scoped and undone
afterwards), without touching the order of random draws, so a model trained here equals the one trained by
``pipeline()`` with the same seed to the last bit (checked by ``tests/test_training.py`` and measured by
``benchmarks/training.py``). Nothing else of PyKEEN's loop is re-implemented: batching, negative sampling, loss,
regularisation and optimiser steps are PyKEEN's own.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from pykeen.models import Model, model_resolver
from pykeen.training import training_loop_resolver
from pykeen.training.callbacks import TrainingCallback
from pykeen.utils import set_random_seed

from kgeval.lp.datasets import LPData
from kgeval.runtime.memory import reuse_freed_memory
from kgeval.lp.engine.rownorm import row_norm, unique_row_norm

__all__ = [
    "TrainResult",
    "TrainingOutputs",
    "train_to_files",
    "fast_training",
    "load_fast_training",
    "reuse_freed_memory",
    "build_model",
    "train_model",
    "resolve_device",
]

logger = logging.getLogger(__name__)


class _NoFullCollect:
    """Stand-in for the ``gc`` module inside PyKEEN's training loop: ``collect()`` only sweeps the youngest generation.

    The young generation holds what an epoch creates (batches, autograd graphs); the full sweep over every object
    in the process is what made PyKEEN's per-epoch ``gc.collect()`` slow.
    """

    @staticmethod
    def collect(generation: int = 2) -> int:
        import gc

        return gc.collect(0)


#: the indices an embedding is looking up, while its ``forward`` runs (for its regularizer's :func:`unique_row_norm`)
_looked_up: contextvars.ContextVar[torch.Tensor | None] = contextvars.ContextVar("kgeval_looked_up", default=None)


def _norm_patches() -> list[tuple[Any, str, Any]]:
    """(owner, attribute, replacement) for PyKEEN's 2-norms, computed by :mod:`kgeval.lp.engine.rownorm` instead."""
    import pykeen.nn.modules as modules
    import pykeen.regularizers as regularizers
    from pykeen.nn.representation import Embedding, Representation
    from pykeen.utils import get_expected_norm

    original_negative_norm, original_lp_norm = modules.negative_norm, regularizers.lp_norm
    original_forward = Representation.forward

    def negative_norm(x: torch.Tensor, p: str | int | float = 2, power_norm: bool = False) -> torch.Tensor:
        if p == 2 and not power_norm and x.is_complex():
            return -row_norm(x)
        return original_negative_norm(x, p=p, power_norm=power_norm)

    def lp_norm(x: torch.Tensor, p: float, dim: int | None, normalize: bool) -> torch.Tensor:
        keys = _looked_up.get()
        if not (p == 2 and dim in (-1, x.dim() - 1) and (x.is_complex() or keys is not None)):
            return original_lp_norm(x=x, p=p, dim=dim, normalize=normalize)
        # pykeen.utils.lp_norm, the norm computed by kgeval.lp.engine.rownorm
        value = row_norm(x) if keys is None else unique_row_norm(x, keys)
        return value / get_expected_norm(p=p, d=x.shape[-1]) if normalize else value

    def forward(self: Representation, indices: torch.Tensor | None = None) -> torch.Tensor:
        # an Embedding's looked-up rows are equal where the indices are: its regularizer may norm each row once
        if indices is None or type(self) is not Embedding or self.regularizer is None:
            return original_forward(self, indices)
        token = _looked_up.set(indices)
        try:
            return original_forward(self, indices)
        finally:
            _looked_up.reset(token)

    return [
        (modules, "negative_norm", negative_norm),
        (regularizers, "lp_norm", lp_norm),
        (Representation, "forward", forward),
    ]


def _compiled_patches() -> list[tuple[Any, str, Any]]:
    """(owner, attribute, replacement) for embedding lookups, whose gradients :mod:`kgeval.lp.embedding_gradients`
    computes (``torch.nn.Embedding`` calls ``torch.nn.functional.embedding`` by attribute), for TransE's L1
    interaction (:mod:`kgeval.lp.transe_l1`), with its lookups (:mod:`kgeval.lp.transe_lookup`), and for ComplEx's
    (:mod:`kgeval.lp.complex_interaction`)."""
    import torch.nn.functional as functional
    from pykeen.models.nbase import ERModel
    from pykeen.nn.modules import ComplExInteraction, TransEInteraction

    from kgeval.lp import complex_interaction, transe_l1, transe_lookup
    from kgeval.lp.embedding_gradients import patched_embedding  # numba loads with them

    return [
        (functional, "embedding", patched_embedding(functional.embedding)),
        (TransEInteraction, "forward", transe_l1.patched_forward(TransEInteraction.forward)),
        (ERModel, "score_hrt", transe_lookup.patched_score_hrt(ERModel.score_hrt)),
        (ComplExInteraction, "forward", complex_interaction.patched_forward(ComplExInteraction.forward)),
    ]


def load_fast_training() -> None:
    """Import (and so compile or load from numba's cache) the kernels that :func:`fast_training` puts in place.

    About 0.4 s once per process (numba itself and five kernels), the first time; :func:`train_model` calls it before
    it starts timing the training loop, and the workflow's fork server imports them once for all jobs.
    """
    from kgeval.lp import complex_interaction, embedding_gradients, transe_l1, transe_lookup  # noqa: F401
    from kgeval.lp.engine import rownorm_kernel  # noqa: F401


@contextlib.contextmanager
def fast_training(model: Model) -> Iterator[None]:
    """Within the block, PyKEEN's training loop skips the full per-epoch GC and the model's devices are cached.

    Freed memory is also kept for reuse within the block (:func:`reuse_freed_memory`), the 2-norms of complex
    rows and of regularized embeddings are computed by :mod:`kgeval.lp.engine.rownorm`, the gradients of
    embedding lookups by :mod:`kgeval.lp.embedding_gradients` and TransE's L1 interaction by
    :mod:`kgeval.lp.transe_l1`.

    :param model: the model about to be trained; its device must not change inside the block
    """
    import pykeen.models.base as model_base
    import pykeen.nn.representation as representation_module
    import pykeen.training.training_loop as loop_module

    device = model.device
    original_device = model_base.Model.device
    # a representation reads its device (all its parameters and buffers) on every forward call, i.e. per batch
    original_representation_device = representation_module.Representation.device
    representation_ids = {id(module) for module in model.modules()}

    def cached_device(self: Model) -> torch.device:
        return device if self is model else original_device.fget(self)

    def cached_representation_device(self: representation_module.Representation) -> torch.device:
        return device if id(self) in representation_ids else original_representation_device.fget(self)

    patches = [
        (loop_module, "gc", _NoFullCollect),
        (model_base.Model, "device", property(cached_device)),
        (representation_module.Representation, "device", property(cached_representation_device)),
        *_norm_patches(),
        *_compiled_patches(),
    ]
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, replacement in patches:
        setattr(owner, name, replacement)
    try:
        with reuse_freed_memory():
            yield
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)


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


def resolve_device(device: str | None = None) -> torch.device:
    """``cuda`` when asked for and present (or ``auto`` and present), else ``cpu``."""
    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        logger.warning("device %s requested but CUDA is not available; using cpu", device)
        return torch.device("cpu")
    return torch.device(device)


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
