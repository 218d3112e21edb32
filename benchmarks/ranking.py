"""Benchmark: the ranking engine vs PyKEEN's RankBasedEvaluator vs the pure matrix-product floor.

On FB15k-237 test (both sides, filtered with train + valid + test), for untrained DistMult and ComplEx with 200
dimensions, side by side in one process:

* ``engine``: :func:`kgeval.lp.ranking.rank_lp` end to end (filter index, scorer, all four rank types, candidate
  counts, true scores, top-10 lists);
* ``floor_unique``: only the matrix products ``Q @ E^T`` for the score rows the engine needs (one per unique
  (anchor, relation), as the engine groups queries), the fastest of three ways: in batches of the unfused engine's
  size on all threads (``floor_unique_batches``), or in the engine's blocks of rows, one thread per block, on a pool
  of as many threads (``floor_unique_blocks``, with no wait between batches), or the same blocks each multiplied in
  pieces of columns as the engine multiplies them (``floor_unique_pieces``,
  :func:`~kgeval.lp.engine.products.addmm_in_pieces`); ``E^T`` is stored as the engine stores it, a C-contiguous (D, E)
  matrix;
* ``floor_all``: the same for one score row per query (the floor as stated in issue 8), in batches;
* ``evaluator``: ``RankBasedEvaluator.evaluate`` on a random subset of test triples, extrapolated linearly to
  the whole split (it is too slow to run in full here); its ranks on the subset are compared with the engine's, and
  each query whose ranks differ is checked against float64 scores
  (:func:`kgeval.lp.precision.disagreement_report`: a difference within float32 rounding is a near-tie,
  ``mismatched_near_ties`` of ``mismatched_queries``);
* ``blocks_one_read_pass`` (CPU only, not a floor): ``floor_unique_blocks`` with each block read once more right after
  its product, on the same worker. Every score must be read at least once to be counted, so no engine that reduces
  blocks of products can go below it: its ratio to ``floor_unique`` is the part of the goal that the reduction's own
  work may use.

Engine and floors are repeated and the fastest repetition is kept (the machine is shared); since a fast spell of
the machine may favour one of them, the median over repeats of the engine's time over the floor's, measured back to
back, is reported too (``engine_over_method_wall_paired_median``). Wall and CPU time
(all threads of the process) are both reported; the peak resident memory that the engine adds over the
process's baseline is sampled from ``/proc/self/statm``.

With ``--device cuda`` everything runs on the GPU: the engine with ``device="cuda"``, the floor as products in
the engine's GPU batches (``floor_unique_batches``; the one-thread-per-block floor is a CPU layout and is left out),
and the evaluator on the model moved to the GPU; every timing waits for the GPU to finish, and the peak GPU memory
that the engine allocates is reported instead of resident memory.

With ``--baseline REV`` the engine of a git revision (its ``src/``, extracted with ``git archive`` and imported beside
this tree's) also runs in every repeat, right before this tree's, and the two must give the same ranks, scores and
top-k lists: a side-by-side A/B of an engine change (row ``engine_baseline``).

Usage::

    python benchmarks/ranking.py [--data-dir ../shared/data] [--models DistMult ComplEx] [--subset 1000]
        [--baseline a7685bd] [--device cuda]

Writes ``benchmarks/results/ranking.tsv``.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import logging
import os
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from io import BytesIO
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from pykeen.evaluation import RankBasedEvaluator
from pykeen.models import model_resolver
from pykeen.triples import TriplesFactory

from kgeval.io import write_tsv
from kgeval.engine.memory import reuse_freed_memory
from kgeval.runtime.workers import pin_torch_to_one_thread
from kgeval.lp.engine.batches import rows_per_batch
from kgeval.lp.engine.cpu_blocks import block_rows
from kgeval.lp.precision import disagreement_report
from kgeval.lp.ranking import rank_lp
from kgeval.lp.engine.products import addmm_in_pieces, single_threaded
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

ROOT = Path(__file__).resolve().parents[1]
#: issue 15's goal for the engine's time over the unique-row matrix-product floor
GOAL_OVER_FLOOR = 1.25


class PeakRSS:
    """Sample this process's resident memory in a background thread; report the peak above the start value."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.page = os.sysconf("SC_PAGE_SIZE")

    def _rss(self) -> int:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * self.page

    def __enter__(self) -> PeakRSS:
        self.start = self.peak = self._rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._rss())
            time.sleep(self.interval)

    def __exit__(self, *args) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss())

    @property
    def delta_mb(self) -> float:
        return (self.peak - self.start) / 2**20


