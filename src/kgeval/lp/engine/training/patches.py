"""Patches that make PyKEEN's training loop faster for the duration of one training run, with the same bits.

Each patch replaces a part of PyKEEN's loop by code that computes the same IEEE operations in the same order, so a
model trained inside :func:`fast_training` equals one trained by ``pipeline()`` with the same seed to the last bit
(``tests/lp/engine/test_patches.py``; why each patch exists and what it saves: ``docs/performance.md``, "Training"):

- PyKEEN's per-epoch full ``gc.collect()`` sweeps only the youngest generation (:class:`_NoFullCollect`);
- ``Model.device`` and ``Representation.device``, read several times per batch, are cached for the model trained;
- freed memory is kept for reuse (:func:`kgeval.engine.memory.reuse_freed_memory`);
- the 2-norms of complex rows and of regularized embeddings are computed by :mod:`kgeval.lp.engine.rownorm`, once per
  distinct row;
- the gradients of embedding lookups are summed in one compiled loop
  (:mod:`kgeval.lp.engine.training.embedding_gradients_kernel`);
- TransE's L1 interaction runs one compiled pass each way (:mod:`kgeval.lp.engine.training.transe_l1_kernel`), with
  large batches scored straight from the embedding tables (:mod:`kgeval.lp.engine.training.transe_lookup_kernel`);
- ComplEx's interaction runs one compiled pass each way (:mod:`kgeval.lp.engine.training.complex_interaction_kernel`).

The patches are scoped: they are undone when the block closes, and they draw no random numbers.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

import torch
from pykeen.models import Model

from kgeval.engine.memory import reuse_freed_memory
from kgeval.lp.engine.rownorm import row_norm, unique_row_norm

__all__ = ["fast_training", "load_fast_training"]


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
    """(owner, attribute, replacement) for embedding lookups, whose gradients :mod:`kgeval.lp.engine.training.embedding_gradients_kernel`
    computes (``torch.nn.Embedding`` calls ``torch.nn.functional.embedding`` by attribute), for TransE's L1
    interaction (:mod:`kgeval.lp.engine.training.transe_l1_kernel`), with its lookups (:mod:`kgeval.lp.engine.training.transe_lookup_kernel`), and for ComplEx's
    (:mod:`kgeval.lp.engine.training.complex_interaction_kernel`)."""
    import torch.nn.functional as functional
    from pykeen.models.nbase import ERModel
    from pykeen.nn.modules import ComplExInteraction, TransEInteraction

    from kgeval.lp.engine.training import complex_interaction_kernel, transe_l1_kernel, transe_lookup_kernel
    from kgeval.lp.engine.training.embedding_gradients_kernel import patched_embedding  # numba loads with them

    return [
        (functional, "embedding", patched_embedding(functional.embedding)),
        (TransEInteraction, "forward", transe_l1_kernel.patched_forward(TransEInteraction.forward)),
        (ERModel, "score_hrt", transe_lookup_kernel.patched_score_hrt(ERModel.score_hrt)),
        (ComplExInteraction, "forward", complex_interaction_kernel.patched_forward(ComplExInteraction.forward)),
    ]


def load_fast_training() -> None:
    """Import (and so compile or load from numba's cache) the kernels that :func:`fast_training` puts in place.

    Paid once per process (numba itself and five kernels), the first time; :func:`train_model` calls it before
    it starts timing the training loop, and the workflow's fork server imports them once for all jobs.
    """
    from kgeval.lp.engine.training import (  # noqa: F401
        complex_interaction_kernel,
        embedding_gradients_kernel,
        transe_l1_kernel,
        transe_lookup_kernel,
    )
    from kgeval.lp.engine import rownorm_kernel  # noqa: F401


@contextlib.contextmanager
def fast_training(model: Model) -> Iterator[None]:
    """Within the block, PyKEEN's training loop skips the full per-epoch GC and the model's devices are cached.

    Freed memory is also kept for reuse within the block (:func:`reuse_freed_memory`), the 2-norms of complex
    rows and of regularized embeddings are computed by :mod:`kgeval.lp.engine.rownorm`, the gradients of
    embedding lookups by :mod:`kgeval.lp.engine.training.embedding_gradients_kernel` and TransE's L1 interaction by
    :mod:`kgeval.lp.engine.training.transe_l1_kernel`.

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
