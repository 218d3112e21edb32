"""The EA pair container: two knowledge graphs with their own entity ids and the reference alignment.

Every EA source (:mod:`kgeval.ea.data`, :mod:`kgeval.ea.two_view`, :mod:`kgeval.ea.sylloge_loader`) builds one.

Graph-2 ids carry no alignment: a release may number the two graphs so that aligned entities share an id, or an id
offset (DBP15k and SRPRS do for most of their reference pairs). :func:`shuffle_graph2` relabels graph 2 by a seeded
permutation - ``numpy.random.default_rng(stream_seed(GRAPH2_SEED, "graph2_ids", *keys)).permutation(n2)``, with
:func:`kgeval.uncertainty.resampling.stream_seed` and ``keys`` naming the source files (e.g. ``("dbp15k",
"fr_en")``) - so the same files always give the same ids. :func:`relabel_graph2` applies a given permutation to
every field indexed by a graph-2 id (triples, reference and split pairs, labels, names, attributes); graph-2
triples are then sorted by their new ids, so that their row order does not keep the old one either.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from kgeval.uncertainty.resampling import stream_seed

__all__ = ["EAPair", "EADataError", "GRAPH2_SEED", "graph2_permutation", "relabel_graph2", "shuffle_graph2"]

#: the configured-seed part of every graph-2 relabelling stream (module doc); fixed, not a config key
GRAPH2_SEED = 0


class EADataError(ValueError):
    """A dataset file or spec is malformed; the message names the file (and line) and the fix."""


@dataclass(frozen=True)
class EAPair:
    """Two knowledge graphs with their own contiguous entity ids and the reference alignment (see module doc)."""

    name: str
    triples1: np.ndarray
    triples2: np.ndarray
    entity_labels1: list[str]
    entity_labels2: list[str]
    alignment: np.ndarray
    relation_labels1: list[str] | None = None
    relation_labels2: list[str] | None = None
    names1: list[str] | None = None
    names2: list[str] | None = None
    attributes1: list[np.ndarray] | None = None
    attributes2: list[np.ndarray] | None = None
    attribute_labels1: list[str] | None = None
    attribute_labels2: list[str] | None = None
    fixed_split: dict[str, np.ndarray] | None = field(default=None)

    def __post_init__(self) -> None:
        for key, triples, n in (
            ("triples1", self.triples1, self.num_entities1),
            ("triples2", self.triples2, self.num_entities2),
        ):
            if triples.ndim != 2 or triples.shape[1] != 3:
                raise EADataError(f"{self.name}: {key} must have shape (m, 3), got {triples.shape}")
            if triples.size and (triples[:, [0, 2]].min() < 0 or triples[:, [0, 2]].max() >= n):
                raise EADataError(f"{self.name}: {key} refers to entity ids outside 0..{n - 1}")
        split_items = [(f"fixed_split[{k}]", v) for k, v in (self.fixed_split or {}).items()]
        for key, pairs in [("alignment", self.alignment), *split_items]:
            if pairs.ndim != 2 or pairs.shape[1] != 2:
                raise EADataError(f"{self.name}: {key} must have shape (n, 2), got {pairs.shape}")
            if pairs.size and (
                pairs.min() < 0 or pairs[:, 0].max() >= self.num_entities1 or pairs[:, 1].max() >= self.num_entities2
            ):
                raise EADataError(f"{self.name}: {key} refers to entity ids outside the graphs")
        for key, values, n in (
            ("names1", self.names1, self.num_entities1),
            ("names2", self.names2, self.num_entities2),
            ("attributes1", self.attributes1, self.num_entities1),
            ("attributes2", self.attributes2, self.num_entities2),
        ):
            if values is not None and len(values) != n:
                raise EADataError(f"{self.name}: {key} has {len(values)} entries for {n} entities")

    @property
    def num_entities1(self) -> int:
        """Number of entities in graph 1."""
        return len(self.entity_labels1)

    @property
    def num_entities2(self) -> int:
        """Number of entities in graph 2."""
        return len(self.entity_labels2)

    @property
    def num_relations1(self) -> int:
        """Number of relations in graph 1 (``max id + 1`` when no labels are known)."""
        if self.relation_labels1 is not None:
            return len(self.relation_labels1)
        return int(self.triples1[:, 1].max()) + 1 if len(self.triples1) else 0

    @property
    def num_relations2(self) -> int:
        """Number of relations in graph 2 (``max id + 1`` when no labels are known)."""
        if self.relation_labels2 is not None:
            return len(self.relation_labels2)
        return int(self.triples2[:, 1].max()) + 1 if len(self.triples2) else 0

    def summary(self) -> dict[str, Any]:
        """Counts for a dataset summary table."""
        return {
            "name": self.name,
            "num_entities1": self.num_entities1,
            "num_entities2": self.num_entities2,
            "num_relations1": self.num_relations1,
            "num_relations2": self.num_relations2,
            "num_triples1": len(self.triples1),
            "num_triples2": len(self.triples2),
            "num_alignments": len(self.alignment),
            "has_attributes": self.attributes1 is not None,
            "fixed_split": ",".join(f"{k}={len(v)}" for k, v in sorted((self.fixed_split or {}).items())),
        }


def graph2_permutation(num_entities2: int, *keys: str) -> np.ndarray:
    """The seeded new id of every graph-2 entity (module doc): shape (n2,), a permutation of ``0 .. n2-1``.

    :param num_entities2: n2
    :param keys: names of the source files (source, subset, ...); the stream's seed is
        ``stream_seed(GRAPH2_SEED, "graph2_ids", *keys)``
    """
    rng = np.random.default_rng(stream_seed(GRAPH2_SEED, "graph2_ids", *keys))
    return rng.permutation(num_entities2).astype(np.int64)


def _relabel_pairs(pairs: np.ndarray, new_ids: np.ndarray) -> np.ndarray:
    """Pairs with their graph-2 column relabelled, sorted by graph-1 id, then graph-2 id."""
    out = np.stack([pairs[:, 0], new_ids[pairs[:, 1]]], axis=1).astype(np.int64).reshape(-1, 2)
    return out[np.lexsort((out[:, 1], out[:, 0]))]


def _reorder(values: list[Any] | None, new_ids: np.ndarray) -> list[Any] | None:
    """A per-entity list moved to the new ids: ``out[new_ids[j]] = values[j]``."""
    if values is None:
        return None
    out: list[Any] = [None] * len(values)
    for old, new in enumerate(new_ids.tolist()):
        out[new] = values[old]
    return out


def relabel_graph2(pair: EAPair, new_ids: np.ndarray) -> EAPair:
    """The same pair with graph-2 entity ``j`` renamed ``new_ids[j]`` everywhere (module doc).

    :param pair: the pair
    :param new_ids: shape (n2,), a permutation of ``0 .. n2-1``
    :returns: a new pair; graph-1 fields, relation and attribute labels are unchanged; graph-2 triples sorted by
        (head, relation, tail), the alignment and every split sorted by (graph-1 id, graph-2 id)
    :raises EADataError: when ``new_ids`` is not a permutation of the graph-2 ids
    """
    new_ids = np.asarray(new_ids, dtype=np.int64)
    n2 = pair.num_entities2
    if new_ids.shape != (n2,) or not np.array_equal(np.sort(new_ids), np.arange(n2)):
        raise EADataError(f"{pair.name}: a graph-2 relabelling must be a permutation of 0..{n2 - 1}")
    triples = pair.triples2.copy()
    triples[:, 0], triples[:, 2] = new_ids[triples[:, 0]], new_ids[triples[:, 2]]
    triples = triples[np.lexsort((triples[:, 2], triples[:, 1], triples[:, 0]))]
    split = pair.fixed_split
    return replace(
        pair,
        triples2=triples,
        entity_labels2=_reorder(pair.entity_labels2, new_ids),
        alignment=_relabel_pairs(pair.alignment, new_ids),
        names2=_reorder(pair.names2, new_ids),
        attributes2=_reorder(pair.attributes2, new_ids),
        fixed_split=None if split is None else {k: _relabel_pairs(v, new_ids) for k, v in split.items()},
    )


def shuffle_graph2(pair: EAPair, *keys: str) -> tuple[EAPair, np.ndarray]:
    """Relabel graph 2 by the seeded permutation of :func:`graph2_permutation` (module doc).

    :param keys: names of the source files, e.g. ``("dbp15k", "fr_en")``
    :returns: the relabelled pair and the permutation (``new_ids[j]`` = the new id of old graph-2 id ``j``), for
        fields kept outside the pair (e.g. a loader's tuples of names)
    """
    new_ids = graph2_permutation(pair.num_entities2, *keys)
    return relabel_graph2(pair, new_ids), new_ids
