"""Benchmark: where the ranking engine's time goes on one thread, phase by phase (issue #36, item 1).

On FB15k-237 test (both sides, filtered, top-10 lists), untrained DistMult and ComplEx of 200 dimensions, on the CPU
with one torch thread (the blocks are then reduced in the calling thread, one after the other): the engine end to end,
and inside it the seconds of each phase of the block reduction (:mod:`kgeval.lp.engine.cpu_blocks`), timed by
wrapping its functions: the block's scores (the matrix products), the compiled kernel that does the rest of the
block (``reduce_rows``: true scores, filters, counts and ties, top-k lists), and what is left of each block (torch's
top-k of rows holding a NaN, the glue); ``outside_blocks`` is the rest of the run (filter index, batches, ranks). The floor of ``benchmarks/ranking.py`` (the unique rows' products in large
batches) is measured beside it. Timings of the second of two runs (the first warms up). Rows are appended to the
output, so that each revision's phases stay beside the earlier ones (before the compiled kernels the counts, the
copies of rows several queries share, and the ties were separate phases; until the kernel fused them, the counts
and the top-k lists were two phases, ``counts`` and ``topk``).

Usage::

    python benchmarks/ranking_phases.py [--data-dir ../shared/data] [--models DistMult ComplEx]

Appends to ``benchmarks/results/ranking_phases.tsv``.
"""

from __future__ import annotations

import argparse
import collections
import functools
import logging
import os
import time
from pathlib import Path

import pandas as pd
import torch

import kgeval.lp.engine.block_kernels as block_kernels
import kgeval.lp.engine.cpu_blocks as cpu_blocks
from kgeval.io import write_tsv
from kgeval.lp.engine.batches import rows_per_batch
from kgeval.lp.ranking import rank_lp
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py)
from ranking import ROOT, fb15k237_test, floor, floor_queries, timed, untrained_model  # noqa: E402  (ranking.py)


def timing(seconds: collections.Counter, label: str, function):
    """``function`` that adds its wall seconds to ``seconds[label]``."""

    @functools.wraps(function)
    def timed_call(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            seconds[label] += time.perf_counter() - start

    return timed_call


def phases(engine, seconds: collections.Counter) -> float:
    """Run ``engine()`` with the block reduction's phases timed into ``seconds``; return its wall seconds."""
    reduction = cpu_blocks._BlockReduction
    saved = {name: getattr(reduction, name) for name in ("__init__", "reduce_block")}
    saved_kernel = block_kernels.reduce_rows

    def init(self, block_scores, *args, **kwargs):
        saved["__init__"](self, timing(seconds, "products", block_scores), *args, **kwargs)

    reduction.__init__ = init
    reduction.reduce_block = timing(seconds, "blocks", saved["reduce_block"])
    block_kernels.reduce_rows = timing(seconds, "kernel", saved_kernel)
    try:
        start = time.perf_counter()
        engine()
        return time.perf_counter() - start
    finally:
        for name, function in saved.items():
            setattr(reduction, name, function)
        block_kernels.reduce_rows = saved_kernel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir", type=Path, default=Path(os.environ.get("KGEVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
    )
    parser.add_argument("--models", nargs="+", default=["DistMult", "ComplEx"])
    parser.add_argument("--memory-budget-mb", type=float, default=256.0)
    parser.add_argument("--out", type=Path, default=RESULTS / "ranking_phases.tsv")
    args = parser.parse_args()
    logging.getLogger("pykeen").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    train, triples, known, unique_rows = fb15k237_test(args.data_dir)
    E = train.num_entities
    rows = []
    for name in args.models:
        model, width = untrained_model(name, train, 200)

        def engine() -> dict:
            return rank_lp(model, triples, filter_triples=known, top_k=10, memory_budget_mb=args.memory_budget_mb,
                           device="cpu")

        seconds: collections.Counter = collections.Counter()
        phases(engine, seconds)  # warm-up
        seconds.clear()
        wall = phases(engine, seconds)
        candidates_t = torch.randn(E, width, generator=torch.Generator().manual_seed(1)).t().contiguous()
        queries = floor_queries(unique_rows, width)
        _, floor_wall, _ = timed(lambda: floor(queries, candidates_t, rows_per_batch(E, args.memory_budget_mb)))
        shares = {
            "engine": wall,
            "floor_unique_batches": floor_wall,
            "products": seconds["products"],
            "kernel": seconds["kernel"],
            "rest_of_blocks": seconds["blocks"] - seconds["products"] - seconds["kernel"],
            "outside_blocks": wall - seconds["blocks"],
        }
        for phase, value in shares.items():
            rows.append(dict(model=name, threads=1, phase=phase, seconds=value, share_of_engine=value / wall,
                             over_floor=value / floor_wall))
        print(f"{name}: " + ", ".join(f"{k} {v:.3f}s" for k, v in shares.items()), flush=True)
    table = stamp(pd.DataFrame(rows))
    print(table.to_string(index=False))
    if args.out.exists():
        table = pd.concat([pd.read_csv(args.out, sep="\t"), table], ignore_index=True)
    write_tsv(table, args.out, sort_by=["commit", "model", "phase"])
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
