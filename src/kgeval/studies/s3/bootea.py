"""BootEA-style bootstrapping entity alignment on PyTorch (``bootea``; structure only).

The model (:func:`train_bootea`): one TransE embedding space for both graphs (graph-2 entity ``j`` has id
``n1 + j``, relations stay disjoint), entity rows on the unit sphere (projected back after every step). Each epoch
minimises, over minibatches of the triples of both graphs,

- BootEA's *limit-based* loss (``loss: limit``): ``relu(f(pos) - pos_margin) + neg_weight * relu(neg_margin -
  f(neg))`` with ``f = ||h + r - t||^2``, which pushes positive triples below an absolute bound and negatives above
  another (``loss: margin``: the TransE margin loss ``relu(margin + ||pos|| - ||neg||)`` instead);
- ``num_negatives`` corrupted heads or tails per triple drawn by BootEA's *truncated negative sampling*: the
  replacement is one of the ``truncation`` nearest neighbours (cosine, same graph) of the replaced entity, recomputed
  every ``bootstrap_every`` epochs (uniform over the entity's graph before the first refresh, and always with
  ``truncation: 0``);
- on the seed alignment, BootEA's *parameter swapping*: every triple that contains a seed entity is also trained
  with that entity replaced by its counterpart, so the two graphs share the seeds' context;
- the alignment loss ``align_weight * mean ||e_a - e_b||^2`` over the seed mappings and the current labelled
  mappings (BootEA's alignment likelihood).

Bootstrapping (every ``bootstrap_every`` epochs): among the entities not in a seed mapping, the pairs that are each
other's nearest neighbour by cosine with similarity at least ``threshold`` are proposed (:func:`mutual_nearest`) and
merged with the mappings labelled so far by BootEA's *one-to-one editing* (:func:`edit_labels`): a proposal that
conflicts with a labelled mapping (shares an entity) replaces it only if it is more similar now, and a labelled
mapping whose similarity fell below the threshold is dropped, so the labelled set stays one-to-one.

Early stopping (BootEA's, as OpenEA runs it): with validation mappings, their Hits@1 (each graph-1 validation entity
ranked among the graph-2 validation entities) is measured at every bootstrapping round; training stops after
``patience`` rounds without improvement and the embeddings of the best round are returned (``patience: 0``: no
early stopping, the last epoch's embeddings).

Simplifications against BootEA (Sun et al., IJCAI 2018; OpenEA's implementation): labelling by mutual nearest
neighbours above a threshold instead of the maximum-weight matching with the classifier's probabilities; Adam on
the full embedding matrices instead of Adagrad; squared distances of unit vectors with OpenEA's margins. Score =
negative Euclidean distance of the unit rows (monotone in the cosine similarity BootEA ranks by).
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

from kgeval.engine.nearest import row_column_max, topk_indices

__all__ = [
    "BOOTEA_LOSSES",
    "BootEAConfig",
    "TranslationResult",
    "mutual_nearest",
    "edit_labels",
    "nearest_in_graph",
    "swapped_triples",
    "train_bootea",
]

#: the ``loss`` values: BootEA's limit-based loss, or the TransE margin loss
BOOTEA_LOSSES: tuple[str, ...] = ("limit", "margin")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BootEAConfig:
    """Settings of :func:`train_bootea` (``studies.s3.bootea``)."""

    embedding_dim: int = 64
    num_epochs: int = 100
    batch_size: int = 2048
    lr: float = 0.01
    margin: float = 1.0
    align_weight: float = 1.0
    bootstrap: bool = True
    bootstrap_every: int = 10
    threshold: float = 0.75
    loss: str = "limit"
    pos_margin: float = 0.01
    neg_margin: float = 2.0
    neg_weight: float = 0.2
    num_negatives: int = 5
    truncation: int = 100
    patience: int = 3

    def __post_init__(self) -> None:
        if self.loss not in BOOTEA_LOSSES:
            raise ValueError(f"bootea loss must be one of {list(BOOTEA_LOSSES)}, got {self.loss!r}")

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any] | None) -> BootEAConfig:
        """The config from a settings dict (unknown keys raise a ``TypeError`` naming them)."""
        return cls(**dict(spec or {}))


@dataclass
class TranslationResult:
    """A trained translation model: L2-normalised entity embeddings of both graphs and the training record."""

    left: torch.Tensor
    right: torch.Tensor
    losses: list[float]
    seconds: float
    num_labelled: list[int] = field(default_factory=list)
    valid_hits: list[float] = field(default_factory=list)


def swapped_triples(triples: np.ndarray, pairs: np.ndarray, offset: int) -> np.ndarray:
    """BootEA's parameter swapping: copies of the triples with a seed entity replaced by its counterpart.

    :param triples: shape (m, 3), both graphs in one id space (graph 2 shifted by ``offset``)
    :param pairs: shape (s, 2), seed mappings in graph ids (graph-1 id, graph-2 id)
    :param offset: n1
    :returns: shape (m', 3), the swapped copies (heads, then tails)
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    counterpart = {}
    for a, b in pairs.tolist():
        counterpart[a] = b + offset
        counterpart[b + offset] = a
    if not counterpart:
        return np.zeros((0, 3), dtype=np.int64)
    keys = np.fromiter(counterpart.keys(), dtype=np.int64)
    values = np.fromiter(counterpart.values(), dtype=np.int64)
    lookup = dict(zip(keys.tolist(), values.tolist()))
    out = []
    for column in (0, 2):
        mask = np.isin(triples[:, column], keys)
        copy = triples[mask].copy()
        copy[:, column] = [lookup[x] for x in copy[:, column].tolist()]
        out.append(copy)
    return np.concatenate(out).astype(np.int64)


def mutual_nearest(
    left: torch.Tensor, right: torch.Tensor, threshold: float, exclude1=None, exclude2=None, chunk: int = 2048
) -> np.ndarray:
    """Pairs that are each other's nearest neighbour by cosine similarity, with similarity >= threshold.

    :param left: shape (n1, d), rows L2-normalised
    :param right: shape (n2, d), rows L2-normalised
    :param exclude1: graph-1 ids left out (the seeds), or ``None``
    :param exclude2: graph-2 ids left out
    :returns: shape (k, 2) int64, sorted by graph-1 id
    """
    ids1 = np.setdiff1d(np.arange(left.shape[0]), np.asarray(exclude1 if exclude1 is not None else [], dtype=np.int64))
    ids2 = np.setdiff1d(np.arange(right.shape[0]), np.asarray(exclude2 if exclude2 is not None else [], dtype=np.int64))
    if len(ids1) == 0 or len(ids2) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    cand = right[torch.as_tensor(ids2)]
    row_best = np.empty(len(ids1), dtype=np.int64)
    row_value = np.empty(len(ids1), dtype=np.float32)
    col_value = torch.full((len(ids2),), -np.inf)
    col_best = torch.zeros(len(ids2), dtype=torch.long)
    with torch.no_grad():
        for start in range(0, len(ids1), chunk):
            sims = left[torch.as_tensor(ids1[start : start + chunk])] @ cand.T
            value, arg, cvalue, carg = row_column_max(sims)  # sims.max(dim=1), sims.max(dim=0), compiled
            row_best[start : start + chunk] = arg.numpy()
            row_value[start : start + chunk] = value.numpy()
            better = cvalue > col_value
            col_value = torch.where(better, cvalue, col_value)
            col_best = torch.where(better, carg + start, col_best)
    col_best_np = col_best.numpy()
    rows = np.arange(len(ids1))
    mutual = (col_best_np[row_best] == rows) & (row_value >= threshold)
    return np.stack([ids1[mutual], ids2[row_best[mutual]]], axis=1).astype(np.int64)


def edit_labels(
    previous: np.ndarray, proposed: np.ndarray, left: torch.Tensor, right: torch.Tensor, threshold: float
) -> np.ndarray:
    """BootEA's one-to-one editing of the labelled mappings (module doc).

    The labelled mappings still at least ``threshold`` similar and the proposed ones are taken in decreasing order of
    their current cosine similarity (a labelled mapping before a proposal of equal similarity); a mapping is kept
    when neither of its entities is in a mapping kept before it.

    :param previous: shape (k, 2), the mappings labelled so far
    :param proposed: shape (m, 2), this round's proposals
    :param left: shape (n1, d), rows L2-normalised; :param right: shape (n2, d)
    :returns: shape (k', 2) int64, one-to-one, sorted by graph-1 id
    """
    pairs = np.concatenate([np.asarray(previous, dtype=np.int64).reshape(-1, 2),
                            np.asarray(proposed, dtype=np.int64).reshape(-1, 2)])
    if not len(pairs):
        return pairs
    with torch.no_grad():
        sims = (left[torch.as_tensor(pairs[:, 0])] * right[torch.as_tensor(pairs[:, 1])]).sum(dim=1).numpy()
    used1, used2, kept = set(), set(), []
    for i in np.argsort(-sims, kind="stable"):
        a, b = int(pairs[i, 0]), int(pairs[i, 1])
        if sims[i] >= threshold and a not in used1 and b not in used2:
            used1.add(a)
            used2.add(b)
            kept.append((a, b))
    out = np.asarray(sorted(kept), dtype=np.int64).reshape(-1, 2)
    return out


def nearest_in_graph(embeddings: torch.Tensor, k: int, chunk: int = 2048) -> np.ndarray:
    """Per row its ``k`` most cosine-similar other rows (BootEA's truncated negative pool).

    :param embeddings: shape (n, d), rows L2-normalised
    :returns: shape (n, min(k, n - 1)) int64 row ids
    """
    n = embeddings.shape[0]
    k = max(1, min(int(k), n - 1))
    out = np.empty((n, k), dtype=np.int64)
    with torch.no_grad():
        for start in range(0, n, chunk):
            sims = embeddings[start : start + chunk] @ embeddings.T
            rows = torch.arange(sims.shape[0])
            sims[rows, rows + start] = -np.inf
            out[start : start + chunk] = topk_indices(sims, k).numpy()  # sims.topk(k, dim=1).indices, compiled
    return out


@dataclass
class _Graphs:
    """The joined triples of both graphs (with the swapped copies) and what negative sampling needs."""

    triples: np.ndarray
    n1: int
    n2: int
    num_relations: int
    seeds: np.ndarray


def _join(triples1, triples2, n1: int, n2: int, train_pairs) -> _Graphs:
    t1 = np.asarray(triples1, dtype=np.int64).reshape(-1, 3)
    t2 = np.asarray(triples2, dtype=np.int64).reshape(-1, 3)
    r1 = int(t1[:, 1].max()) + 1 if len(t1) else 0
    r2 = int(t2[:, 1].max()) + 1 if len(t2) else 0
    both = np.concatenate([t1, np.stack([t2[:, 0] + n1, t2[:, 1] + r1, t2[:, 2] + n1], axis=1)])
    seeds = np.asarray(train_pairs, dtype=np.int64).reshape(-1, 2)
    return _Graphs(np.concatenate([both, swapped_triples(both, seeds, n1)]), n1, n2, r1 + r2, seeds)


def _negatives(pos: np.ndarray, graphs: _Graphs, pool: np.ndarray | None, k: int, rng) -> np.ndarray:
    """``k`` corrupted copies of each positive triple (row ``i * k + j``): head or tail replaced by a neighbour from
    the truncated pool, or uniformly from the replaced entity's graph without one."""
    neg = np.repeat(pos, k, axis=0)
    tail = rng.random(len(neg)) < 0.5
    column = np.where(tail, 2, 0)
    replaced = neg[np.arange(len(neg)), column]
    if pool is not None:
        chosen = pool[replaced, rng.integers(pool.shape[1], size=len(neg))]
    else:
        graph2 = replaced >= graphs.n1
        uniform2 = graphs.n1 + rng.integers(graphs.n2, size=len(neg))
        chosen = np.where(graph2, uniform2, rng.integers(graphs.n1, size=len(neg)))
    neg[np.arange(len(neg)), column] = chosen
    return neg


def _loss(entities, relations, pos, neg, config: BootEAConfig) -> torch.Tensor:
    # index_select, not entities[t[:, 0]]: the backward of advanced indexing accumulates repeated rows in an order
    # that varies between runs with more than one thread; index_select's (index_add_) does not
    def squared(t: torch.Tensor) -> torch.Tensor:
        head, tail = entities.index_select(0, t[:, 0]), entities.index_select(0, t[:, 2])
        return (head + relations.index_select(0, t[:, 1]) - tail).pow(2).sum(dim=1)

    f_pos, f_neg = squared(pos), squared(neg)
    if config.loss == "limit":
        pos_part = torch.relu(f_pos - config.pos_margin).sum()
        return (pos_part + config.neg_weight * torch.relu(config.neg_margin - f_neg).sum()) / len(pos)
    k = len(neg) // max(1, len(pos))
    return torch.relu(config.margin + f_pos.sqrt().repeat_interleave(k) - (f_neg + 1e-12).sqrt()).mean()


def _valid_hits(left: torch.Tensor, right: torch.Tensor, valid: np.ndarray) -> float:
    """Hits@1 of the validation mappings, each graph-1 entity ranked among their graph-2 entities."""
    with torch.no_grad():
        sims = left[torch.as_tensor(valid[:, 0])] @ right[torch.as_tensor(valid[:, 1])].T
        return float((sims.argmax(dim=1) == torch.arange(len(valid))).float().mean())


def _epoch(
    entities, relations, optimizer, graphs: _Graphs, aligned: np.ndarray, pool, config: BootEAConfig, rng
) -> float:
    """One pass over the joined triples in minibatches; the mean loss per triple."""
    triples, n1 = graphs.triples, graphs.n1
    order = rng.permutation(len(triples))
    batch = max(1, int(config.batch_size))
    k = max(1, int(config.num_negatives))
    a = torch.as_tensor(aligned[:, 0])
    b = torch.as_tensor(aligned[:, 1] + n1)
    total = 0.0
    for start in range(0, len(order), batch):
        pos = triples[order[start : start + batch]]
        neg = torch.as_tensor(_negatives(pos, graphs, pool, k, rng))
        loss = _loss(entities, relations, torch.as_tensor(pos), neg, config)
        if len(aligned):
            gap = entities.index_select(0, a) - entities.index_select(0, b)
            loss = loss + config.align_weight * gap.pow(2).sum(dim=1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            entities.data = nn.functional.normalize(entities.data, dim=1)
        total += float(loss.detach()) * len(pos)
    return total / max(1, len(order))


def train_bootea(
    triples1: np.ndarray,
    triples2: np.ndarray,
    num_entities1: int,
    num_entities2: int,
    train_pairs: np.ndarray,
    config: BootEAConfig,
    seed: int,
    valid_pairs: np.ndarray | None = None,
) -> TranslationResult:
    """Train the translation model of the module doc (with bootstrapping when ``config.bootstrap``, early stopping
    with ``valid_pairs`` and ``config.patience > 0``).

    :param triples1: shape (m1, 3) graph-1 triples
    :param triples2: shape (m2, 3) graph-2 triples
    :param train_pairs: shape (s, 2) seed mappings (graph-1 id, graph-2 id)
    :param valid_pairs: shape (v, 2) validation mappings, or ``None``
    :returns: L2-normalised entity embeddings, shapes (n1, d) and (n2, d)
    """
    start_time = time.perf_counter()
    generator = torch.Generator().manual_seed(int(seed))
    rng = np.random.default_rng(int(seed))
    n1, n2 = int(num_entities1), int(num_entities2)
    graphs = _join(triples1, triples2, n1, n2, train_pairs)
    seeds = graphs.seeds
    valid = np.asarray(valid_pairs if valid_pairs is not None else [], dtype=np.int64).reshape(-1, 2)
    entities = nn.Parameter(nn.functional.normalize(torch.randn(n1 + n2, config.embedding_dim, generator=generator), dim=1))
    relations = nn.Parameter(
        torch.randn(graphs.num_relations, config.embedding_dim, generator=generator) / config.embedding_dim**0.5
    )
    optimizer = torch.optim.Adam([entities, relations], lr=config.lr)
    labelled = np.zeros((0, 2), dtype=np.int64)
    pool = None
    result = TranslationResult(entities.data[:n1], entities.data[n1:], [], 0.0)
    best, best_hits, stale = None, -1.0, 0
    every = max(1, int(config.bootstrap_every))
    for epoch in range(int(config.num_epochs)):
        aligned = np.concatenate([seeds, labelled])
        result.losses.append(_epoch(entities, relations, optimizer, graphs, aligned, pool, config, rng))
        if (epoch + 1) % every:
            continue
        with torch.no_grad():
            unit = nn.functional.normalize(entities.detach(), dim=1)
        left, right = unit[:n1], unit[n1:]
        if config.bootstrap:
            proposed = mutual_nearest(left, right, config.threshold, seeds[:, 0], seeds[:, 1])
            labelled = edit_labels(labelled, proposed, left, right, config.threshold)
            result.num_labelled.append(int(len(labelled)))
        if len(valid):
            result.valid_hits.append(_valid_hits(left, right, valid))
            if result.valid_hits[-1] > best_hits:
                best, best_hits, stale = unit.clone(), result.valid_hits[-1], 0
            else:
                stale += 1
        logger.info("bootea epoch %d: loss %.4f, %d labelled, valid Hits@1 %s", epoch + 1, result.losses[-1],
                    len(labelled), f"{result.valid_hits[-1]:.3f}" if result.valid_hits else "n/a")
        if config.patience > 0 and len(valid) and stale >= config.patience:
            break
        # the next epochs' negatives; none follow the last epoch (the pool drew no random number, so leaving it out
        # there changes nothing)
        if config.truncation > 0 and epoch + 1 < int(config.num_epochs):
            pool = np.concatenate([nearest_in_graph(left, config.truncation),
                                   n1 + nearest_in_graph(right, config.truncation)])
    with torch.no_grad():
        final = nn.functional.normalize(entities.detach(), dim=1)
    if best is not None and config.patience > 0:
        final = best
    result.left, result.right = final[:n1].clone(), final[n1:].clone()
    result.seconds = time.perf_counter() - start_time
    return result
