"""Benchmark: S1's test-size sweep ranked from one distance matrix against every prefix ranked anew.

One job of S1's sweep (``compute_testsize_ranks``) ranks one GCN-Align model on the nested test prefixes of its pool
(the first t pairs, t = 1,000 ... 10,500 in the real and paper tiers), both directions. Side by side in one process,
alternating, on the same representations:

``per_prefix``
    the previous code: :func:`kgeval.ea.evaluation.rank_alignment` on each prefix (its L1 distances computed anew:
    the sum of t^2 over the sizes, 4.5 times the largest prefix's at the paper's sizes);
``nested``
    the current one: :func:`kgeval.ea.evaluation.rank_alignment_nested`, the largest prefix's distance matrix once,
    every prefix ranked from its top-left block.

The representations are random (the cost does not depend on training) with DBP15k zh-en's sizes (19,388 and 19,572
entities, a pool of 10,500 pairs) and the real tier's 64 dimensions (``--dim``); every rank and score of the two is
compared. Run: ``python benchmarks/testsize_sweep.py [--threads 1] [--repeats 3]``; writes
``benchmarks/results/testsize_sweep.tsv``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd
import torch

from kgeval.ea.evaluation import EA_SIDES, RANK_COLUMNS, rank_alignment, rank_alignment_nested
from kgeval.io import write_tsv
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

#: the sweep's test sizes in config/real.yaml and config/paper.yaml
SIZES = (1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000, 10500)


def per_prefix(left, right, pool, sizes, budget):
    """The previous sweep: every prefix ranked on its own."""
    return {t: rank_alignment(left, right, pool[:t], budget) for t in sizes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the sweep's rule has one)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--memory-budget-mb", type=float, default=512.0)
    parser.add_argument("--out", default=str(RESULTS / "testsize_sweep.tsv"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(0)
    left, right = torch.randn(19388, args.dim, generator=gen), torch.randn(19572, args.dim, generator=gen)
    pool = np.stack([torch.randperm(19388, generator=gen)[:10500].numpy(),
                     torch.randperm(19572, generator=gen)[:10500].numpy()], axis=1)
    functions = {"per_prefix": per_prefix, "nested": rank_alignment_nested}
    best: dict[str, tuple[float, float]] = {}
    results = {}
    for repeat in range(args.repeats):
        for name, function in functions.items():
            wall, cpu = time.perf_counter(), time.process_time()
            results[name] = function(left, right, pool, SIZES, args.memory_budget_mb)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[name] = min(best.get(name, (wall, cpu)), (wall, cpu))
            print(f"repeat {repeat} {name}: {wall:.2f}s wall, {cpu:.2f}s CPU", flush=True)
    identical = all(
        np.array_equal(getattr(results["nested"][t][side], column), getattr(results["per_prefix"][t][side], column))
        for t in SIZES
        for side in EA_SIDES
        for column in RANK_COLUMNS
    )
    ratio = best["per_prefix"][0] / best["nested"][0]
    print(f"per_prefix {best['per_prefix'][0]:.2f}s, nested {best['nested'][0]:.2f}s (fastest of {args.repeats}): "
          f"x{ratio:.2f}; ranks and scores identical: {identical}")
    table = pd.DataFrame(
        [
            {"method": name, "wall_s": wall, "cpu_s": cpu, "sizes": len(SIZES), "largest": max(SIZES),
             "dim": args.dim, "threads": args.threads, "speedup_over_per_prefix": best["per_prefix"][0] / wall,
             "identical_ranks_and_scores": identical, "load_1min": os.getloadavg()[0]}
            for name, (wall, cpu) in best.items()
        ]
    )
    write_tsv(stamp(table), args.out, sort_by=["method"])
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
