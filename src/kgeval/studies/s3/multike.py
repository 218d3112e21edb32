"""MultiKE-style multi-view entity alignment (``multike``): a name view, an attribute view and a structure view.

- Name view: the entity-name vectors of :mod:`kgeval.studies.s3.name_vectors` (char n-gram TF-IDF offline, or
  fastText-style word vectors), L2-normalised.
- Attribute view (:func:`aligned_attribute_vectors`): each entity's bag of attributes, with the two graphs'
  attributes aligned through the seed mappings - a graph-2 attribute is read as the graph-1 attribute it co-occurs
  with most over the seed mappings (Jaccard similarity of the seed mappings carrying each, at least
  ``attr_min_overlap``), and stays a token of its own otherwise - as TF-IDF of the shared tokens reduced by
  truncated SVD, L2-normalised. DBP15k ships attribute *names* only (no values), in French and English, which is why
  they are aligned through the seeds rather than compared as strings (comparing the names' character n-grams, as
  kgeval did before, put every French name apart from its English counterpart and lowered the method below its name
  view). A pair without attributes (SRPRS, the embedded two-view pair) has no attribute view; its weight then goes
  to the other views (``info`` says so).
- Structure view: the translation model of :mod:`kgeval.studies.s3.bootea` (TransE with parameter swapping and the
  alignment loss on the seed mappings) without bootstrapping.

Combination (MultiKE's "weighted view averaging" at the level of similarities): the view embeddings, each
L2-normalised, are concatenated with weights ``sqrt(w_v / sum w)``, so that the cosine similarity of the
concatenation is the weighted mean of the per-view cosine similarities; score = negative Euclidean distance of the
concatenations (monotone in that mean, as every view is unit length).

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
from typing import Any

import numpy as np
import torch

from kgeval.studies.s3.bootea import BootEAConfig, train_bootea

__all__ = ["MultiKEConfig", "align_attributes", "aligned_attribute_vectors", "combine_views", "train_multike"]


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


def aligned_attribute_vectors(pair, train_pairs: np.ndarray, config: MultiKEConfig, seed: int = 0):
    """MultiKE's attribute-view input (module doc), or ``None`` when the pair has no attributes.

    :param pair: a :class:`kgeval.ea.data.EAPair`
    :returns: shapes (n1, d), (n2, d), float32, rows L2-normalised (zero rows for entities without attributes)
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
    return dense[: pair.num_entities1], dense[pair.num_entities1 :]


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
