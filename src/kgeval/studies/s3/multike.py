"""MultiKE-style multi-view entity alignment (``multike``): a name view, an attribute view and a structure view.

- Name view: the entity-name vectors of :mod:`kgeval.studies.s3.name_vectors` (char n-gram TF-IDF offline, or
  fastText-style word vectors), L2-normalised.
- Attribute view: each entity's bag of attribute names (DBP15k's MuGNN attribute files, OpenEA / MED-BBK attribute
  triples) as char n-gram TF-IDF in a space shared by both graphs, L2-normalised. A pair without attributes (SRPRS,
  the embedded two-view pair) has no attribute view; its weight then goes to the other views (``info`` says so).
- Structure view: the translation model of :mod:`kgeval.studies.s3.bootea` (TransE with parameter swapping and the
  alignment loss on the seed mappings) without bootstrapping.

Combination (MultiKE's "weighted view averaging" at the level of similarities): the view embeddings, each
L2-normalised, are concatenated with weights ``sqrt(w_v / sum w)``, so that the cosine similarity of the
concatenation is the weighted mean of the per-view cosine similarities; score = negative Euclidean distance of the
concatenations (monotone in that mean, as every view is unit length).

Simplifications against MultiKE (Zhang et al., IJCAI 2019): the name and attribute views are not trained (MultiKE
learns them with an autoencoder of literal embeddings and a CNN over attribute-value pairs; DBP15k ships no values);
no cross-view training and no shared-space learning; the structure view is TransE with a margin loss rather than
MultiKE's logistic loss; no early stopping.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kgeval.studies.s3.bootea import BootEAConfig, train_bootea

__all__ = ["MultiKEConfig", "combine_views", "train_multike"]


@dataclass(frozen=True)
class MultiKEConfig:
    """Settings of :func:`train_multike` (``studies.s3.multike``); ``structure`` as ``studies.s3.bootea`` (its
    bootstrapping is always off)."""

    name_weight: float = 1.0
    attr_weight: float = 1.0
    structure_weight: float = 1.0
    attr_dim: int = 64
    structure: Mapping[str, Any] | None = None

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any] | None) -> MultiKEConfig:
        """The config from a settings dict (unknown keys raise a ``TypeError`` naming them)."""
        return cls(**dict(spec or {}))


def combine_views(views: list[tuple[np.ndarray | torch.Tensor, np.ndarray | torch.Tensor, float]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Concatenate L2-normalised views with weights ``sqrt(w / sum w)`` (module doc).

    :param views: ``(left (n1, d_v), right (n2, d_v), weight)`` per view; views of weight 0 are left out
    :returns: shapes (n1, sum d_v), (n2, sum d_v)
    """
    kept = [(torch.as_tensor(l).float(), torch.as_tensor(r).float(), float(w)) for l, r, w in views if w > 0]
    if not kept:
        raise ValueError("multike: every view has weight 0")
    total = sum(w for _, _, w in kept)
    lefts, rights = [], []
    for left, right, weight in kept:
        scale = (weight / total) ** 0.5
        lefts.append(torch.nn.functional.normalize(left, dim=1) * scale)
        rights.append(torch.nn.functional.normalize(right, dim=1) * scale)
    return torch.cat(lefts, dim=1), torch.cat(rights, dim=1)


def train_multike(
    name_vectors: tuple[np.ndarray, np.ndarray],
    attribute_vectors: tuple[np.ndarray, np.ndarray] | None,
    triples1: np.ndarray,
    triples2: np.ndarray,
    num_entities1: int,
    num_entities2: int,
    train_pairs: np.ndarray,
    config: MultiKEConfig,
    seed: int,
) -> tuple[torch.Tensor, torch.Tensor, dict[str, Any]]:
    """Build the three views and combine them.

    :returns: the combined representations of both graphs and an info dict (``losses``, ``train_seconds``,
        ``views`` - the views used with their weights)
    """
    start = time.perf_counter()
    views = [(name_vectors[0], name_vectors[1], config.name_weight)]
    used = {"name": config.name_weight}
    if attribute_vectors is not None:
        views.append((attribute_vectors[0], attribute_vectors[1], config.attr_weight))
        used["attr"] = config.attr_weight
    losses: list[float] = []
    if config.structure_weight > 0:
        structure = BootEAConfig.from_dict({**dict(config.structure or {}), "bootstrap": False})
        result = train_bootea(triples1, triples2, num_entities1, num_entities2, train_pairs, structure, seed)
        views.append((result.left, result.right, config.structure_weight))
        used["structure"] = config.structure_weight
        losses = result.losses
    left, right = combine_views(views)
    info = {"losses": losses, "train_seconds": time.perf_counter() - start, "views": used}
    return left, right, info
