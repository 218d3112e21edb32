"""The EA pair container: two knowledge graphs with their own entity ids and the reference alignment.

Every EA source (:mod:`kgeval.ea.data`, :mod:`kgeval.ea.two_view`, :mod:`kgeval.ea.sylloge_loader`) builds one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["EAPair", "EADataError"]


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
