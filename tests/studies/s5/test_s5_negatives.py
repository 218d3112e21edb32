"""The negative strategies of paper 004 (Eq. 2, 12-15) against a literal brute-force reading on tiny graphs."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from kgeval.studies.s5.negatives import STRATEGIES, NegativeSet, candidate_masks, entity_roles, queries_per_batch


def _brute_force(positives, graph, num_entities, strategy):
    """Every negative of every positive and side, straight from the equations, as a Counter of triples."""
    graph_set = {tuple(t) for t in graph.tolist()}
    subjects = {s for s, _, _ in graph_set}
    objects = {o for _, _, o in graph_set}

    def subjects_of(p):
        return {s for s, q, _ in graph_set if q == p}

    def objects_of(p):
        return {o for _, q, o in graph_set if q == p}

    def head_ok(e, p):
        return {
            "lcwa": True,
            "gb": e not in subjects,
            "tc": e in subjects_of(p),
            "lc": e in objects_of(p) - subjects_of(p),
        }

    def tail_ok(e, p):
        return {
            "lcwa": True,
            "gb": e not in objects,
            "tc": e in objects_of(p),
            "lc": e in subjects_of(p) - objects_of(p),
        }

    def allowed(ok):
        if strategy == "gb+lc":
            return ok["gb"] or ok["lc"]
        return ok[strategy]

    negatives = Counter()
    for s, p, o in positives.tolist():
        for e in range(num_entities):
            if (e, p, o) not in graph_set and allowed(head_ok(e, p)):
                negatives[(e, p, o)] += 1
            if (s, p, e) not in graph_set and allowed(tail_ok(e, p)):
                negatives[(s, p, e)] += 1
    return negatives


def _random_graph(seed: int, num_entities: int = 9, num_relations: int = 3, num_triples: int = 30):
    rng = np.random.default_rng(seed)
    triples = np.stack(
        [
            rng.integers(0, num_entities, num_triples),
            rng.integers(0, num_relations, num_triples),
            # tails from a smaller range so that some entities are never objects (GB, LC become non-empty)
            rng.integers(0, num_entities - 2, num_triples),
        ],
        axis=1,
    )
    graph = np.unique(triples, axis=0)
    # positives: a random subset, with repeated queries on both sides
    positives = graph[rng.permutation(len(graph))[: len(graph) // 2]]
    return graph, positives


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("union", [True, False])
def test_negatives_match_brute_force(seed, strategy, union):
    num_entities, num_relations = 9, 3
    graph, positives = _random_graph(seed, num_entities, num_relations)
    expected = _brute_force(positives, graph, num_entities, strategy)
    if union:
        expected = Counter(set(expected))
    negatives = NegativeSet(positives, graph, num_entities, num_relations, union=union)
    found = Counter(tuple(t) for t in negatives.enumerate(strategy).tolist())
    assert found == expected
    assert negatives.count(strategy) == sum(expected.values())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("union", [True, False])
def test_excluded_set_leaves_exactly_the_other_set_s_negatives_out(seed, strategy, union):
    """The held-out share's negatives (``exclude``: the fitted share's set) are the brute-force negatives of the
    held-out positives less every brute-force negative of the fitted ones: disjoint, nothing else lost, counted."""
    num_entities, num_relations = 9, 3
    graph, positives = _random_graph(seed, num_entities, num_relations)
    fitted, held = positives[: len(positives) // 2], positives[len(positives) // 2 :]
    fit = NegativeSet(fitted, graph, num_entities, num_relations, union=union)
    negatives = NegativeSet(held, graph, num_entities, num_relations, union=union, exclude=fit)
    fit_set = set(_brute_force(fitted, graph, num_entities, strategy))
    expected = Counter({t: n for t, n in _brute_force(held, graph, num_entities, strategy).items() if t not in fit_set})
    if union:
        expected = Counter(set(expected))
    found = Counter(tuple(t) for t in negatives.enumerate(strategy).tolist())
    assert found == expected and not set(found) & {tuple(t) for t in fit.enumerate(strategy).tolist()}
    assert negatives.count(strategy) == sum(expected.values())
    per_query = negatives.count_per_query(strategy)
    for side in ("head", "tail"):
        seen = [n for b in negatives.batches(2) if b.side == side for n in b.negatives(negatives.masks(strategy)).sum(1)]
        np.testing.assert_array_equal(per_query[side], seen)


def test_excluded_set_must_share_the_graph():
    graph, positives = _random_graph(1)
    other = NegativeSet(positives, graph[:-1] if tuple(graph[-1]) not in map(tuple, positives) else graph[1:], 9, 3)
    with pytest.raises(ValueError, match="same filter graph"):
        NegativeSet(positives[:2], graph, 9, 3, exclude=other)


def test_union_removes_cross_side_duplicates():
    # (1, 0, 3) is a tail-side negative of (1, 0, 2) and a head-side negative of (0, 0, 3)
    graph = np.array([[0, 0, 3], [1, 0, 2]])
    union = NegativeSet(graph, graph, num_entities=4, num_relations=1, union=True)
    multiset = NegativeSet(graph, graph, num_entities=4, num_relations=1, union=False)
    assert multiset.count("lcwa") == 2 * (4 - 1) * 2
    assert union.count("lcwa") == multiset.count("lcwa") - 2  # (1, 0, 3) and (0, 0, 2) are shared
    assert len(np.unique(union.enumerate("lcwa"), axis=0)) == union.count("lcwa")


def test_counts_per_query_match_masks_for_all_batch_sizes():
    graph, positives = _random_graph(11)
    negatives = NegativeSet(positives, graph, 9, 3, union=True)
    for strategy in STRATEGIES:
        per_query = negatives.count_per_query(strategy)
        for batch_size in (1, 2, 1000):
            seen = {"head": [], "tail": []}
            for batch in negatives.batches(batch_size):
                seen[batch.side].extend(batch.negatives(negatives.masks(strategy)).sum(axis=1).tolist())
            for side in ("head", "tail"):
                np.testing.assert_array_equal(per_query[side], seen[side])


def test_restricted_strategies_are_subsets_of_lcwa():
    graph, positives = _random_graph(3)
    roles = entity_roles(graph, 9, 3)
    lcwa = candidate_masks("lcwa", roles)
    for strategy in ("gb", "tc", "lc", "gb+lc"):
        masks = candidate_masks(strategy, roles)
        assert not (masks.head & ~lcwa.head).any() and not (masks.tail & ~lcwa.tail).any()
    lc, tc = candidate_masks("lc", roles), candidate_masks("tc", roles)
    # LC (object but never subject of p) and TC (subject of p) are disjoint on the head side
    assert not (lc.head & tc.head).any() and not (lc.tail & tc.tail).any()


def test_positive_outside_graph_is_rejected():
    graph = np.array([[0, 0, 1]])
    with pytest.raises(ValueError, match="not in the filter graph"):
        NegativeSet(np.array([[1, 0, 0]]), graph, 2, 1)


def test_unknown_strategy_is_rejected():
    graph = np.array([[0, 0, 1]])
    with pytest.raises(ValueError, match="unknown negative strategy"):
        NegativeSet(graph, graph, 2, 1).count("xyz")


def test_queries_per_batch_respects_budget():
    assert queries_per_batch(1000, memory_budget_mb=1) == 2**20 // (1000 * 24)
    assert queries_per_batch(10**9, memory_budget_mb=1) == 1
