"""BootEA-style bootstrapping entity alignment on PyTorch (``bootea``; structure only).

The model (:func:`train_bootea`): one TransE embedding space for both graphs (graph-2 entity ``j`` has id
``n1 + j``, relations stay disjoint). Each epoch minimises, over minibatches of the triples of both graphs,

- the TransE margin loss ``relu(margin + ||h + r - t|| - ||h' + r - t'||)`` with one uniformly corrupted head or
  tail per triple (drawn from the triple's own graph), entity rows projected back onto the unit sphere after every
  step;
- on the seed alignment, BootEA's *parameter swapping*: every triple that contains a seed entity is also trained
  with that entity replaced by its counterpart, so the two graphs share the seeds' context;
- the alignment loss ``align_weight * mean ||e_a - e_b||^2`` over the seed mappings and the current labelled
  mappings (BootEA's alignment likelihood).

Bootstrapping (every ``bootstrap_every`` epochs, :func:`mutual_nearest`): among the entities not in a seed mapping,
the pairs that are each other's nearest neighbour by cosine similarity with similarity at least ``threshold`` are
labelled as new mappings. Mutual nearest neighbours are one-to-one by construction and disjoint from the seeds, so
no labelled pair conflicts with another or with a seed; the labelled set is recomputed from scratch each time
(BootEA's relabelling), so a mapping that stops being mutual is dropped.

Simplifications against BootEA (Sun et al., IJCAI 2018; OpenEA's implementation): a margin loss instead of BootEA's
limit-based loss with truncated epsilon-negative sampling; uniform negatives; labelling by mutual nearest neighbours
above a threshold instead of the maximum-weight matching with the classifier's probabilities, and no conflict editing
between a labelled and a newly proposed pair (mutual neighbours cannot conflict); no early stopping on the
validation Hits@1 (a fixed number of epochs). Score = cosine similarity (as BootEA ranks).
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

__all__ = ["BootEAConfig", "TranslationResult", "mutual_nearest", "swapped_triples", "train_bootea"]

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
            value, arg = sims.max(dim=1)
            row_best[start : start + chunk] = arg.numpy()
            row_value[start : start + chunk] = value.numpy()
            cvalue, carg = sims.max(dim=0)
            better = cvalue > col_value
            col_value = torch.where(better, cvalue, col_value)
            col_best = torch.where(better, carg + start, col_best)
    col_best_np = col_best.numpy()
    rows = np.arange(len(ids1))
    mutual = (col_best_np[row_best] == rows) & (row_value >= threshold)
    return np.stack([ids1[mutual], ids2[row_best[mutual]]], axis=1).astype(np.int64)


def train_bootea(
    triples1: np.ndarray,
    triples2: np.ndarray,
    num_entities1: int,
    num_entities2: int,
    train_pairs: np.ndarray,
    config: BootEAConfig,
    seed: int,
) -> TranslationResult:
    """Train the translation model of the module doc (with bootstrapping when ``config.bootstrap``).

    :param triples1: shape (m1, 3) graph-1 triples
    :param triples2: shape (m2, 3) graph-2 triples
    :param train_pairs: shape (s, 2) seed mappings (graph-1 id, graph-2 id)
    :returns: L2-normalised entity embeddings, shapes (n1, d) and (n2, d)
    """
    start_time = time.perf_counter()
    generator = torch.Generator().manual_seed(int(seed))
    rng = np.random.default_rng(int(seed))
    n1, n2 = int(num_entities1), int(num_entities2)
    t1 = np.asarray(triples1, dtype=np.int64).reshape(-1, 3)
    t2 = np.asarray(triples2, dtype=np.int64).reshape(-1, 3)
    r1 = int(t1[:, 1].max()) + 1 if len(t1) else 0
    r2 = int(t2[:, 1].max()) + 1 if len(t2) else 0
    both = np.concatenate([t1, np.stack([t2[:, 0] + n1, t2[:, 1] + r1, t2[:, 2] + n1], axis=1)])
    seeds = np.asarray(train_pairs, dtype=np.int64).reshape(-1, 2)
    triples = np.concatenate([both, swapped_triples(both, seeds, n1)])
    graph_of = (triples[:, 0] >= n1).astype(np.int64)  # 0: graph 1, 1: graph 2 (swapped copies keep the head's graph)
    low = np.where(graph_of == 1, n1, 0)
    size = np.where(graph_of == 1, n2, n1)

    entities = nn.Parameter(nn.functional.normalize(torch.randn(n1 + n2, config.embedding_dim, generator=generator), dim=1))
    relations = nn.Parameter(torch.randn(r1 + r2, config.embedding_dim, generator=generator) / config.embedding_dim**0.5)
    optimizer = torch.optim.Adam([entities, relations], lr=config.lr)
    labelled = np.zeros((0, 2), dtype=np.int64)
    losses: list[float] = []
    num_labelled: list[int] = []
    batch = max(1, int(config.batch_size))
    for epoch in range(int(config.num_epochs)):
        order = rng.permutation(len(triples))
        total = 0.0
        aligned = np.concatenate([seeds, labelled])
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            pos = torch.as_tensor(triples[idx])
            neg = pos.clone()
            corrupt_tail = torch.as_tensor(rng.random(len(idx)) < 0.5)
            random_entity = torch.as_tensor(low[idx] + (rng.random(len(idx)) * size[idx]).astype(np.int64))
            neg[:, 2] = torch.where(corrupt_tail, random_entity, neg[:, 2])
            neg[:, 0] = torch.where(~corrupt_tail, random_entity, neg[:, 0])

            def distance(t: torch.Tensor) -> torch.Tensor:
                return (entities[t[:, 0]] + relations[t[:, 1]] - entities[t[:, 2]]).norm(dim=1)

            loss = torch.relu(config.margin + distance(pos) - distance(neg)).mean()
            if len(aligned):
                a = torch.as_tensor(aligned[:, 0])
                b = torch.as_tensor(aligned[:, 1] + n1)
                loss = loss + config.align_weight * (entities[a] - entities[b]).pow(2).sum(dim=1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                entities.data = nn.functional.normalize(entities.data, dim=1)
            total += float(loss.detach()) * len(idx)
        losses.append(total / max(1, len(order)))
        if config.bootstrap and (epoch + 1) % max(1, int(config.bootstrap_every)) == 0:
            with torch.no_grad():
                left, right = entities[:n1].detach(), entities[n1:].detach()
            labelled = mutual_nearest(left, right, config.threshold, seeds[:, 0], seeds[:, 1])
            num_labelled.append(int(len(labelled)))
            logger.info("bootea epoch %d: loss %.4f, %d labelled mappings", epoch + 1, losses[-1], len(labelled))
    with torch.no_grad():
        final = nn.functional.normalize(entities.detach(), dim=1)
    return TranslationResult(final[:n1].clone(), final[n1:].clone(), losses, time.perf_counter() - start_time, num_labelled)
