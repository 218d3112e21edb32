"""The fast scorers: one matrix product per block of rows instead of PyKEEN's broadcast (see :mod:`kgeval.lp.scoring`).

:class:`AffineScorer` for interactions affine in the candidate's representation, :class:`DistanceScorer` for
``-||q(a, r) - c||_p`` interactions; both read PyKEEN's own representations through :class:`_ERScorer`.
"""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

from kgeval.engine.l1 import L1Candidates
from kgeval.lp.engine.products import addmm_in_pieces, single_threaded
from kgeval.lp.scorer_interface import RowBlocks, Scorer, resolve_device

# PyKEEN's models are imported where a scorer is made, not here: importing them is slow even after torch, and the
# ranking engine (which imports this module) also serves jobs that rank without PyKEEN (entity alignment), which
# would each pay it at start-up.
if TYPE_CHECKING:
    from pykeen.models import ERModel
    from pykeen.nn.modules import Interaction

__all__ = ["AffineScorer", "DistanceScorer", "affine_interactions"]


@functools.cache
def affine_interactions() -> dict[type[Interaction], frozenset[str]]:
    """Interactions affine in the candidate representation, per slot the candidate occupies.

    The slot is the ``"head"`` or ``"tail"`` argument of the interaction. ConvE is not affine in its head (ReLU after
    the convolution over head and relation). A function (not a constant) so that PyKEEN is imported on first use.
    """
    from pykeen.nn import modules as pykeen_modules

    return {
        pykeen_modules.DistMultInteraction: frozenset({"head", "tail"}),
        pykeen_modules.ComplExInteraction: frozenset({"head", "tail"}),
        pykeen_modules.RESCALInteraction: frozenset({"head", "tail"}),
        pykeen_modules.TuckERInteraction: frozenset({"head", "tail"}),
        pykeen_modules.HolEInteraction: frozenset({"head", "tail"}),
        pykeen_modules.QuatEInteraction: frozenset({"head", "tail"}),
        pykeen_modules.ConvEInteraction: frozenset({"tail"}),
    }



