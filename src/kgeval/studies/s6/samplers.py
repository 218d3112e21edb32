"""Seeded candidate samplers, filtered like the full ranking.

A sampler draws, for each query ``(anchor, relation, side)``, an ordered list of candidate entities: its first ``k``
entries are the sample of size ``k`` for every ``k`` of the grid (nested samples, one draw serves the whole grid).
Every sampler leaves out the known answers of the query (its answers in train, valid and test, the true answer among
them), as the filtered full ranking does, so a sample holds negatives only.

- ``uniform``: the filtered candidates in uniformly random order (a uniform sample without replacement).
- ``static``: the relation's range (tail queries) or domain (head queries) as seen in the training triples, in
  uniformly random order: Cornell et al.'s static strategy with the simplest relation recommender (the observed
  domain and range). An entity never seen in that position is never drawn, so a query draws at most the pool.
- ``probabilistic``: the same pool drawn without replacement with probability proportional to the entity's frequency
  in that position of the relation in training (Cornell et al.'s probabilistic strategy), by exponential keys
  ``-log(U) / w`` ordered ascending (Efraimidis and Spirakis: the order is that of successive weighted draws).

All three order random keys of every entity (excluded entities get ``inf``), so one code path serves them; the keys
of a query come from its own batch's generator, seeded by the draw's stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kgeval.lp.filtering import FilterIndex, as_triples_array

__all__ = ["SAMPLERS", "RelationPositions", "known_mask", "sample_keys", "draw_candidates"]

#: the samplers, in table order
SAMPLERS: tuple[str, ...] = ("uniform", "static", "probabilistic")


@dataclass(frozen=True)
class RelationPositions:
    """How often each entity fills each position of each relation in the training triples.

    :ivar heads: shape: (num_relations, num_entities) counts of the entity as head (the relation's domain)
    :ivar tails: shape: (num_relations, num_entities) counts of the entity as tail (the relation's range)
    """

    heads: np.ndarray
    tails: np.ndarray

    @classmethod
    def fit(cls, train, num_entities: int, num_relations: int) -> RelationPositions:
        """Count the positions in the training triples only (shape (m, 3) ids)."""
        triples = as_triples_array(train, name="training triples")
        heads = np.zeros((num_relations, num_entities), dtype=np.float64)
        tails = np.zeros((num_relations, num_entities), dtype=np.float64)
        np.add.at(heads, (triples[:, 1], triples[:, 0]), 1.0)
        np.add.at(tails, (triples[:, 1], triples[:, 2]), 1.0)
        return cls(heads, tails)

    def weights(self, side: str, relations: np.ndarray) -> np.ndarray:
        """The counts of the predicted position of each query: the domain for ``head``, the range for ``tail``."""
        return (self.heads if side == "head" else self.tails)[np.asarray(relations, dtype=np.int64)]


def known_mask(known: FilterIndex, side: str, anchors: np.ndarray, relations: np.ndarray, shape) -> np.ndarray:
    """A (b, E) mask of every query's known answers."""
    rows, answers = known.lookup(side, anchors, relations)
    mask = np.zeros(shape, dtype=bool)
    mask[rows, answers] = True
    return mask


def sample_keys(
    sampler: str,
    side: str,
    anchors: np.ndarray,
    relations: np.ndarray,
    known: FilterIndex,
    positions: RelationPositions,
    rng: np.random.Generator,
) -> np.ndarray:
    """Random keys of every entity for a batch of queries; ascending order is the draw order, ``inf`` never drawn.

    :return: shape: (b, num_entities) float64
    """
    shape = (len(anchors), known.num_entities)
    uniform = rng.random(shape)
    if sampler == "uniform":
        keys = uniform
    elif sampler in ("static", "probabilistic"):
        weights = positions.weights(side, relations)
        with np.errstate(divide="ignore"):
            keys = uniform if sampler == "static" else -np.log1p(-uniform) / weights
        keys = np.where(weights > 0, keys, np.inf)
    else:
        raise ValueError(f"studies.s6.samplers: unknown sampler {sampler!r}; use one of {', '.join(SAMPLERS)}")
    keys[known_mask(known, side, anchors, relations, shape)] = np.inf
    return keys


def draw_candidates(keys: np.ndarray, k_max: int) -> np.ndarray:
    """The first ``k_max`` entities of each row in key order, ``-1`` where fewer can be drawn.

    :param keys: shape: (b, E) from :func:`sample_keys`
    :return: shape: (b, min(k_max, E)) int64
    """
    width = min(int(k_max), keys.shape[1])
    if width < keys.shape[1]:
        part = np.argpartition(keys, width - 1, axis=1)[:, :width]
    else:
        part = np.broadcast_to(np.arange(width), (keys.shape[0], width))
    chosen = np.take_along_axis(keys, part, axis=1)
    order = np.argsort(chosen, axis=1, kind="stable")
    ids = np.take_along_axis(part, order, axis=1).astype(np.int64)
    ids[~np.isfinite(np.take_along_axis(chosen, order, axis=1))] = -1
    return ids
