"""Benchmark: bootstrap intervals of every metric and paired model comparisons at FB15k-237 test-set size.

1000 resamples of 40,932 queries (20,466 test triples x 2 sides) of synthetic ranks with FB15k-237-like candidate
counts (14,505 entities, minus a heavy-tailed number of filtered known answers per query) for 6 models of different
skill: the wall time of the intervals of every metric of every side and rank type for each model
(:func:`kgeval.uncertainty.bootstrap_metrics.metrics_with_intervals`: PyKEEN's point values plus the vectorized
resamples), and of the paired comparisons of the 15 pairs (:func:`kgeval.uncertainty.model_comparisons.compare_models`:
paired intervals and sign-flip tests with 1000 sign vectors).

Run: ``python benchmarks/bootstrap.py [--resamples 1000] [--models 6]``; prints the timings and writes them to
``benchmarks/results/bootstrap.tsv``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from kgeval.io import write_tsv
from kgeval.uncertainty.bootstrap_metrics import BootstrapSettings, metrics_with_intervals
from kgeval.uncertainty.model_comparisons import compare_models
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

ENTITIES = 14505
TRIPLES = 20466


def queries(rng: np.random.Generator) -> pd.DataFrame:
    """The query keys and filtered candidate counts shared by every model."""
    known = np.minimum(rng.zipf(1.5, 2 * TRIPLES), ENTITIES - 1)  # filtered answers other than the true one
    return pd.DataFrame(
        {
            "head": np.tile(rng.integers(0, ENTITIES, TRIPLES), 2).astype(str),
            "relation": np.tile(rng.integers(0, 237, TRIPLES), 2).astype(str),
            "tail": np.tile(rng.integers(0, ENTITIES, TRIPLES), 2).astype(str),
            "side": np.repeat(["head", "tail"], TRIPLES),
            "num_candidates": ENTITIES - known,
        }
    )


def model_ranks(base: pd.DataFrame, skill: float, rng: np.random.Generator) -> pd.DataFrame:
    """Ranks of a model: ``ceil(N * U^skill)`` (larger skill, better ranks), with a few ties."""
    nc = base["num_candidates"].to_numpy()
    optimistic = np.maximum(1, np.ceil(nc * rng.random(nc.size) ** skill)).astype(float)
    pessimistic = np.minimum(optimistic + rng.binomial(2, 0.05, nc.size), nc)
    return base.assign(
        rank_optimistic=optimistic,
        rank_realistic=0.5 * (optimistic + pessimistic),
        rank_pessimistic=pessimistic,
        rank_nondeterministic=optimistic,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--permutations", type=int, default=10000)  # the schema default of uncertainty.permutations
    parser.add_argument("--models", type=int, default=6)
    parser.add_argument("--out", default=str(RESULTS / "bootstrap.tsv"))
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    base = queries(rng)
    ranks = {f"m{i}": model_ranks(base, 6.0 + i, rng) for i in range(args.models)}
    settings = BootstrapSettings(args.resamples, args.permutations, 0.95, 0)
    metrics_with_intervals(ranks["m0"].head(200), "warmup", "test", BootstrapSettings(10, 10, 0.95, 0))  # imports
    rows = []
    start = time.perf_counter()
    for model, frame in ranks.items():
        t0 = time.perf_counter()
        table = metrics_with_intervals(frame, "fb15k237_like", "test", settings)
        seconds = time.perf_counter() - t0
        mrr = table[(table.side == "both") & (table.rank_type == "realistic") & (table.metric == "mrr")].iloc[0]
        print(f"{model}: {len(table)} intervals in {seconds:.1f} s (MRR {mrr.value:.3f} [{mrr.ci_low:.3f}, {mrr.ci_high:.3f}])")
        rows.append(("metric_intervals_one_model", model, len(table), seconds))
    rows.append(("metric_intervals_all_models", "all", args.models, time.perf_counter() - start))
    t0 = time.perf_counter()
    comparisons = compare_models(ranks, "fb15k237_like", "test", settings)
    seconds = time.perf_counter() - t0
    print(f"comparisons: {len(comparisons)} rows ({args.models} models) in {seconds:.1f} s")
    rows.append(("model_comparisons", "all", len(comparisons), seconds))
    out = pd.DataFrame(rows, columns=["task", "model", "rows", "seconds"]).assign(
        queries=2 * TRIPLES, resamples=args.resamples, permutations=args.permutations, models=args.models,
        command=f"python benchmarks/bootstrap.py --resamples {args.resamples} --models {args.models}",
    )
    write_tsv(stamp(out), args.out, sort_by=[])


if __name__ == "__main__":
    main()
