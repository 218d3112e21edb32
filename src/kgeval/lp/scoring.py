"""Score all candidate entities of a batch of link-prediction queries with a trained PyKEEN model.

:func:`make_scorer` returns a :class:`Scorer` whose :meth:`~Scorer.score_tails` and :meth:`~Scorer.score_heads`
give exactly the scores of PyKEEN's ``model.predict_t`` / ``model.predict_h`` (the methods PyKEEN's evaluator calls),
including inverse relations, ``predict_with_sigmoid``, constrainers and normalizers, but - where the interaction
allows it - through one matrix product per batch instead of PyKEEN's broadcast over ``(batch, entities, dim)``.
:meth:`Scorer.prepare` splits that in two for the ranking engine: the per-query work once per batch, then one matrix
product per block of rows, computed on the worker thread that reduces the block.

Fast paths (all read PyKEEN's own representations, evaluated once in eval mode, and call PyKEEN's own interaction
module where they need it):

* :class:`AffineScorer`, for interactions that are affine in the candidate's representation
  ``f(a, r, c) = <q(a, r), c> + b(a, r)``: DistMult, ComplEx, RESCAL, TuckER, HolE, QuatE (both sides) and ConvE
  (tail side; heads are scored through inverse relations, as PyKEEN does). The query vector ``q`` and offset ``b``
  are taken from PyKEEN's interaction itself, as the gradient and value at ``c = 0`` of ``f`` (exact for an affine
  function; one forward/backward over ``(batch, 1)`` inputs), and the scores are ``b + q @ C^T``. This needs no
  per-model re-implementation of complex or quaternion algebra, TuckER's batch norms or ConvE's convolution.
* :class:`DistanceScorer`, for ``-||q(a, r) - c||_p`` interactions: TransE (``q = h + r`` or ``t - r``) and RotatE
  (``q = h * r`` or ``t * conj(r)``, the forms PyKEEN uses). For ``p = 2`` the squared distance is expanded as
  ``||q||^2 - 2 q.c + ||c||^2`` (one matrix product); entries where that expansion loses precision (distances
  small next to the norms) are recomputed directly. For ``p = 1`` it computes :func:`torch.cdist`'s distances, bit for
  bit, with the compiled kernel of :mod:`kgeval.engine.l1` on the CPU.

Every other model uses :class:`PyKEENScorer`, which calls ``model.predict_t`` / ``model.predict_h``.

:func:`make_scorer` checks a fast scorer against PyKEEN's own scores on a few queries and falls back (with a
warning) if they disagree, so a fast path can never silently change results.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import torch

from kgeval.lp.fast_scorers import AffineScorer, DistanceScorer, affine_interactions
from kgeval.lp.scorer_interface import RowBlocks, Scorer, resolve_device

# PyKEEN's models are imported where a scorer is made, not here: importing them is slow even after torch, and the
# ranking engine (which imports this module) also serves jobs that rank without PyKEEN (entity alignment), which
# would each pay it at start-up.
if TYPE_CHECKING:
    from pykeen.models import Model

__all__ = [
    "RowBlocks",
    "Scorer",
    "PyKEENScorer",
    "AffineScorer",
    "DistanceScorer",
    "make_scorer",
    "resolve_device",
    "affine_interactions",
]

logger = logging.getLogger(__name__)

#: bytes of float32 scores per (query, candidate) pair
_FLOAT_BYTES = 4


class PyKEENScorer(Scorer):
    """PyKEEN's generic path: ``model.predict_t`` / ``model.predict_h`` (what the evaluator calls)."""

    is_fast = False

    def __init__(self, model: Model, device: str | torch.device | None = None) -> None:
        """Wrap a model; it is moved to ``device`` and put into eval mode."""
        self.model = model
        self.device = resolve_device(device) if device is not None else model.device
        self.model.to(self.device)
        self.model.eval()
        self.num_entities = model.num_entities
        self.name = f"pykeen:{model.__class__.__name__}"

    def _batch(self, first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
        return torch.stack([first.to(self.device), second.to(self.device)], dim=1)

    def score_tails(self, heads: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:  # noqa: D102
        with torch.no_grad():
            return self.model.predict_t(self._batch(heads, relations)).float()

    def score_heads(self, relations: torch.Tensor, tails: torch.Tensor) -> torch.Tensor:  # noqa: D102
        with torch.no_grad():
            return self.model.predict_h(self._batch(relations, tails)).float()

    def bytes_per_query(self) -> int:
        """PyKEEN broadcasts (batch, entities, dim) tensors; estimate three of them."""
        from pykeen.models import ERModel

        dim = 0
        if isinstance(self.model, ERModel):
            for representation in self.model.entity_representations:
                numel = math.prod(representation.shape) if representation.shape else 1
                dim += numel * (2 if _is_complex(representation) else 1)
        dim = max(dim, 1)
        return 3 * self.num_entities * dim * _FLOAT_BYTES


def _is_complex(representation: torch.nn.Module) -> bool:
    dtype = getattr(representation, "dtype", None)
    return dtype is not None and dtype.is_complex


def _check_against_pykeen(scorer: Scorer, model: Model, num_queries: int = 4, num_candidates: int = 256) -> float:
    """Largest deviation of ``scorer`` from PyKEEN's ``predict_t`` / ``predict_h`` on a few deterministic queries.

    PyKEEN scores only ``num_candidates`` candidates (its ``tails`` / ``heads`` argument), which keeps the check
    cheap on large graphs. The deviation is relative to the largest absolute PyKEEN score.
    """
    n = min(num_queries, scorer.num_entities)
    anchors = torch.arange(n, device=scorer.device)
    relations = torch.arange(n, device=scorer.device) % model.num_real_relations
    step = max(1, scorer.num_entities // num_candidates)
    candidates = torch.arange(0, scorer.num_entities, step, device=scorer.device)
    worst = 0.0
    with torch.no_grad():
        for side in ("tail", "head"):
            fast = scorer.score(side, anchors, relations)[:, candidates]
            if side == "tail":
                slow = model.predict_t(torch.stack([anchors, relations], dim=1), tails=candidates)
            else:
                slow = model.predict_h(torch.stack([relations, anchors], dim=1), heads=candidates)
            scale = slow.abs().max().clamp_min(1e-12)
            worst = max(worst, float(((fast - slow.float()).abs() / scale).max()))
    return worst


def make_scorer(
    model: Model,
    *,
    fast: bool = True,
    device: str | torch.device | None = None,
    check: bool = True,
    tolerance: float = 1e-4,
) -> Scorer:
    """Pick the fastest exact scorer for a PyKEEN model.

    :param model: a trained PyKEEN model (moved to ``device`` and put into eval mode)
    :param fast: if False, always use PyKEEN's own ``predict_t`` / ``predict_h``
    :param device: where to score; ``None`` keeps the model's device
    :param check: compare a fast scorer with PyKEEN's scores on a few queries; fall back if they differ
    :param tolerance: largest accepted deviation, relative to the largest absolute score of a query batch
    :return: the scorer. Fast scorers snapshot the representations: create the scorer after training.
    """
    from pykeen.models import ERModel
    from pykeen.models.inductive import InductiveERModel

    reference = PyKEENScorer(model, device=device)
    if not fast or not isinstance(model, ERModel) or isinstance(model, InductiveERModel):
        return reference
    scorer: Scorer | None = None
    for cls in (AffineScorer, DistanceScorer):
        try:
            scorer = cls(model, device=device)
            break
        except TypeError as error:
            logger.debug("no %s for %s: %s", cls.__name__, type(model).__name__, error)
    if scorer is None:
        return reference
    if check:
        deviation = _check_against_pykeen(scorer, model)
        if not deviation <= tolerance:
            logger.warning(
                "fast scorer %s deviates from PyKEEN's scores by %.3g (relative); using PyKEEN's scorer",
                scorer.name,
                deviation,
            )
            return reference
    return scorer
