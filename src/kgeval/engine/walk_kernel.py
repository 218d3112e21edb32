"""Compiled step of RSN4EA's biased random walks (:func:`kgeval.studies.s3.rsn4ea.biased_walks`).

Written by hand (compiled with numba) because the numpy step built, for every walker, arrays over all edges of its
current entity (owners, edge ids, weights, a neighbour test by binary search over all adjacent pairs, a cumulative
sum and a second search), a large share of an RSN4EA run. Here one pass per walker
does the same arithmetic in the same order, with the neighbour test a merge of two sorted lists (the walker's edges
and its previous entity's, both ascending by target in the CSR): the edge weights in float64, one running sum over the walkers' edges in walker order (numpy's
``cumsum`` over the batch), the draw ``low + u * (high - low)`` and the first edge whose running sum exceeds it, so
every walk is the numpy step's, given the same uniform draws. No ``fastmath``.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["step_walkers"]


@numba.njit(nogil=True, cache=True, boundscheck=False)
def step_walkers(
    graph: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    current: np.ndarray,
    previous: np.ndarray,
    biases: tuple[float, float],
    draws: np.ndarray,
    out: tuple[np.ndarray, np.ndarray],
) -> None:  # pragma: no cover - compiled
    """One step of every walker: ``out`` (next entities, relations) from ``current`` (w,).

    :param graph: the walk graph's ``indptr``, ``targets`` (ascending within each entity's edges), ``relations`` and
        ``graph_of``
    :param previous: shape (w,), the entities before ``current``, or shape (0,) on a walk's first step (uniform)
    :param biases: ``depth_bias`` and ``cross_bias``
    :param draws: shape (w,), uniform in [0, 1)
    """
    indptr, targets, relations, graph_of = graph
    depth, cross = biases
    next_entities, next_relations = out
    n = indptr.shape[0] - 1
    second = previous.shape[0] > 0
    running = 0.0
    sums = np.empty(0, dtype=np.float64)
    for w in range(current.shape[0]):
        u = current[w]
        if u < 0 or u >= n:
            raise IndexError("a walker stands outside the graph's entities")
        start, degree = indptr[u], indptr[u + 1] - indptr[u]
        if degree == 0:
            raise ValueError("a walker stands on an entity without edges")
        if sums.shape[0] < degree:
            sums = np.empty(2 * degree, dtype=np.float64)
        low = running
        if second:
            prev = previous[w]
            if prev < 0 or prev >= n:
                raise IndexError("a walker's previous entity lies outside the graph's entities")
            # prev's neighbours, sorted (the CSR lists each entity's targets in ascending order), walked beside u's
            p, p_end = indptr[prev], indptr[prev + 1]
        for q in range(degree):
            weight = 1.0
            if second:
                nxt = targets[start + q]
                while p < p_end and targets[p] < nxt:
                    p += 1
                adjacent = p < p_end and targets[p] == nxt
                far = not adjacent and nxt != prev
                g_prev, g_next = graph_of[prev], graph_of[nxt]
                different = g_prev != g_next and g_prev != 2 and g_next != 2
                weight = (depth if far else 1.0 - depth) * (cross if different else 1.0 - cross)
            running += weight
            sums[q] = running
        draw = low + draws[w] * (running - low)
        chosen = degree - 1  # numpy's search clipped to the walker's last edge
        for q in range(degree):
            if sums[q] > draw:
                chosen = q
                break
        next_entities[w] = targets[start + chosen]
        next_relations[w] = relations[start + chosen]


def _load() -> None:
    """Compile (or load from numba's cache) the kernel now, not inside a timed training run."""
    one = np.zeros(1, np.int64)
    graph = (np.array([0, 1], np.int64), one, one, one)
    step_walkers(graph, one, one, (0.5, 0.5), np.zeros(1), (np.empty(1, np.int64), np.empty(1, np.int64)))


_load()
