"""A small pool of worker threads for numpy and torch kernels, which release the GIL while they run.

The ranking engine reduces blocks of score rows on it and :mod:`kgeval.lp.rownorm` computes chunks of row norms.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["run_all", "worker_pool"]


@contextlib.contextmanager
def worker_pool(threads: int, name: str = "kgeval") -> Iterator[ThreadPoolExecutor | None]:
    """``threads`` worker threads for the block, or ``None`` (run in the calling thread) when ``threads <= 1``."""
    if threads <= 1:
        yield None
        return
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name) as pool:
        yield pool


def run_all(pool: ThreadPoolExecutor | None, function: Callable[[Any], Any], items: Sequence) -> list:
    """``[function(item) for item in items]``, on the pool when there is one and more than one item."""
    if pool is None or len(items) <= 1:
        return [function(item) for item in items]
    return list(pool.map(function, items))
