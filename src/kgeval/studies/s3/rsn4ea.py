"""RSN4EA-style recurrent skipping network over biased random walks (``rsn4ea``; structure only).

After Guo, Sun and Hu, "Learning to Exploit Long-term Relational Dependencies in Knowledge Graphs" (ICML 2019),
whose entity-alignment variant paper 002 runs through OpenEA:

- **Joined graph** (:func:`joined_graph`): both graphs in one id space with every seed mapping merged into one entity
  (:func:`kgeval.studies.s3.models.merged_graph`), so that walks cross from one graph to the other through the seeds.
  Every triple ``(h, r, t)`` is also walked backwards as ``(t, r + R, h)`` (RSN's reverse relations).
- **Biased random walks** (:func:`biased_walks`): ``walk_length`` entities with the relations between them
  (``e0 r0 e1 r1 ... e_{L-1}``). The first step is uniform over the start entity's edges; from then on an edge to
  ``e_{i+1}`` is drawn with weight ``depth x cross`` (RSN's second-order biases): ``depth = depth_bias`` where
  ``e_{i+1}`` is two steps away from ``e_{i-1}`` (neither ``e_{i-1}`` itself nor one of its neighbours), else
  ``1 - depth_bias``; ``cross = cross_bias`` where ``e_{i-1}`` and ``e_{i+1}`` lie in different graphs (a merged seed
  entity lies in both, so it is never in a different graph), else ``1 - cross_bias``. ``depth_bias > 0.5`` sends walks
  deeper, ``cross_bias > 0.5`` across the seeds into the other graph. Sampling is exact (per-step weights over all
  edges of the walkers' current entities).
- **Recurrent skipping network** (:class:`RecurrentSkippingNetwork`): one embedding table for entities and relations,
  an LSTM over the sequence, and at every relation step the *skip*: the output is ``h_t + W x_{t-1}``, the LSTM's
  output plus a linear map of the subject entity's embedding (the entity step before); at entity steps the output is
  ``h_t``. The output at step ``t`` predicts the element at ``t + 1`` (a relation after an entity, an entity after a
  relation).
- **Objective**: sampled softmax - the true next element against ``num_negatives`` elements drawn uniformly per batch
  from the same kind (entities or relations), with separate output weights and biases (TensorFlow's
  ``sampled_softmax_loss`` as RSN uses it; an accidental hit of the true element is masked).
- **Alignment**: the input entity embeddings, L2-normalised; score = negative Euclidean distance (monotone in RSN's
  cosine similarity). Walks are redrawn every epoch. With validation mappings and ``patience > 0``, their Hits@1 is
  measured after every epoch and training stops after ``patience`` epochs without improvement, keeping the best.

Simplifications against RSN4EA (OpenEA's implementation): seeds merged rather than shared through an alignment
relation; one LSTM stack with the skip ``h_t + W x_{t-1}`` (RSN: ``S1 h_t + S2 x_{t-1}``), Adam, no dropout, batch
normalisation or embedding-level regularisation; uniform rather than log-uniform negative sampling.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = [
    "RSN4EAConfig",
    "RSN4EAResult",
    "WalkGraph",
    "joined_graph",
    "biased_walks",
    "walk_tokens",
    "RecurrentSkippingNetwork",
    "sampled_softmax_loss",
    "train_rsn4ea",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RSN4EAConfig:
    """Settings of :func:`train_rsn4ea` (``studies.s3.rsn4ea``)."""

    embedding_dim: int = 128
    num_layers: int = 1
    num_epochs: int = 10
    walks_per_entity: int = 2
    walk_length: int = 8
    depth_bias: float = 0.9
    cross_bias: float = 0.9
    batch_size: int = 512
    lr: float = 0.003
    num_negatives: int = 1024
    patience: int = 2

    def __post_init__(self) -> None:
        if self.walk_length < 2:
            raise ValueError(f"rsn4ea walk_length must be at least 2, got {self.walk_length}")
        for name in ("depth_bias", "cross_bias"):
            if not 0.0 < getattr(self, name) < 1.0:
                raise ValueError(f"rsn4ea {name} must lie in (0, 1), got {getattr(self, name)}")

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any] | None) -> RSN4EAConfig:
        """The config from a settings dict (unknown keys raise a ``TypeError`` naming them)."""
        return cls(**dict(spec or {}))


@dataclass
class RSN4EAResult:
    """A trained RSN4EA: L2-normalised entity embeddings of both graphs and the training record."""

    left: torch.Tensor
    right: torch.Tensor
    losses: list[float]
    seconds: float
    valid_hits: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class WalkGraph:
    """The joined graph as the walks read it.

    :ivar indptr: shape (n + 1,), CSR offsets of each entity's outgoing edges (forward and reverse)
    :ivar targets: shape (m,), the edges' target entities
    :ivar relations: shape (m,), the edges' relations (reverse edges: ``r + num_relations``)
    :ivar graph_of: shape (n,), 0 - graph 1 only, 1 - graph 2 only, 2 - a merged seed (both graphs)
    :ivar num_relations: R, the relations of both graphs before the reverse ones
    """

    indptr: np.ndarray
    targets: np.ndarray
    relations: np.ndarray
    graph_of: np.ndarray
    num_relations: int

    @property
    def num_entities(self) -> int:
        """n, the entities of the joined graph."""
        return len(self.indptr) - 1

    @classmethod
    def from_triples(
        cls, triples: np.ndarray, num_entities: int, num_relations: int, graph_of: np.ndarray
    ) -> WalkGraph:
        """The CSR of the triples and their reverses (``(t, r + R, h)``), each entity's edges ascending by target."""
        t = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
        heads = np.concatenate([t[:, 0], t[:, 2]])
        tails = np.concatenate([t[:, 2], t[:, 0]])
        rels = np.concatenate([t[:, 1], t[:, 1] + num_relations])
        order = np.lexsort((rels, tails, heads))
        heads, tails, rels = heads[order], tails[order], rels[order]
        indptr = np.zeros(num_entities + 1, dtype=np.int64)
        np.cumsum(np.bincount(heads, minlength=num_entities), out=indptr[1:])
        return cls(indptr, tails, rels, np.asarray(graph_of, dtype=np.int64), int(num_relations))


