"""Seeded candidate samplers, filtered like the full ranking, at a cost that does not grow with the entity count.

A sampler draws, for each query ``(anchor, relation, side)``, an ordered list of at most ``k`` candidate entities:
its first ``j`` entries are a sample of size ``j`` for every ``j <= k`` (nested samples, so one draw serves a grid of
sample sizes). Every sampler leaves out the known answers of the query (its answers in train, valid and test, the
true answer among them), as the filtered full ranking does, so a sample holds negatives only.

- ``uniform``: a uniform sample without replacement of the filtered candidates, in random order (OGB's random
  negatives). Drawn as ``k + #known`` distinct entities (NumPy's ``Generator.choice`` without replacement, whose cost
  grows with the sample, not with the number of entities) with the known answers then dropped: the first ``k`` left
  of a uniformly ordered sample are a uniformly ordered sample of the rest.
- ``static``: the relation's range (tail queries) or domain (head queries) as seen in the training triples, in
  uniformly random order: Cornell et al.'s static strategy with the simplest relation recommender (the observed
  domain and range). An entity never seen in that position is never drawn, so a query draws at most that pool.
- ``probabilistic``: the same pool drawn without replacement with probability proportional to the entity's frequency
  in that position of the relation in training (Cornell et al.'s probabilistic strategy), by exponential keys
  ``-log(U) / w`` ordered ascending (Efraimidis and Spirakis: the order is that of successive weighted draws).

A guided query costs its relation's pool, a uniform one its sample: neither holds a row of every entity, which is
what makes sampled evaluation affordable on graphs of millions of entities.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kgeval.lp.filtering import FilterIndex, as_triples_array

__all__ = ["SAMPLERS", "RelationPositions", "known_mask", "draw_candidates", "check_sampler"]

#: the samplers, in table order
SAMPLERS: tuple[str, ...] = ("uniform", "static", "probabilistic")


def check_sampler(sampler: str, where: str) -> None:
    """Raise a ValueError naming the config key ``where`` when ``sampler`` is not one of :data:`SAMPLERS`."""
    if sampler not in SAMPLERS:
        raise ValueError(f"{where}: unknown sampler {sampler!r}; use one of {', '.join(SAMPLERS)}")


@dataclass(frozen=True)
class RelationPositions:
    """How often each entity fills each position of each relation in the training triples, per relation sparse.

    For side ``s`` (``head``: the relation's domain, ``tail``: its range) and relation ``r``, the entities are
    ``entities[s][starts[s][r]:starts[s][r + 1]]`` (ascending) with their counts in ``counts[s]`` at the same places.
    """

    num_entities: int
    starts: dict[str, np.ndarray]
    entities: dict[str, np.ndarray]
    counts: dict[str, np.ndarray]

    @classmethod
    def fit(cls, train, num_entities: int, num_relations: int) -> RelationPositions:
        """Count the positions in the training triples only (shape (m, 3) ids)."""
        triples = as_triples_array(train, name="training triples")
        starts, entities, counts = {}, {}, {}
        for side, column in (("head", 0), ("tail", 2)):
            keys, count = np.unique(triples[:, 1] * np.int64(num_entities) + triples[:, column], return_counts=True)
            relations = keys // num_entities
            starts[side] = np.searchsorted(relations, np.arange(num_relations + 1)).astype(np.int64)
            entities[side] = (keys % num_entities).astype(np.int64)
            counts[side] = count.astype(np.float64)
        return cls(int(num_entities), starts, entities, counts)

    def pool(self, side: str, relation: int) -> tuple[np.ndarray, np.ndarray]:
        """The entities seen in the predicted position of ``relation`` and how often (``side``: the predicted one)."""
        start, stop = self.starts[side][relation], self.starts[side][relation + 1]
        return self.entities[side][start:stop], self.counts[side][start:stop]


def known_mask(known: FilterIndex, side: str, anchors: np.ndarray, relations: np.ndarray, shape) -> np.ndarray:
    """A (b, E) mask of every query's known answers."""
    rows, answers = known.lookup(side, anchors, relations)
    mask = np.zeros(shape, dtype=bool)
    mask[rows, answers] = True
    return mask


def _uniform(excluded: np.ndarray, num_entities: int, k: int, rng: np.random.Generator) -> np.ndarray:
    size = min(k, num_entities - len(excluded))
    drawn = rng.choice(num_entities, size=min(num_entities, size + len(excluded)), replace=False)
    return drawn[~np.isin(drawn, excluded, assume_unique=True)][:size]


def _guided(sampler: str, pool: tuple[np.ndarray, np.ndarray], excluded: np.ndarray, k: int, rng) -> np.ndarray:
    ids, weights = pool
    keep = ~np.isin(ids, excluded, assume_unique=True)
    ids, weights = ids[keep], weights[keep]
    uniform = rng.random(len(ids))
    keys = uniform if sampler == "static" else -np.log1p(-uniform) / weights
    chosen = np.argpartition(keys, k - 1)[:k] if len(ids) > k else np.arange(len(ids))
    return ids[chosen[np.argsort(keys[chosen], kind="stable")]]


def draw_candidates(
    sampler: str,
    side: str,
    anchors: np.ndarray,
    relations: np.ndarray,
    known: FilterIndex,
    positions: RelationPositions,
    k: int,
    rng: np.random.Generator,
    where: str = "sampler",
) -> np.ndarray:
    """Each query's ordered sample of at most ``k`` candidates, ``-1`` where fewer can be drawn.

    :param anchors: shape: (b,) the known entity of each query (the head for ``tail`` queries)
    :param relations: shape: (b,)
    :param known: the known answers (train, valid and test) that no sample may hold
    :param positions: the training positions the guided samplers draw from
    :param where: the config key that names the sampler, for the error on an unknown one
    :return: shape: (b, k) int64, each row in draw order
    """
    check_sampler(sampler, where)
    anchors = np.asarray(anchors, dtype=np.int64)
    relations = np.asarray(relations, dtype=np.int64)
    rows, answers = known.lookup(side, anchors, relations)
    bounds = np.searchsorted(rows, np.arange(len(anchors) + 1))
    out = np.full((len(anchors), int(k)), -1, dtype=np.int64)
    for i in range(len(anchors)):
        excluded = answers[bounds[i] : bounds[i + 1]]
        if sampler == "uniform":
            drawn = _uniform(excluded, known.num_entities, int(k), rng)
        else:
            drawn = _guided(sampler, positions.pool(side, int(relations[i])), excluded, int(k), rng)
        out[i, : len(drawn)] = drawn
    return out
