"""TransE's L1 score of a batch of triples straight from the embedding tables, in one compiled pass each way.

PyKEEN's ``ERModel.score_hrt`` looks up the head, relation and tail rows of every triple (three copies of the
batch's size), scores them (:mod:`kgeval.lp.engine.training.transe_l1_kernel` fuses that step), and its backward pass writes the gradients of
those copies before each lookup's backward adds them into a dense gradient of its table
(:mod:`kgeval.lp.engine.training.embedding_gradients_kernel`). With the real tier's negatives on FB15k-237 (32,768 triples x 100
dimensions a batch, one thread) the lookups, the interaction and the lookups' backward are most of a
TransE step's CPU time (torch's profiler): each a pass over 13 MB that the next one reads back.

:class:`TransEL1Lookup` reads the rows where they are. Forward, each score is :func:`kgeval.lp.engine.training.transe_l1_kernel.l1_scores`'s
expression of the looked-up values (a lookup copies values exactly, so the bits are the same). Backward, one pass in
increasing triple order adds each element's ``sign(x) * (-g)`` to the head's and the relation's rows and its
negation to the tail's rows of three dense gradients that start from zeros: the additions each lookup's backward makes,
in the order it makes them. The entity table gets two of them, the tail's first: autograd adds the gradients that
reach one tensor in the order they arrive, PyKEEN's tail lookup (created last) runs its backward first, and the two
orders of two terms give the same sum; the tests compare trained models with ``pipeline()``'s bit for bit, where the
order among the positives' and negatives' gradients shows. Written by hand because no maintained library fuses a
lookup with its interaction and their gradients with torch's bits.

:func:`patched_score_hrt` uses it inside :func:`kgeval.lp.training.fast_training` for a TransE model (L1, no power
norm) whose entity and relation representations are one plain float32 CPU :class:`~pykeen.nn.representation.Embedding`
each (no normalizer, regularizer, dropout or de-duplication), for batches of at least
:data:`kgeval.lp.engine.training.embedding_gradients_kernel.MIN_POSITIONS` triples on one thread (the workflow's training jobs); any other
call goes to PyKEEN's. The first use in a process compares scores and both tables' gradients with PyKEEN's
expression on a sample and on that call's own batch, and uses PyKEEN's from then on if a bit differs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import torch

from kgeval.lp.engine.training.embedding_gradients_kernel import MIN_POSITIONS
from kgeval.runtime.first_use import FirstUseCheck, same_passes

__all__ = ["TransEL1Lookup", "fusable_tables", "lookup_l1_gradients", "lookup_l1_scores", "patched_score_hrt"]

logger = logging.getLogger(__name__)

#: whether the fused pass gives PyKEEN's bits here, decided on first use
_first_use = FirstUseCheck(logger, "TransE lookups: the fused pass differs from PyKEEN's; using PyKEEN's")


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _l1_row(h: np.ndarray, r: np.ndarray, t: np.ndarray) -> np.float32:  # pragma: no cover - compiled
    """``-sum_k |((h[k] + 0) + r[k]) + (-t[k])|``, summed in order in float32."""
    zero = np.float32(0.0)
    total = zero
    for k in range(h.shape[0]):
        total += abs(((h[k] + zero) + r[k]) + (-t[k]))
    return -total


@numba.njit(nogil=True, cache=True, boundscheck=False)
def lookup_l1_scores(
    entities: np.ndarray, relations: np.ndarray, batch: np.ndarray, out: np.ndarray
) -> None:  # pragma: no cover - compiled
    """``out[i] = -sum_k |((E[h, k] + 0) + R[r, k]) + (-E[t, k])|`` for ``(h, r, t) = batch[i]``, summed over ``k``
    in order in float32 (:func:`kgeval.lp.engine.training.transe_l1_kernel.l1_scores` on the looked-up rows).

    Each sum is a chain of ``d`` dependent additions, so four triples are summed side by side (four chains the
    processor overlaps, each still in order of ``k``), faster than one triple at a time.

    :param entities: shape: (num_entities, d) float32, C-contiguous; ``relations`` likewise
    :param batch: shape: (n, 3) int64 triples
    :param out: shape: (n,) float32, written
    """
    zero = np.float32(0.0)
    n = batch.shape[0]
    full = n - n % 4
    for i in range(0, full, 4):
        h0, h1, h2, h3 = (entities[batch[i, 0]], entities[batch[i + 1, 0]], entities[batch[i + 2, 0]],
                          entities[batch[i + 3, 0]])
        r0, r1, r2, r3 = (relations[batch[i, 1]], relations[batch[i + 1, 1]], relations[batch[i + 2, 1]],
                          relations[batch[i + 3, 1]])
        t0, t1, t2, t3 = (entities[batch[i, 2]], entities[batch[i + 1, 2]], entities[batch[i + 2, 2]],
                          entities[batch[i + 3, 2]])
        a0 = a1 = a2 = a3 = zero
        for k in range(entities.shape[1]):
            a0 += abs(((h0[k] + zero) + r0[k]) + (-t0[k]))
            a1 += abs(((h1[k] + zero) + r1[k]) + (-t1[k]))
            a2 += abs(((h2[k] + zero) + r2[k]) + (-t2[k]))
            a3 += abs(((h3[k] + zero) + r3[k]) + (-t3[k]))
        out[i], out[i + 1], out[i + 2], out[i + 3] = -a0, -a1, -a2, -a3
    for i in range(full, n):
        out[i] = _l1_row(entities[batch[i, 0]], relations[batch[i, 1]], entities[batch[i, 2]])


@numba.njit(nogil=True, cache=True, boundscheck=False)
def lookup_l1_gradients(
    entities: np.ndarray,
    relations: np.ndarray,
    batch: np.ndarray,
    upstream: np.ndarray,
    grad_heads: np.ndarray,
    grad_relations: np.ndarray,
    grad_tails: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """For ``i = 0, 1, ...`` in order: ``v = sign(x) * (-upstream[i])`` with ``x`` as in :func:`lookup_l1_scores`,
    added to ``grad_heads[h]`` and ``grad_relations[r]``, and ``-v`` added to ``grad_tails[t]``.

    :param upstream: shape: (n,) float32, the gradient of the scores
    :param grad_heads: shape: (num_entities, d) float32, zeros on entry; ``grad_tails`` likewise and
        ``grad_relations`` of the relations' shape
    """
    d = entities.shape[1]
    zero, one = np.float32(0.0), np.float32(1.0)
    for i in range(batch.shape[0]):
        head, relation, tail = batch[i, 0], batch[i, 1], batch[i, 2]
        h, r, t = entities[head], relations[relation], entities[tail]
        gh, gr, gt = grad_heads[head], grad_relations[relation], grad_tails[tail]
        back = -upstream[i]
        for k in range(d):
            x = ((h[k] + zero) + r[k]) + (-t[k])
            value = ((one if zero < x else zero) - (one if x < zero else zero)) * back
            gh[k] += value
            gr[k] += value
            gt[k] += -value


class TransEL1Lookup(torch.autograd.Function):
    """``-||E[h] + R[r] - E[t]||_1`` per triple of a batch, as PyKEEN computes it, in one pass each way.

    The entity table is passed twice, for the tails and then for the heads, so that autograd adds its two gradients
    in the order PyKEEN's two lookups deliver them.
    """

    @staticmethod
    def forward(  # noqa: D102
        ctx, tail_entities: torch.Tensor, head_entities: torch.Tensor, relations: torch.Tensor, batch: torch.Tensor
    ) -> torch.Tensor:
        ctx.save_for_backward(head_entities, relations, batch)
        out = torch.empty(batch.shape[0], dtype=torch.float32)
        lookup_l1_scores(head_entities.detach().numpy(), relations.detach().numpy(), batch.numpy(), out.numpy())
        return out

    @staticmethod
    def backward(ctx, upstream: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, None]:  # noqa: D102
        entities, relations, batch = ctx.saved_tensors
        grad_heads, grad_tails = torch.zeros_like(entities), torch.zeros_like(entities)
        grad_relations = torch.zeros_like(relations)
        lookup_l1_gradients(
            entities.detach().numpy(), relations.detach().numpy(), batch.numpy(), upstream.contiguous().numpy(),
            grad_heads.numpy(), grad_relations.numpy(), grad_tails.numpy(),
        )
        return grad_tails, grad_heads, grad_relations, None


def _fused(entities: torch.Tensor, relations: torch.Tensor, batch: torch.Tensor) -> torch.Tensor:
    return TransEL1Lookup.apply(entities, entities, relations, batch)


def _pykeens(entities: torch.Tensor, relations: torch.Tensor, batch: torch.Tensor) -> torch.Tensor:
    """PyKEEN's expression (``TransEInteraction.forward`` on three lookups), unpatched."""
    from pykeen.utils import negative_norm_of_sum

    embedding = torch.nn.functional.embedding
    h, r, t = embedding(batch[:, 0], entities), embedding(batch[:, 1], relations), embedding(batch[:, 2], entities)
    return negative_norm_of_sum(h, r, -t, p=1, power_norm=False)


