"""Tests for kgeval.engine.memory: nested blocks keep glibc's setting until the outermost one closes."""

from __future__ import annotations

import torch

import kgeval.engine.memory as memory


def test_nested_blocks_restore_only_at_the_outermost(monkeypatch):
    calls: list[tuple] = []

    class FakeLibc:
        def mallopt(self, parameter, value):
            calls.append(("mallopt", parameter, value))
            return 1

        def malloc_trim(self, pad):
            calls.append(("trim", pad))
            return 1

    monkeypatch.setattr(memory, "_glibc", lambda: FakeLibc())
    with memory.reuse_freed_memory() as outer:
        assert outer
        with memory.reuse_freed_memory() as inner:
            assert inner
        # the inner block closed: glibc's defaults must not be back yet
        assert ("trim", 0) not in calls
        assert ("mallopt", memory._M_MMAP_MAX, memory._DEFAULT_MMAP_MAX) not in calls
    assert calls[-3:] == [
        ("mallopt", memory._M_MMAP_MAX, memory._DEFAULT_MMAP_MAX),
        ("mallopt", memory._M_TRIM_THRESHOLD, memory._DEFAULT_TRIM_THRESHOLD),
        ("trim", 0),
    ]
    assert memory._depth == 0


def test_without_glibc_nothing_happens(monkeypatch):
    monkeypatch.setattr(memory, "_glibc", lambda: None)
    with memory.reuse_freed_memory() as active:
        assert not active
    assert memory._depth == 0


def test_reuse_freed_memory_changes_no_value():
    import platform

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(512, 20_000, generator=generator)  # 40 MB, above glibc's largest mmap threshold
    expected = (x * 2).sum(dim=1)
    with memory.reuse_freed_memory() as active:
        for _ in range(3):
            assert torch.equal((x * 2).sum(dim=1), expected)
    assert active == (platform.libc_ver()[0] == "glibc")