def joined_graph(
    triples1: np.ndarray, triples2: np.ndarray, num_entities1: int, num_entities2: int, seeds: np.ndarray,
    num_relations1: int,
) -> tuple[WalkGraph, np.ndarray, np.ndarray]:
    """Both graphs with each seed ``(a, b)`` merged into ``a``'s id (graph-2 relations shifted by ``num_relations1``).

    :returns: the walk graph, ``map1`` (n1,) and ``map2`` (n2,) from graph ids to joined ids
    """
    seeds = np.asarray(seeds, dtype=np.int64).reshape(-1, 2)
    t1 = np.asarray(triples1, dtype=np.int64).reshape(-1, 3)
    t2 = np.asarray(triples2, dtype=np.int64).reshape(-1, 3)
    merged = np.zeros(num_entities2, dtype=bool)
    merged[seeds[:, 1]] = True
    map1 = np.arange(num_entities1, dtype=np.int64)
    map2 = np.empty(num_entities2, dtype=np.int64)
    map2[~merged] = num_entities1 + np.arange(int((~merged).sum()), dtype=np.int64)
    map2[seeds[:, 1]] = seeds[:, 0]
    n = num_entities1 + int((~merged).sum())
    graph_of = np.ones(n, dtype=np.int64)
    graph_of[:num_entities1] = 0
    graph_of[seeds[:, 0]] = 2
    num_relations2 = int(t2[:, 1].max()) + 1 if len(t2) else 0
    triples = np.concatenate([
        t1, np.stack([map2[t2[:, 0]], t2[:, 1] + num_relations1, map2[t2[:, 2]]], axis=1)
    ]).astype(np.int64)
    graph = WalkGraph.from_triples(triples, n, num_relations1 + num_relations2, graph_of)
    return graph, map1, map2


