"""Known-answer indices for filtered ranking.

A :class:`FilterIndex` answers, for a batch of link-prediction queries ``(anchor, relation, ?)``, which candidate
entities are known answers (in train, valid, test, ... triples) and must therefore be removed from the candidate set
before ranking. It is built once per dataset and looked up fully vectorized: the known ``(key, answer)`` pairs are
kept as a compressed sparse row (CSR) structure over sorted integer keys ``key = anchor * num_relations + relation``,
and a batch of queries is resolved with one :func:`numpy.searchsorted` plus a :func:`numpy.repeat`-based expansion,
never a Python loop over queries.

Sides follow PyKEEN's naming: the ``"tail"`` side predicts tails, so its anchor is the head and its answers are
tails; the ``"head"`` side predicts heads, its anchor is the tail and its answers are heads.

Written by hand because PyKEEN only offers a dense per-batch comparison against all known triples
(``create_sparse_positive_filter_``), which costs ``O(batch_size * num_triples)`` per batch.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

# The index is numpy; torch appears only as an accepted input type. Not importing it keeps the jobs that filter
# or count negatives without a model (S5 tables, dataset expectations) from paying its import.
if TYPE_CHECKING:
    import torch

__all__ = [
    "Side",
    "SIDES",
    "CSRIndex",
    "FilterIndex",
    "expand_csr",
    "as_triples_array",
]

Side = Literal["head", "tail"]
#: the two link-prediction sides, in PyKEEN's order
SIDES: tuple[Side, Side] = ("head", "tail")

#: column of the anchor (the known entity) and of the answer (the predicted entity) per side
_ANCHOR_COLUMN = {"head": 2, "tail": 0}
_ANSWER_COLUMN = {"head": 0, "tail": 2}


def as_triples_array(triples: torch.Tensor | np.ndarray | Sequence, name: str = "triples") -> np.ndarray:
    """Convert ID-based triples to a contiguous ``int64`` array of shape ``(m, 3)``.

    :param triples: shape: (m, 3) integer (head, relation, tail) IDs, as a tensor, an array or nested lists
    :param name: how to name the argument in error messages
    :return: shape: (m, 3), dtype int64
    :raises ValueError: if the shape is not ``(m, 3)`` or IDs are negative
    """
    torch = sys.modules.get("torch")  # a tensor can only come from a loaded torch; never import it just to check
    if torch is not None and isinstance(triples, torch.Tensor):
        array = triples.detach().cpu().numpy()
    else:
        array = np.asarray(triples)
    if array.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    if array.ndim != 2 or array.shape[1] != 3:
        raise ValueError(f"{name} must have shape (m, 3) of (head, relation, tail) IDs, got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold integer IDs, got dtype {array.dtype}; map labels to IDs first")
    array = np.ascontiguousarray(array, dtype=np.int64)
    if (array < 0).any():
        raise ValueError(f"{name} contains negative IDs (first bad row: {int(np.flatnonzero((array < 0).any(1))[0])})")
    return array


def expand_csr(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Expand per-row ``[start, start + length)`` ranges into flat (row, position) pairs, vectorized.

    :param starts: shape: (n,) first position of each row's range
    :param lengths: shape: (n,) number of positions of each row
    :return: ``(rows, positions)``, each of shape ``(lengths.sum(),)``; rows are ``0..n-1`` in order
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    total = int(lengths.sum())
    rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    if total == 0:
        return rows, np.zeros(0, dtype=np.int64)
    # offset of each flat element within its row: global index minus the index where its row begins
    row_begin = np.cumsum(lengths) - lengths
    positions = np.arange(total, dtype=np.int64) - np.repeat(row_begin - starts, lengths)
    return rows, positions


@dataclass(frozen=True)
class CSRIndex:
    """Sorted unique integer keys, each with a sorted set of integer values (compressed sparse rows).

    :ivar keys: shape: (k,) sorted unique keys
    :ivar indptr: shape: (k + 1,) values of ``keys[i]`` are ``values[indptr[i]:indptr[i + 1]]``
    :ivar values: shape: (nnz,) values, sorted and unique within each key
    """

    keys: np.ndarray
    indptr: np.ndarray
    values: np.ndarray

    @classmethod
    def from_pairs(cls, keys: np.ndarray, values: np.ndarray) -> CSRIndex:
        """Build from (key, value) pairs; duplicates are removed.

        :param keys: shape: (m,) int64
        :param values: shape: (m,) int64
        """
        keys = np.asarray(keys, dtype=np.int64)
        values = np.asarray(values, dtype=np.int64)
        width = int(values.max()) + 1 if len(values) else 1
        if len(keys) and keys.min() >= 0 and values.min() >= 0 and int(keys.max()) < (2**62) // width:
            # one sort of a combined integer orders the pairs by key, then value, as lexsort does; np.sort and a
            # mask of repeats take a third of the time of lexsort or np.unique here (numpy 2.4)
            pairs = np.sort(keys * width + values)
            pairs = pairs[np.diff(pairs, prepend=pairs[:1] - 1) != 0]
            keys = pairs // width
            values = pairs - keys * width
        else:
            order = np.lexsort((values, keys))
            keys, values = keys[order], values[order]
            if len(keys):
                keep = np.ones(len(keys), dtype=bool)
                keep[1:] = (keys[1:] != keys[:-1]) | (values[1:] != values[:-1])
                keys, values = keys[keep], values[keep]
        # keys are sorted: each new key starts where it differs from the one before
        starts = np.flatnonzero(np.diff(keys, prepend=keys[:1] - 1)) if len(keys) else np.zeros(0, dtype=np.int64)
        indptr = np.append(starts, len(keys)).astype(np.int64)
        return cls(keys=keys[starts], indptr=indptr, values=values)

    def ranges(self, query_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Locate the value range of each query key (empty for unknown keys).

        :param query_keys: shape: (n,)
        :return: ``(starts, lengths)``, each of shape (n,)
        """
        query_keys = np.asarray(query_keys, dtype=np.int64)
        if not len(self.keys):
            empty = np.zeros(len(query_keys), dtype=np.int64)
            return empty, empty.copy()
        pos = np.minimum(np.searchsorted(self.keys, query_keys), len(self.keys) - 1)
        found = self.keys[pos] == query_keys
        starts = np.where(found, self.indptr[pos], 0)
        lengths = np.where(found, self.indptr[pos + 1] - self.indptr[pos], 0)
        return starts.astype(np.int64), lengths.astype(np.int64)

    @functools.cached_property
    def _combined(self) -> tuple[int, np.ndarray]:
        # (key position, value) pairs are sorted lexicographically, so one combined integer is sorted globally
        width = int(self.values.max()) + 1
        key_position = np.repeat(np.arange(len(self.keys), dtype=np.int64), np.diff(self.indptr))
        return width, key_position * width + self.values

    def contains(self, query_keys: np.ndarray, query_values: np.ndarray) -> np.ndarray:
        """Whether ``query_values[i]`` is among the values of ``query_keys[i]``, by binary search.

        :param query_keys: shape: (n,)
        :param query_values: shape: (n,)
        :return: shape: (n,) bool
        """
        query_keys = np.asarray(query_keys, dtype=np.int64)
        query_values = np.asarray(query_values, dtype=np.int64)
        if not len(self.values):
            return np.zeros(len(query_keys), dtype=bool)
        width, combined = self._combined
        pos = np.minimum(np.searchsorted(self.keys, query_keys), len(self.keys) - 1)
        valid = (self.keys[pos] == query_keys) & (query_values >= 0) & (query_values < width)
        query_combined = pos * width + query_values
        hit = np.minimum(np.searchsorted(combined, query_combined), len(combined) - 1)
        found = valid
        return found & (combined[hit] == query_combined)

    def lookup(self, query_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All values of a batch of keys as flat (query row, value) pairs.

        :param query_keys: shape: (n,)
        :return: ``(rows, values)``, each of shape (nnz,), ``rows`` ascending, values ascending within a row
        """
        starts, lengths = self.ranges(query_keys)
        rows, positions = expand_csr(starts, lengths)
        return rows, self.values[positions]


class FilterIndex:
    """Known answers per ``(head, relation)`` and per ``(relation, tail)``, for filtered link-prediction ranking.

    >>> index = FilterIndex([[0, 0, 1], [0, 0, 2], [3, 1, 2]], num_entities=4, num_relations=2)
    >>> index.lookup("tail", anchors=[0, 3], relations=[0, 0])
    (array([0, 0]), array([1, 2]))
    >>> index.counts("head", anchors=[2, 2], relations=[0, 1])
    array([1, 1])
    """

    def __init__(
        self,
        triples: torch.Tensor | np.ndarray | Sequence[torch.Tensor | np.ndarray],
        num_entities: int | None = None,
        num_relations: int | None = None,
    ) -> None:
        """Build the index.

        :param triples: shape: (m, 3) known ID-based triples, or a list of such arrays (e.g. train, valid, test)
        :param num_entities: number of entities (IDs must be smaller); inferred from the triples when omitted
        :param num_relations: number of relations (IDs must be smaller); inferred from the triples when omitted
        :raises ValueError: on malformed triples or IDs out of range
        """
        if (
            isinstance(triples, (list, tuple))
            and len(triples)
            and not np.isscalar(triples[0])
            and np.ndim(triples[0]) == 2
        ):
            arrays = [as_triples_array(t, name=f"triples[{i}]") for i, t in enumerate(triples)]
            array = np.concatenate(arrays, axis=0) if arrays else np.zeros((0, 3), dtype=np.int64)
        else:
            array = as_triples_array(triples)
        max_entity = int(array[:, [0, 2]].max()) + 1 if len(array) else 0
        max_relation = int(array[:, 1].max()) + 1 if len(array) else 0
        self.num_entities = int(num_entities) if num_entities is not None else max_entity
        self.num_relations = int(num_relations) if num_relations is not None else max_relation
        if max_entity > self.num_entities:
            raise ValueError(f"triples use entity ID {max_entity - 1} >= num_entities={self.num_entities}")
        if max_relation > self.num_relations:
            raise ValueError(f"triples use relation ID {max_relation - 1} >= num_relations={self.num_relations}")
        self.num_triples = len(array)
        self._index = {
            side: CSRIndex.from_pairs(
                keys=self._keys(array[:, _ANCHOR_COLUMN[side]], array[:, 1]),
                values=array[:, _ANSWER_COLUMN[side]],
            )
            for side in SIDES
        }

    def _keys(self, anchors: np.ndarray, relations: np.ndarray) -> np.ndarray:
        anchors = np.asarray(anchors, dtype=np.int64)
        relations = np.asarray(relations, dtype=np.int64)
        return anchors * max(self.num_relations, 1) + relations

    def csr(self, side: Side) -> CSRIndex:
        """The raw CSR index of one side (keys are ``anchor * num_relations + relation``)."""
        return self._index[_check_side(side)]

    def ranges(self, side: Side, anchors, relations) -> tuple[np.ndarray, np.ndarray]:
        """Start and length of each query's answer list in ``csr(side).values``.

        :param side: ``"head"`` or ``"tail"``
        :param anchors: shape: (n,) the known entity (tail for side ``"head"``, head for ``"tail"``)
        :param relations: shape: (n,)
        :return: ``(starts, lengths)``, each of shape (n,)
        """
        return self._index[_check_side(side)].ranges(self._keys(anchors, relations))

    def lookup(self, side: Side, anchors, relations) -> tuple[np.ndarray, np.ndarray]:
        """Known answers of a batch of queries as flat (query row, answer) pairs.

        :param side: ``"head"`` or ``"tail"``
        :param anchors: shape: (n,)
        :param relations: shape: (n,)
        :return: ``(rows, answers)``, each of shape (nnz,), rows ascending, answers ascending and unique per row
        """
        return self._index[_check_side(side)].lookup(self._keys(anchors, relations))

    def counts(self, side: Side, anchors, relations) -> np.ndarray:
        """Number of known answers of each query.

        :return: shape: (n,)
        """
        return self.ranges(side, anchors, relations)[1]

    def contains(self, side: Side, anchors, relations, answers) -> np.ndarray:
        """Whether each ``answers[i]`` is a known answer of query ``i``.

        :return: shape: (n,) bool
        """
        return self._index[_check_side(side)].contains(self._keys(anchors, relations), answers)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(num_triples={self.num_triples}, num_entities={self.num_entities}, "
            f"num_relations={self.num_relations})"
        )


def _check_side(side: str) -> Side:
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    return side  # type: ignore[return-value]
