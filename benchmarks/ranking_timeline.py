"""Benchmark: where the ranking engine's CPU workers spend and lose their time, by thread count (issue #36, item 1).

On FB15k-237 test (both sides, filtered, top-10 lists), untrained DistMult and ComplEx of 200 dimensions, on the CPU
with each thread count of ``--threads``: one run of :func:`kgeval.lp.ranking.rank_lp` (after two warm-ups) with a
timestamp at both ends of every call of

* ``block``: a worker's whole block (:meth:`kgeval.lp.engine.cpu_blocks._BlockReduction.reduce_block`), and inside it
  ``products`` (the block's scores: the matrix product and the Python around it) and ``kernel`` (the compiled
  reduction, :func:`kgeval.lp.engine.block_kernels.reduce_rows`); ``glue`` is the rest of the block;
* ``prepare``: the main thread's preparation of a batch (the scorer's query vectors, ``Scorer.prepare``);
* ``wait``: the main thread waiting for a batch's blocks.

From the timestamps: the mean seconds of each per block, the main thread's totals, the seconds before the first block
starts and after the last one ends (the serial parts: setup, filters, ranks), and ``idle``: the workers' seconds
without a block between the first block's start and the last one's end (each worker's span minus its blocks). A
block that takes longer with more threads points to contention inside it (memory, the GIL around each call that
releases it); idle workers point to a main thread that cannot keep them fed.

Usage::

    python benchmarks/ranking_timeline.py [--data-dir ../shared/data] [--threads 1 4 16] [--models DistMult]

Writes ``benchmarks/results/ranking_timeline.tsv`` (``--out``).
"""

from __future__ import annotations

import argparse
import collections
import functools
import logging
import os
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

import kgeval.lp.engine.block_kernels as block_kernels
import kgeval.lp.engine.cpu_blocks as cpu_blocks
import kgeval.lp.fast_scorers as fast_scorers
from kgeval.io import write_tsv
from kgeval.lp.ranking import rank_lp
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py)
from ranking import ROOT, fb15k237_test, untrained_model  # noqa: E402  (ranking.py)

#: (label, thread id, start, end) of every timed call
Events = list[tuple[str, int, float, float]]


def recorded(events: Events, label: str, function):
    """``function`` that appends its (label, thread, start, end) to ``events``."""

    @functools.wraps(function)
    def call(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            events.append((label, threading.get_ident(), start, time.perf_counter()))  # list.append: atomic

    return call


def timeline(engine, events: Events) -> tuple[float, float]:
    """Run ``engine()`` with its blocks, kernels, products, preparations and waits recorded; return its start, end."""
    reduction = cpu_blocks._BlockReduction
    saved_init, saved_block = reduction.__init__, reduction.reduce_block
    saved_kernel, saved_reduce_cpu = block_kernels.reduce_rows, cpu_blocks.reduce_cpu
    saved_prepare = fast_scorers._ERScorer.prepare

    def init(self, block_scores, *args, **kwargs):
        saved_init(self, recorded(events, "products", block_scores), *args, **kwargs)

    def reduce_cpu(*args, **kwargs):
        return recorded(events, "wait", saved_reduce_cpu(*args, **kwargs))

    reduction.__init__ = init
    reduction.reduce_block = recorded(events, "block", saved_block)
    block_kernels.reduce_rows = recorded(events, "kernel", saved_kernel)
    fast_scorers._ERScorer.prepare = recorded(events, "prepare", saved_prepare)
    import kgeval.lp.engine.batches as batches

    batches.reduce_cpu = reduce_cpu
    try:
        start = time.perf_counter()
        engine()
        return start, time.perf_counter()
    finally:
        reduction.__init__, reduction.reduce_block = saved_init, saved_block
        block_kernels.reduce_rows, batches.reduce_cpu = saved_kernel, saved_reduce_cpu
        fast_scorers._ERScorer.prepare = saved_prepare


def summary(events: Events, start: float, end: float) -> dict[str, float]:
    """Per-block means, the main thread's totals, the serial seconds and the workers' idle seconds."""
    frame = pd.DataFrame(events, columns=["label", "thread", "start", "end"])
    frame["seconds"] = frame["end"] - frame["start"]
    by = frame.groupby("label")["seconds"]
    blocks = frame[frame["label"] == "block"]
    n = len(blocks)
    out = {"wall": end - start, "blocks": float(n)}
    for label in ("block", "products", "kernel"):
        out[f"{label}_mean"] = float(by.sum().get(label, 0.0)) / max(n, 1)
    out["glue_mean"] = out["block_mean"] - out["products_mean"] - out["kernel_mean"]
    for label in ("prepare", "wait"):
        out[f"{label}_total"] = float(by.sum().get(label, 0.0))
    if n:
        first, last = blocks["start"].min(), blocks["end"].max()
        out["before_first_block"] = first - start
        out["after_last_block"] = end - last
        spans = blocks.groupby("thread").agg(lo=("start", "min"), hi=("end", "max"), busy=("seconds", "sum"))
        out["workers"] = float(len(spans))
        out["idle"] = float((spans["hi"] - spans["lo"] - spans["busy"]).sum())
        out["busy"] = float(spans["busy"].sum())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir", type=Path, default=Path(os.environ.get("KGEVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
    )
    parser.add_argument("--models", nargs="+", default=["DistMult", "ComplEx"])
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 4, 16])
    parser.add_argument("--out", type=Path, default=RESULTS / "ranking_timeline.tsv")
    args = parser.parse_args()
    logging.getLogger("pykeen").setLevel(logging.ERROR)
    train, triples, known, _ = fb15k237_test(args.data_dir)
    rows = []
    for name in args.models:
        model, _ = untrained_model(name, train, 200)
        for threads in args.threads:
            torch.set_num_threads(threads)

            def engine() -> dict:
                return rank_lp(model, triples, filter_triples=known, top_k=10, device="cpu")

            engine(), engine()  # warm-up: kernels, the layout chooser, the allocator
            events: Events = []
            values = summary(events, *timeline(engine, events))
            print(f"{name}, {threads} threads: " + ", ".join(f"{k} {v:.4g}" for k, v in values.items()), flush=True)
            rows += [dict(model=name, threads=threads, metric=k, seconds=v) for k, v in values.items()]
    table = stamp(pd.DataFrame(rows))
    write_tsv(table, args.out, sort_by=["model", "threads", "metric"])
    print(f"wrote {args.out}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