def _step(graph: WalkGraph, current: np.ndarray, previous: np.ndarray | None, depth: float, cross: float,
          rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One step of every walker: the chosen edge's target and relation (weights in the module doc; the compiled step
    of :mod:`kgeval.engine.walk_kernel`, one uniform draw per walker)."""
    from kgeval.engine.walk_kernel import step_walkers

    current = np.ascontiguousarray(current, dtype=np.int64)
    before = np.zeros(0, np.int64) if previous is None else np.ascontiguousarray(previous, dtype=np.int64)
    draws = rng.random(len(current))
    out = (np.empty(len(current), np.int64), np.empty(len(current), np.int64))
    arrays = (graph.indptr, graph.targets, graph.relations, graph.graph_of)
    step_walkers(arrays, current, before, (float(depth), float(cross)), draws, out)
    return out


def biased_walks(graph: WalkGraph, starts: np.ndarray, config: RSN4EAConfig, rng: np.random.Generator,
                 chunk: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Biased random walks from the given entities (each needs at least one edge).

    :returns: ``entities`` (w, walk_length) and ``relations`` (w, walk_length - 1)
    """
    starts = np.asarray(starts, dtype=np.int64)
    entities = np.zeros((len(starts), config.walk_length), dtype=np.int64)
    relations = np.zeros((len(starts), config.walk_length - 1), dtype=np.int64)
    entities[:, 0] = starts
    for lo in range(0, len(starts), chunk):
        rows = slice(lo, lo + chunk)
        for i in range(1, config.walk_length):
            previous = entities[rows, i - 2] if i >= 2 else None
            entities[rows, i], relations[rows, i - 1] = _step(
                graph, entities[rows, i - 1], previous, config.depth_bias, config.cross_bias, rng
            )
    return entities, relations


def walk_tokens(entities: np.ndarray, relations: np.ndarray, num_entities: int) -> np.ndarray:
    """Interleave a walk into one token sequence ``e0 r0 e1 r1 ... e_{L-1}`` (relation tokens: ``n + r``)."""
    w, length = entities.shape
    tokens = np.empty((w, 2 * length - 1), dtype=np.int64)
    tokens[:, 0::2] = entities
    tokens[:, 1::2] = relations + num_entities
    return tokens


class RecurrentSkippingNetwork(nn.Module):
    """Embeddings, an LSTM and the relation-step skip ``h_t + W x_{t-1}``; sampled-softmax output weights.

    :param num_tokens: entities + relations (forward and reverse)
    :param dim: embedding and hidden dimension
    :param num_layers: LSTM layers
    """

    def __init__(self, num_tokens: int, dim: int, num_layers: int = 1) -> None:
        super().__init__()
        self.embedding = nn.Embedding(num_tokens, dim)
        nn.init.xavier_uniform_(self.embedding.weight)
        self.rnn = nn.LSTM(dim, dim, num_layers=num_layers, batch_first=True)
        self.skip = nn.Linear(dim, dim, bias=False)
        self.out_weight = nn.Parameter(torch.empty(num_tokens, dim))
        nn.init.xavier_uniform_(self.out_weight)
        self.out_bias = nn.Parameter(torch.zeros(num_tokens))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Outputs (b, s, d) of token sequences (b, s) that alternate entity (even) and relation (odd) steps."""
        x = self.embedding(tokens)
        h, _ = self.rnn(x)
        skip = torch.zeros_like(h)
        skip[:, 1::2] = self.skip(x[:, 0:-1:2])  # relation step t: the subject entity at t - 1
        return h + skip


def sampled_softmax_loss(model: RecurrentSkippingNetwork, outputs: torch.Tensor, targets: torch.Tensor,
                         negatives: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of each true target against the shared negatives (accidental hits masked).

    :param outputs: (k, d); :param targets: (k,) token ids; :param negatives: (q,) token ids of the targets' kind
    """
    # index_select: its backward (index_add_) sums repeated ids in a fixed order; advanced indexing's does not with
    # more than one thread (kgeval.studies.s3.bootea)
    weight, bias = model.out_weight, model.out_bias
    true_logit = (outputs * weight.index_select(0, targets)).sum(-1) + bias.index_select(0, targets)
    neg_logits = outputs @ weight.index_select(0, negatives).T + bias.index_select(0, negatives)
    neg_logits = neg_logits.masked_fill(negatives[None, :] == targets[:, None], float("-inf"))
    logits = torch.cat([true_logit[:, None], neg_logits], dim=1)
    return nn.functional.cross_entropy(logits, torch.zeros(len(targets), dtype=torch.long))


