"""Benchmark: 2-norms of complex rows, torch's CPU kernel against kgeval's compiled loop (``kgeval.lp.engine.rownorm``).

PyKEEN's training computes ``torch.linalg.vector_norm(z, dim=-1)`` of complex rows in RotatE's interaction and in the
L2 regularizer of ComplEx (and the other complex models). ``kgeval.lp.engine.rownorm.row_norm`` computes the same
bits in a compiled loop (:mod:`kgeval.lp.engine.rownorm_kernel`). For each shape (a Kinships ComplEx batch's
regularized rows, a few smaller ones around the threshold ``MIN_ELEMENTS`` and an FB15k-237 slice of 16,384 rows of
200 complex features) this times, on one thread, in alternating rounds:

* ``forward``: torch's kernel against :func:`~kgeval.lp.engine.rownorm.row_norm` (the compiled loop plus its
  autograd function), outside autograd;
* ``forward_backward``: the norm and its gradient for a random upstream gradient, on a fresh leaf each time, with
  torch's kernel and its backward against ``row_norm``.

Every result and gradient must have the same bits (the script stops otherwise). The threshold is set to 0 for the
run, so that the small shapes take the compiled loop too; the figures show where it pays.

Run: ``python benchmarks/row_norms.py [--repeats 5]``; appends to ``benchmarks/results/row_norms.tsv``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import torch

from kgeval.io import read_tsv, write_tsv
from kgeval.lp.engine import rownorm
from host import RESULTS, stamp  # noqa: E402  (benchmarks/host.py: the host columns)

#: (name, rows, complex features)
SHAPES = (
    ("rows_16x32", 16, 32),
    ("rows_32x32", 32, 32),
    ("rows_64x32", 64, 32),
    ("kinships_complex_batch_256x32", 256, 32),
    ("fb15k237_slice_16384x200", 16384, 200),
)


def _paired_microseconds(before: Callable[[], object], now: Callable[[], object], repeats: int) -> tuple[float, ...]:
    """Rounds of calls of ``before`` and of ``now``, alternating, each round about 50 ms: the fastest round of each
    per call (microseconds) and the median of the rounds' ratios (now over before)."""
    calls = 1
    start = time.perf_counter()
    while time.perf_counter() - start < 0.05:  # a round's number of calls; warms both up
        before()
        now()
        calls += 1
    best, ratios = {before: float("inf"), now: float("inf")}, []
    for _ in range(repeats):
        seconds = {}
        for function in (before, now):
            start = time.perf_counter()
            for _ in range(calls):
                function()
            seconds[function] = (time.perf_counter() - start) / calls
            best[function] = min(best[function], seconds[function])
        ratios.append(seconds[now] / seconds[before])
    return best[before] * 1e6, best[now] * 1e6, statistics.median(ratios)


def _forward_backward(norm: Callable[[torch.Tensor], torch.Tensor], z: torch.Tensor, upstream: torch.Tensor):
    leaf = z.clone().requires_grad_()
    value = norm(leaf)
    value.backward(upstream)
    return value.detach(), leaf.grad


def measure(name: str, rows: int, features: int, repeats: int) -> list[dict[str, object]]:
    """Paired timings of one shape; raises if a norm or gradient differs from torch's."""
    generator = torch.Generator().manual_seed(0)
    values = torch.randn(rows, features, 2, generator=generator)
    values *= torch.exp(torch.randn(rows, 1, 1, generator=generator) * 6)
    z = torch.view_as_complex(values.contiguous())
    upstream = torch.randn(rows, generator=generator)

    def torch_norm(x):
        return torch.linalg.vector_norm(x, dim=-1)

    ours, theirs = _forward_backward(rownorm.row_norm, z, upstream), _forward_backward(torch_norm, z, upstream)
    for a, b in zip(ours, theirs):
        bits_a, bits_b = (torch.view_as_real(x) if x.is_complex() else x for x in (a, b))
        if not torch.equal(bits_a.view(torch.int32), bits_b.view(torch.int32)):
            raise SystemExit(f"{name}: the compiled norms or gradients differ from torch's")
    timings = {
        "forward": (lambda: torch_norm(z), lambda: rownorm.row_norm(z)),
        "forward_backward": (
            lambda: _forward_backward(torch_norm, z, upstream),
            lambda: _forward_backward(rownorm.row_norm, z, upstream),
        ),
    }
    out = []
    for what, (before, now) in timings.items():
        torch_us, ours_us, ratio = _paired_microseconds(before, now, repeats)
        out.append(dict(shape=name, elements=rows * features, measured=what, torch_us=round(torch_us, 2),
                        kgeval_us=round(ours_us, 2), ratio_paired_median=round(ratio, 4), identical=True))
        print(f"{name} {what}: torch {torch_us:.1f} us, kgeval {ours_us:.1f} us ({ratio:.2f}x, paired median)")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS / "row_norms.tsv")
    args = parser.parse_args()
    torch.set_num_threads(1)
    threshold, rownorm.MIN_ELEMENTS = rownorm.MIN_ELEMENTS, 0  # every shape through the compiled loop
    rows = [row for name, n, d in SHAPES for row in measure(name, n, d, args.repeats)]
    table = stamp(pd.DataFrame(rows)).assign(min_elements_in_use=threshold)
    if args.out.exists():
        table = pd.concat([read_tsv(args.out), table], ignore_index=True)
    write_tsv(table, args.out, sort_by=["date", "commit", "shape", "measured"])
    print(f"appended to {args.out}")


if __name__ == "__main__":
    main()
