"""Seeded train/test splits of an alignment with nested test subsets (S1 test-size sweep).

:func:`split_alignment` draws one permutation ``p`` of the n reference pairs with
``numpy.random.default_rng(seed)`` and takes

- **train** = the pairs at ``p[0], p[1], ..., p[k-1]`` (k = ``num_train``);
- **test pool** = the remaining pairs in *reverse* permutation order ``p[n-1], p[n-2], ..., p[k]``.

The nested test subset of size t is the first t pairs of the pool. Because the pool is read from the end of the
permutation, the subset of size t is the *same* set of pairs for every ``num_train`` with ``k + t <= n`` (given the
seed): lines for different training sizes in the sweep's figure differ only by the model, not by the test pairs.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["split_alignment", "nested_sizes"]


def split_alignment(alignment: np.ndarray, num_train: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Split an alignment into training pairs and an ordered test pool (see module doc).

    :param alignment: shape (n, 2)
    :param num_train: k, 0 <= k < n
    :param seed: the split seed
    :returns: ``train`` shape (k, 2) and ``pool`` shape (n - k, 2), the pool in nested order
    :raises ValueError: if ``num_train`` is negative or leaves no test pair
    """
    alignment = np.asarray(alignment, dtype=np.int64).reshape(-1, 2)
    n = len(alignment)
    if not 0 <= num_train < n:
        raise ValueError(f"num_train={num_train} must lie in 0..{n - 1} for an alignment of {n} pairs")
    perm = np.random.default_rng(seed).permutation(n)
    train = alignment[perm[:num_train]]
    pool = alignment[perm[num_train:][::-1]]
    return train, pool


def nested_sizes(pool_size: int, test_sizes: Iterable[int]) -> list[int]:
    """The requested test sizes that fit into a pool of ``pool_size`` pairs, ascending and unique."""
    return sorted({int(t) for t in test_sizes if 0 < int(t) <= pool_size})
