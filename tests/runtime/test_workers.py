"""Tests of kgeval.runtime.workers: results in input order, on worker threads when there are several."""

from __future__ import annotations

import threading

import pytest

from kgeval.runtime.workers import run_all, submit_all, worker_pool


def test_one_thread_runs_in_the_caller():
    with worker_pool(1) as pool:
        assert pool is None
        names = run_all(pool, lambda _: threading.current_thread().name, range(3))
    assert names == [threading.current_thread().name] * 3


def test_several_threads_keep_the_order():
    barrier = threading.Barrier(2, timeout=10)

    def square(x: int) -> tuple[int, str]:
        if x < 2:
            barrier.wait()  # both workers must be running at once, or this times out
        return x * x, threading.current_thread().name

    with worker_pool(2, "kgeval-test") as pool:
        results = run_all(pool, square, list(range(6)))
    assert [value for value, _ in results] == [x * x for x in range(6)]
    assert all(name.startswith("kgeval-test") for _, name in results)
    assert run_all(pool, square, []) == []


def test_submit_all_returns_before_the_items_finish():
    """Items queued on the pool run while the caller goes on; waiting gives the results in order or an item's error."""
    release = threading.Event()

    def after_release(x: int) -> int:
        assert release.wait(timeout=10)  # set only after submit_all has returned
        if x == 3:
            raise ValueError("item 3")
        return -x

    with worker_pool(2) as pool:
        wait = submit_all(pool, after_release, [0, 1, 2])
        release.set()
        assert wait() == [0, -1, -2]
        failing = submit_all(pool, after_release, [2, 3])
        with pytest.raises(ValueError, match="item 3"):
            failing()
    # without a pool, the items have run when submit_all returns
    ran = []
    wait = submit_all(None, ran.append, [1, 2])
    assert ran == [1, 2] and wait() == [None, None]


def test_pinned_workers_run_torch_on_one_thread():
    """Workers asked for one torch thread each see one from their first call, with the caller on two."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(max(2, threads))
    try:
        read = lambda _: torch.get_num_threads()  # noqa: E731
        with worker_pool(2, one_torch_thread=True) as pool:
            assert run_all(pool, read, range(4)) == [1] * 4
    finally:
        torch.set_num_threads(threads)
