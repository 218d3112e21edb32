"""An isotonic calibration function evaluated as :func:`numpy.interp` does, bit for bit, with the segment of each
score found by a uniform grid instead of a binary search (S5's test assessment).

Written by hand because no maintained library offers it: :func:`numpy.interp` (which
:meth:`sklearn.isotonic.IsotonicRegression.predict` calls) binary-searches the thresholds for every score, and S5's test
assessment evaluates the isotonic function on every negative (3 * 10^8 on FB15k-237). Here a uniform grid over the
thresholds' range answers most scores by one lookup: ``cell(x) = floor((x - lo) / width)`` is monotone in ``x``
(subtraction of a constant, multiplication by a positive one, floor and clip all are), so a score whose cell holds no
threshold lies strictly above every threshold in a lower cell and strictly below every one in a higher cell. Only the
scores in cells that hold a threshold are binary-searched (:func:`numpy.searchsorted`).

The value is then numpy's own arithmetic: with ``j`` the segment (``xp[j] <= x < xp[j + 1]``) and
``slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])``, ``slope * (x - xp[j]) + fp[j]``; ``fp[0]`` left of the first
threshold and ``fp[-1]`` from the last one on (both as ``0 * (x - base) + value``). Non-finite scores or slopes go
to :func:`numpy.interp` itself. ``tests/studies/s5/test_s5_interpolation.py`` checks bit equality with
:func:`numpy.interp` on random, tied, out-of-range and boundary scores.
"""

from __future__ import annotations

import numpy as np

__all__ = ["GridInterpolation"]


def _cells(values: np.ndarray, lo: float, inv_width: float, top: int, work: np.ndarray) -> np.ndarray:
    """``clip(floor((values - lo) * inv_width), -1, top) + 1`` as intp: a monotone map of the values to cells."""
    np.subtract(values, lo, out=work)
    work *= inv_width
    np.floor(work, out=work)
    np.clip(work, -1, top, out=work)
    work += 1
    return work.astype(np.intp)


class GridInterpolation:
    """``numpy.interp(x, xp, fp)`` for strictly increasing thresholds ``xp``, bit for bit (module docstring).

    :param xp: shape: (t,) strictly increasing, finite
    :param fp: shape: (t,) the function's values at ``xp``
    """

    def __init__(self, xp: np.ndarray, fp: np.ndarray) -> None:
        xp = np.asarray(xp, dtype=np.float64)
        fp = np.asarray(fp, dtype=np.float64)
        if xp.ndim != 1 or xp.shape != fp.shape or not xp.size:
            raise ValueError(f"thresholds and values must be non-empty and of one shape, got {xp.shape}, {fp.shape}")
        if not np.all(np.diff(xp) > 0):
            raise ValueError("thresholds must be strictly increasing")
        self.xp, self.fp = xp, fp
        slopes = (fp[1:] - fp[:-1]) / (xp[1:] - xp[:-1])
        #: whether the arithmetic is numpy's everywhere (non-finite slopes take numpy's other branches)
        self.exact = bool(np.isfinite(xp).all() and np.isfinite(fp).all() and np.isfinite(slopes).all())
        # by k = j + 1 (j numpy's segment, -1 left of xp[0], t - 1 from xp[-1] on): slope, base and value
        self._slope = np.concatenate([[0.0], slopes, [0.0]])
        self._base = np.concatenate([[xp[0]], xp[:-1], [xp[-1]]])
        self._value = np.concatenate([[fp[0]], fp[:-1], [fp[-1]]])
        self._num_cells = int(np.clip(16 * xp.size, 1024, 2**20))
        self._lo = float(xp[0])
        span = float(xp[-1]) - self._lo
        self._inv_width = self._num_cells / span if span > 0 else 1.0
        # cells -1 .. num_cells are stored at 0 .. num_cells + 1; the thresholds' cells by the same arithmetic
        threshold_cells = _cells(xp, self._lo, self._inv_width, self._num_cells, np.empty_like(xp))
        below = np.searchsorted(threshold_cells, np.arange(self._num_cells + 2), side="left")
        #: per cell: k (the number of thresholds <= any score in it), or -1 where the cell holds a threshold
        self._code = below.astype(np.intp)
        self._code[threshold_cells] = -1

    def __call__(self, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The interpolated values of ``x`` (any shape, float64), written into ``out`` if given."""
        x = np.asarray(x, dtype=np.float64)
        if not x.size or not self.exact or not (np.isfinite(x.min()) and np.isfinite(x.max())):
            result = np.interp(x, self.xp, self.fp)
            if out is None:
                return result
            out[...] = result
            return out
        if out is not None and (not out.flags.c_contiguous or np.may_share_memory(out, x)):
            out[...] = self(x)
            return out
        flat = x.reshape(-1)
        out = np.empty_like(x) if out is None else out
        work = out.reshape(-1)
        k = self._code[_cells(flat, self._lo, self._inv_width, self._num_cells, work)]
        refine = np.flatnonzero(k < 0)
        if refine.size:
            k[refine] = np.searchsorted(self.xp, flat[refine], side="right")
        np.take(self._base, k, out=work)
        np.subtract(flat, work, out=work)
        work *= self._slope[k]
        work += self._value[k]
        return out
