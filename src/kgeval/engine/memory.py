"""Keeping large freed blocks in glibc's heap while a CPU-heavy loop runs (training, ranking).

glibc's ``malloc`` serves every block above its mmap threshold (at most 32 MiB) with its own ``mmap`` and unmaps it
on ``free``. A loop that allocates and frees tensors of tens of megabytes per batch (a training step's intermediates,
a batch of score rows) then pays a page fault, and a kernel zero-fill, for every 4 KiB of every tensor, every batch.
:func:`reuse_freed_memory` turns that off for the duration of a block. Written by hand (``mallopt`` through
``ctypes``) because neither torch nor numpy exposes it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["reuse_freed_memory"]

# mallopt(3) parameter numbers and glibc's documented defaults (malloc/malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4
_DEFAULT_TRIM_THRESHOLD, _DEFAULT_MMAP_MAX = 128 * 1024, 65536

#: how many ``reuse_freed_memory`` blocks are open in this process; the setting is undone when the last one closes
_depth = 0
_lock = threading.Lock()


def _glibc() -> Any | None:
    """The C library when it is glibc (which has ``mallopt``), else ``None`` (musl, macOS, Windows)."""
    import ctypes
    import ctypes.util
    import platform

    if platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


@contextlib.contextmanager
def reuse_freed_memory() -> Iterator[bool]:
    """Within the block, glibc's ``malloc`` keeps large freed blocks for reuse instead of unmapping them.

    ``mmap`` is turned off for ``malloc`` (blocks come from the heap) and the heap is not trimmed, so the pages of one
    batch's tensors serve the next batch. Only where memory lives changes, not a single value computed. Blocks may
    nest (ranking inside a training run): glibc's defaults are restored, and the heap trimmed, when the outermost
    block closes. Elsewhere than glibc (or if ``mallopt`` refuses) this does nothing.

    :yields: whether the setting is in effect
    """
    global _depth
    libc = _glibc()
    with _lock:
        _depth += 1
        active = libc is not None and bool(libc.mallopt(_M_MMAP_MAX, 0)) and bool(
            libc.mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)
        )
    try:
        yield active
    finally:
        with _lock:
            _depth -= 1
            if libc is not None and _depth == 0:
                libc.mallopt(_M_MMAP_MAX, _DEFAULT_MMAP_MAX)
                libc.mallopt(_M_TRIM_THRESHOLD, _DEFAULT_TRIM_THRESHOLD)
                libc.malloc_trim(0)