class _ERScorer(Scorer):
    """Shared machinery of the fast scorers: cached representations and PyKEEN's relation/side mapping."""

    is_fast = True

    def __init__(self, model: ERModel, device: str | torch.device | None = None) -> None:
        self.model = model
        self.device = resolve_device(device) if device is not None else model.device
        model.to(self.device)
        model.eval()
        self.interaction = model.interaction
        self.num_entities = model.num_entities
        self.use_inverse = bool(model.use_inverse_triples)
        self.sigmoid = bool(getattr(model, "predict_with_sigmoid", False))
        with torch.no_grad():
            entities = [module(indices=None).detach() for module in model.entity_representations]
            self.relations = [module(indices=None).detach() for module in model.relation_representations]
        # the entity representations each slot of the interaction receives
        self.head_reps = [entities[i] for i in self.interaction.head_indices]
        self.tail_reps = [entities[i] for i in self.interaction.tail_indices]
        self.name = f"{self.__class__.__name__}:{model.__class__.__name__}"

    # PyKEEN's mapping from a query to the interaction's slots (cf. Model.predict_t / predict_h)
    def _internal_relation(self, relations: torch.Tensor, inverse: bool) -> torch.Tensor:
        """Relation IDs as the model stores them (with inverse triples: ``2 r`` forward, ``2 r + 1`` inverse)."""
        relations = relations.to(self.device)
        if not self.use_inverse:
            return relations
        batch = relations.unsqueeze(1)
        return self.model.relation_inverter.map(batch=batch, index=0, invert=inverse)[:, 0]

    def score_tails(self, heads: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:  # noqa: D102
        return self.prepare("tail", heads, relations)(0, len(heads))

    def score_heads(self, relations: torch.Tensor, tails: torch.Tensor) -> torch.Tensor:  # noqa: D102
        return self.prepare("head", tails, relations)(0, len(tails))

    def prepare(self, side: str, anchors: torch.Tensor, relations: torch.Tensor) -> RowBlocks:  # noqa: D102
        if side not in ("head", "tail"):
            raise ValueError(f"side must be 'head' or 'tail', got {side!r}")
        anchors = anchors.to(self.device)
        if side == "tail" or self.use_inverse:
            # PyKEEN scores (?, r, t) as (t, r_inv, ?) when it trains with inverse relations
            slot, relations = "tail", self._internal_relation(relations, inverse=side == "head")
        else:
            slot, relations = "head", relations.to(self.device)
        with single_threaded(self.device):
            blocks = self._prepare_slot(slot, anchors, relations)
        if not self.sigmoid:
            return blocks
        # sigmoid_ runs within the caller's threads: on one thread per block in the ranking engine's workers
        return lambda start, stop: torch.sigmoid_(blocks(start, stop))

    @abstractmethod
    def _prepare_slot(self, slot: str, anchors: torch.Tensor, relations: torch.Tensor) -> RowBlocks:
        """Scores of all entities placed in the interaction's ``slot``, by blocks of rows (:meth:`prepare`).

        Called on one torch thread: it should do the per-query work; the returned function does the rest.

        :param slot: "tail" (candidates are tails, anchors heads) or "head"
        :param anchors: shape: (b,), on :attr:`device`; they fill the other entity slot
        :param relations: shape: (b,) internal relation IDs, on :attr:`device`
        :return: ``blocks(i, j)``, shape: (j - i, num_entities)
        """

    @staticmethod
    def _pack(tensors: Sequence[torch.Tensor]) -> torch.Tensor | Sequence[torch.Tensor]:
        """PyKEEN passes a single representation as a tensor, several as a list."""
        return tensors[0] if len(tensors) == 1 else list(tensors)


def _real_flat(x: torch.Tensor, batch_dims: int = 1) -> torch.Tensor:
    """Flatten a (possibly complex) representation to real features: shape (*batch, D)."""
    if x.is_complex():
        x = torch.view_as_real(x)
    return x.reshape(*x.shape[:batch_dims], -1)


class AffineScorer(_ERScorer):
    """Scores ``b(a, r) + q(a, r) @ C^T`` for interactions affine in the candidate (see module docstring)."""

    def __init__(self, model: ERModel, device: str | torch.device | None = None) -> None:
        """Prepare the candidate matrices; raises ``TypeError`` if the interaction is not affine on a needed slot."""
        super().__init__(model=model, device=device)
        slots = affine_interactions().get(type(self.interaction), frozenset())
        needed = {"tail"} if self.use_inverse else {"head", "tail"}
        if not needed <= slots:
            raise TypeError(
                f"{type(self.interaction).__name__} is not known to be affine in its {sorted(needed - slots)} slot(s)"
            )
        # candidate matrices: all representations of the slot as real features, concatenated, stored transposed.
        # shape: (D, E), C-contiguous: a product of a few rows reads this layout faster than a transposed (E, D)
        # slots fed the same representation tensors (DistMult's, ComplEx's: the entity embeddings) share one matrix,
        # made once (a transposed copy)
        self._candidates_t: dict[str, torch.Tensor] = {}
        made: list[tuple[list[torch.Tensor], torch.Tensor]] = []
        for slot, reps in (("head", self.head_reps), ("tail", self.tail_reps)):
            if slot not in needed:
                continue
            same = (m for r, m in made if len(r) == len(reps) and all(a is b for a, b in zip(r, reps)))
            matrix = next(same, None)
            if matrix is None:
                matrix = torch.cat([_real_flat(x) for x in reps], dim=1).float().t().contiguous()
                made.append((reps, matrix))
            self._candidates_t[slot] = matrix

    def _linearize(
        self, slot: str, anchors: torch.Tensor, relations: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Query vector ``q`` (b, D) and offset ``b`` (b,) with ``f(a, r, c) = b + <q, c>`` for every candidate ``c``.

        Both come from PyKEEN's interaction evaluated at ``c = 0``: the value gives ``b``, the gradient with respect
        to the candidate's (real) features gives ``q``.
        """
        candidate_reps = self.tail_reps if slot == "tail" else self.head_reps
        anchor_reps = self.head_reps if slot == "tail" else self.tail_reps
        b = anchors.shape[0]
        anchor = [x[anchors].unsqueeze(1) for x in anchor_reps]
        relation = [x[relations].unsqueeze(1) for x in self.relations]
        with torch.inference_mode(False), torch.enable_grad():
            probes_real = []
            probes = []
            for x in candidate_reps:
                shape = (b, 1, *x.shape[1:])
                if x.is_complex():
                    real = torch.zeros(*shape, 2, dtype=x.real.dtype, device=x.device, requires_grad=True)
                    probes.append(torch.view_as_complex(real))
                else:
                    real = torch.zeros(*shape, dtype=x.dtype, device=x.device, requires_grad=True)
                    probes.append(real)
                probes_real.append(real)
            arguments = {
                "h": self._pack(probes if slot == "head" else anchor),
                "r": self._pack(relation),
                "t": self._pack(probes if slot == "tail" else anchor),
            }
            value = self.interaction(**arguments).reshape(b)
            gradients = torch.autograd.grad(value.sum(), probes_real)
        q = torch.cat([g.reshape(b, -1) for g in gradients], dim=1)
        return q.detach().float(), value.detach().float()

    def _prepare_slot(self, slot: str, anchors: torch.Tensor, relations: torch.Tensor) -> RowBlocks:  # noqa: D102
        q, offset = self._linearize(slot, anchors, relations)
        # bilinear interactions (DistMult, ComplEx, RESCAL, ...) have no offset: the product alone gives the same
        # scores (x + 0 == x; only a zero's sign could differ, which no comparison sees) and spares a pass over them
        offset = offset.unsqueeze(1) if bool(offset.any()) else None
        candidates = self._candidates_t[slot]
        return lambda start, stop: addmm_in_pieces(
            None if offset is None else offset[start:stop], q[start:stop], candidates
        )


class DistanceScorer(_ERScorer):
    """Scores ``-||q(a, r) - c||_p`` (TransE, RotatE) through a matrix product (``p = 2``) or, for ``p = 1``, the
    L1 distances of :mod:`kgeval.engine.l1` (``torch.cdist``'s bits)."""

    #: relative size of a squared distance, next to the squared norms, below which the expansion is recomputed
    refine_threshold: float = 0.05

    def __init__(self, model: ERModel, device: str | torch.device | None = None) -> None:
        """Prepare the candidate matrix; raises ``TypeError`` for unsupported interactions or norms."""
        from pykeen.nn import modules as pykeen_modules

        super().__init__(model=model, device=device)
        interaction = self.interaction
        if isinstance(interaction, pykeen_modules.TransEInteraction):
            self.kind = "transe"
            self.p, self.power_norm = interaction.p, bool(interaction.power_norm)
        elif isinstance(interaction, pykeen_modules.RotatEInteraction):
            # RotatE's forward always uses the plain L2 norm
            self.kind = "rotate"
            self.p, self.power_norm = 2, False
        else:
            raise TypeError(f"{type(interaction).__name__} is not a supported distance interaction")
        if self.p not in (1, 2):
            raise TypeError(f"only p in (1, 2) has a fast path, got p={self.p}")
        if len(self.head_reps) != 1 or len(self.relations) != 1:
            raise TypeError("expected a single entity and a single relation representation")
        # head and tail slots share the entity representation
        candidates = _real_flat(self.tail_reps[0]).float().contiguous()
        self._candidate_sq_norms = candidates.pow(2).sum(dim=1)
        if self.p == 1:
            self._l1 = L1Candidates(candidates)  # torch.cdist's bits, faster on the CPU
        else:
            self._candidates_t = candidates.t().contiguous()  # (D, E): as AffineScorer's, for the matrix product
        self._max_candidate_sq_norm = float(self._candidate_sq_norms.max()) if self.num_entities else 0.0

    def _query(self, slot: str, anchors: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:
        """The point ``q`` the candidates' distance is measured from. shape: (b, D) real."""
        a = self.tail_reps[0][anchors]
        r = self.relations[0][relations]
        if self.kind == "transe":
            # h + r - t = q - c with q = h + r (tail slot) or c - q with q = t - r (head slot)
            q = a + r if slot == "tail" else a - r
        else:
            # as PyKEEN's RotatEInteraction: |h * r - t| (tail slot) and |h - t * conj(r)| (head slot)
            q = a * r if slot == "tail" else a * torch.conj(r)
        return _real_flat(q).float()

    def _prepare_slot(self, slot: str, anchors: torch.Tensor, relations: torch.Tensor) -> RowBlocks:  # noqa: D102
        q = self._query(slot, anchors, relations)
        q_sq = q.pow(2).sum(dim=1)
        return lambda start, stop: self._distances(q[start:stop], q_sq[start:stop])

    def _distances(self, q: torch.Tensor, q_sq: torch.Tensor) -> torch.Tensor:
        """Negative distances of query points ``q`` (b, D) with squared norms ``q_sq`` (b,) to every candidate."""
        if self.p == 1:
            return self._l1.distances(q).neg_()
        # squared distances via one matrix product: ||q||^2 - 2 q.c + ||c||^2
        sq = addmm_in_pieces(self._candidate_sq_norms.unsqueeze(0), q, self._candidates_t, alpha=-2.0)
        sq.add_(q_sq.unsqueeze(1)).clamp_(min=0.0)
        # the expansion cancels catastrophically for distances small next to the norms: recompute those directly
        threshold = self.refine_threshold * (q_sq + self._max_candidate_sq_norm)
        rows, columns = torch.nonzero(sq < threshold.unsqueeze(1), as_tuple=True)
        if rows.numel():
            sq[rows, columns] = (q[rows] - self._candidates_t[:, columns].t().contiguous()).pow(2).sum(dim=1)
        if not self.power_norm:
            sq.sqrt_()
        return sq.neg_()
