"""Negative triples for calibrating and assessing link-prediction models (S5, paper 004, Sec. 2.1 and 4).

Every negative strategy of the paper is an *entity-set filter* applied on top of the filtered local-closed-world
assumption (LCWA, Eq. 2): the negatives of a positive ``(s, p, o)`` on the tail side are the triples ``(s, p, o')``
with ``(s, p, o')`` not in the filter graph ``G`` and ``o'`` in an allowed set ``A_tail(p)`` that depends only on
the relation; likewise on the head side. The allowed sets, computed on the same graph ``G``:

===========  =================================  =================================  ===========
strategy     head side: ``s'`` in ...            tail side: ``o'`` in ...             equation
===========  =================================  =================================  ===========
``lcwa``     ``E``                              ``E``                              Eq. 2
``gb``       ``E \\ S(G)``                       ``E \\ O(G)``                       Eq. 13
``tc``       ``S(G, p)``                        ``O(G, p)``                        Eq. 14
``lc``       ``O(G, p) \\ S(G, p)``              ``S(G, p) \\ O(G, p)``              Eq. 15
``gb+lc``    union of ``gb`` and ``lc``         union of ``gb`` and ``lc``         Fig. 2
===========  =================================  =================================  ===========

They are stored as boolean matrices of shape ``(num_relations, num_entities)`` per side (:class:`CandidateMasks`), so
a batch of queries gets its negatives as one dense ``(b, num_entities)`` mask: ``allowed[r] & ~known(anchor, r)``.

**Which set of negatives.** Eq. 12 defines the negatives of a split as a *set union* over its positives. Positives
that share a query ``(s, p, ?)`` share their tail-side negatives, and a triple ``(s2, p, o1)`` can be both a
tail-side negative of a positive ``(s2, p, o2)`` and a head-side negative of a positive ``(s1, p, o1)``. With
``union=True`` (the default, Eq. 12 literally) every such triple counts once: each unique query is scored once,
and a head-side query ``(?, p, o)`` additionally skips the heads ``s'`` already covered by a tail-side query
``(s', p, ?)`` whenever ``o`` is an allowed tail of ``p``. With ``union=False`` every positive keeps its own
negatives on both sides (a multiset, as rank-based evaluation scores them: ``|N| = sum_t (|N^s(t)| + |N^o(t)|)``);
each unique query then carries a multiplicity, the number of positives that share it.

**Disjoint from another set.** ``exclude`` leaves out every triple that is a negative of another set of positives on
the same graph (the held-out validation share's negatives, disjoint from the fit's): a query that the other set
shares loses all its negatives, and a candidate that the other set reaches from the opposite side (a tail ``o'``
with ``(?, p, o')`` among its head-side queries and ``s`` an allowed head of ``p``; likewise for heads) is left out,
as union mode leaves out the heads its own tail-side queries reach.

Counts (:meth:`NegativeSet.count`) come from set arithmetic over the known answers, never from enumerating
candidate triples: ``|A(r) \\ K(a, r)| = |A(r)| - |A(r) & K(a, r)|`` with ``K`` the known answers in ``G``.

Written by hand: PyKEEN's negative samplers draw random samples (and its ``BernoulliNegativeSampler`` or
``PseudoTypedNegativeSampler`` do not implement these exact sets); no maintained library enumerates them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kgeval.lp.filtering import SIDES, FilterIndex, Side, as_triples_array

if TYPE_CHECKING:  # tensors are accepted as input, but the counting is numpy: no torch import for the S5 table jobs
    import torch

__all__ = [
    "STRATEGIES",
    "CandidateMasks",
    "EntityRoles",
    "entity_roles",
    "candidate_masks",
    "QuerySet",
    "QueryBatch",
    "NegativeSet",
    "queries_per_batch",
]

#: the negative strategies, in the paper's order; ``gb+lc`` is the union used in Fig. 2
STRATEGIES: tuple[str, ...] = ("lcwa", "gb", "tc", "lc", "gb+lc")

#: the side whose queries reach a candidate of a query of the other side
_OPPOSITE: dict[str, Side] = {"tail": "head", "head": "tail"}
#: bytes per (query, entity) cell while a batch is scored and masked: float32 score, float64 copy, a few masks
_BYTES_PER_CELL = 24


@dataclass(frozen=True)
class EntityRoles:
    """Which entities occur as subject/object in a graph, globally and per relation.

    :ivar subjects: shape: (E,) bool, ``S(G)``
    :ivar objects: shape: (E,) bool, ``O(G)``
    :ivar subjects_of: shape: (R, E) bool, ``S(G, p)``
    :ivar objects_of: shape: (R, E) bool, ``O(G, p)``
    """

    subjects: np.ndarray
    objects: np.ndarray
    subjects_of: np.ndarray
    objects_of: np.ndarray


def entity_roles(graph: np.ndarray | torch.Tensor, num_entities: int, num_relations: int) -> EntityRoles:
    """Compute ``S(G)``, ``O(G)``, ``S(G, p)`` and ``O(G, p)`` as boolean masks.

    :param graph: shape: (m, 3) ID-based triples of ``G``
    :param num_entities: ``|E|``
    :param num_relations: ``|R|``
    """
    graph = as_triples_array(graph, name="graph")
    subjects_of = np.zeros((num_relations, num_entities), dtype=bool)
    objects_of = np.zeros((num_relations, num_entities), dtype=bool)
    subjects_of[graph[:, 1], graph[:, 0]] = True
    objects_of[graph[:, 1], graph[:, 2]] = True
    return EntityRoles(
        subjects=subjects_of.any(axis=0),
        objects=objects_of.any(axis=0),
        subjects_of=subjects_of,
        objects_of=objects_of,
    )


@dataclass(frozen=True)
class CandidateMasks:
    """The entities a strategy allows as replacement, per side and relation (before removing known triples).

    :ivar strategy: the strategy's name
    :ivar head: shape: (R, E) bool; ``head[p, e]``: ``e`` may replace the subject of a triple with relation ``p``
    :ivar tail: shape: (R, E) bool; ``tail[p, e]``: ``e`` may replace the object
    """

    strategy: str
    head: np.ndarray
    tail: np.ndarray

    def side(self, side: Side) -> np.ndarray:
        """The mask of one side. shape: (R, E)"""
        return {"head": self.head, "tail": self.tail}[side]


def candidate_masks(strategy: str, roles: EntityRoles) -> CandidateMasks:
    """The allowed replacement entities of a strategy (table in the module docstring).

    :param strategy: one of :data:`STRATEGIES`
    :param roles: the entity roles of the filter graph ``G``
    :raises ValueError: for an unknown strategy
    """
    num_relations, num_entities = roles.subjects_of.shape
    if strategy == "lcwa":
        full = np.ones((num_relations, num_entities), dtype=bool)
        return CandidateMasks(strategy, head=full, tail=full.copy())
    if strategy == "gb":
        head = np.broadcast_to(~roles.subjects, (num_relations, num_entities)).copy()
        tail = np.broadcast_to(~roles.objects, (num_relations, num_entities)).copy()
        return CandidateMasks(strategy, head=head, tail=tail)
    if strategy == "tc":
        return CandidateMasks(strategy, head=roles.subjects_of.copy(), tail=roles.objects_of.copy())
    if strategy == "lc":
        return CandidateMasks(
            strategy,
            head=roles.objects_of & ~roles.subjects_of,
            tail=roles.subjects_of & ~roles.objects_of,
        )
    if strategy == "gb+lc":
        gb, lc = candidate_masks("gb", roles), candidate_masks("lc", roles)
        return CandidateMasks(strategy, head=gb.head | lc.head, tail=gb.tail | lc.tail)
    raise ValueError(f"unknown negative strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")


@dataclass(frozen=True)
class QuerySet:
    """The unique queries of one side of a set of positives.

    :ivar side: ``"tail"`` (replace objects; anchors are subjects) or ``"head"`` (replace subjects; anchors objects)
    :ivar anchors: shape: (q,) the kept entity
    :ivar relations: shape: (q,)
    :ivar multiplicity: shape: (q,) number of positives with this query
    """

    side: Side
    anchors: np.ndarray
    relations: np.ndarray
    multiplicity: np.ndarray

    @classmethod
    def from_positives(cls, positives: np.ndarray, side: Side) -> QuerySet:
        """Group positives ``(s, p, o)`` by ``(s, p)`` (tail side) or ``(p, o)`` (head side), sorted by key.

        :param positives: shape: (n, 3)
        """
        anchor_column = 0 if side == "tail" else 2
        pairs = positives[:, [anchor_column, 1]]
        unique, multiplicity = np.unique(pairs, axis=0, return_counts=True)
        return cls(
            side=side,
            anchors=unique[:, 0].astype(np.int64),
            relations=unique[:, 1].astype(np.int64),
            multiplicity=multiplicity.astype(np.int64),
        )

    def __len__(self) -> int:
        return len(self.anchors)


@dataclass
class QueryBatch:
    """A batch of queries of one side with their known answers, ready to be scored and masked.

    :ivar side: the side
    :ivar anchors: shape: (b,)
    :ivar relations: shape: (b,)
    :ivar multiplicity: shape: (b,) how often each query's negatives count (1 in union mode)
    :ivar known: shape: (b, E) bool, the known answers in ``G`` (these are never negatives)
    :ivar covered: shape: (b, E) bool or None: candidates whose triple is also reached from a query of the opposite
        side, skipped if the anchor is allowed on that side: on the head side in union mode, heads ``s'`` with a
        tail-side query ``(s', p, ?)``; with ``exclude``, also the excluded set's queries of the opposite side
    :ivar shared: shape: (b,) bool or None; with ``exclude``: the excluded set has the same query (no negatives left)
    """

    side: Side
    anchors: np.ndarray
    relations: np.ndarray
    multiplicity: np.ndarray
    known: np.ndarray
    covered: np.ndarray | None = field(default=None)
    shared: np.ndarray | None = field(default=None)

    def negatives(self, masks: CandidateMasks) -> np.ndarray:
        """The negatives of each query under a strategy.

        :param masks: the strategy's allowed entities (computed on the same graph ``G``)
        :return: shape: (b, E) bool; ``[i, e]``: replacing the missing entity of query ``i`` by ``e`` is a negative
        """
        negative = masks.side(self.side)[self.relations] & ~self.known
        if self.covered is not None:
            anchor_allowed = masks.side(_OPPOSITE[self.side])[self.relations, self.anchors]
            negative &= ~(self.covered & anchor_allowed[:, None])
        if self.shared is not None:
            negative &= ~self.shared[:, None]
        return negative

    def __len__(self) -> int:
        return len(self.anchors)


def queries_per_batch(num_entities: int, memory_budget_mb: float) -> int:
    """How many queries of ``num_entities`` candidates fit a memory budget (at least one).

    :param num_entities: ``|E|``
    :param memory_budget_mb: megabytes for one batch's scores and masks
    """
    return max(1, int(memory_budget_mb * 2**20 // (max(num_entities, 1) * _BYTES_PER_CELL)))


class NegativeSet:
    """The negatives of a set of positives under the filtered LCWA on a graph ``G``, restricted by strategies.

    For fitting a calibration function (paper Eq. 11-12): positives = validation, ``G`` = train + valid. For
    assessing it: positives = test, ``G`` = train + valid + test.

    >>> graph = np.array([[0, 0, 1], [1, 0, 2], [2, 0, 0]])
    >>> negatives = NegativeSet(graph[:1], graph, num_entities=3, num_relations=1)
    >>> negatives.count("lcwa")  # (0, 0, 0), (0, 0, 2) on the tail side; (1, 0, 1), (2, 0, 1) on the head side
    4
    >>> negatives.count("gb")  # every entity is a subject and an object somewhere in G
    0
    """

    def __init__(
        self,
        positives: np.ndarray | torch.Tensor,
        graph: np.ndarray | torch.Tensor | Sequence[np.ndarray | torch.Tensor],
        num_entities: int,
        num_relations: int,
        union: bool = True,
        exclude: NegativeSet | None = None,
    ) -> None:
        """Index the positives' queries and the filter graph.

        :param positives: shape: (n, 3) ID-based positive triples; each must be in ``graph``
        :param graph: shape: (m, 3) the filter graph ``G``, or a list of such arrays (concatenated)
        :param num_entities: ``|E|``
        :param num_relations: ``|R|``
        :param union: ``True``: the set union of Eq. 12; ``False``: one multiset of negatives per positive and side
        :param exclude: another set on the same graph whose negatives are left out of this one (module docstring)
        :raises ValueError: if a positive is not in the graph (it would be its own negative), or if ``exclude`` has
            another graph
        """
        self.positives = as_triples_array(positives, name="positives")
        if isinstance(graph, (list, tuple)):
            arrays = [as_triples_array(g, name=f"graph[{i}]") for i, g in enumerate(graph)]
            graph = np.concatenate(arrays, axis=0) if arrays else np.zeros((0, 3), dtype=np.int64)
        self.graph = np.unique(as_triples_array(graph, name="graph"), axis=0)
        self.num_entities = int(num_entities)
        self.num_relations = int(num_relations)
        self.union = bool(union)
        self.index = FilterIndex(self.graph, num_entities=self.num_entities, num_relations=self.num_relations)
        inside = self.index.contains("tail", self.positives[:, 0], self.positives[:, 1], self.positives[:, 2])
        if not inside.all():
            row = int(np.flatnonzero(~inside)[0])
            raise ValueError(
                f"positive triple #{row} {tuple(self.positives[row])} is not in the filter graph G; "
                "pass G = the splits that contain the positives (train+valid for fitting, all splits for assessing)"
            )
        self.queries = {side: QuerySet.from_positives(self.positives, side) for side in SIDES}
        if not self.union:
            self._weights = {side: self.queries[side].multiplicity for side in SIDES}
        else:
            self._weights = {side: np.ones(len(self.queries[side]), dtype=np.int64) for side in SIDES}
        # union mode: (p, s') pairs that a tail-side query (s', p, ?) covers. shape: (R, E)
        self._tail_query_heads = np.zeros((self.num_relations, self.num_entities), dtype=bool)
        tail_queries = self.queries["tail"]
        self._tail_query_heads[tail_queries.relations, tail_queries.anchors] = True
        self.roles = entity_roles(self.graph, self.num_entities, self.num_relations)
        self._masks: dict[str, CandidateMasks] = {}
        self._reach, self._shared = self._reach_and_shared(exclude)

    def _reach_and_shared(
        self, exclude: NegativeSet | None
    ) -> tuple[dict[str, np.ndarray | None], dict[str, np.ndarray | None]]:
        """Per side: the (relation, candidate) pairs reached from the opposite side's queries (shape: (R, E) or None;
        see :class:`QueryBatch`'s ``covered``) and which of this set's queries ``exclude`` shares (shape: (q,))."""
        reach: dict[str, np.ndarray | None] = {"tail": None, "head": self._tail_query_heads if self.union else None}
        shared: dict[str, np.ndarray | None] = {"tail": None, "head": None}
        if exclude is None:
            return reach, shared
        if not (exclude.num_entities == self.num_entities and np.array_equal(exclude.graph, self.graph)):
            raise ValueError("exclude must be a NegativeSet on the same filter graph G (same entities and triples)")
        for side in SIDES:
            other = exclude.queries[_OPPOSITE[side]]
            pairs = np.zeros((self.num_relations, self.num_entities), dtype=bool)
            pairs[other.relations, other.anchors] = True
            reach[side] = pairs if reach[side] is None else pairs | reach[side]
            own = exclude.queries[side]
            keys = np.zeros((self.num_relations, self.num_entities), dtype=bool)
            keys[own.relations, own.anchors] = True
            shared[side] = keys[self.queries[side].relations, self.queries[side].anchors]
        return reach, shared

    def masks(self, strategy: str | CandidateMasks) -> CandidateMasks:
        """The allowed-entity masks of a strategy on this set's graph ``G`` (cached)."""
        if isinstance(strategy, CandidateMasks):
            return strategy
        if strategy not in self._masks:
            self._masks[strategy] = candidate_masks(strategy, self.roles)
        return self._masks[strategy]

    def count_per_query(self, strategy: str | CandidateMasks) -> dict[str, np.ndarray]:
        """Number of negatives of each unique query, without multiplicity, by set arithmetic (no enumeration).

        :return: per side, shape: (q,) int64
        """
        masks = self.masks(strategy)
        counts = {}
        for side in SIDES:
            queries = self.queries[side]
            allowed = masks.side(side)
            # |A(r)| - |A(r) & K(a, r)|: only the known answers are enumerated
            rows, answers = self.index.lookup(side, queries.anchors, queries.relations)
            known_allowed = np.bincount(
                rows, weights=allowed[queries.relations[rows], answers], minlength=len(queries)
            ).astype(np.int64)
            count = allowed.sum(axis=1)[queries.relations] - known_allowed
            if self._reach[side] is not None:
                # candidates reached from the opposite side's queries, when the anchor is allowed on that side
                covered = allowed & self._reach[side]
                known_covered = np.bincount(
                    rows, weights=covered[queries.relations[rows], answers], minlength=len(queries)
                ).astype(np.int64)
                overlap = covered.sum(axis=1)[queries.relations] - known_covered
                count = count - overlap * masks.side(_OPPOSITE[side])[queries.relations, queries.anchors]
            if self._shared[side] is not None:
                count = np.where(self._shared[side], 0, count)
            counts[side] = count.astype(np.int64)
        return counts

    def count(self, strategy: str | CandidateMasks) -> int:
        """``|N|``: the number of negatives under a strategy (with multiplicity when ``union=False``)."""
        per_query = self.count_per_query(strategy)
        return int(sum(int(per_query[side] @ self._weights[side]) for side in SIDES))

    def batches(self, batch_size: int) -> Iterator[QueryBatch]:
        """Iterate over all unique queries (tail side first), ``batch_size`` at a time, with their known answers.

        :param batch_size: queries per batch (see :func:`queries_per_batch`)
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        for side in ("tail", "head"):
            queries = self.queries[side]
            for start in range(0, len(queries), batch_size):
                stop = min(start + batch_size, len(queries))
                anchors = queries.anchors[start:stop]
                relations = queries.relations[start:stop]
                known = np.zeros((stop - start, self.num_entities), dtype=bool)
                rows, answers = self.index.lookup(side, anchors, relations)
                known[rows, answers] = True
                reach, shared = self._reach[side], self._shared[side]
                yield QueryBatch(
                    side=side,
                    anchors=anchors,
                    relations=relations,
                    multiplicity=self._weights[side][start:stop],
                    known=known,
                    covered=None if reach is None else reach[relations],
                    shared=None if shared is None else shared[start:stop],
                )

    def enumerate(self, strategy: str | CandidateMasks) -> np.ndarray:
        """All negatives as explicit triples, with repeats in multiset mode (for tests and tiny graphs only).

        :return: shape: (|N|, 3)
        """
        masks = self.masks(strategy)
        parts = []
        for batch in self.batches(batch_size=1024):
            rows, entities = np.nonzero(batch.negatives(masks))
            repeats = batch.multiplicity[rows]
            rows, entities = np.repeat(rows, repeats), np.repeat(entities, repeats)
            if batch.side == "tail":
                parts.append(np.stack([batch.anchors[rows], batch.relations[rows], entities], axis=1))
            else:
                parts.append(np.stack([entities, batch.relations[rows], batch.anchors[rows]], axis=1))
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, 3), dtype=np.int64)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(num_positives={len(self.positives)}, num_graph_triples={len(self.graph)}, "
            f"union={self.union})"
        )
