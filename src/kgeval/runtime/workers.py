"""A small pool of worker threads for numpy and torch kernels, which release the GIL while they run.

The ranking engine reduces blocks of score rows on it and :mod:`kgeval.lp.engine.rownorm` computes chunks of row norms.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["pin_torch_to_one_thread", "run_all", "submit_all", "worker_pool"]


def pin_torch_to_one_thread() -> None:
    """Run torch (and the matrix library) on one thread in the calling thread: a worker's initializer.

    A fresh thread's first torch call otherwise uses the default thread count of OpenMP and the matrix library (all
    cores), whatever ``torch.set_num_threads`` said in another thread: 16 ranking workers on 16 cores started 16 teams
    of 16 threads. Pinned, the workers give the same ranks, scores and top-k lists in less time (measured:
    ``benchmarks/results/ranking_scaling_h200host_cpu16_pinned.tsv``). Where torch's thread count is one setting for
    the whole process (some torch builds), this sets it for the caller too: pin only within a section that
    restores it (the engine's fused loop runs inside :func:`kgeval.lp.engine.products.single_threaded`).
    """
    import torch  # only pools whose workers call torch ask for this

    torch.set_num_threads(1)


@contextlib.contextmanager
def worker_pool(
    threads: int, name: str = "kgeval", one_torch_thread: bool = False
) -> Iterator[ThreadPoolExecutor | None]:
    """``threads`` worker threads for the block, or ``None`` (run in the calling thread) when ``threads <= 1``.

    :param one_torch_thread: each worker runs torch on one thread from its start (:func:`pin_torch_to_one_thread`)
    """
    if threads <= 1:
        yield None
        return
    initializer = pin_torch_to_one_thread if one_torch_thread else None
    with ThreadPoolExecutor(threads, name, initializer=initializer) as pool:
        yield pool


def submit_all(pool: ThreadPoolExecutor | None, function: Callable[[Any], Any], items: Sequence) -> Callable[[], list]:
    """Start ``[function(item) for item in items]`` and return at once a function that waits for it.

    On the pool when there is one and more than one item, so that the caller can queue more work meanwhile; else in
    the calling thread before returning. The returned function gives the results in input order and re-raises the
    first error of an item.
    """
    if pool is None or len(items) <= 1:
        results = [function(item) for item in items]
        return lambda: results
    futures = [pool.submit(function, item) for item in items]
    return lambda: [future.result() for future in futures]


def run_all(pool: ThreadPoolExecutor | None, function: Callable[[Any], Any], items: Sequence) -> list:
    """``[function(item) for item in items]``, on the pool when there is one and more than one item."""
    return submit_all(pool, function, items)()
