"""Speed kernels of the scorers' matrix products: they make scoring fast and never change a score's bits.

:func:`addmm_in_pieces` computes a CPU matrix product in pieces of candidate columns; :func:`single_threaded` runs
the small element-wise operations around the products on one torch thread; :data:`RowBlocks` is how a scorer hands
the engine a prepared batch's products, one block of rows at a time.
"""

from __future__ import annotations

import contextlib
import statistics
import threading
import time
from collections.abc import Callable, Iterator

import torch

__all__ = ["LAYOUT", "LayoutChooser", "PIECE_COLUMNS", "RowBlocks", "TRIALS", "addmm_in_pieces", "single_threaded"]

#: ``blocks(a, z)`` returns the scores of rows ``a..z-1`` of a prepared batch of queries
#: (:meth:`kgeval.lp.scorer_interface.Scorer.prepare`)
RowBlocks = Callable[[int, int], torch.Tensor]


@contextlib.contextmanager
def single_threaded(device: torch.device | str = "cpu") -> Iterator[None]:
    """Run torch's CPU operations in the block on one thread, then restore the thread count.

    The small element-wise operations around the large matrix products gain nothing from several threads, but on a
    busy machine every multi-threaded operation waits for all its threads to be scheduled; one thread avoids that.
    GPU work is unaffected.
    """
    if torch.device(device).type != "cpu":
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


#: candidate columns per piece of a CPU matrix product (:func:`addmm_in_pieces`)
PIECE_COLUMNS = 2048
#: how :func:`addmm_in_pieces` lays out a CPU product: ``"pieces"``, ``"whole"`` (one product), or ``"auto"`` (each
#: shape's first products timed in both layouts, then the faster kept: :class:`LayoutChooser`)
LAYOUT = "auto"
#: products timed in each layout before ``"auto"`` settles on one for a shape
TRIALS = 5


class LayoutChooser:
    """Times the first products of each shape in both layouts, alternating, then keeps the faster (median seconds per
    row) for the rest of the process.

    Which layout is faster depends on the host: pieces on some, one product on others, with the same ranks, scores and
    top-k lists (measured: ``benchmarks/results/ranking_scaling*.tsv``). Both layouts give the same bits, so the
    choice only changes the time. Thread-safe: the engine's workers call it side by side.
    """

    def __init__(self, trials: int | None = None) -> None:
        self.trials = trials
        self._lock = threading.Lock()
        self._samples: dict[tuple, dict[str, list[float]]] = {}
        self.chosen: dict[tuple, str] = {}

    def layout(self, key: tuple) -> str:
        """The layout for the next product of shape ``key``: the chosen one, else the one timed fewer times."""
        chosen = self.chosen.get(key)
        if chosen is not None:
            return chosen
        with self._lock:
            samples = self._samples.setdefault(key, {"pieces": [], "whole": []})
            return "pieces" if len(samples["pieces"]) <= len(samples["whole"]) else "whole"

    def record(self, key: tuple, layout: str, seconds_per_row: float) -> None:
        """Add one timed product; once each layout has ``trials`` of them, keep the one of the lower median."""
        with self._lock:
            if key in self.chosen:
                return
            samples = self._samples[key]
            samples[layout].append(seconds_per_row)
            if min(len(times) for times in samples.values()) >= (self.trials or TRIALS):
                self.chosen[key] = min(samples, key=lambda name: (statistics.median(samples[name]), name))


_chooser = LayoutChooser()


def addmm_in_pieces(
    bias: torch.Tensor | None, q: torch.Tensor, candidates_t: torch.Tensor, alpha: float = 1.0
) -> torch.Tensor:
    """``torch.addmm(bias, q, candidates_t, alpha=alpha)`` (``torch.mm(q, candidates_t)`` when ``bias`` is
    ``None``); on CPU computed in pieces of about :data:`PIECE_COLUMNS` columns, each written into its columns of
    the one result, or as one product, whichever is faster on this host (:data:`LAYOUT`, :class:`LayoutChooser`).

    Why pieces can be faster (our explanation, not profiled): the matrix library packs the candidate matrix anew for
    every product, and a piece of it is packed once for all the query rows and stays in cache while they use it.
    Every output element is still one dot product over all features in the same order, so the bits are those of one
    product (the tests check it).

    :param bias: broadcastable to (b, E): a (b, 1) offset per row or a (1, E) offset per candidate; ``None``: no
        offset (the product alone, which also spares writing the offset into the result and reading it back)
    :param q: shape: (b, D)
    :param candidates_t: shape: (D, E)
    :param alpha: the product's factor (only with a ``bias``)
    """
    if bias is None and alpha != 1.0:
        raise ValueError("alpha needs a bias (use bias=torch.zeros(1, 1))")
    b, E = q.shape[0], candidates_t.shape[1]
    pieces = -(-E // PIECE_COLUMNS)
    if q.device.type != "cpu" or pieces <= 1 or b == 0:
        return _whole(bias, q, candidates_t, alpha)
    if LAYOUT != "auto":
        return _in_pieces(bias, q, candidates_t, alpha, 1 if LAYOUT == "whole" else pieces)
    # the shape, less the rows (blocks differ in rows): features, candidates, dtype, offset per row or per candidate
    key = (q.shape[1], E, q.dtype, None if bias is None else bias.shape[-1])
    layout = _chooser.layout(key)
    trial = key not in _chooser.chosen
    start = time.perf_counter()
    out = _in_pieces(bias, q, candidates_t, alpha, 1 if layout == "whole" else pieces)
    if trial:
        _chooser.record(key, layout, (time.perf_counter() - start) / b)
    return out


def _whole(bias: torch.Tensor | None, q: torch.Tensor, candidates_t: torch.Tensor, alpha: float) -> torch.Tensor:
    return torch.mm(q, candidates_t) if bias is None else torch.addmm(bias, q, candidates_t, alpha=alpha)


def _in_pieces(
    bias: torch.Tensor | None, q: torch.Tensor, candidates_t: torch.Tensor, alpha: float, pieces: int
) -> torch.Tensor:
    """The product in ``pieces`` pieces of columns (one piece: :func:`_whole`)."""
    if pieces <= 1:
        return _whole(bias, q, candidates_t, alpha)
    b, E = q.shape[0], candidates_t.shape[1]
    out = torch.empty(b, E, dtype=torch.result_type(q, candidates_t), device=q.device)
    bias = bias.expand(b, E) if bias is not None else None
    bounds = [E * i // pieces for i in range(pieces + 1)]
    for start, stop in zip(bounds, bounds[1:]):
        if bias is None:
            torch.mm(q, candidates_t[:, start:stop], out=out[:, start:stop])
        else:
            torch.addmm(bias[:, start:stop], q, candidates_t[:, start:stop], alpha=alpha, out=out[:, start:stop])
    return out
