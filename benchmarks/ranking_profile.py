"""Benchmark: where the ranking engine's time goes on a device, phase by phase (issue #36, items 1 and 2).

On FB15k-237 test (both sides, filtered with train + valid + test, top-10 lists), untrained DistMult and ComplEx of
200 dimensions, on ``--device`` (``cuda`` by default where there is one): :func:`kgeval.lp.ranking.rank_lp` end to
end, and inside it the wall seconds of each phase, timed by wrapping the engine's functions, with the device
synchronized before and after each (so that a phase is charged for its own kernels, not for the ones queued before
it):

* ``setup``: the scorer (the models' representations) and the filter index (:func:`kgeval.lp.lp_setup.lp_setup`);
* ``exclusions``: each row's filtered candidates and whether each true answer is among them (since 2026-11-27 found
  on a second thread, a side's beside the ranking of the side before: then partly inside the other phases' seconds);
* ``scores``: the score function on each batch (the matrix products);
* ``reduce``: the counts, ties and top-k lists of each batch (:func:`kgeval.lp.engine.batches._reduce_on_device`; on
  CPU the blocks are scored and reduced on worker threads, and that time is in ``other``);
* ``ranks``: the ranks and top-k lists in input order (``_Ranks.result``);
* ``other``: the rest of the wall time.

Then one more run under :mod:`torch.profiler` gives the device's own kernel time (``device_kernels``) and the
operators that took the most host time (printed). The products alone (``floor``: the unique rows' query vectors,
made beforehand, times all candidates, in the engine's batches, as ``benchmarks/ranking.py`` defines the floor) are
timed beside it. Timings are the fastest of ``--repeats`` runs after a warm-up.

Usage::

    python benchmarks/ranking_profile.py [--data-dir ../shared/data] [--device cuda] [--repeats 3]

Writes ``benchmarks/results/ranking_profile_<device>.tsv``.
"""

from __future__ import annotations

import argparse
import collections
import functools
import logging
import time
from pathlib import Path

import pandas as pd
import torch

import kgeval.lp.engine.batches as batches
import kgeval.lp.ranking as ranking
from kgeval.io import write_tsv
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py)
from ranking import ROOT, fb15k237_test, floor, floor_queries, timed, untrained_model  # noqa: E402  (ranking.py)

PHASES = ("setup", "exclusions", "scores", "reduce", "ranks")


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _timing(seconds: collections.Counter, label: str, function, device: torch.device):
    """``function`` that adds its wall seconds to ``seconds[label]``, the device synchronized on both ends."""

    @functools.wraps(function)
    def timed_call(*args, **kwargs):
        _synchronize(device)
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            _synchronize(device)
            seconds[label] += time.perf_counter() - start

    return timed_call


def phased_run(engine, seconds: collections.Counter, device: torch.device) -> float:
    """Run ``engine()`` with its phases timed into ``seconds``; return its wall seconds."""
    patches = [
        (ranking, "lp_setup", "setup"),
        (ranking.RowExclusions, "from_filter", "exclusions"),
        (ranking.FilterIndex, "contains", "exclusions"),
        (batches, "_reduce_on_device", "reduce"),
        (ranking._Ranks, "result", "ranks"),
    ]
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in patches]
    setup = ranking.lp_setup

    def setup_with_timed_scores(*args, **kwargs):
        result = setup(*args, **kwargs)
        scorer = result.scorer
        scorer.score = _timing(seconds, "scores", scorer.score, device)
        return result

    try:
        for owner, name, label in patches:
            original = setup_with_timed_scores if name == "lp_setup" else owner.__dict__[name]
            if isinstance(original, classmethod):
                setattr(owner, name, classmethod(_timing(seconds, label, original.__func__, device)))
            else:
                setattr(owner, name, _timing(seconds, label, original, device))
        _synchronize(device)
        start = time.perf_counter()
        engine()
        _synchronize(device)
        return time.perf_counter() - start
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def kernel_seconds(engine, device: torch.device) -> tuple[float, str]:
    """The device's kernel seconds in one run of ``engine()`` and the profiler's table of the top host operators."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as profiler:
        engine()
        _synchronize(device)
    events = profiler.key_averages()
    kernels = sum(getattr(e, "self_device_time_total", 0.0) for e in events) / 1e6 if device.type == "cuda" else 0.0
    table = events.table(sort_by="self_cpu_time_total", row_limit=20)
    if device.type == "cuda":
        table += "\n" + events.table(sort_by="self_device_time_total", row_limit=12)
    return kernels, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--models", nargs="+", default=["DistMult", "ComplEx"])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dim", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    logging.getLogger("pykeen").setLevel(logging.ERROR)
    device = torch.device(args.device)
    out = args.out or RESULTS / f"ranking_profile_{device.type}.tsv"
    train, triples, known, unique_rows = fb15k237_test(args.data_dir)
    E = train.num_entities
    rows = []
    for name in args.models:
        model, width = untrained_model(name, train, args.dim, device)

        def engine() -> dict:
            return ranking.rank_lp(model, triples, filter_triples=known, top_k=10, device=device)

        engine()  # warm-up: kernels, allocator, numba's caches
        best: tuple[float, collections.Counter] | None = None
        for _ in range(args.repeats):
            seconds: collections.Counter = collections.Counter()
            wall = phased_run(engine, seconds, device)
            if best is None or wall < best[0]:
                best = (wall, seconds)
        wall, seconds = best
        candidates_t = torch.randn(E, width, generator=torch.Generator().manual_seed(1)).t().contiguous().to(device)
        queries = floor_queries(unique_rows, width, device)
        batch = batches.rows_per_batch(E, device=device)

        def products() -> None:
            floor(queries, candidates_t, batch)
            _synchronize(device)

        floor_wall = min(timed(products)[1] for _ in range(args.repeats))
        kernels, table = kernel_seconds(engine, device)
        print(f"{name} on {device}: engine {wall:.3f}s, floor {floor_wall:.3f}s, device kernels {kernels:.3f}s")
        print(table, flush=True)
        phases = {phase: seconds[phase] for phase in PHASES}
        phases["other"] = wall - sum(phases.values())
        for phase, value in {**phases, "engine": wall, "floor": floor_wall, "device_kernels": kernels}.items():
            rows.append(dict(model=name, device=str(device), phase=phase, seconds=value, share_of_engine=value / wall))
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    write_tsv(stamp(table), out, sort_by=["model", "phase"])
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
