"""Benchmark: the cost of paper 000's test-size sweep (Fig. 1) on DBP15k zh-en, measured and extrapolated.

Measures, with ``--threads`` torch threads (default 2):

1. one full evaluation at the JAPE test size (first, so that the recorded peak memory is the evaluation's):
   10,500 test pairs ranked against 10,500 candidates in both directions
   (:func:`kgeval.ea.evaluation.rank_alignment`, chunked by ``--memory-budget-mb``), one at 5,250 to check the
   quadratic scaling, the same at budgets of 64 and 1,024 MiB, and for scale the unchunked-but-unvectorised
   alternative (one query at a time: a ``torch.cdist`` row and a comparison, timed on a sample of queries);
2. GCN-Align training epochs on zh-en (19,388 + 19,572 entities, 200 dims, 50 negatives) for several numbers of
   training alignments, after ``--burn-in`` untimed epochs (the early epochs are slower, see :func:`time_epochs`);
   an epoch costs ``a + b * #train`` (propagation + a loss linear in #train), fitted by least squares;
3. the extrapolation to the paper's grid (config/paper.yaml: 12 #train values x 5 seeds, 2,000 epochs, nested
   test sizes 1,000 ... 10,500 that fit into each test pool): training = sum of 2000 * epoch(#train), evaluation
   = sum of (t / 10,500)^2 * full evaluation.

Every time is taken as wall-clock and as process CPU time: on a shared machine the wall time is inflated by other
processes (the load average is recorded), and CPU time / threads estimates an otherwise idle machine.

Run: ``python benchmarks/ea_sweep_cost.py [--threads 2] [--epochs 3] [--burn-in 20] [--memory-budget-mb 256]``;
prints the figures and writes them to ``benchmarks/results/ea_sweep_cost.tsv``. Needs ../shared/data/dbp15k/zh_en (or
``$KGEVAL_SHARED_DATA``).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import yaml

from kgeval.ea.data import load_ea_pair
from kgeval.ea.evaluation import rank_alignment
from kgeval.ea.gcn_align import GCNAlign, GCNAlignConfig, build_adjacency, sampled_margin_loss
from kgeval.studies.s1.splits import nested_sizes, split_alignment
from kgeval.io import write_tsv
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

REPO = Path(__file__).resolve().parents[1]
FULL = 10_500


def shared_data() -> Path:
    return Path(os.environ.get("KGEVAL_SHARED_DATA", REPO.parent / "shared" / "data"))


def time_epochs(pair, num_train: int, config: GCNAlignConfig, epochs: int, burn_in: int) -> tuple[float, float]:
    """Wall and process-CPU seconds per training epoch with ``num_train`` alignments, after ``burn_in`` epochs.

    The loss's backward pass only visits negatives inside the margin; their share falls from 100% in the first
    epoch to under 6% after about 15 (zh-en, 4,500 pairs), so epochs after a burn-in represent the 2,000-epoch run.
    """
    gen = torch.Generator().manual_seed(0)
    model = GCNAlign(
        build_adjacency(pair.triples1, pair.num_entities1),
        build_adjacency(pair.triples2, pair.num_entities2),
        embedding_dim=config.embedding_dim,
        num_layers=config.num_layers,
        generator=gen,
    )
    train, _ = split_alignment(pair.alignment, num_train, 0)
    pairs = torch.as_tensor(train)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    torch.use_deterministic_algorithms(True)  # as in training

    def step() -> None:
        optimizer.zero_grad()
        left, right = model()
        loss = sampled_margin_loss(left, right, pairs, config.num_negatives, config.margin, gen)
        loss.backward()
        optimizer.step()

    for _ in range(max(burn_in, 1)):
        step()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(epochs):
        step()
    torch.use_deterministic_algorithms(False)
    return (time.perf_counter() - start) / epochs, (time.process_time() - cpu) / epochs


def time_evaluation(
    left: torch.Tensor, right: torch.Tensor, pool: np.ndarray, size: int, budget: float
) -> tuple[float, float]:
    """Wall and process-CPU seconds of ranking ``size`` test pairs against ``size`` candidates, both sides."""
    start, cpu = time.perf_counter(), time.process_time()
    rank_alignment(left, right, pool[:size], memory_budget_mb=budget)
    return time.perf_counter() - start, time.process_time() - cpu


def time_naive(left: torch.Tensor, right: torch.Tensor, pool: np.ndarray, sample: int) -> float:
    """Seconds for one query at a time (cdist of one row + a comparison), extrapolated to 2 x 10,500 queries."""
    a = left[torch.as_tensor(pool[:FULL, 0])]
    b = right[torch.as_tensor(pool[:FULL, 1])]
    start = time.perf_counter()
    for i in range(sample):
        d = torch.cdist(a[i : i + 1], b, p=1)[0]
        int((d < d[i]).sum())
    return (time.perf_counter() - start) / sample * 2 * FULL


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3, help="timed epochs per #train value")
    parser.add_argument("--burn-in", type=int, default=20, help="untimed epochs before the timed ones")
    parser.add_argument("--memory-budget-mb", type=float, default=256.0)
    parser.add_argument("--naive-sample", type=int, default=200)
    parser.add_argument("--paper-config", default=str(REPO / "config" / "paper.yaml"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    root = shared_data()
    if not (root / "dbp15k" / "zh_en").is_dir():
        raise SystemExit(f"{root}/dbp15k/zh_en not found: set KGEVAL_SHARED_DATA to the folder holding dbp15k/")
    settings = yaml.safe_load(Path(args.paper_config).read_text())
    sweep = settings["studies"]["s1"]["testsize"]
    config = GCNAlignConfig.from_dict(settings["ea_models"]["gcn_align"])

    rows: list[tuple[str, float, str]] = []

    def record(name: str, value: float, unit: str) -> None:
        rows.append((name, float(value), unit))
        print(f"{name:<48} {value:>14.4g} {unit}")

    record("torch_threads", torch.get_num_threads(), "threads")
    record("load_average_1min", os.getloadavg()[0], "processes")
    start = time.perf_counter()
    pair = load_ea_pair("dbp15k_zh_en", {"source": "dbp15k", "subset": "zh_en"}, data_dir=root)
    record("load_seconds", time.perf_counter() - start, "s")

    # 1. evaluation first, so that the peak memory is the evaluation's (random representations cost the same as
    # trained ones)
    gen = torch.Generator().manual_seed(0)
    left = torch.relu(torch.randn(pair.num_entities1, config.embedding_dim, generator=gen))
    right = torch.relu(torch.randn(pair.num_entities2, config.embedding_dim, generator=gen))
    _, pool = split_alignment(pair.alignment, 0, 0)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    full, full_cpu = time_evaluation(left, right, pool, FULL, args.memory_budget_mb)
    record("max_rss_mib_before_evaluation", rss_before, "MiB")
    record("max_rss_mib_after_evaluation", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "MiB")
    record("evaluation_wall_seconds_10500x10500_both_sides", full, "s")
    record("evaluation_cpu_seconds_10500x10500_both_sides", full_cpu, "s")
    half, _ = time_evaluation(left, right, pool, FULL // 2, args.memory_budget_mb)
    record("evaluation_wall_seconds_5250x5250_both_sides", half, "s")
    record("evaluation_scaling_exponent", np.log(full / half) / np.log(2), "")
    for budget in (64.0, 1024.0):
        wall, _ = time_evaluation(left, right, pool, FULL, budget)
        record(f"evaluation_wall_seconds_10500_budget_{int(budget)}mib", wall, "s")
    record("naive_per_query_evaluation_wall_seconds_10500", time_naive(left, right, pool, args.naive_sample), "s")

    # 2. training epochs
    measured, measured_cpu = {}, {}
    for k in (10, 1000, 4500, 7500):
        measured[k], measured_cpu[k] = time_epochs(pair, k, config, args.epochs, args.burn_in if k > 10 else 1)
        record(f"epoch_wall_seconds_train_{k}", measured[k], "s")
        record(f"epoch_cpu_seconds_train_{k}", measured_cpu[k], "s")
    ks = np.array(list(measured), dtype=float)
    b, a = np.polyfit(ks, np.array(list(measured.values())), deg=1)
    b_cpu, a_cpu = np.polyfit(ks, np.array(list(measured_cpu.values())), deg=1)
    record("epoch_wall_seconds_intercept", a, "s")
    record("epoch_wall_seconds_per_train_pair", b, "s")

    # 3. extrapolation to the paper's grid: from wall times under the load of this run, and from CPU time divided
    # by the thread count (what an otherwise idle machine would take, if the threads scaled perfectly)
    n = len(pair.alignment)
    seeds = len(sweep["seeds"])
    threads = torch.get_num_threads()
    for label, (ea, eb, ev) in {
        "wall": (a, b, full),
        "cpu_per_thread": (a_cpu / threads, b_cpu / threads, full_cpu / threads),
    }.items():
        train_total = 0.0
        eval_total = 0.0
        for k in sweep["num_train"]:
            if k > 0:
                train_total += config.num_epochs * (ea + eb * k) * seeds
            sizes = nested_sizes(n - k, sweep["test_sizes"])
            eval_total += sum((t / FULL) ** 2 for t in sizes) * ev * seeds
        record(f"paper_grid_training_hours_{label}", train_total / 3600, "h")
        record(f"paper_grid_evaluation_hours_{label}", eval_total / 3600, "h")
        record(f"paper_grid_total_hours_{label}", (train_total + eval_total) / 3600, "h")
    record("paper_grid_models", len(sweep["num_train"]) * seeds, "models")
    record("load_average_1min_at_end", os.getloadavg()[0], "processes")

    table = pd.DataFrame(rows, columns=["quantity", "value", "unit"])
    table["machine"] = f"{platform.node()} {platform.processor() or platform.machine()}"
    out = RESULTS / "ea_sweep_cost.tsv"
    write_tsv(stamp(table), out, sort_by=[])
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
