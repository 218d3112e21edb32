"""A process-wide verdict, decided on first use, on whether a hand-written kernel gives its reference's bits.

kgeval replaces a few of torch's and PyKEEN's kernels with its own (:mod:`kgeval.lp.engine.rownorm`,
:mod:`kgeval.lp.engine.training.embedding_gradients_kernel`, :mod:`kgeval.lp.engine.training.transe_l1_kernel`, :mod:`kgeval.lp.engine.training.transe_lookup_kernel`,
:mod:`kgeval.lp.engine.training.complex_interaction_kernel`), each promising the reference's exact bits. Each guards itself with a
:class:`FirstUseCheck`: the first call in a process compares the two on a sample and on its own inputs, and the verdict
decides every later call; where a bit differs, the reference is used from then on and a warning says so.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

__all__ = ["FirstUseCheck"]


class FirstUseCheck:
    """Whether a kernel reproduces its reference, compared once per process and remembered.

    >>> check = FirstUseCheck(logging.getLogger("demo"), "differs")
    >>> check.verdict is None, check.passes(lambda: True), check.passes(lambda: False), check.verdict
    (True, True, True, True)
    """

    def __init__(self, logger: logging.Logger, message: str) -> None:
        """:param logger: where the warning goes when the comparison fails
        :param message: the warning: what differs and what is used instead
        """
        self._logger, self._message = logger, message
        self._lock = threading.Lock()
        #: ``None`` until the first comparison, then its result
        self.verdict: bool | None = None

    def passes(self, compare: Callable[[], bool]) -> bool:
        """The verdict; on the first call (one thread at a time), ``compare()`` decides it.

        Once decided, the verdict is read without taking the lock, so that the kernel's every later call costs one
        attribute read. That is safe without relying on the GIL: the verdict changes once, from ``None`` to a bool,
        under the lock, and a reader that still sees ``None`` takes the lock and reads the decided value.

        :param compare: runs the kernel and its reference; ``True`` if every bit agrees
        """
        verdict = self.verdict
        if verdict is not None:
            return verdict
        with self._lock:
            if self.verdict is None:
                agrees = bool(compare())
                if not agrees:
                    self._logger.warning(self._message)
                self.verdict = agrees
            return self.verdict


def same_passes(reference: Callable, candidate: Callable, *inputs, upstream=None) -> bool:
    """Whether two forward functions give the same outputs and input gradients, bit for bit, on copies of ``inputs``
    (a fused kernel's first-use comparison with the operations it replaces).

    :param reference: the function replaced, e.g. PyKEEN's interaction
    :param candidate: the replacement
    :param inputs: tensors of shape (n, ...); the outputs' gradient is ``upstream`` (default: n values from -2 to 3)
    """
    import torch

    def bits(x: torch.Tensor) -> torch.Tensor:
        x = torch.view_as_real(x.resolve_conj()) if x.is_complex() else x
        return x.contiguous().view(torch.int32)

    def run(forward: Callable) -> list:
        leaves = [x.detach().clone().requires_grad_() for x in inputs]
        outputs = forward(*leaves)
        outputs.backward(upstream if upstream is not None else torch.linspace(-2.0, 3.0, inputs[0].shape[0]))
        return [outputs.detach(), *(leaf.grad for leaf in leaves)]

    return all(torch.equal(bits(a), bits(b)) for a, b in zip(run(candidate), run(reference)))