def _epoch(model: RecurrentSkippingNetwork, optimizer: torch.optim.Optimizer, tokens: np.ndarray, n: int,
           config: RSN4EAConfig, rng: np.random.Generator) -> float:
    """One pass over the walks in shuffled batches; the mean loss."""
    total, count = 0.0, 0
    num_tokens = model.embedding.num_embeddings
    for lo in range(0, len(tokens), config.batch_size):
        batch = torch.as_tensor(tokens[lo : lo + config.batch_size])  # the walks' starts are shuffled
        out = model(batch[:, :-1])
        target = batch[:, 1:]
        ent_q = min(config.num_negatives, n)
        rel_q = min(config.num_negatives, num_tokens - n)
        ent_neg = torch.as_tensor(rng.choice(n, ent_q, replace=False))
        rel_neg = torch.as_tensor(n + rng.choice(num_tokens - n, rel_q, replace=False))
        to_entity = out[:, 1::2].reshape(-1, out.shape[-1]), target[:, 1::2].reshape(-1)
        to_relation = out[:, 0::2].reshape(-1, out.shape[-1]), target[:, 0::2].reshape(-1)
        loss = sampled_softmax_loss(model, *to_entity, ent_neg) + sampled_softmax_loss(model, *to_relation, rel_neg)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += float(loss.detach())
        count += 1
    return total / max(count, 1)


def _valid_hits(left: torch.Tensor, right: torch.Tensor, valid: np.ndarray) -> float:
    """Hits@1 of graph-1 validation entities among the graph-2 validation entities (cosine)."""
    a, b = left[torch.as_tensor(valid[:, 0])], right[torch.as_tensor(valid[:, 1])]
    best = (a @ b.T).argmax(dim=1).numpy()
    return float(np.mean(best == np.arange(len(valid))))


def train_rsn4ea(
    triples1: np.ndarray, triples2: np.ndarray, num_entities1: int, num_entities2: int, train_pairs: np.ndarray,
    config: RSN4EAConfig, seed: int, valid_pairs: np.ndarray | None = None,
) -> RSN4EAResult:
    """Train RSN4EA (module doc) on the seed mappings ``train_pairs`` (t, 2) and return both graphs' embeddings.

    Runs on one torch thread (restored afterwards): the LSTM's per-step operations are small, and on a shared CPU
    the synchronisation of two threads makes a step far slower than one thread.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train(triples1, triples2, num_entities1, num_entities2, train_pairs, config, seed, valid_pairs)
    finally:
        torch.set_num_threads(threads)


def _train(
    triples1: np.ndarray, triples2: np.ndarray, num_entities1: int, num_entities2: int, train_pairs: np.ndarray,
    config: RSN4EAConfig, seed: int, valid_pairs: np.ndarray | None,
) -> RSN4EAResult:
    """:func:`train_rsn4ea`'s body."""
    start = time.perf_counter()
    torch.manual_seed(int(seed))
    rng = np.random.default_rng(int(seed))
    t1 = np.asarray(triples1, dtype=np.int64).reshape(-1, 3)
    r1 = int(t1[:, 1].max()) + 1 if len(t1) else 0
    graph, map1, map2 = joined_graph(triples1, triples2, num_entities1, num_entities2, train_pairs, r1)
    n = graph.num_entities
    model = RecurrentSkippingNetwork(n + 2 * graph.num_relations, config.embedding_dim, config.num_layers)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    walkable = np.flatnonzero(np.diff(graph.indptr) > 0)
    valid = None if valid_pairs is None else np.asarray(valid_pairs, dtype=np.int64).reshape(-1, 2)
    use_valid = valid is not None and len(valid) > 0 and config.patience > 0
    losses: list[float] = []
    valid_hits: list[float] = []
    best: tuple[float, torch.Tensor] | None = None
    for epoch in range(config.num_epochs):
        starts = rng.permutation(np.repeat(walkable, config.walks_per_entity))
        tokens = walk_tokens(*biased_walks(graph, starts, config, rng), n)
        losses.append(_epoch(model, optimizer, tokens, n, config, rng))
        if use_valid:
            emb = nn.functional.normalize(model.embedding.weight.detach()[:n], dim=1)
            valid_hits.append(_valid_hits(emb[torch.as_tensor(map1)], emb[torch.as_tensor(map2)], valid))
            logger.info("rsn4ea epoch %d: loss %.4f, valid Hits@1 %.3f", epoch + 1, losses[-1], valid_hits[-1])
            if best is None or valid_hits[-1] > best[0]:
                best = (valid_hits[-1], emb.clone())
            elif epoch + 1 - int(np.argmax(valid_hits)) - 1 >= config.patience:
                break
    emb = best[1] if best is not None else nn.functional.normalize(model.embedding.weight.detach()[:n], dim=1)
    return RSN4EAResult(emb[torch.as_tensor(map1)], emb[torch.as_tensor(map2)], losses, time.perf_counter() - start,
                        valid_hits)