def synchronize() -> None:
    """Wait for the GPU's queued work, if a GPU is in use (a no-op on CPU-only machines)."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def timed(function):
    """Run ``function()``; return (result, wall seconds, CPU seconds of all threads), GPU work included."""
    synchronize()
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    synchronize()
    return result, time.perf_counter() - wall, time.process_time() - cpu


class PeakGPU:
    """The peak GPU memory allocated inside the block, above what was allocated at its start (``delta_mb``)."""

    def __enter__(self) -> PeakGPU:
        torch.cuda.reset_peak_memory_stats()
        self.start = torch.cuda.memory_allocated()
        return self

    def __exit__(self, *args) -> None:
        self.delta_mb = (torch.cuda.max_memory_allocated() - self.start) / 2**20


def load(data_dir: Path) -> tuple[TriplesFactory, TriplesFactory, TriplesFactory]:
    folder = data_dir / "fb15k237"
    train = TriplesFactory.from_path(folder / "train.txt")
    kwargs = dict(entity_to_id=train.entity_to_id, relation_to_id=train.relation_to_id)
    return (
        train,
        TriplesFactory.from_path(folder / "valid.txt", **kwargs),
        TriplesFactory.from_path(folder / "test.txt", **kwargs),
    )


def fb15k237_test(data_dir: Path) -> tuple[TriplesFactory, torch.Tensor, list[torch.Tensor], int]:
    """FB15k-237's training factory, its test triples, the filter (train + valid + test triples) and the number of
    unique (anchor, relation) score rows of the test triples' two sides (the rows the engine scores)."""
    train, valid, test = load(data_dir)
    triples = test.mapped_triples
    known = [train.mapped_triples, valid.mapped_triples, triples]
    unique_rows = len(np.unique(triples[:, :2].numpy(), axis=0)) + len(np.unique(triples[:, 1:].numpy(), axis=0))
    return train, triples, known, unique_rows


def untrained_model(name: str, train: TriplesFactory, dim: int, device: torch.device | str = "cpu"):
    """An untrained PyKEEN model (seed 0) in evaluation mode on ``device``, and the real width of its entity vectors
    (complex vectors count twice): the width of the floor's products."""
    model = model_resolver.make(name, triples_factory=train, embedding_dim=dim, random_seed=0)
    model.eval()
    model.to(device)
    with torch.no_grad():
        entity = model.entity_representations[0](indices=None)
    return model, entity.shape[1] * (2 if entity.is_complex() else 1)


#: what two engines must agree on, per side of a ``rank_lp`` result (the top-k fields where top-k lists were made)
RESULT_FIELDS = ("rank_optimistic", "rank_pessimistic", "rank_nondeterministic", "num_candidates", "score")
TOPK_FIELDS = ("topk_ids", "topk_scores")


def first_difference(a: dict, b: dict, top_k: bool = True) -> str | None:
    """``"<side> <field>"`` of the first field in which two ``rank_lp`` results differ (NaN equal to NaN), else
    ``None``."""
    fields = RESULT_FIELDS + (TOPK_FIELDS if top_k else ())
    for side in a:
        for field in fields:
            if not np.array_equal(getattr(a[side], field), getattr(b[side], field), equal_nan=True):
                return f"{side} {field}"
    return None


def floor_queries(num_rows: int, width: int, device: torch.device | str = "cpu", seed: int = 0) -> torch.Tensor:
    """``num_rows`` random query vectors of ``width`` real features on ``device``, for the floors.

    Made before a floor is timed: drawing them costs about 25 ms on a Xeon core for FB15k-237's 22,812 rows, which
    would otherwise count as products (most of the products' own time on a GPU).
    """
    return torch.randn(num_rows, width, generator=torch.Generator().manual_seed(seed)).to(device)


def floor(queries: torch.Tensor, candidates_t: torch.Tensor, batch: int) -> None:
    """Only the matrix products: the query vectors (:func:`floor_queries`) times all candidates.

    In batches of ``batch`` rows, each product on all threads (or on the GPU, where both lie). Inside
    :func:`~kgeval.engine.memory.reuse_freed_memory`, as the engine runs: otherwise every product's output (tens of MB)
    is a fresh ``mmap`` whose page faults the floor would pay and the engine does not.

    :param queries: shape: (num_rows, width), on the device of ``candidates_t``
    :param candidates_t: shape: (width, E), the candidates' features, transposed
    """
    with reuse_freed_memory():
        for start in range(0, len(queries), batch):
            torch.mm(queries[start : start + batch], candidates_t)


