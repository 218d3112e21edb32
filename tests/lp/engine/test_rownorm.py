"""Row norms: the same bits and gradients as torch's own 2-norm, by direct comparison with torch's kernel."""

from __future__ import annotations

import pytest
import torch

from kgeval.lp.engine import rownorm
from kgeval.lp.engine.rownorm import row_norm, unique_row_norm


def emulation_status() -> bool | None:
    """Whether the emulation matched torch's kernel in this process (``None``: not checked yet)."""
    return rownorm._emulation.verdict


@pytest.fixture(autouse=True)
def _small_inputs_too(monkeypatch):
    """The tests' tensors are small: take the fast paths for them too (the threshold is tested on its own)."""
    monkeypatch.setattr(rownorm, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(rownorm, "UNIQUE_MIN_ELEMENTS", 0)


def test_small_inputs_go_to_torch(monkeypatch):
    monkeypatch.setattr(rownorm, "MIN_ELEMENTS", 1000)
    monkeypatch.setattr(rownorm, "UNIQUE_MIN_ELEMENTS", 1000)
    monkeypatch.setattr(rownorm, "_emulate", None)  # would raise if called
    z = _complex_rows(10, 99)
    assert torch.equal(row_norm(z), torch.linalg.vector_norm(z, dim=-1))
    x = torch.randn(10, 99)
    assert torch.equal(unique_row_norm(x, torch.zeros(10, dtype=torch.long)), torch.linalg.vector_norm(x, dim=-1))
    assert rownorm._emulates(_complex_rows(11, 99))


def _complex_rows(n: int, d: int, seed: int = 0) -> torch.Tensor:
    """Rows of widely different magnitudes, where float rounding differs between summation orders."""
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(n, d, 2, generator=generator)
    values *= torch.exp(torch.randn(n, 1, 1, generator=generator) * 6)
    return torch.view_as_complex(values.contiguous())


def _bits(x: torch.Tensor) -> torch.Tensor:
    x = torch.view_as_real(x) if x.is_complex() else x
    return x.contiguous().view(torch.int32)


@pytest.mark.parametrize("d", [2, 7, 200])
def test_emulation_has_torchs_bits(d):
    z = _complex_rows(3000, d)
    z[0] = 0
    z[1, : max(1, d // 2)] = 1e-41  # subnormal parts
    assert torch.equal(_bits(rownorm._emulate(z)[0]), _bits(torch.linalg.vector_norm(z, dim=-1)))


@pytest.mark.parametrize("n, zero_rows", [(2500, 3), (100, 3), (100, 0)])
def test_row_norm_forward_and_gradient_equal_torch(n, zero_rows):
    """Many rows (split over threads) and one task's rows, with zero rows (the gradient is masked to zero there)
    and without (the mask is skipped)."""
    base = _complex_rows(n, 33, seed=1)
    base[:zero_rows] = 0
    weights = torch.randn(n, generator=torch.Generator().manual_seed(2))
    ours_z, torch_z = base.clone().requires_grad_(), base.clone().requires_grad_()
    ours, theirs = row_norm(ours_z), torch.linalg.vector_norm(torch_z, dim=-1)
    assert torch.equal(_bits(ours), _bits(theirs))
    (ours * weights).sum().backward()
    (theirs * weights).sum().backward()
    assert torch.equal(_bits(ours_z.grad), _bits(torch_z.grad))
    assert emulation_status() is True  # the fast path ran (and matched torch's kernel) on this machine


def test_rows_of_one_element_are_left_to_torch():
    # torch takes their vectorized abs, which differs from hypotf in rare last bits
    z = _complex_rows(20000, 1, seed=7)
    assert torch.equal(_bits(row_norm(z)), _bits(torch.linalg.vector_norm(z, dim=-1)))


def test_row_norm_of_batched_and_strided_rows():
    z = _complex_rows(64, 10, seed=3).reshape(8, 8, 10).transpose(0, 1)
    assert torch.equal(_bits(row_norm(z)), _bits(torch.linalg.vector_norm(z, dim=-1)))


def test_non_finite_rows_are_left_to_torch():
    z = _complex_rows(100, 5, seed=4)
    z[3, 2] = complex(float("inf"), float("nan"))  # hypot(inf, nan) is inf, the plain formula would give NaN
    z[4, 0] = complex(float("nan"), 1.0)
    z[5, 1] = complex(3e38, 3e38)  # overflows to inf
    ours, theirs = row_norm(z), torch.linalg.vector_norm(z, dim=-1)
    assert torch.equal(_bits(ours), _bits(theirs))
    assert torch.isinf(ours[3]) and torch.isnan(ours[4]) and torch.isinf(ours[5])


def test_failed_check_falls_back_to_torch(monkeypatch):
    monkeypatch.setattr(rownorm._emulation, "verdict", None)
    monkeypatch.setattr(rownorm, "_emulate", lambda z: (torch.zeros(z.shape[:-1]), True, True))  # a broken one
    z = _complex_rows(50, 4, seed=5)
    assert torch.equal(row_norm(z), torch.linalg.vector_norm(z, dim=-1))
    assert emulation_status() is False


def test_real_rows_use_torchs_kernel():
    x = torch.randn(40, 6, requires_grad=True)
    assert torch.equal(row_norm(x), torch.linalg.vector_norm(x, dim=-1))


def _embedding_gradients(weight: torch.Tensor, indices: torch.Tensor, complex_: bool, uniform: bool, ours: bool):
    """Norms of embeddings looked up as PyKEEN does (``nn.Embedding``, complex ones viewed from float pairs)."""
    w = weight.clone().requires_grad_()
    x = torch.nn.functional.embedding(indices, w)
    if complex_:
        x = torch.view_as_complex(x.view(len(indices), -1, 2))
    norm = unique_row_norm(x, indices) if ours else torch.linalg.vector_norm(x, dim=-1)
    # a mean's gradient (one value for every row), or a weighted sum's
    loss = norm.mean() if uniform else (norm * torch.linspace(-1, 1, len(indices))).sum()
    # the looked-up rows also get another gradient, as embeddings get the interaction's
    loss = loss + (x.real if complex_ else x).pow(2).sum() * 1e-3
    loss.backward()
    return norm.detach(), w.grad


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("uniform", [True, False])
def test_unique_row_norm_equals_torch_on_looked_up_rows(complex_, uniform):
    generator = torch.Generator().manual_seed(6)
    weight = torch.randn(30, 34, generator=generator)
    weight[4] = 0
    indices = torch.randint(0, 30, (2000,), generator=generator)
    ours = _embedding_gradients(weight, indices, complex_, uniform, ours=True)
    reference = _embedding_gradients(weight, indices, complex_, uniform, ours=False)
    # torch's own path is deterministic here, so that any difference is ours
    assert torch.equal(_bits(reference[1]), _bits(_embedding_gradients(weight, indices, complex_, uniform, False)[1]))
    assert torch.equal(_bits(ours[0]), _bits(reference[0]))
    assert torch.equal(_bits(ours[1]), _bits(reference[1]))


def test_unique_row_norm_with_mismatched_keys_is_plain():
    x = torch.randn(5, 3)
    assert torch.equal(unique_row_norm(x, torch.arange(4)), torch.linalg.vector_norm(x, dim=-1))


def test_emulation_flags_come_from_every_task():
    """A zero row and a non-finite row in later tasks of a split tensor are both reported."""
    z = _complex_rows(3 * rownorm._CHUNK_ROWS + 5, 4, seed=8)
    norms, finite, zeros = rownorm._emulate(z)
    assert finite and not zeros
    z[rownorm._CHUNK_ROWS + 1] = 0
    z[2 * rownorm._CHUNK_ROWS + 2, 3] = complex(float("nan"), 0.0)
    norms, finite, zeros = rownorm._emulate(z)
    assert not finite and zeros
    assert norms[rownorm._CHUNK_ROWS + 1] == 0 and torch.isnan(norms[2 * rownorm._CHUNK_ROWS + 2])
