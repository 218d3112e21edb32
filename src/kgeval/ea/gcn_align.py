"""GCN-Align (structure channel) in PyTorch, with the settings of Berrendorf et al.'s re-implementation.

The model of Wang et al. (2018), "Cross-lingual knowledge graph alignment via graph convolutional networks"
(EMNLP), as analysed in Berrendorf et al. (2019), "Knowledge graph entity alignment with graph convolutional
networks: lessons learned" (paper 000's reference [3]). Written by hand: neither PyKEEN nor another installed
library ships an entity-alignment GNN.

Per graph ``g`` (the two graphs share no parameters):

- ``X_g`` (shape (n_g, d)) are free node embeddings, initialised from a standard normal truncated at +-2, and
  L2-normalised row-wise at the start of every forward pass;
- the message graph has one edge ``h -> t`` per distinct (head, tail) pair of a triple, the inverse edge
  ``t -> h`` (inverse triples) and a self-loop ``i -> i`` per entity; relation types are ignored;
- each edge ``j -> i`` has weight ``1 / indeg(i)`` (so a node averages its incoming messages);
- ``num_layers`` propagation steps ``H <- ReLU(A H)`` *without* convolution weight matrices.

Training (:func:`train_gcn_align`) is full-batch: one epoch is one Adam step on the loss over all training
alignments. For each training pair ``(a, b)`` and each direction, ``num_negatives`` entities of the other graph
are drawn uniformly (never the true partner), and the loss is the mean of
``max(0, margin + ||h_a - h_b||_1 - ||h_a - h_n||_1)``; the two directions are averaged. With no training pair the
model stays at its random initialisation (the paper's ``#train = 0`` line).
"""

from __future__ import annotations

import contextlib
import time
import warnings
from dataclasses import asdict, dataclass, field
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from torch import nn

from kgeval.engine.memory import reuse_freed_memory

__all__ = [
    "GCNAlignConfig",
    "GCNAlign",
    "build_adjacency",
    "sampled_margin_loss",
    "train_gcn_align",
    "TrainResult",
]


@dataclass(frozen=True)
class GCNAlignConfig:
    """Hyper-parameters (defaults: the paper's run; config key ``ea_models.gcn_align``).

    :param embedding_dim: d
    :param num_layers: number of propagation steps
    :param num_negatives: sampled negatives per training pair and direction
    :param margin: margin of the ranking loss
    :param lr: Adam learning rate
    :param num_epochs: number of full-batch Adam steps
    """

    embedding_dim: int = 200
    num_layers: int = 2
    num_negatives: int = 50
    margin: float = 3.0
    lr: float = 1.0
    num_epochs: int = 2000

    @classmethod
    def from_dict(cls, spec: dict[str, Any] | None) -> "GCNAlignConfig":
        """Build from a config mapping; unknown keys raise a :class:`ValueError` naming them."""
        spec = dict(spec or {})
        known = set(cls.__dataclass_fields__)
        unknown = set(spec) - known
        if unknown:
            raise ValueError(f"ea_models.gcn_align: unknown key(s) {sorted(unknown)}; allowed: {sorted(known)}")
        return cls(**spec)


def build_adjacency(triples: np.ndarray, num_entities: int) -> torch.Tensor:
    """The normalised message matrix ``A`` (rows = receivers) of one graph, as a sparse CSR tensor.

    :param triples: shape (m, 3), ``(head, relation, tail)``
    :param num_entities: n
    :returns: shape (n, n), sparse CSR float32; ``A[i, j] = 1 / indeg(i)`` for every edge ``j -> i`` of the
        deduplicated edge set {h->t, t->h, i->i}
    """
    triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    loops = np.arange(num_entities, dtype=np.int64)
    source = np.concatenate([triples[:, 0], triples[:, 2], loops])
    target = np.concatenate([triples[:, 2], triples[:, 0], loops])
    edges = np.unique(np.stack([target, source], axis=1), axis=0)  # (receiver, sender), sorted by receiver
    indegree = np.bincount(edges[:, 0], minlength=num_entities).astype(np.float32)
    values = 1.0 / indegree[edges[:, 0]]
    with warnings.catch_warnings():  # "sparse CSR support is in beta": CSR @ dense and its backward are what we use
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_csr_tensor(
            torch.as_tensor(np.concatenate([[0], np.cumsum(np.bincount(edges[:, 0], minlength=num_entities))])),
            torch.as_tensor(edges[:, 1].copy()),
            torch.as_tensor(values),
            size=(num_entities, num_entities),
            check_invariants=True,
        )