def floor_blocks(
    queries: torch.Tensor, candidates_t: torch.Tensor, block: int, pieces: bool = False, read: bool = False
) -> None:
    """:func:`floor` in blocks of ``block`` rows, one thread per product, on a pool of ``torch.get_num_threads()``.

    With ``pieces``, each block's product is computed in pieces of columns as the engine computes it
    (:func:`~kgeval.lp.engine.products.addmm_in_pieces`), with no offset to add. With ``read``, each block is read
    once more right after its product (its maximum, on the same worker): the least that any reduction of the blocks
    adds, since every score must be read to be counted (``blocks_one_read_pass``, not a floor).
    """
    threads = torch.get_num_threads()  # read before single_threaded() sets it to 1
    # each worker's own products on one thread, as the engine's workers run them (pin_torch_to_one_thread)
    pinned = dict(initializer=pin_torch_to_one_thread)
    with reuse_freed_memory(), single_threaded(), ThreadPoolExecutor(threads, **pinned) as pool:
        # each product is dropped at once, as the engine drops a block once it is reduced (holding them all would
        # grow the heap by every score and charge the floor its page faults)
        def product(start: int) -> None:
            if pieces:
                scores = addmm_in_pieces(None, queries[start : start + block], candidates_t)
            else:
                scores = torch.mm(queries[start : start + block], candidates_t)
            if read:
                scores.max()

        list(pool.map(product, range(0, len(queries), block)))


def _in_revision(revision: str, path: str) -> bool:
    """Whether ``path`` exists in git ``revision`` of this repository."""
    found = subprocess.run(["git", "cat-file", "-e", f"{revision}:{path}"], cwd=ROOT, capture_output=True)
    return found.returncode == 0


