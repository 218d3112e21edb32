"""A small pool of worker threads for numpy and torch kernels, which release the GIL while they run.

The ranking engine reduces blocks of score rows on it and :mod:`kgeval.lp.engine.rownorm` computes chunks of row norms.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["run_all", "submit_all", "worker_pool"]


@contextlib.contextmanager
def worker_pool(
    threads: int, name: str = "kgeval", initializer: Callable[..., Any] | None = None, initargs: tuple = ()
) -> Iterator[ThreadPoolExecutor | None]:
    """``threads`` worker threads for the block, or ``None`` (run in the calling thread) when ``threads <= 1``.

    :param initializer: called with ``initargs`` in each worker thread as it starts (e.g. to pin its torch threads)
    """
    if threads <= 1:
        yield None
        return
    with ThreadPoolExecutor(threads, name, initializer=initializer, initargs=initargs) as pool:
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
