"""Speed kernels of the scorers' matrix products: they make scoring fast and never change a score's bits.

:func:`addmm_in_pieces` computes a CPU matrix product in pieces of candidate columns; :func:`single_threaded` runs
the small element-wise operations around the products on one torch thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

__all__ = ["PIECE_COLUMNS", "addmm_in_pieces", "single_threaded"]


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


def addmm_in_pieces(
    bias: torch.Tensor | None, q: torch.Tensor, candidates_t: torch.Tensor, alpha: float = 1.0
) -> torch.Tensor:
    """``torch.addmm(bias, q, candidates_t, alpha=alpha)`` (``torch.mm(q, candidates_t)`` when ``bias`` is
    ``None``); on CPU computed in pieces of about :data:`PIECE_COLUMNS` columns, each written into its columns of
    the one result.

    Our explanation, not profiled: the matrix library packs the candidate matrix anew for every product, and a piece
    of it is packed once for all the query rows and stays in cache while they use it. Measured on a 2-core AMD EPYC
    host (MKL in torch 2.13), two threads each multiplying blocks of 115 rows by FB15k-237's 14,505 candidates: 8
    pieces instead of one product took 41 instead of 63 microseconds per row with 200 features (DistMult), 78
    instead of 104 with 400 (ComplEx).
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
        return torch.mm(q, candidates_t) if bias is None else torch.addmm(bias, q, candidates_t, alpha=alpha)
    out = torch.empty(b, E, dtype=torch.result_type(q, candidates_t), device=q.device)
    bias = bias.expand(b, E) if bias is not None else None
    bounds = [E * i // pieces for i in range(pieces + 1)]
    for start, stop in zip(bounds, bounds[1:]):
        if bias is None:
            torch.mm(q, candidates_t[:, start:stop], out=out[:, start:stop])
        else:
            torch.addmm(bias[:, start:stop], q, candidates_t[:, start:stop], alpha=alpha, out=out[:, start:stop])
    return out
