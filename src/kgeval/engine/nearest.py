"""Nearest-neighbour reductions of a similarity block with torch's results, faster on the CPU.

BootEA's bootstrapping (:mod:`kgeval.studies.s3.bootea`) reduces blocks of cosine similarities two ways: each row's
and column's maximum with its index (mutual nearest neighbours) and each row's ``k`` largest entries (the truncated
negative pool). On one CPU thread torch spent more on these reductions than on the products behind them.
:func:`row_column_max` and :func:`topk_indices` return what ``torch.max(dim=...)`` and ``torch.topk`` return, from
the compiled kernels of :mod:`kgeval.engine.nearest_kernel`, with torch itself for what those cannot answer
exactly: a block holding a NaN, a row whose ``k + 1`` largest entries are not all distinct (torch orders equal entries
as its sort happens to), and anything but a 2-D float32 CPU tensor outside autograd.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["row_column_max", "topk_indices"]


def _compiled(sims: torch.Tensor) -> bool:
    """Whether ``sims`` takes the compiled path: a non-empty 2-D float32 CPU tensor outside autograd."""
    return (
        sims.device.type == "cpu"
        and sims.dtype == torch.float32
        and sims.dim() == 2
        and sims.numel() > 0
        and not (sims.requires_grad and torch.is_grad_enabled())
    )


def row_column_max(sims: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(*sims.max(dim=1), *sims.max(dim=0))``: each row's maximum and its first index, then each column's.

    :param sims: shape (b, c)
    :returns: row values (b,), row indices (b,) long, column values (c,), column indices (c,) long
    """
    if _compiled(sims):
        from kgeval.engine.nearest_kernel import row_column_maxima

        block = np.ascontiguousarray(sims.detach().numpy())
        b, c = block.shape
        row_value, col_value = np.empty(b, np.float32), np.empty(c, np.float32)
        row_arg, col_arg = np.empty(b, np.int64), np.empty(c, np.int64)
        if not row_column_maxima(block, row_value, row_arg, col_value, col_arg):
            return tuple(torch.from_numpy(x) for x in (row_value, row_arg, col_value, col_arg))  # type: ignore[return-value]
    return (*sims.max(dim=1), *sims.max(dim=0))  # type: ignore[return-value]


def topk_indices(sims: torch.Tensor, k: int) -> torch.Tensor:
    """``sims.topk(k, dim=1).indices``: each row's ``k`` largest entries' columns, largest first.

    :param sims: shape (b, c), ``0 <= k <= c``
    :returns: shape (b, k) long
    """
    k = int(k)
    if not _compiled(sims) or k < 1 or k > sims.shape[1]:
        return sims.topk(k, dim=1).indices
    from kgeval.engine.nearest_kernel import largest_rows

    block = np.ascontiguousarray(sims.detach().numpy())
    ids = np.empty((block.shape[0], k), np.int64)
    exact = np.empty(block.shape[0], np.bool_)
    largest_rows(block, k, ids, exact)
    out = torch.from_numpy(ids)
    rest = np.flatnonzero(~exact)
    if len(rest):  # ties among a row's k + 1 largest, or a NaN: torch's own answer for those rows
        rows = torch.from_numpy(rest)
        out[rows] = sims[rows].topk(k, dim=1).indices
    return out