def baseline_rank_lp(revision: str, into: Path):
    """``rank_lp`` of ``revision``'s ``src/`` (extracted under ``into``), imported beside this tree's ``kgeval``.
    ``revision`` may also be a folder holding such a ``src/`` and, where the revision has it, ``workflow/schemas/``
    (``git archive REV src workflow/schemas | tar -x -C DIR``).

    The baseline's modules are imported under the usual names while this tree's are set aside, then this tree's are
    put back; the baseline's functions keep their own modules through their globals. An import inside a baseline
    function body (the CPU reduction imports its compiled kernels on first use) resolves through ``sys.modules``, so
    the returned function puts the baseline's modules in place of this tree's while it runs (and any imported then
    stay with the baseline's).
    """
    if (Path(revision) / "src" / "kgeval").is_dir():
        into = Path(revision).resolve()  # a revision's tree extracted beforehand (a host without the git history)
    else:
        # the package and the config schema it reads its defaults from (kgeval.config.SCHEMA_PATH, beside src/)
        paths = [path for path in ("src", "workflow/schemas") if _in_revision(revision, path)]
        archive = subprocess.run(
            ["git", "archive", "--format=tar", revision, *paths], cwd=ROOT, capture_output=True, check=True
        ).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(into, filter="data")

    def ours() -> dict:
        return {key: module for key, module in sys.modules.items() if key == "kgeval" or key.startswith("kgeval.")}

    saved = ours()
    for key in saved:
        del sys.modules[key]
    sys.path.insert(0, str(into / "src"))
    try:
        module = importlib.import_module("kgeval.lp.ranking")
    finally:
        sys.path.remove(str(into / "src"))
        theirs = ours()
        for key in theirs:
            del sys.modules[key]
        sys.modules.update(saved)
    if not Path(module.__file__).is_relative_to(into):
        raise RuntimeError(f"the baseline's kgeval was not imported from {into}: {module.__file__}")

    @functools.wraps(module.rank_lp)
    def rank_lp(*args, **kwargs):
        mine = ours()
        for key in mine:
            del sys.modules[key]
        sys.modules.update(theirs)
        sys.path.insert(0, str(into / "src"))
        try:
            return module.rank_lp(*args, **kwargs)
        finally:
            sys.path.remove(str(into / "src"))
            theirs.update(ours())
            for key in ours():
                del sys.modules[key]
            sys.modules.update(mine)

    return rank_lp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir", type=Path, default=Path(os.environ.get("KGEVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
    )
    parser.add_argument("--models", nargs="+", default=["DistMult", "ComplEx"])
    parser.add_argument("--dim", type=int, default=200)
    parser.add_argument("--subset", type=int, default=1000, help="test triples for the evaluator (extrapolated)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--memory-budget-mb", type=float, default=256.0)
    parser.add_argument("--evaluator-batch-size", type=int, default=32)
    parser.add_argument(
        "--baseline", help="a git revision (or a folder with its src/) whose engine runs side by side (e.g. a7685bd)"
    )
    parser.add_argument("--device", default="cpu", help="where engine, floor and evaluator run: cpu or cuda")
    parser.add_argument("--out", type=Path, default=RESULTS / "ranking.tsv")
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no CUDA GPU is visible to torch on this machine")
    gpu = device.type == "cuda"
    baseline = None
    if args.baseline:
        baseline_dir = tempfile.TemporaryDirectory(prefix="kgeval-baseline-")
        baseline = baseline_rank_lp(args.baseline, Path(baseline_dir.name))
    logging.getLogger("pykeen").setLevel(logging.ERROR)
    logging.getLogger("torch_max_mem").setLevel(logging.ERROR)

    train, triples, known, unique_rows = fb15k237_test(args.data_dir)
    n = len(triples)
    num_ranks = 2 * n
    E = train.num_entities
    print(
        f"FB15k-237 test: {n} triples, {num_ranks} ranks, {unique_rows} unique (anchor, relation) score rows, "
        f"{E} entities, torch threads: {torch.get_num_threads()}, device: "
        f"{torch.cuda.get_device_name(device) if gpu else 'cpu'}",
        flush=True,
    )

    rows = []
    for name in args.models:
        model, width = untrained_model(name, train, args.dim, device)
        # stored as the engine stores its candidates: (D, E), C-contiguous
        candidates_t = torch.randn(E, width, generator=torch.Generator().manual_seed(1)).t().contiguous().to(device)
        unique_queries = floor_queries(unique_rows, width, device)
        all_queries = floor_queries(num_ranks, width, device)
        batch = rows_per_batch(E, args.memory_budget_mb, device=device)  # the unfused engine's batch size
        block = block_rows(E)  # the engine's block of rows
        best: dict[str, tuple[float, float]] = {}
        peak = 0.0
        result = None

        paired: dict[str, list[float]] = {}  # per repeat: engine wall / floor wall, measured back to back

        def keep(method, wall, cpu):
            if method not in best or wall < best[method][0]:
                best[method] = (wall, cpu)

        def run_engine(engine):
            return timed(
                lambda: engine(
                    model,
                    triples,
                    filter_triples=known,
                    top_k=args.top_k,
                    memory_budget_mb=args.memory_budget_mb,
                    device=device,
                )
            )

        for repeat in range(args.repeats):
            if baseline is not None:
                base_result, wall, cpu = run_engine(baseline)
                keep("engine_baseline", wall, cpu)
                baseline_wall = wall
            with PeakGPU() if gpu else PeakRSS() as memory:
                result, wall, cpu = run_engine(rank_lp)
            peak = max(peak, memory.delta_mb)
            keep("engine", wall, cpu)
            engine_wall = wall
            if baseline is not None:
                paired.setdefault("engine_baseline", []).append(engine_wall / baseline_wall)
            floors = {}
            layouts = [("floor_unique_batches", floor, batch)]
            if not gpu:
                layouts.append(("floor_unique_blocks", floor_blocks, block))
                layouts.append(("floor_unique_pieces", functools.partial(floor_blocks, pieces=True), block))
            for method, function, rows_at_once in layouts:
                _, wall, cpu = timed(lambda: function(unique_queries, candidates_t, rows_at_once))
                keep(method, wall, cpu)
                floors[method] = (wall, cpu)
            wall, cpu = min(floors.values())
            keep("floor_unique", wall, cpu)
            paired.setdefault("floor_unique", []).append(engine_wall / wall)
            if not gpu:  # what a block reduction cannot go below: the blocks' products and one read of each score
                _, wall, cpu = timed(lambda: floor_blocks(unique_queries, candidates_t, block, read=True))
                keep("blocks_one_read_pass", wall, cpu)
                paired.setdefault("blocks_one_read_pass", []).append(engine_wall / wall)
            _, wall, cpu = timed(lambda: floor(all_queries, candidates_t, batch))
            keep("floor_all", wall, cpu)
            paired.setdefault("floor_all", []).append(engine_wall / wall)
            print(
                f"{name} repeat {repeat}: engine {engine_wall:.3f}s, "
                f"floor_unique {engine_wall / paired['floor_unique'][-1]:.3f}s; "
                "best so far: " + ", ".join(f"{k} {v[0]:.3f}s" for k, v in best.items()),
                flush=True,
            )

        if baseline is not None:
            difference = first_difference(result, base_result, top_k=bool(args.top_k))
            if difference is not None:
                raise SystemExit(f"{name}: {difference} differ between this tree and {args.baseline}")
            print(
                f"{name}: same ranks, scores and top-k as {args.baseline}; engine {best['engine'][0]:.2f}s vs "
                f"baseline {best['engine_baseline'][0]:.2f}s (fastest), median of back-to-back pairs "
                f"x{np.median(paired['engine_baseline']):.2f}",
                flush=True,
            )

        # PyKEEN's evaluator on a subset, extrapolated
        generator = torch.Generator().manual_seed(0)
        pick = torch.randperm(n, generator=generator)[: args.subset]
        evaluator = RankBasedEvaluator(clear_on_finalize=False)
        _, wall, cpu = timed(
            lambda: evaluator.evaluate(
                model,
                triples[pick],
                additional_filter_triples=known,
                batch_size=args.evaluator_batch_size,
                use_tqdm=False,
            )
        )
        scale = n / len(pick)
        best["evaluator"] = (wall * scale, cpu * scale)
        mismatches = 0
        differ: dict[str, np.ndarray] = {}  # per side: the subset's queries whose ranks differ in any rank type
        for side in ("head", "tail"):
            differ[side] = np.zeros(len(pick), dtype=bool)
            for rank_type in ("optimistic", "realistic", "pessimistic"):
                reference = np.concatenate(evaluator.ranks[side, rank_type])
                ours = getattr(result[side], f"rank_{rank_type}")[pick.numpy()]
                mismatches += int((reference != ours).sum())
                differ[side] |= reference != ours
        explained = disagreement_report(model, triples[pick], differ, known, device)
        if len(explained):
            print(f"{name}: the queries whose ranks differ from PyKEEN's, against float64 scores:\n"
                  f"{explained.to_string(index=False)}", flush=True)

        engine_wall, engine_cpu = best["engine"]
        for method, (wall, cpu) in best.items():
            rows.append(
                dict(
                    model=name,
                    dim=args.dim,
                    method=method,
                    wall_s=wall,
                    cpu_s=cpu,
                    num_ranks=num_ranks,
                    score_rows=num_ranks if method in ("floor_all", "evaluator") else unique_rows,
                    engine_over_method_wall=engine_wall / wall,
                    engine_over_method_wall_paired_median=(
                        float(np.median(paired[method])) if method in paired else engine_wall / wall
                    ),
                    engine_over_method_cpu=engine_cpu / cpu,
                    device=torch.cuda.get_device_name(device) if gpu else "cpu",
                    peak_rss_delta_mb=peak if method == "engine" and not gpu else np.nan,
                    peak_gpu_delta_mb=peak if method == "engine" and gpu else np.nan,
                    extrapolated_from=len(pick) if method == "evaluator" else n,
                    rank_mismatches_on_subset=mismatches if method == "evaluator" else np.nan,
                    mismatched_queries=len(explained) if method == "evaluator" else np.nan,
                    mismatched_near_ties=int(explained["near_tie"].sum()) if method == "evaluator" else np.nan,
                )
            )
        print(
            f"{name}: engine {engine_wall:.3f}s wall / {engine_cpu:.2f}s CPU, "
            f"peak +{peak:.0f} MB {'GPU' if gpu else 'RSS'}; "
            f"floor (unique rows) {best['floor_unique'][0]:.3f}s -> x{engine_wall / best['floor_unique'][0]:.2f} wall, "
            f"x{engine_cpu / best['floor_unique'][1]:.2f} CPU, median of back-to-back pairs "
            f"x{np.median(paired['floor_unique']):.2f} (goal <= x{GOAL_OVER_FLOOR}); "
            f"floor (all queries) {best['floor_all'][0]:.3f}s -> x{engine_wall / best['floor_all'][0]:.2f}; "
            f"evaluator {best['evaluator'][0]:.0f}s (extrapolated from {len(pick)} triples) -> "
            f"{best['evaluator'][0] / engine_wall:.0f}x faster; {mismatches} rank mismatches on the subset",
            flush=True,
        )
    table = pd.DataFrame(rows)
    write_tsv(stamp(table), args.out, sort_by=["model", "method"])
    print(table.to_string(index=False))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
