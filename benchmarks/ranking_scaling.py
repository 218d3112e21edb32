"""Benchmark: where the ranking engine's cores idle, by thread count and block size (issue #36, item 1).

On FB15k-237 test (both sides, filtered, top-10 lists), untrained DistMult and ComplEx of 200 dimensions, on the CPU
(also where a GPU is present), in one process and side by side:

* for every thread count of ``--threads``: the engine (:func:`kgeval.lp.ranking.rank_lp`) with its default blocks,
  and the two floors of ``benchmarks/ranking.py`` (products of the unique score rows in large batches on all threads,
  ``floor_unique_batches``; in the engine's blocks, one thread per block, ``floor_unique_blocks``);
* at the largest thread count: the engine with every block size of ``--block-bytes``
  (:data:`kgeval.lp.engine.cpu_blocks.CPU_BLOCK_BYTES`); with Python's GIL switch interval at 0.1 ms instead of
  5 ms (``sys.setswitchinterval``: how long a thread that wants the GIL waits before it asks the holder to drop it);
  with batches of a 4 GiB memory budget instead of ``--memory-budget-mb`` (more blocks queued per batch); with one
  or three batches queued ahead (``lookahead_1``, ``lookahead_3``: whichever is not the default); with its workers
  pinned to one torch thread from their start (``pinned_workers``); and with each block's matrix product in one
  piece (``one_piece``, also with 16 MiB blocks) or in pieces of
  :data:`~kgeval.lp.engine.products.PIECE_COLUMNS` columns (``pieces``) instead of the layout the engine chose by
  timing both (:data:`~kgeval.lp.engine.products.LAYOUT`, printed).

Each engine run's ranks, scores and top-k lists must equal those of the default engine on all threads (the run stops
otherwise). ``busy_cores`` is CPU seconds over wall seconds: how many cores the process kept busy. The fastest of
``--repeats`` repetitions is kept.

Usage::

    python benchmarks/ranking_scaling.py [--data-dir ../shared/data] [--threads 1 2 4 8 16]
        [--block-bytes 2097152 4194304 16777216 33554432] [--repeats 2]

Writes ``benchmarks/results/ranking_scaling.tsv``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

import pandas as pd
import torch

import kgeval.lp.engine.batches as batches
import kgeval.lp.engine.cpu_blocks as cpu_blocks
import kgeval.lp.engine.products as products
from kgeval.io import write_tsv
from kgeval.lp.engine.batches import rows_per_batch
from kgeval.lp.ranking import rank_lp
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py)
from ranking import (  # noqa: E402  (benchmarks/ranking.py)
    ROOT,
    fb15k237_test,
    first_difference,
    floor,
    floor_blocks,
    floor_queries,
    timed,
    untrained_model,
)

default_pool = batches.worker_pool
default_lookahead = batches.LOOKAHEAD_BATCHES


def pinned_pool(threads: int, name: str = "kgeval", one_torch_thread: bool = False):
    """:func:`kgeval.runtime.workers.worker_pool` whose every worker runs torch (and the matrix library) on one
    thread from its start, whatever the engine asks (its fused path asks it itself since 8d59ef4)."""
    return default_pool(threads, name, one_torch_thread=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir", type=Path, default=Path(os.environ.get("KGEVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
    )
    parser.add_argument("--models", nargs="+", default=["DistMult", "ComplEx"])
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2, 4, 8, 16])
    parser.add_argument("--block-bytes", nargs="+", type=int, default=[2**21, 2**22, 2**24, 2**25])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--variants", nargs="+", help="only these variants at the largest thread count (and default)")
    parser.add_argument("--memory-budget-mb", type=float, default=256.0)
    parser.add_argument("--out", type=Path, default=RESULTS / "ranking_scaling.tsv")
    args = parser.parse_args()
    logging.getLogger("pykeen").setLevel(logging.ERROR)
    available = len(os.sched_getaffinity(0))
    threads = sorted({t for t in args.threads if t <= available}) or [available]
    train, triples, known, unique_rows = fb15k237_test(args.data_dir)
    E = train.num_entities
    default_block, default_switch = cpu_blocks.CPU_BLOCK_BYTES, sys.getswitchinterval()
    rows = []
    for name in args.models:
        model, width = untrained_model(name, train, 200)
        candidates_t = torch.randn(E, width, generator=torch.Generator().manual_seed(1)).t().contiguous()
        unique_queries = floor_queries(unique_rows, width)
        batch = rows_per_batch(E, args.memory_budget_mb)
        torch.set_num_threads(threads[-1])

        def engine(budget: float) -> dict:
            return rank_lp(model, triples, filter_triples=known, top_k=10, memory_budget_mb=budget, device="cpu")

        reference = engine(args.memory_budget_mb)

        top = threads[-1]
        budget = args.memory_budget_mb
        # (threads, variant, block bytes, GIL switch interval, memory budget, pinned workers, batches queued ahead)
        ahead = default_lookahead
        settings = [(t, "default", default_block, default_switch, budget, False, ahead) for t in threads]
        settings += [(top, "pinned_workers", default_block, default_switch, budget, True, ahead)]
        settings += [
            (top, f"block_{b}", b, default_switch, budget, False, ahead) for b in args.block_bytes if b != default_block
        ]
        settings += [(top, "switch_0.1ms", default_block, 1e-4, budget, False, ahead)]
        settings += [(top, "budget_4096mb", default_block, default_switch, 4096.0, False, ahead)]
        settings += [
            (top, f"lookahead_{n}", default_block, default_switch, budget, False, n) for n in (1, 3) if n != ahead
        ]
        # each block's product in one piece (kgeval.lp.engine.products.PIECE_COLUMNS), at the default and a 16 MiB block
        settings += [(top, "one_piece", default_block, default_switch, budget, False, ahead)]
        settings += [(top, "one_piece_block_16777216", 2**24, default_switch, budget, False, ahead)]
        settings += [(top, "pieces", default_block, default_switch, budget, False, ahead)]
        if args.variants:
            unknown = set(args.variants) - {setting[1] for setting in settings}
            if unknown:
                raise SystemExit(f"unknown --variants {sorted(unknown)}; known: {sorted({x[1] for x in settings})}")
            settings = [x for x in settings if x[1] == "default" or x[1] in args.variants]
        best: dict[tuple, tuple[float, float]] = {}
        for repeat in range(args.repeats):
            for t, variant, block_bytes, switch, budget, pin, lookahead in settings:
                torch.set_num_threads(t)
                cpu_blocks.CPU_BLOCK_BYTES = block_bytes
                sys.setswitchinterval(switch)
                batches.worker_pool = pinned_pool if pin else default_pool
                batches.LOOKAHEAD_BATCHES = lookahead
                products.LAYOUT = {"one_piece": "whole", "pieces": "pieces"}.get(variant.split("_block")[0], "auto")
                try:
                    result, wall, cpu = timed(lambda: engine(budget))
                finally:
                    cpu_blocks.CPU_BLOCK_BYTES, _ = default_block, sys.setswitchinterval(default_switch)
                    batches.worker_pool, batches.LOOKAHEAD_BATCHES = default_pool, default_lookahead
                    products.LAYOUT = "auto"
                if first_difference(result, reference) is not None:
                    raise SystemExit(f"{name}, {t} threads, {variant}: ranks, scores or top-k differ from the default")
                key = (t, "engine", variant, block_bytes)
                if key not in best or wall < best[key][0]:
                    best[key] = (wall, cpu)
                if variant == "default":
                    block = cpu_blocks.block_rows(E)
                    for method, function, at_once in (
                        ("floor_unique_batches", floor, batch), ("floor_unique_blocks", floor_blocks, block)
                    ):
                        _, wall, cpu = timed(lambda: function(unique_queries, candidates_t, at_once))
                        key = (t, method, "default", block_bytes)
                        if key not in best or wall < best[key][0]:
                            best[key] = (wall, cpu)
            print(f"{name} repeat {repeat} done; layouts chosen: {products._chooser.chosen}", flush=True)
        for (t, method, variant, block_bytes), (wall, cpu) in best.items():
            floor_wall = min(best[(t, m, "default", default_block)][0]
                             for m in ("floor_unique_batches", "floor_unique_blocks"))
            rows.append(dict(model=name, threads=t, method=method, variant=variant, block_bytes=block_bytes,
                             block_rows=max(1, block_bytes // (5 * E)), wall_s=wall, cpu_s=cpu,
                             busy_cores=cpu / wall, over_floor=wall / floor_wall))
        torch.set_num_threads(threads[-1])
    table = pd.DataFrame(rows)
    write_tsv(stamp(table), args.out, sort_by=["model", "threads", "method", "variant"])
    print(table[table.method == "engine"].to_string(index=False))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
