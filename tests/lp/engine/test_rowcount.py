"""Row counts on padded 64-bit words against numpy's boolean sums."""

import numpy as np
import pytest

from kgeval.lp.engine.rowcount import BLOCK_BYTES, MaskBuffer, padded_width


@pytest.mark.parametrize("columns", [1, 7, 8, 255, 2039, 2040, 2041, 14505, 40943])
def test_row_counts_match_sum(columns: int) -> None:
    rng = np.random.default_rng(columns)
    buffer = MaskBuffer(6, columns)
    mask = buffer.view(5)
    mask[:] = rng.random((5, columns)) < rng.random((5, 1))
    mask[0] = True  # every byte lane at its largest
    mask[1] = False
    np.testing.assert_array_equal(buffer.row_counts(5), mask.sum(axis=1))
    assert buffer.row_counts(5)[0] == columns


def test_reuse_keeps_padding_zero() -> None:
    buffer = MaskBuffer(4, 100)
    np.greater(np.ones((4, 100)), 0, out=buffer.view(4))
    np.greater(np.zeros((2, 100)), 0, out=buffer.view(2))
    np.testing.assert_array_equal(buffer.row_counts(4), [0, 0, 100, 100])


def test_padding_and_capacity() -> None:
    assert padded_width(1) == BLOCK_BYTES and padded_width(BLOCK_BYTES + 1) == 2 * BLOCK_BYTES
    with pytest.raises(ValueError, match="does not fit"):
        MaskBuffer(2, 10).view(3)
