"""Benchmark: the time and memory of full ranking against sampled evaluation as the number of entities grows.

Where does full, filtered ranking stop being affordable on a CPU? For each number of entities E of ``--entities``
(up to ogbl-wikikg2's 2.5 million), a TransE model with random embeddings (``--dim`` dimensions, ogbl-wikikg2's 535
relations; scores do not depend on training, costs do not either) and random training triples as the filter
(``--filter-per-entity`` per entity). On the same ``--queries`` test triples, side by side:

* ``full``: kgeval's ranking engine (:func:`kgeval.lp.ranking.rank_lp`), both sides, filtered (the filter index built
  once, untimed), every entity scored;
* ``sampled``: OGB's protocol as a dataset under ``ranking.candidates`` runs it
  (:func:`kgeval.lp.sampled.counts.sampled_counts`): ``--k`` filtered candidates per query drawn uniformly (cost
  O(k + known answers) per query), scored with the model's ``score_hrt`` and counted against the true triple's score;
* ``static``: the same with Cornell et al.'s static sampler (the relation's training range or domain; cost O(pool)).

Each time is the fastest of ``--repeats`` runs after one warm-up. ``seconds_per_query`` is extrapolated to a whole
test set (``--test-triples``, ogbl-wikikg2's 598,543, two queries each): ``hours_full_test`` and
``hours_sampled_test``. ``embedding_mb`` is the entity table's size; ``rss_mb`` the process's peak resident memory
after the step (it only grows: read its increase).

Usage::

    python benchmarks/s6_cost_curve.py [--entities 10000 100000 1000000 2500000] [--dim 100] [--k 500]

Writes ``benchmarks/results/s6_cost_curve.tsv``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from host import RESULTS, host_columns  # noqa: E402  (benchmarks/host.py)

from kgeval.io import write_tsv  # noqa: E402
from kgeval.lp.filtering import FilterIndex  # noqa: E402
from kgeval.lp.ranking import rank_lp  # noqa: E402
from kgeval.lp.sampled.counts import SampledCandidates, sampled_counts  # noqa: E402
from kgeval.lp.sampled.samplers import RelationPositions  # noqa: E402

RELATIONS = 535  # ogbl-wikikg2
WIKIKG2_TEST = 598_543


def _model(num_entities: int, dim: int, seed: int):
    from pykeen.models import TransE
    from pykeen.triples import CoreTriplesFactory

    factory = CoreTriplesFactory.create(
        mapped_triples=torch.zeros((1, 3), dtype=torch.long), num_entities=num_entities, num_relations=RELATIONS
    )
    return TransE(triples_factory=factory, embedding_dim=dim, random_seed=seed)


def _triples(rng: np.random.Generator, count: int, num_entities: int) -> np.ndarray:
    return np.stack(
        [rng.integers(0, num_entities, count), rng.integers(0, RELATIONS, count), rng.integers(0, num_entities, count)],
        axis=1,
    )


def _sampled(model, test: np.ndarray, index: FilterIndex, positions: RelationPositions, sampler: str, k: int) -> None:
    with torch.no_grad():
        sampled_counts(model, test, index, positions, SampledCandidates(sampler, k, 0), ("benchmark", "test"))


def _fastest(run, repeats: int) -> float:
    run()  # warm-up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def measure(num_entities: int, args: argparse.Namespace) -> dict:
    rng = np.random.default_rng(args.seed)
    model = _model(num_entities, args.dim, args.seed)
    known = _triples(rng, args.filter_per_entity * num_entities, num_entities)
    test = _triples(rng, args.queries, num_entities)
    index = FilterIndex([known, test], num_entities=num_entities, num_relations=RELATIONS)  # built once, untimed
    positions = RelationPositions.fit(known, num_entities, RELATIONS)  # the guided sampler's pools, untimed
    full = _fastest(lambda: rank_lp(model, torch.as_tensor(test), filter_triples=index), args.repeats)
    sampled = _fastest(lambda: _sampled(model, test, index, positions, "uniform", args.k), args.repeats)
    static = _fastest(lambda: _sampled(model, test, index, positions, "static", args.k), args.repeats)
    queries = 2 * args.queries
    return {
        "entities": num_entities,
        "dim": args.dim,
        "k": args.k,
        "queries": queries,
        "seconds_full": full,
        "seconds_sampled": sampled,
        "ratio_full_to_sampled": full / sampled,
        "seconds_static": static,
        "ratio_full_to_static": full / static,
        "hours_full_test": full / queries * 2 * args.test_triples / 3600,
        "hours_sampled_test": sampled / queries * 2 * args.test_triples / 3600,
        "embedding_mb": num_entities * args.dim * 4 / 2**20,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entities", type=int, nargs="+", default=[10_000, 100_000, 1_000_000, 2_500_000])
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--k", type=int, default=500)
    parser.add_argument("--queries", type=int, default=64, help="test triples timed (two queries each)")
    parser.add_argument("--filter-per-entity", type=int, default=2)
    parser.add_argument("--test-triples", type=int, default=WIKIKG2_TEST)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "s6_cost_curve.tsv")
    args = parser.parse_args()
    rows = []
    for num_entities in args.entities:
        rows.append({**measure(num_entities, args), **host_columns()})
        print(pd.DataFrame(rows[-1:]).to_string(index=False), flush=True)
    write_tsv(pd.DataFrame(rows), args.out, sort_by=["entities"])


if __name__ == "__main__":
    main()
