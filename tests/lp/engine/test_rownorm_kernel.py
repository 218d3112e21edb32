"""The compiled complex row-norm loop: torch's bits, against torch's kernel and an element-by-element reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgeval.lp.engine.rownorm_kernel import NOT_FINITE, ZERO, complex_row_norms


def _rows(n: int, d: int, seed: int) -> np.ndarray:
    """(n, d, 2) float32 (re, im) pairs over many magnitudes, with zero, subnormal and huge parts."""
    rng = np.random.default_rng(seed)
    pairs = rng.standard_normal((n, d, 2)) * np.exp(rng.standard_normal((n, 1, 1)) * 8)
    pairs = pairs.astype(np.float32)
    if n > 3:
        pairs[0] = 0.0
        pairs[1, :, 1] = 0.0  # real rows
        pairs[2, : max(1, d // 2)] = np.float32(1e-41)  # subnormal parts
    return np.ascontiguousarray(pairs)


def _reference(pairs: np.ndarray, reverse: bool = False) -> np.ndarray:
    """One element at a time in numpy scalars: hypot in double rounded to float, squared and summed in float."""
    out = np.empty(pairs.shape[0], dtype=np.float32)
    for i, row in enumerate(pairs):
        total = np.float32(0.0)
        for re, im in row[::-1] if reverse else row:
            magnitude = np.float32(np.sqrt(np.float64(re) * np.float64(re) + np.float64(im) * np.float64(im)))
            total = np.float32(total + magnitude * magnitude)
        out[i] = np.sqrt(total)
    return out


def _torch(pairs: np.ndarray) -> np.ndarray:
    return torch.linalg.vector_norm(torch.view_as_complex(torch.from_numpy(pairs)), dim=-1).numpy()


def _run(pairs: np.ndarray) -> np.ndarray:
    out = np.full(pairs.shape[0], np.nan, dtype=np.float32)
    flags = complex_row_norms(pairs, out)
    assert flags == (NOT_FINITE if not np.isfinite(out).all() else 0) + (ZERO if (out == 0).any() else 0)
    return out


@pytest.mark.parametrize("n, d", [(0, 4), (1, 1), (5, 2), (64, 7), (300, 32), (40, 200)])
def test_loop_has_the_references_and_torchs_bits(n, d):
    pairs = _rows(n, d, seed=n + d)
    got = _run(pairs)
    assert np.array_equal(got.view(np.int32), _reference(pairs).view(np.int32))
    if d >= 2 and n:  # rows of one element: torch takes its vectorized abs, which differs from hypotf in rare last bits
        assert np.array_equal(got.view(np.int32), _torch(pairs).view(np.int32))


def test_another_order_differs():
    """The comparison can fail: the same sums in reverse order differ from torch's in some rows."""
    pairs = _rows(400, 33, seed=3)
    assert not np.array_equal(_reference(pairs, reverse=True).view(np.int32), _torch(pairs).view(np.int32))


def test_non_finite_parts_propagate():
    pairs = _rows(4, 3, seed=5)
    pairs[0, 1, 0] = np.inf
    pairs[1, 2, 1] = np.nan
    pairs[2, 0] = (3e38, 3e38)  # the magnitude overflows to inf in float
    got = _run(pairs)
    assert np.isinf(got[0]) and np.isnan(got[1]) and np.isinf(got[2]) and np.isfinite(got[3])
    assert complex_row_norms(pairs, got) == NOT_FINITE


def test_flags_report_zero_rows():
    pairs = _rows(6, 5, seed=9)  # row 0 is zero
    assert complex_row_norms(pairs, np.empty(6, np.float32)) == ZERO
    assert complex_row_norms(pairs[1:], np.empty(5, np.float32)) == 0