def _agrees(entities: torch.Tensor, relations: torch.Tensor, batch: torch.Tensor) -> bool:
    """Whether the fused pass gives PyKEEN's scores and both tables' gradients, bit for bit, on this batch."""
    upstream = torch.linspace(-2.0, 3.0, batch.shape[0])
    return same_passes(
        lambda e, r: _pykeens(e, r, batch), lambda e, r: _fused(e, r, batch), entities, relations, upstream=upstream
    )


def _agrees_on_first_use(entities: torch.Tensor, relations: torch.Tensor, batch: torch.Tensor) -> bool:
    """The first use's comparison: on a sample (values over 30 orders of magnitude, repeated rows, heads equal to
    tails, exact zeros) and on this call's batch."""
    generator = torch.Generator().manual_seed(0)
    scale = torch.logspace(-15, 15, 24)
    sample_entities = torch.randn((40, 24), generator=generator) * scale
    sample_relations = torch.randn((6, 24), generator=generator) * scale
    sample_entities[1] = sample_entities[0] + sample_relations[0]  # (0, 0, 1): exactly zero elements
    sample = torch.stack(
        [torch.randint(0, 40, (600,), generator=generator), torch.randint(0, 6, (600,), generator=generator),
         torch.randint(0, 40, (600,), generator=generator)], dim=1
    )
    sample[:50] = torch.tensor([0, 0, 1])
    sample[50:60, 2] = sample[50:60, 0]
    with torch.enable_grad():
        return _agrees(sample_entities, sample_relations, sample) and _agrees(entities, relations, batch)


