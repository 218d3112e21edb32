"""The compiled walk step against the numpy step it replaced (kept here as the reference): the same next entities
and relations, bit for bit, for the same uniform draws, on random graphs with merged seeds and every bias."""

from __future__ import annotations

import numpy as np
import pytest

from kgeval.studies.s3.rsn4ea import RSN4EAConfig, WalkGraph, biased_walks
from kgeval.engine.walk_kernel import step_walkers


def numpy_step(graph: WalkGraph, current, previous, depth, cross, draws):
    """The numpy step: per-edge weights, one cumsum over all walkers' edges, a search clipped to each walker's."""
    n = graph.num_entities
    heads = np.repeat(np.arange(n), np.diff(graph.indptr))
    edge_keys = np.unique(heads * n + graph.targets)
    starts, ends = graph.indptr[current], graph.indptr[current + 1]
    degree = ends - starts
    owner = np.repeat(np.arange(len(current)), degree)
    edge = np.arange(int(degree.sum())) - np.repeat(np.cumsum(degree) - degree, degree) + np.repeat(starts, degree)
    weight = np.ones(len(edge))
    if previous is not None:
        nxt, prev = graph.targets[edge], previous[owner]
        pos = np.searchsorted(edge_keys, prev * n + nxt)
        adjacent = edge_keys[np.minimum(pos, len(edge_keys) - 1)] == prev * n + nxt
        far = ~adjacent & (nxt != prev)
        g_prev, g_next = graph.graph_of[prev], graph.graph_of[nxt]
        different = (g_prev != g_next) & (g_prev != 2) & (g_next != 2)
        weight = np.where(far, depth, 1.0 - depth) * np.where(different, cross, 1.0 - cross)
    cumulative = np.cumsum(weight)
    bounds = np.concatenate([[0.0], cumulative])
    group_start = np.cumsum(degree) - degree
    low, high = bounds[group_start], bounds[group_start + degree]
    draw = low + draws * (high - low)
    chosen = np.clip(np.searchsorted(cumulative, draw, side="right"), group_start, group_start + degree - 1)
    return graph.targets[edge[chosen]], graph.relations[edge[chosen]]


def compiled_step(graph: WalkGraph, current, previous, depth, cross, draws):
    out = (np.empty(len(current), np.int64), np.empty(len(current), np.int64))
    before = np.zeros(0, np.int64) if previous is None else previous
    step_walkers((graph.indptr, graph.targets, graph.relations, graph.graph_of), current, before, (depth, cross),
                 draws, out)
    return out


def random_graph(seed: int, n: int = 60, m: int = 150) -> WalkGraph:
    rng = np.random.default_rng(seed)
    triples = np.stack([rng.integers(n, size=m), rng.integers(4, size=m), rng.integers(n, size=m)], axis=1)
    triples = np.concatenate([triples, triples[:5]])  # repeated triples: repeated edges
    return WalkGraph.from_triples(triples, n, 4, rng.integers(3, size=n))


@pytest.mark.parametrize("depth, cross", [(0.5, 0.5), (0.9, 0.1), (0.0, 1.0), (1.0, 0.0), (0.3, 0.7)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_steps_as_numpy(depth, cross, seed):
    graph = random_graph(seed)
    rng = np.random.default_rng(seed)
    walkable = np.flatnonzero(np.diff(graph.indptr) > 0)
    current = rng.choice(walkable, size=500)
    draws = rng.random(500)
    first = compiled_step(graph, current, None, depth, cross, draws)
    for got, expected in zip(first, numpy_step(graph, current, None, depth, cross, draws)):
        np.testing.assert_array_equal(got, expected)
    nxt = first[0]
    draws = np.concatenate([rng.random(499), [1 - 2**-53]])  # the largest draw: the search's clip
    second = compiled_step(graph, nxt, current, depth, cross, draws)
    for got, expected in zip(second, numpy_step(graph, nxt, current, depth, cross, draws)):
        np.testing.assert_array_equal(got, expected)


def test_walks_end_to_end_are_the_numpy_walks():
    graph = random_graph(7)
    config = RSN4EAConfig(walk_length=6, depth_bias=0.8, cross_bias=0.3)
    walkable = np.flatnonzero(np.diff(graph.indptr) > 0)
    starts = np.repeat(walkable, 3)
    entities, relations = biased_walks(graph, starts, config, np.random.default_rng(3), chunk=64)
    rng = np.random.default_rng(3)
    for lo in range(0, len(starts), 64):
        rows = slice(lo, lo + 64)
        for i in range(1, config.walk_length):
            previous = entities[rows, i - 2] if i >= 2 else None
            draws = rng.random(len(entities[rows]))
            expected = numpy_step(graph, entities[rows, i - 1], previous, 0.8, 0.3, draws)
            np.testing.assert_array_equal(entities[rows, i], expected[0])
            np.testing.assert_array_equal(relations[rows, i - 1], expected[1])


def test_a_walker_without_edges_or_outside_the_graph_is_an_error():
    graph = WalkGraph.from_triples(np.array([[0, 0, 1]]), 3, 1, np.zeros(3, np.int64))  # entity 2 has no edges
    with pytest.raises(ValueError, match="without edges"):
        compiled_step(graph, np.array([2]), None, 0.5, 0.5, np.zeros(1))
    with pytest.raises(IndexError, match="outside"):
        compiled_step(graph, np.array([5]), None, 0.5, 0.5, np.zeros(1))
