"""RDGCN-style relation-aware GCN over entity-name vectors on PyTorch (``rdgcn``).

Input features: the entity-name vectors of :mod:`kgeval.studies.s3.name_vectors` (char n-gram TF-IDF offline,
fastText-style word vectors with ``name_vectors.kind: word_vectors``), shared space for both graphs.

Graph: per graph the entity graph with relation-aware edge weights from the relations' *functionality*
(:func:`functionality_adjacency`): a triple ``(h, r, t)`` sends a message ``t -> h`` of weight ``fun(r)`` =
#distinct heads / #triples of ``r`` and ``h -> t`` of weight ``ifun(r)`` = #distinct tails / #triples, plus a
self loop of weight 1; rows are normalised to sum 1 (GCN-Align's weighting, which RDGCN's dual relation graph learns
instead).

Layers (:class:`HighwayGCN`, shared by both graphs as in RDGCN): ``h' = g * relu(A h W) + (1 - g) * h`` with the gate
``g = sigmoid(h W_g + b_g)``; ``W`` starts at the identity and ``b_g`` at ``gate_bias`` (negative: the layer starts
close to carrying the name vectors through), so that an untrained model already ranks by (smoothed) name similarity.

Training: margin loss ``relu(margin + ||x_a - x_b||_1 - ||x_a - x_b'||_1)`` over the seed mappings with
``num_negatives`` graph-2 (and graph-1) negatives per seed, Adam; score = negative L1 distance. The negatives are, as
in RDGCN, each seed entity's nearest neighbours in the other graph by the current representations (``negatives:
nearest``, :func:`nearest_negatives`; recomputed every ``refresh_every`` epochs, the true partner left out) - the
confusable entities the name vectors alone rank too high, so the loss is not zero from the start - or uniformly drawn
entities (``negatives: uniform``: with well-separated name vectors the loss is then near zero and training changes
next to nothing).

Simplifications against RDGCN (Wu et al., IJCAI 2019): no dual relation graph and no graph attention on it (the
relation awareness is the fixed functionality weighting); char n-gram name vectors offline instead of fastText (a
config switch reads fastText vectors); no early stopping.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = [
    "RDGCN_NEGATIVES",
    "RDGCNConfig",
    "RDGCNResult",
    "functionality_adjacency",
    "HighwayGCN",
    "nearest_negatives",
    "seed_margin_loss",
    "train_rdgcn",
]

#: the ``negatives`` values: nearest neighbours by the current representations, or uniform draws
RDGCN_NEGATIVES: tuple[str, ...] = ("nearest", "uniform")


@dataclass(frozen=True)
class RDGCNConfig:
    """Settings of :func:`train_rdgcn` (``studies.s3.rdgcn``)."""

    num_layers: int = 2
    num_epochs: int = 50
    lr: float = 0.01
    margin: float = 3.0
    num_negatives: int = 5
    gate_bias: float = -2.0
    negatives: str = "nearest"
    refresh_every: int = 10

    def __post_init__(self) -> None:
        if self.negatives not in RDGCN_NEGATIVES:
            raise ValueError(f"rdgcn negatives must be one of {list(RDGCN_NEGATIVES)}, got {self.negatives!r}")

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any] | None) -> RDGCNConfig:
        """The config from a settings dict (unknown keys raise a ``TypeError`` naming them)."""
        return cls(**dict(spec or {}))


@dataclass
class RDGCNResult:
    """Output representations of both graphs and the training record."""

    left: torch.Tensor
    right: torch.Tensor
    losses: list[float]
    seconds: float


def functionality_adjacency(triples: np.ndarray, num_entities: int) -> torch.Tensor:
    """The row-normalised functionality-weighted adjacency of one graph (module doc), sparse COO (n, n)."""
    t = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    loops = np.arange(num_entities, dtype=np.int64)
    if len(t):
        rels = t[:, 1]
        num = np.bincount(rels).astype(float)
        heads = np.bincount(np.unique(t[:, [1, 0]], axis=0)[:, 0], minlength=len(num)).astype(float)
        tails = np.bincount(np.unique(t[:, [1, 2]], axis=0)[:, 0], minlength=len(num)).astype(float)
        fun = heads / np.maximum(num, 1)
        ifun = tails / np.maximum(num, 1)
        rows = np.concatenate([t[:, 0], t[:, 2], loops])
        cols = np.concatenate([t[:, 2], t[:, 0], loops])
        vals = np.concatenate([fun[rels], ifun[rels], np.ones(num_entities)])
    else:
        rows, cols, vals = loops, loops, np.ones(num_entities)
    sums = np.bincount(rows, weights=vals, minlength=num_entities)
    vals = vals / sums[rows]
    matrix = torch.sparse_coo_tensor(
        torch.as_tensor(np.stack([rows, cols])), torch.as_tensor(vals, dtype=torch.float32), (num_entities, num_entities),
        check_invariants=True,
    )
    return matrix.coalesce()


class HighwayGCN(nn.Module):
    """GCN layers with highway gates (module doc), weights shared by both graphs.

    :param dim: input (= output) dimension
    :param num_layers: number of layers (0: the input vectors themselves)
    :param gate_bias: initial bias of the gates
    """

    def __init__(self, dim: int, num_layers: int, gate_bias: float = -2.0) -> None:
        super().__init__()
        self.weights = nn.ParameterList([nn.Parameter(torch.eye(dim)) for _ in range(num_layers)])
        self.gates = nn.ModuleList([nn.Linear(dim, dim) for _ in range(num_layers)])
        for gate in self.gates:
            nn.init.zeros_(gate.weight)
            nn.init.constant_(gate.bias, gate_bias)

    def forward(self, features: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
        """:param features: shape (n, d); :param adjacency: sparse (n, n); :returns: shape (n, d)"""
        hidden = features
        for weight, gate in zip(self.weights, self.gates):
            message = torch.relu(torch.sparse.mm(adjacency, hidden @ weight))
            g = torch.sigmoid(gate(hidden))
            hidden = g * message + (1 - g) * hidden
        return hidden


def _nearest(queries: torch.Tensor, candidates: torch.Tensor, exclude: torch.Tensor, k: int) -> torch.Tensor:
    """Per query row the ``k`` nearest candidate rows by Euclidean distance, the ``exclude`` row left out."""
    k = max(1, min(int(k), candidates.shape[0] - 1))
    out = []
    for start in range(0, len(queries), 1024):
        dist = torch.cdist(queries[start : start + 1024], candidates)
        dist[torch.arange(dist.shape[0]), exclude[start : start + 1024]] = float("inf")
        out.append(dist.topk(k, dim=1, largest=False).indices)
    return torch.cat(out) if out else torch.zeros((0, k), dtype=torch.long)


def nearest_negatives(left: torch.Tensor, right: torch.Tensor, pairs: torch.Tensor, k: int) -> tuple[torch.Tensor, ...]:
    """RDGCN's negatives: for each seed ``(a, b)`` the ``k`` graph-2 entities nearest to ``a`` but ``b``, and the
    ``k`` graph-1 entities nearest to ``b`` but ``a``.

    :returns: ``neg_b`` and ``neg_a``, each shape (s, k) long
    """
    with torch.no_grad():
        a, b = pairs[:, 0], pairs[:, 1]
        return _nearest(left[a], right, b, k), _nearest(right[b], left, a, k)


def seed_margin_loss(
    left: torch.Tensor,
    right: torch.Tensor,
    pairs: torch.Tensor,
    num_negatives: int,
    margin: float,
    generator,
    negatives: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> torch.Tensor:
    """Margin loss of the seed mappings against negatives on both sides, L1 distance.

    :param left: shape (n1, d); :param right: shape (n2, d); :param pairs: shape (s, 2) long
    :param negatives: ``(neg_b, neg_a)`` of :func:`nearest_negatives`, or ``None``: ``num_negatives`` uniform draws
    """
    a, b = pairs[:, 0], pairs[:, 1]
    positive = (left[a] - right[b]).abs().sum(dim=1, keepdim=True)
    if negatives is None:
        neg_b = torch.randint(right.shape[0], (len(a), num_negatives), generator=generator)
        neg_a = torch.randint(left.shape[0], (len(a), num_negatives), generator=generator)
    else:
        neg_b, neg_a = negatives
    negative_b = (left[a].unsqueeze(1) - right[neg_b]).abs().sum(dim=2)
    negative_a = (left[neg_a] - right[b].unsqueeze(1)).abs().sum(dim=2)
    return (torch.relu(margin + positive - negative_b).mean() + torch.relu(margin + positive - negative_a).mean()) / 2


def train_rdgcn(
    features1: np.ndarray,
    features2: np.ndarray,
    triples1: np.ndarray,
    triples2: np.ndarray,
    train_pairs: np.ndarray,
    config: RDGCNConfig,
    seed: int,
) -> RDGCNResult:
    """Train the highway GCN on the seed mappings and return both graphs' output representations.

    :param features1: shape (n1, d) name vectors of graph 1
    :param features2: shape (n2, d) name vectors of graph 2
    :param train_pairs: shape (s, 2) seed mappings
    """
    start = time.perf_counter()
    torch.manual_seed(int(seed))
    generator = torch.Generator().manual_seed(int(seed))
    x1 = torch.as_tensor(np.asarray(features1, dtype=np.float32))
    x2 = torch.as_tensor(np.asarray(features2, dtype=np.float32))
    a1 = functionality_adjacency(triples1, x1.shape[0])
    a2 = functionality_adjacency(triples2, x2.shape[0])
    model = HighwayGCN(x1.shape[1], int(config.num_layers), float(config.gate_bias))
    pairs = torch.as_tensor(np.asarray(train_pairs, dtype=np.int64).reshape(-1, 2))
    losses: list[float] = []
    if len(pairs) and config.num_layers > 0:
        optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
        hard = None
        for epoch in range(int(config.num_epochs)):
            left, right = model(x1, a1), model(x2, a2)
            if config.negatives == "nearest" and epoch % max(1, int(config.refresh_every)) == 0:
                hard = nearest_negatives(left.detach(), right.detach(), pairs, int(config.num_negatives))
            loss = seed_margin_loss(left, right, pairs, int(config.num_negatives), config.margin, generator, hard)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
    with torch.no_grad():
        left, right = model(x1, a1), model(x2, a2)
    return RDGCNResult(left.detach(), right.detach(), losses, time.perf_counter() - start)