class _Propagate(torch.autograd.Function):
    """``A @ x`` for a constant sparse ``A`` whose transpose is precomputed.

    Hand-written because autograd through ``csr @ dense`` converts and transposes ``A`` again on every backward
    pass (profiled: a large share of an epoch on a small graph); ``A`` never changes during training.
    """

    @staticmethod
    def forward(ctx, x: torch.Tensor, matrix: torch.Tensor, transposed: torch.Tensor) -> torch.Tensor:
        ctx.transposed = transposed
        return matrix @ x

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return ctx.transposed @ grad, None, None


def _transpose_csr(matrix: torch.Tensor) -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return matrix.to_sparse_coo().t().coalesce().to_sparse_csr()


class GCNAlign(nn.Module):
    """Two independent weight-free GCN encoders over free node embeddings (see module doc).

    :param adjacency1: shape (n1, n1), from :func:`build_adjacency`
    :param adjacency2: shape (n2, n2)
    :param embedding_dim: d
    :param num_layers: propagation steps
    :param generator: the random generator for the initialisation
    """

    def __init__(
        self,
        adjacency1: torch.Tensor,
        adjacency2: torch.Tensor,
        embedding_dim: int = 200,
        num_layers: int = 2,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        self.adjacency = [adjacency1, adjacency2]
        self.adjacency_t = [_transpose_csr(a) for a in self.adjacency]
        self.num_layers = num_layers
        self.embeddings = nn.ParameterList(
            [
                nn.Parameter(_truncated_normal((a.shape[0], embedding_dim), generator=generator))
                for a in self.adjacency
            ]
        )

    def to_device(self, device: torch.device) -> "GCNAlign":
        """Move the parameters and the (non-parameter) message matrices to ``device``."""
        self.to(device)
        self.adjacency = [a.to(device) for a in self.adjacency]
        self.adjacency_t = [a.to(device) for a in self.adjacency_t]
        return self

    def forward(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Return the node representations of both graphs, shapes (n1, d) and (n2, d)."""
        out = []
        for adjacency, transposed, embedding in zip(self.adjacency, self.adjacency_t, self.embeddings):
            hidden = torch.nn.functional.normalize(embedding, p=2, dim=1)
            for _ in range(self.num_layers):
                hidden = torch.relu(_Propagate.apply(hidden, adjacency, transposed))
            out.append(hidden)
        return out[0], out[1]


def _truncated_normal(shape: tuple[int, int], generator: torch.Generator | None) -> torch.Tensor:
    """Standard normal truncated at +-2 by redrawing (deterministic given ``generator``)."""
    values = torch.randn(shape, generator=generator)
    while True:
        bad = values.abs() > 2.0
        count = int(bad.sum())
        if count == 0:
            return values
        values[bad] = torch.randn(count, generator=generator)


def _sample_negatives(
    positives: torch.Tensor, num_candidates: int, num_negatives: int, generator: torch.Generator | None
) -> torch.Tensor:
    """Uniform negatives from ``0..num_candidates-1`` that never equal the positive; shape (k, num_negatives)."""
    draw = torch.randint(num_candidates - 1, (positives.shape[0], num_negatives), generator=generator)
    draw = draw.to(positives.device)
    return draw + (draw >= positives.unsqueeze(1)).long()  # skip the positive: uniform over the other n-1


class _SampledL1Distance(torch.autograd.Function):
    """``||anchor[i] - target[negatives[i, j]]||_1`` for every (i, j), shape (k, N), with a sparse backward pass.

    Hand-written for speed (measured on DBP15k zh-en, 4,500 pairs x 50 negatives): the forward pass is
    :func:`torch.cdist` on the gathered negatives; the backward pass only visits the (i, j) whose incoming gradient
    is non-zero. Under the margin loss that is the share of negatives still inside the margin, which shrinks to a few
    percent as training proceeds, so backward costs a fraction of autograd's dense one.
    """

    @staticmethod
    def forward(ctx, anchor: torch.Tensor, target: torch.Tensor, negatives: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(anchor, target, negatives)
        return torch.cdist(anchor.unsqueeze(1), target[negatives], p=1).squeeze(1)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        anchor, target, negatives = ctx.saved_tensors
        rows, cols = torch.nonzero(grad, as_tuple=True)
        ids = negatives[rows, cols]
        # d/d anchor |anchor - t|_1 = sign(anchor - t); d/d t = -sign(anchor - t)
        g = torch.sign(anchor[rows] - target[ids]).mul_(grad[rows, cols].unsqueeze(1))
        grad_anchor = torch.zeros_like(anchor).index_add_(0, rows, g)
        grad_target = torch.zeros_like(target).index_add_(0, ids, g.neg_())
        return grad_anchor, grad_target, None


def sampled_margin_loss(
    left: torch.Tensor,
    right: torch.Tensor,
    pairs: torch.Tensor,
    num_negatives: int,
    margin: float,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """The loss of one epoch: sampled-negative margin ranking loss with L1 distance, both directions averaged.

    :param left: shape (n1, d)
    :param right: shape (n2, d)
    :param pairs: shape (k, 2), training alignments (graph-1 id, graph-2 id)
    :param num_negatives: negatives per pair and direction
    :param margin: the margin
    :param generator: random generator for the negatives
    :returns: a scalar
    """
    losses = []
    directions = ((left, right, pairs[:, 0], pairs[:, 1]), (right, left, pairs[:, 1], pairs[:, 0]))
    for source, target, src_ids, tgt_ids in directions:
        anchor = source[src_ids]  # (k, d)
        positive = (anchor - target[tgt_ids]).abs().sum(dim=-1)  # (k,)
        negatives = _sample_negatives(tgt_ids, target.shape[0], num_negatives, generator)
        negative = _SampledL1Distance.apply(anchor, target, negatives)  # (k, num_negatives)
        losses.append(torch.relu(margin + positive.unsqueeze(1) - negative).mean())
    return 0.5 * (losses[0] + losses[1])


@dataclass
class TrainResult:
    """A trained model's outputs.

    :ivar left: shape (n1, d), final node representations of graph 1
    :ivar right: shape (n2, d)
    :ivar losses: one loss per epoch
    :ivar seconds: wall-clock training time
    :ivar config: the hyper-parameters used
    """

    left: torch.Tensor
    right: torch.Tensor
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0
    config: dict[str, Any] = field(default_factory=dict)


def train_gcn_align(
    triples1: np.ndarray,
    triples2: np.ndarray,
    num_entities1: int,
    num_entities2: int,
    train_pairs: np.ndarray,
    config: GCNAlignConfig,
    seed: int,
    device: str | torch.device | None = None,
) -> TrainResult:
    """Train GCN-Align on the given training alignments and return the final representations.

    :param triples1: shape (m1, 3)
    :param triples2: shape (m2, 3)
    :param num_entities1: n1
    :param num_entities2: n2
    :param train_pairs: shape (k, 2); may be empty (the model then stays at its random initialisation)
    :param config: hyper-parameters
    :param seed: seeds the initialisation and the negative sampling (results are bit-identical for a seed, also
        with several threads: torch's deterministic algorithms are switched on while training)
    :param device: where to train (``None``: CPU); the initialisation and the negatives are drawn on the CPU, so a
        seed gives the same draws on every device
    :returns: the representations (detached), the per-epoch losses and the training time
    """
    device = torch.device(device or "cpu")
    # freed tensors kept for the next epoch: only where memory lives changes (kgeval.engine.memory)
    keep_memory = reuse_freed_memory() if device.type == "cpu" else contextlib.nullcontext()
    with _deterministic(warn_only=device.type != "cpu"), keep_memory:
        generator = torch.Generator().manual_seed(int(seed))
        model = GCNAlign(
            build_adjacency(triples1, num_entities1),
            build_adjacency(triples2, num_entities2),
            embedding_dim=config.embedding_dim,
            num_layers=config.num_layers,
            generator=generator,
        )
        model.to_device(device)
        pairs = torch.as_tensor(np.asarray(train_pairs, dtype=np.int64).reshape(-1, 2)).to(device)
        losses: list[float] = []
        start = time.perf_counter()
        if len(pairs) and config.num_epochs > 0:
            optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
            for _ in range(config.num_epochs):
                optimizer.zero_grad()
                left, right = model()
                loss = sampled_margin_loss(left, right, pairs, config.num_negatives, config.margin, generator)
                loss.backward()
                optimizer.step()
                losses.append(float(loss.detach()))
        with torch.no_grad():
            left, right = model()
        return TrainResult(
            left=left.detach().cpu(),
            right=right.detach().cpu(),
            losses=losses,
            seconds=time.perf_counter() - start,
            config=asdict(config),
        )


@contextlib.contextmanager
def _deterministic(warn_only: bool = False) -> Iterator[None]:
    """Use torch's deterministic kernels within the block (with 2+ threads the scatter-add behind the gradient of
    an index is otherwise summed in a varying order, and the losses differ in the last bits between runs).

    :param warn_only: only warn where an operation has no deterministic kernel (used on GPUs)
    """
    previous = torch.are_deterministic_algorithms_enabled()
    previous_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=warn_only)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(previous, warn_only=previous_warn)
