"""Benchmark: ranking with L1 distances, ``torch.cdist(p=1)`` against the compiled kernel of ``kgeval.engine.l1``.

The real tier ranks with L1 distances in S3's GCN-Align and RDGCN jobs (``evaluate_s3_model``,
``evaluate_s3_strength``: every test mapping against every entity of the other graph, one thread per job), S1's
test-size sweeps (``compute_testsize_ranks``) and TransE with ``scoring_fct_norm: 1`` (``compute_ranks``). Before,
each went through ``torch.cdist``, which computes one pair at a time in a scalar loop; now through
:class:`kgeval.engine.l1.L1Candidates`, the same float32 sums in the same order, vectorized over candidates.

For each shape this script ranks random query rows against random candidates with the engine
(:func:`kgeval.lp.ranking.rank_from_score_fn`), once with each score function, alternating, and compares every
rank and score (they must be equal). Shapes: the S3 pair DBP15k fr-en (19,661 candidates) at 64 dims (GCN-Align's
in ``config/real.yaml``) and 128 dims, and FB15k-237's 14,505 entities at TransE's 100.

Run: ``python benchmarks/l1_distances.py [--queries 4000] [--repeats 3] [--threads 1]``; prints the figures and
appends to ``benchmarks/results/l1_distances.tsv``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from kgeval.engine.l1 import L1Candidates
from kgeval.io import read_tsv, write_tsv
from kgeval.lp.ranking import rank_from_score_fn
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

#: (name, candidates, dims)
SHAPES = (("dbp15k_fr_en_gcn_align", 19661, 64), ("dbp15k_fr_en_128", 19661, 128), ("fb15k237_transe", 14505, 100))


def score_fns(queries: torch.Tensor, candidates: torch.Tensor) -> dict[str, object]:
    """The two score functions: ``torch.cdist`` (before) and the compiled kernel (now)."""
    l1 = L1Candidates(candidates)
    return {
        "torch_cdist": lambda rows: torch.cdist(queries[rows], candidates, p=1).neg_(),
        "compiled": lambda rows: l1.distances(queries[rows]).neg_(),
    }


def measure(name: str, num_candidates: int, dims: int, args: argparse.Namespace) -> dict[str, object]:
    """Paired timings of one shape; raises if any rank or score differs."""
    generator = torch.Generator().manual_seed(0)
    queries = torch.randn((args.queries, dims), generator=generator)
    candidates = torch.randn((num_candidates, dims), generator=generator)
    true = torch.randint(num_candidates, (args.queries,), generator=generator).numpy()
    seconds: dict[str, list[float]] = {"torch_cdist": [], "compiled": []}
    results = {}
    for _ in range(args.repeats):
        for method, fn in score_fns(queries, candidates).items():
            start = time.perf_counter()
            results[method] = rank_from_score_fn(fn, true_candidates=true, num_candidates_total=num_candidates)
            seconds[method].append(time.perf_counter() - start)
    before, now = results["torch_cdist"], results["compiled"]
    for column in ("rank_optimistic", "rank_pessimistic", "rank_realistic", "score"):
        if not np.array_equal(np.asarray(getattr(before, column)), np.asarray(getattr(now, column))):
            raise AssertionError(f"{name}: {column} differs between torch.cdist and the compiled kernel")
    ratios = [n / b for n, b in zip(seconds["compiled"], seconds["torch_cdist"])]
    row = {
        "shape": name, "queries": args.queries, "candidates": num_candidates, "dims": dims, "threads": args.threads,
        "repeats": args.repeats, "torch_cdist_seconds": round(statistics.median(seconds["torch_cdist"]), 4),
        "compiled_seconds": round(statistics.median(seconds["compiled"]), 4),
        "ratio": round(statistics.median(ratios), 4), "identical": True,
    }
    print(row)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS / "l1_distances.tsv")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    table = stamp(pd.DataFrame([measure(name, c, d, args) for name, c, d in SHAPES]))
    if args.out.exists():
        table = pd.concat([read_tsv(args.out), table], ignore_index=True)
    write_tsv(table, args.out, sort_by=["date", "commit", "threads", "shape"])


if __name__ == "__main__":
    main()
