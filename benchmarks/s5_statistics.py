"""Benchmark: S5's statistics pass, numpy against the compiled kernel (``kgeval.engine.calibration_stats_kernel``).

:meth:`kgeval.studies.s5.statistics.CalibrationData.add_negatives` folds every validation negative into the
sufficient statistics of the calibration fits (per gap between distinct positive scores: count, minimum, maximum;
per distinct positive score: tied negatives; the Platt histogram). Its time is ``t_stats``, most of ``t_A``, which
the paper compares with the ranking evaluation's ``t_LP``. This script times, on one thread, in alternating rounds
on the same inputs:

``numpy``
    the numpy pass (``CalibrationData.compiled = False``): a grid lookup, ``searchsorted`` near positives,
    ``bincount``, ``np.minimum.at``/``np.maximum.at`` and the histogram's passes, per chunk;
``compiled``
    the compiled pass as the pipeline runs it (each score once): numpy's sort of each chunk, then one merge of the
    sorted chunk with the positives and one pass over it for the histogram (``accumulate_sorted``);
``compiled_lookup``
    the compiled pass that chunks with counts take (here counts of one: the same statistics): one range pass, then
    per score a grid lookup and a short binary search for its gap (``accumulate``), without sorting;
``sort_only``
    numpy's sort of the same chunks alone, no statistics: the sorted pass's first step.

Inputs of FB15k-237's size: 17,535 validation positives, chunks of 1,000 score rows of 14,505 entities (float32, as
the scorer returns them, flattened as ``stream_calibration_data`` passes them), synthetic: positives ``N(2, 1)``,
negatives ``N(0, 1)``, both float32, and one negative in 100 equal to a positive score. The statistics of both
passes must be identical (counts, bit-equal minima and maxima, histogram; the script stops otherwise).

Run: ``python benchmarks/s5_statistics.py [--chunks 3] [--repeats 3]``; prints the figures and appends to
``benchmarks/results/s5_statistics.tsv``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from kgeval.io import read_tsv, write_tsv
from kgeval.studies.s5.statistics import CalibrationData
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

PASSES = ("numpy", "compiled", "compiled_lookup", "sort_only")
FIELDS = ("tie_counts", "gap_counts", "gap_min", "gap_max")


def inputs(positives: int, rows: int, entities: int, chunks: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Positive scores (float64 of float32 values) and ``chunks`` flat float32 chunks of ``rows * entities``."""
    rng = np.random.default_rng(0)
    pos = rng.normal(2.0, 1.0, positives).astype(np.float32)
    out = []
    for _ in range(chunks):
        chunk = rng.standard_normal(rows * entities, dtype=np.float32)
        tied = rng.random(chunk.size) < 0.01
        chunk[tied] = rng.choice(pos, int(tied.sum()))
        out.append(chunk)
    return pos.astype(np.float64), out


def fold(
    pos: np.ndarray, chunks: list[np.ndarray], compiled: bool, ones: np.ndarray | None = None
) -> tuple[CalibrationData, float, float]:
    """The statistics of all chunks (each score counted ``ones`` times if given), with the wall and CPU seconds of
    the ``add_negatives`` calls."""
    data = CalibrationData(pos)
    data.compiled = compiled
    wall, cpu = time.perf_counter(), time.process_time()
    for chunk in chunks:
        data.add_negatives(chunk, ones)
    return data, time.perf_counter() - wall, time.process_time() - cpu


def sort_only(chunks: list[np.ndarray]) -> tuple[None, float, float]:
    """numpy's sort of every chunk, in the pieces ``add_negatives`` processes (``max_chunk``)."""
    step = CalibrationData.max_chunk
    wall, cpu = time.perf_counter(), time.process_time()
    for chunk in chunks:
        for start in range(0, chunk.size, step):
            np.sort(chunk[start : start + step])
    return None, time.perf_counter() - wall, time.process_time() - cpu


def identical(a: CalibrationData, b: CalibrationData) -> bool:
    """The same statistics, bit for bit."""
    same = all(np.array_equal(getattr(a, f).view(np.int64), getattr(b, f).view(np.int64)) for f in FIELDS)
    hist = (a.histogram.lo, a.histogram.width) == (b.histogram.lo, b.histogram.width)
    return same and hist and np.array_equal(a.histogram.counts, b.histogram.counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positives", type=int, default=17535, help="validation positives (FB15k-237)")
    parser.add_argument("--entities", type=int, default=14505, help="scores per row (FB15k-237's entities)")
    parser.add_argument("--rows", type=int, default=1000, help="score rows per chunk")
    parser.add_argument("--chunks", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "s5_statistics.tsv")
    args = parser.parse_args()

    pos, chunks = inputs(args.positives, args.rows, args.entities, args.chunks)
    negatives = sum(c.size for c in chunks)
    ones = np.ones(args.rows * args.entities, dtype=np.int64)
    fold(pos, [chunks[0][:1000]], True)  # numba and the kernel load outside the clock
    runs = {
        "numpy": lambda: fold(pos, chunks, False),
        "compiled": lambda: fold(pos, chunks, True),
        "compiled_lookup": lambda: fold(pos, chunks, True, ones),
        "sort_only": lambda: sort_only(chunks),
    }
    wall: dict[str, list[float]] = {p: [] for p in PASSES}
    cpu: dict[str, list[float]] = {p: [] for p in PASSES}
    same = True
    with threadpool_limits(1):
        for repeat in range(args.repeats):
            results = {}
            for name in PASSES:
                results[name], w, c = runs[name]()
                wall[name].append(w)
                cpu[name].append(c)
                print(f"repeat {repeat} {name}: {w / negatives * 1e9:.2f} ns per negative", flush=True)
            same &= identical(results["numpy"], results["compiled"])
            same &= identical(results["numpy"], results["compiled_lookup"])
    if not same:
        raise SystemExit("the compiled passes' statistics differ from the numpy pass's")
    ratios = {name: statistics.median(np.divide(wall[name], wall["numpy"])) for name in PASSES}
    rows = [
        dict(
            measured=name,
            ns_per_negative=round(min(wall[name]) / negatives * 1e9, 3),
            cpu_ns_per_negative=round(min(cpu[name]) / negatives * 1e9, 3),
            ratio_to_numpy_paired_median=round(ratios[name], 4),
            positives=args.positives,
            scores_per_chunk=args.rows * args.entities,
            chunks=args.chunks,
            repeats=args.repeats,
            identical=same,
            load_1min=round(os.getloadavg()[0], 2),
        )
        for name in PASSES
    ]
    table = stamp(pd.DataFrame(rows))
    print(table.to_string(index=False))
    if args.out.exists():
        table = pd.concat([read_tsv(args.out), table], ignore_index=True)
    write_tsv(table, args.out, sort_by=["date", "commit", "measured"])
    print(f"appended to {args.out}")


if __name__ == "__main__":
    main()
