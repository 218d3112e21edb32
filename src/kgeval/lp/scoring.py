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
  small next to the norms) are recomputed directly. For ``p = 1`` it uses :func:`torch.cdist`.

Every other model uses :class:`PyKEENScorer`, which calls ``model.predict_t`` / ``model.predict_h``.

:func:`make_scorer` checks a fast scorer against PyKEEN's own scores on a few queries and falls back (with a
warning) if they disagree, so a fast path can never silently change results.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import torch

# PyKEEN's models are imported where a scorer is made, not here: importing them costs about 3.5 s of CPU on top of
# torch, and the ranking engine (which imports this module) also serves jobs that rank without PyKEEN (entity
# alignment), which each paid it at start-up.
if TYPE_CHECKING:
    from pykeen.models import ERModel, Model
    from pykeen.nn.modules import Interaction

__all__ = [
    "RowBlocks",
    "Scorer",
    "PyKEENScorer",
    "AffineScorer",
    "DistanceScorer",
    "make_scorer",
    "resolve_device",
    "single_threaded",
    "affine_interactions",
    "addmm_in_pieces",
]

logger = logging.getLogger(__name__)

#: ``blocks(a, z)`` returns the scores of rows ``a..z-1`` of a prepared batch of queries (see :meth:`Scorer.prepare`)
RowBlocks = Callable[[int, int], torch.Tensor]

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


#: bytes of float32 scores per (query, candidate) pair
_FLOAT_BYTES = 4


@contextlib.contextmanager
def single_threaded(device: torch.device | str = "cpu") -> Iterator[None]:
    """Run torch's CPU operations in the block on one thread, then restore the thread count.

    The small element-wise operations around the large matrix products gain nothing from several threads, but on a
    busy machine every multi-threaded operation waits for all its threads to be scheduled; one thread avoids that.
    GPU work is unaffected.
    """
    if torch.device(device).type != "cpu":
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


#: candidate columns per piece of a CPU matrix product (:func:`addmm_in_pieces`)
PIECE_COLUMNS = 2048


def addmm_in_pieces(
    bias: torch.Tensor | None, q: torch.Tensor, candidates_t: torch.Tensor, alpha: float = 1.0
) -> torch.Tensor:
    """``torch.addmm(bias, q, candidates_t, alpha=alpha)`` (``torch.mm(q, candidates_t)`` when ``bias`` is
    ``None``); on CPU computed in pieces of about :data:`PIECE_COLUMNS` columns, each written into its columns of
    the one result.

    Our explanation, not profiled: the matrix library packs the candidate matrix anew for every product, and a piece
    of it is packed once for all the query rows and stays in cache while they use it. Measured on a 2-core AMD EPYC
    host (MKL in torch 2.13), two threads each multiplying blocks of 115 rows by FB15k-237's 14,505 candidates: 8
    pieces instead of one product took 41 instead of 63 microseconds per row with 200 features (DistMult), 78
    instead of 104 with 400 (ComplEx).
    Every output element is still one dot product over all features in the same order, so the bits are those of one
    product (the tests check it).

    :param bias: broadcastable to (b, E): a (b, 1) offset per row or a (1, E) offset per candidate; ``None``: no
        offset (the product alone, which also spares writing the offset into the result and reading it back)
    :param q: shape: (b, D)
    :param candidates_t: shape: (D, E)
    :param alpha: the product's factor (only with a ``bias``)
    """
    if bias is None and alpha != 1.0:
        raise ValueError("alpha needs a bias (use bias=torch.zeros(1, 1))")
    b, E = q.shape[0], candidates_t.shape[1]
    pieces = -(-E // PIECE_COLUMNS)
    if q.device.type != "cpu" or pieces <= 1 or b == 0:
        return torch.mm(q, candidates_t) if bias is None else torch.addmm(bias, q, candidates_t, alpha=alpha)
    out = torch.empty(b, E, dtype=torch.result_type(q, candidates_t), device=q.device)
    bias = bias.expand(b, E) if bias is not None else None
    bounds = [E * i // pieces for i in range(pieces + 1)]
    for start, stop in zip(bounds, bounds[1:]):
        if bias is None:
            torch.mm(q, candidates_t[:, start:stop], out=out[:, start:stop])
        else:
            torch.addmm(bias[:, start:stop], q, candidates_t[:, start:stop], alpha=alpha, out=out[:, start:stop])
    return out


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """Resolve ``None`` to the GPU when one is present, else the CPU.

    :param device: a device, a device name (``"cpu"``, ``"cuda"``, ``"cuda:1"``) or ``None``
    """
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


class Scorer(ABC):
    """Scores of all entities as the missing head or tail of a batch of queries.

    Queries use the dataset's relation IDs (no inverse relations); the scorer maps them as PyKEEN does.
    """

    #: a short human-readable name of the scoring method
    name: str
    #: whether scores come from one matrix product per batch (``False``: PyKEEN's generic broadcast)
    is_fast: bool
    #: number of candidate entities
    num_entities: int
    #: the device scores are computed on
    device: torch.device

    @abstractmethod
    def score_tails(self, heads: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:
        """Score every entity as the tail of ``(heads[i], relations[i], ?)``.

        :param heads: shape: (b,) long
        :param relations: shape: (b,) long
        :return: shape: (b, num_entities) float32, on :attr:`device`
        """

    @abstractmethod
    def score_heads(self, relations: torch.Tensor, tails: torch.Tensor) -> torch.Tensor:
        """Score every entity as the head of ``(?, relations[i], tails[i])``.

        :param relations: shape: (b,) long
        :param tails: shape: (b,) long
        :return: shape: (b, num_entities) float32, on :attr:`device`
        """

    def score(self, side: str, anchors: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:
        """Score all entities for queries of one side (``"tail"``: anchors are heads; ``"head"``: anchors are tails).

        :param anchors: shape: (b,)
        :param relations: shape: (b,)
        :return: shape: (b, num_entities)
        """
        if side == "tail":
            return self.score_tails(anchors, relations)
        if side == "head":
            return self.score_heads(relations, anchors)
        raise ValueError(f"side must be 'head' or 'tail', got {side!r}")

    def prepare(self, side: str, anchors: torch.Tensor, relations: torch.Tensor) -> RowBlocks:
        """Prepare a batch of queries whose score rows are then computed block by block of rows.

        ``prepare(side, a, r)(i, j)`` equals ``score(side, a, r)[i:j]``. The ranking engine calls the returned
        function from its worker threads, each with one torch thread, so that each block of rows is scored and
        reduced while it is in cache. Here every row is scored at once and the blocks are slices; the fast scorers
        do the per-query work (looking up, linearizing) once and one matrix product per block.

        :param anchors: shape: (b,)
        :param relations: shape: (b,)
        :return: a thread-safe function of a row range
        """
        scores = self.score(side, anchors, relations)
        return lambda start, stop: scores[start:stop]

    def bytes_per_query(self) -> int:
        """Peak bytes of temporaries per query row while scoring (besides the (b, num_entities) output)."""
        return 0

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(name={self.name!r}, is_fast={self.is_fast}, device={self.device})"


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
        self._candidates_t = {
            slot: torch.cat([_real_flat(x) for x in reps], dim=1).float().t().contiguous()
            for slot, reps in (("head", self.head_reps), ("tail", self.tail_reps))
            if slot in needed
        }

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
    """Scores ``-||q(a, r) - c||_p`` (TransE, RotatE) through a matrix product (``p = 2``) or ``torch.cdist``."""

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
            self._candidates = candidates  # the layout torch.cdist takes
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
            return torch.cdist(q, self._candidates, p=1).neg_()
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
