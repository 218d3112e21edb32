"""MultiKE-style multi-view entity alignment (``multike``): a name view, an attribute view and a structure view.

- Name view: the entity-name vectors of :mod:`kgeval.studies.s3.name_vectors` (char n-gram TF-IDF offline, or
  fastText-style word vectors), L2-normalised.
- Attribute view (:func:`aligned_attribute_vectors`): each entity's bag of attributes, with the two graphs'
  attributes aligned through the seed mappings - a graph-2 attribute is read as the graph-1 attribute it co-occurs
  with most over the seed mappings (Jaccard similarity of the seed mappings carrying each, at least
  ``attr_min_overlap``), and stays a token of its own otherwise - as TF-IDF of the shared tokens reduced by
  truncated SVD, L2-normalised. DBP15k ships attribute *names* only (no values), in French and English, which is why
  they are aligned through the seeds rather than compared as strings (the names' character n-grams would put every
  French name apart from its English counterpart). An entity has the view when it has at least one attribute
  (:class:`AttributeVectors` keeps which do). A pair without attributes (SRPRS, the embedded two-view pair) has no
  attribute view; its weight then goes to the other views (``info`` says so).
- Structure view: the translation model of :mod:`kgeval.studies.s3.bootea` (TransE with parameter swapping and the
  alignment loss on the seed mappings) without bootstrapping.

Combination (MultiKE's "weighted view averaging" at the level of similarities, :class:`ViewScorer`): the score of
``(i, j)`` is the weighted mean of the per-view cosine similarities over the views *available for the pair*, the
weights renormalised per pair: ``sum_v w_v m_v(i, j) cos_v(i, j) / sum_v w_v m_v(i, j)``. The name and structure
views are always available (an entity without a name has a zero name vector: cosine 0); the attribute view is
available (``m = 1``) only where both entities have attributes. In DBP15k nearly every entity of the gold alignment
has attributes and the other entities have none, so a candidate's lack of attributes tells it apart from the gold
entities; a zero attribute block in the concatenation (in Euclidean distance the same as an attribute cosine of
1/2 at full weight) would rank every such candidate below the gold entities of higher attribute cosine: the
absence alone would tell the method which candidates are gold. Renormalised, a candidate without attributes is scored on the other
views alone, as if its attribute cosine were their weighted mean. Where every pair has every view the score is the
cosine similarity of the concatenated views weighted by ``sqrt(w_v / sum w)`` (:func:`combine_views`), monotone in
their negative Euclidean distance.

Simplifications against MultiKE (Zhang et al., IJCAI 2019): the name and attribute views are not trained (MultiKE
learns them with an autoencoder of literal embeddings and a CNN over attribute-value pairs; DBP15k ships no values,
so the attribute view is a bag of seed-aligned attribute names);
no cross-view training and no shared-space learning; the structure view is TransE with a margin loss rather than
MultiKE's logistic loss; no early stopping.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import torch

from kgeval.studies.s3.bootea import BootEAConfig, train_bootea
from kgeval.studies.s3.scorer_interface import CandidateScorer, QueryScores

__all__ = [
    "AttributeVectors",
    "MultiKEConfig",
    "View",
    "ViewScorer",
    "align_attributes",
    "aligned_attribute_vectors",
    "combine_views",
    "train_multike",
]


@dataclass(frozen=True)
class MultiKEConfig:
    """Settings of :func:`train_multike` (``studies.s3.multike``); ``structure`` as ``studies.s3.bootea`` (its
    bootstrapping is always off)."""

    name_weight: float = 1.0
    attr_weight: float = 1.0
    structure_weight: float = 1.0
    attr_dim: int = 64
    attr_min_overlap: float = 0.1
    structure: Mapping[str, Any] | None = None

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any] | None) -> MultiKEConfig:
        """The config from a settings dict (unknown keys raise a ``TypeError`` naming them)."""
        return cls(**dict(spec or {}))


def _incidence(attributes: Sequence[np.ndarray], rows: np.ndarray, num_attributes: int):
    """Sparse 0/1 matrix (len(rows), num_attributes): which attributes each listed entity has."""
    from scipy.sparse import csr_matrix

    lists = [np.unique(np.asarray(attributes[int(e)], dtype=np.int64)) for e in rows]
    indptr = np.concatenate([[0], np.cumsum([len(x) for x in lists])])
    indices = np.concatenate(lists) if lists else np.zeros(0, dtype=np.int64)
    return csr_matrix((np.ones(len(indices), dtype=np.float32), indices, indptr), shape=(len(rows), num_attributes))


def align_attributes(
    attributes1: Sequence[np.ndarray], attributes2: Sequence[np.ndarray], sizes: tuple[int, int],
    train_pairs: np.ndarray, min_overlap: float,
) -> np.ndarray:
    """Per graph-2 attribute the graph-1 attribute it co-occurs with most over the seed mappings, or -1.

    The overlap of ``(a1, a2)`` is the Jaccard similarity of the seed mappings whose graph-1 entity has ``a1`` and
    those whose graph-2 entity has ``a2``; ``a2`` maps to the ``a1`` of largest overlap when it is at least
    ``min_overlap`` (ties: the smaller id).

    :param sizes: the number of attributes of graph 1 and graph 2
    :param train_pairs: shape (s, 2) seed mappings
    :returns: shape (sizes[1],) int64
    """
    pairs = np.asarray(train_pairs, dtype=np.int64).reshape(-1, 2)
    out = np.full(sizes[1], -1, dtype=np.int64)
    if not len(pairs) or sizes[0] == 0 or sizes[1] == 0:
        return out
    m1 = _incidence(attributes1, pairs[:, 0], sizes[0])
    m2 = _incidence(attributes2, pairs[:, 1], sizes[1])
    both = (m1.T @ m2).toarray()  # (a1, a2): seed mappings carrying both
    count1 = np.asarray(m1.sum(axis=0)).ravel()[:, None]
    count2 = np.asarray(m2.sum(axis=0)).ravel()[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        jaccard = np.where(both > 0, both / (count1 + count2 - both), 0.0)
    best = jaccard.argmax(axis=0)
    keep = jaccard[best, np.arange(sizes[1])] >= max(float(min_overlap), 1e-12)
    out[keep] = best[keep]
    return out


class AttributeVectors(NamedTuple):
    """The attribute view of both graphs (:func:`aligned_attribute_vectors`).

    :ivar left: shape (n1, d) float32, rows L2-normalised, zero rows for entities without attributes
    :ivar right: shape (n2, d)
    :ivar present1: shape (n1,) bool, whether each graph-1 entity has at least one attribute
    :ivar present2: shape (n2,) bool
    """

    left: np.ndarray
    right: np.ndarray
    present1: np.ndarray
    present2: np.ndarray


def aligned_attribute_vectors(pair, train_pairs: np.ndarray, config: MultiKEConfig, seed: int = 0) -> AttributeVectors | None:
    """MultiKE's attribute-view input (module doc), or ``None`` when the pair has no attributes.

    :param pair: a :class:`kgeval.ea.data.EAPair`
    :returns: both graphs' vectors and which entities have attributes (from the pair's attribute lists)
    """
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfTransformer

    if pair.attributes1 is None or pair.attributes2 is None:
        return None
    sizes = (len(pair.attribute_labels1), len(pair.attribute_labels2))
    mapping = align_attributes(pair.attributes1, pair.attributes2, sizes, train_pairs, config.attr_min_overlap)
    token2 = np.where(mapping >= 0, mapping, sizes[0] + np.arange(sizes[1]))  # unaligned: a token of its own
    attributes2 = [token2[np.asarray(a, dtype=np.int64)] for a in pair.attributes2]
    width = sizes[0] + sizes[1]
    counts = _vstack([
        _incidence(pair.attributes1, np.arange(pair.num_entities1), width),
        _incidence(attributes2, np.arange(pair.num_entities2), width),
    ])
    tfidf = TfidfTransformer().fit_transform(counts)
    dim = min(int(config.attr_dim), tfidf.shape[1] - 1, tfidf.shape[0] - 1)
    dense = TruncatedSVD(n_components=dim, random_state=int(seed)).fit_transform(tfidf) if dim >= 1 else tfidf.toarray()
    norms = np.linalg.norm(dense, axis=1, keepdims=True)
    dense = (dense / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    present = np.diff(counts.indptr) > 0
    n1 = pair.num_entities1
    return AttributeVectors(dense[:n1], dense[n1:], present[:n1], present[n1:])


def _vstack(blocks):
    """Stack sparse matrices vertically (CSR)."""
    from scipy.sparse import vstack

    return vstack(blocks, format="csr")


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


@dataclass(frozen=True)
class View:
    """One view of both graphs for :class:`ViewScorer`.

    :ivar name: what the view is (``name``, ``attr``, ``structure``)
    :ivar left: shape (n1, d), graph-1 vectors (L2-normalised by the scorer)
    :ivar right: shape (n2, d), graph-2 vectors
    :ivar weight: the view's weight (0: left out)
    :ivar present1: shape (n1,) bool, which graph-1 entities have the view; ``None``: every one
    :ivar present2: shape (n2,) bool, or ``None``
    """

    name: str
    left: np.ndarray | torch.Tensor
    right: np.ndarray | torch.Tensor
    weight: float
    present1: np.ndarray | None = None
    present2: np.ndarray | None = None


class ViewScorer(CandidateScorer):
    """Weighted mean of the per-view cosine similarities over the views available for each pair (module doc).

    ``score(i, j) = sum_v w_v m_v(i, j) cos_v(i, j) / sum_v w_v m_v(i, j)`` with ``m_v(i, j) = 1`` where both
    entities have view ``v`` and 0 otherwise (0 where no view is available), from two matrix products: the numerator
    is the product of the views concatenated with weights ``sqrt(w_v / sum w)`` and the rows of entities without a
    view zeroed; the denominator is the total weight of the views every entity has plus the product of the
    per-entity masks of the others.

    :param views: the views; those of weight 0 are left out
    """

    def __init__(self, views: Sequence[View]) -> None:
        kept = [v for v in views if v.weight > 0]
        if not kept:
            raise ValueError("multike: every view has weight 0")
        total = sum(float(v.weight) for v in kept)
        parts: dict[str, list[torch.Tensor]] = {"left": [], "right": []}
        masks: dict[str, list[torch.Tensor]] = {"left": [], "right": []}
        self.always_weight = 0.0
        self.masked_weights: list[float] = []
        for view in kept:
            weight = float(view.weight) / total
            if view.present1 is None and view.present2 is None:
                self.always_weight += weight
            else:
                self.masked_weights.append(weight)
            for side, vectors, present in (("left", view.left, view.present1), ("right", view.right, view.present2)):
                unit = torch.nn.functional.normalize(torch.as_tensor(vectors).float(), dim=1) * weight**0.5
                if view.present1 is not None or view.present2 is not None:
                    mask = _mask(present, len(unit))
                    unit = unit * mask[:, None]
                    masks[side].append(mask)
                parts[side].append(unit)
        self.vectors = {side: torch.cat(parts[side], dim=1) for side in parts}
        self.masks = {side: torch.stack(masks[side], dim=1) if masks[side] else None for side in masks}

    def for_candidates(self, side: str, candidate_ids: np.ndarray) -> QueryScores:  # noqa: D102
        other = "right" if side == "left" else "left"
        index = torch.as_tensor(np.asarray(candidate_ids, dtype=np.int64))
        cand = self.vectors[other][index]
        cand_mask = None
        if self.masks[other] is not None:
            cand_mask = self.masks[other][index] * torch.tensor(self.masked_weights, dtype=torch.float32)

        def score(query_ids: np.ndarray) -> torch.Tensor:
            rows = torch.as_tensor(np.asarray(query_ids, dtype=np.int64))
            numerator = self.vectors[side][rows] @ cand.T
            if cand_mask is None:
                return numerator.div_(self.always_weight)
            denominator = (self.masks[side][rows] @ cand_mask.T).add_(self.always_weight)
            no_view = denominator <= 0
            return numerator.div_(denominator.clamp_min_(1e-12)).masked_fill_(no_view, 0.0)

        return score


def _mask(present: np.ndarray | None, size: int) -> torch.Tensor:
    """A float 0/1 mask of length ``size`` from a boolean array (``None``: all ones)."""
    if present is None:
        return torch.ones(size, dtype=torch.float32)
    mask = torch.as_tensor(np.asarray(present, dtype=bool).astype(np.float32))
    if mask.shape != (size,):
        raise ValueError(f"multike: a view mask has shape {tuple(mask.shape)}, expected ({size},)")
    return mask


def train_multike(
    name_vectors: tuple[np.ndarray, np.ndarray],
    attribute_vectors: AttributeVectors | None,
    triples1: np.ndarray,
    triples2: np.ndarray,
    num_entities1: int,
    num_entities2: int,
    train_pairs: np.ndarray,
    config: MultiKEConfig,
    seed: int,
) -> tuple[list[View], dict[str, Any]]:
    """Build the three views (the attribute view with which entities have it) for :class:`ViewScorer`.

    :returns: the views with their weights and an info dict (``losses``, ``train_seconds``, ``views`` - the views
        used with their weights)
    """
    start = time.perf_counter()
    views = [View("name", name_vectors[0], name_vectors[1], config.name_weight)]
    if attribute_vectors is not None:
        views.append(View("attr", attribute_vectors.left, attribute_vectors.right, config.attr_weight,
                          attribute_vectors.present1, attribute_vectors.present2))
    losses: list[float] = []
    if config.structure_weight > 0:
        structure = BootEAConfig.from_dict({**dict(config.structure or {}), "bootstrap": False})
        result = train_bootea(triples1, triples2, num_entities1, num_entities2, train_pairs, structure, seed)
        views.append(View("structure", result.left, result.right, config.structure_weight))
        losses = result.losses
    info = {"losses": losses, "train_seconds": time.perf_counter() - start, "views": {v.name: v.weight for v in views}}
    return views, info
