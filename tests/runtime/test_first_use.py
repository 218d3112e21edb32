"""The first-use check: one comparison per process, its verdict remembered, a warning when it fails."""

from __future__ import annotations

import logging
import threading
import time

from kgeval.runtime.first_use import FirstUseCheck

LOGGER = logging.getLogger("kgeval.tests.first_use")


def test_the_first_comparison_decides_every_later_call():
    calls = []
    check = FirstUseCheck(LOGGER, "differs")
    assert check.verdict is None
    assert check.passes(lambda: calls.append(1) or True) is True
    assert check.passes(lambda: calls.append(2) or False) is True  # not compared again
    assert calls == [1] and check.verdict is True


def test_a_failed_comparison_warns_once_and_sticks(caplog):
    check = FirstUseCheck(LOGGER, "the kernel differs; using the reference")
    with caplog.at_level(logging.WARNING, logger=LOGGER.name):
        assert check.passes(lambda: False) is False
        assert check.passes(lambda: True) is False
    assert caplog.text.count("the kernel differs; using the reference") == 1
    assert check.verdict is False


def test_threads_arriving_together_compare_once():
    calls = []

    def slow_compare() -> bool:
        calls.append(threading.get_ident())
        time.sleep(0.05)  # the others arrive while the first compares
        return True

    check = FirstUseCheck(LOGGER, "differs")
    results = []
    threads = [threading.Thread(target=lambda: results.append(check.passes(slow_compare))) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and results == [True] * 6


def test_a_comparison_that_raises_leaves_the_verdict_open():
    check = FirstUseCheck(LOGGER, "differs")

    def broken() -> bool:
        raise RuntimeError("no sample")

    try:
        check.passes(broken)
    except RuntimeError:
        pass
    assert check.verdict is None
    assert check.passes(lambda: True) is True


def test_same_passes_compares_outputs_and_gradients_bit_for_bit():
    import torch

    from kgeval.runtime.first_use import same_passes

    class DoubledGradient(torch.autograd.Function):
        """The same sums forward, twice the gradient backward."""

        @staticmethod
        def forward(ctx, x):
            return x.sum(-1)

        @staticmethod
        def backward(ctx, grad):
            return 2 * grad.unsqueeze(-1).expand(-1, 3)

    x = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    assert same_passes(lambda a: a.sum(-1), lambda a: a.sum(-1), x)
    assert not same_passes(lambda a: a.sum(-1), lambda a: a.sum(-1) + 1e-7, x)  # outputs differ
    assert not same_passes(lambda a: a.sum(-1), DoubledGradient.apply, x)  # only the gradients differ
    z = torch.view_as_complex(torch.randn(4, 3, 2))
    assert same_passes(lambda a: a.abs().sum(-1), lambda a: a.abs().sum(-1), z)
