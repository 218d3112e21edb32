"""Fast per-row counts of ``True`` in boolean matrices (the ranking engine's comparisons).

numpy has no fast row-wise popcount: ``mask.sum(axis=1)`` widens every byte to an integer and takes about 2.5 times
as long as the comparison that made the mask. Written by hand because no maintained library offers it: the mask is
kept in a buffer whose rows are padded with zeros to a multiple of 255 words of 8 bytes, each row is read as uint64
words, and blocks of 255 words are summed as integers. Every byte of a word is 0 or 1, so each byte lane of the sum
holds at most 255 and never carries into its neighbour; the lanes are then added up as bytes. About 5 times faster
than ``mask.sum(axis=1)`` on rows of 14,505 candidates.
"""

from __future__ import annotations

import numpy as np

#: bytes per summed block of a row: 255 uint64 words, so that no byte lane of their sum overflows
BLOCK_BYTES = 255 * 8


def padded_width(columns: int) -> int:
    """The row length of a :class:`MaskBuffer` holding ``columns`` booleans (a multiple of :data:`BLOCK_BYTES`)."""
    return max(1, -(-int(columns) // BLOCK_BYTES)) * BLOCK_BYTES


class MaskBuffer:
    """A reusable boolean ``(rows, columns)`` mask whose rows are zero-padded for :meth:`row_counts`.

    Write into :meth:`view` only (e.g. ``np.greater(a, b, out=buffer.view(rows))``): the padding must stay zero.
    """

    def __init__(self, rows: int, columns: int) -> None:
        self.columns = int(columns)
        self._data = np.zeros((max(int(rows), 1), padded_width(columns)), dtype=bool)

    @property
    def capacity(self) -> int:
        """The most rows a view may have."""
        return self._data.shape[0]

    def view(self, rows: int) -> np.ndarray:
        """The writable ``(rows, columns)`` mask (a strided view into the padded buffer)."""
        if rows > self.capacity:
            raise ValueError(f"a mask of {rows} rows does not fit a buffer of {self.capacity}")
        return self._data[:rows, : self.columns]

    def row_counts(self, rows: int) -> np.ndarray:
        """``view(rows).sum(axis=1)`` as int64, computed on 64-bit words (module docstring)."""
        words = self._data[:rows].view(np.uint64).reshape(rows, -1, 255)
        lanes = words.sum(axis=2, dtype=np.uint64)  # (rows, blocks); every byte lane <= 255
        return lanes.view(np.uint8).sum(axis=1, dtype=np.int64)