def _plain_embedding(representation: Any) -> torch.Tensor | None:
    """The weight of a plain float32 CPU :class:`~pykeen.nn.representation.Embedding` that needs its gradient (no
    normalizer, regularizer, dropout, de-duplication or complex view), else ``None``."""
    from pykeen.nn.representation import Embedding

    if type(representation) is not Embedding or representation.is_complex or representation.unique:
        return None
    if any(getattr(representation, name) is not None for name in ("normalizer", "regularizer", "dropout")):
        return None
    weight = representation._embeddings.weight
    plain = weight.device.type == "cpu" and weight.dtype == torch.float32 and weight.dim() == 2
    return weight if plain and weight.requires_grad and weight.is_contiguous() else None


def fusable_tables(model: Any, hrt_batch: torch.Tensor, mode: Any) -> tuple[torch.Tensor, torch.Tensor] | None:
    """The entity and relation tables when :class:`TransEL1Lookup` computes ``model.score_hrt(hrt_batch)``, else
    ``None`` (see the module docstring for the conditions)."""
    from pykeen.nn.modules import TransEInteraction

    interaction = model.interaction
    if type(interaction) is not TransEInteraction or interaction.p != 1 or interaction.power_norm or mode is not None:
        return None
    if len(model.entity_representations) != 1 or len(model.relation_representations) != 1:
        return None
    if hrt_batch.shape[0] < MIN_POSITIONS or hrt_batch.device.type != "cpu" or hrt_batch.dtype != torch.int64:
        return None
    if not torch.is_grad_enabled() or torch.get_num_threads() != 1:
        return None
    entities = _plain_embedding(model.entity_representations[0])
    relations = _plain_embedding(model.relation_representations[0])
    if entities is None or relations is None or entities.shape[1] != relations.shape[1]:
        return None
    return entities, relations


def patched_score_hrt(original: Callable) -> Callable:
    """A replacement of ``ERModel.score_hrt`` (``original``): :class:`TransEL1Lookup` where it applies."""

    def score_hrt(self, hrt_batch: torch.Tensor, *, mode: Any = None) -> torch.Tensor:
        tables = fusable_tables(self, hrt_batch, mode)
        if tables is not None:
            batch = hrt_batch.contiguous()
            if _first_use.passes(lambda: _agrees_on_first_use(*tables, batch)):
                return _fused(*tables, batch).unsqueeze(dim=-1)
        return original(self, hrt_batch, mode=mode)

    return score_hrt


def _load() -> None:
    """Compile (or load from numba's cache) both passes now, once per process (the fork server preloads this module)."""
    one, batch = np.zeros((1, 1), np.float32), np.zeros((1, 3), np.int64)
    lookup_l1_scores(one, one, batch, np.zeros(1, np.float32))
    lookup_l1_gradients(one, one, batch, np.zeros(1, np.float32), one.copy(), one.copy(), one.copy())


_load()
