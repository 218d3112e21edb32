"""Ranks under other label sets, derived exactly from one filtered ranks table, without scoring again.

A ranks table (``docs/design.md``) ranks every answer ``x`` of a question ``q = (side, relation, anchor)`` among the
candidates left after removing train+valid and every other *universe* answer ``U_q`` (the test answers, or for the
S4 release also the pooled positives). When a label set filters only ``F ⊆ U`` instead, the answers ``y`` in
``U_q \\ F`` come back as candidates, and each of them moves ``x`` down exactly when it beats ``x``. Their scores
are in the table: every ``y`` in ``U_q`` is itself a row of the same question with its own ``score`` (the engine
scores one row per question, so the values are identical). Hence, with ``B = U_q \\ (F ∪ {x})``::

    optimistic(x)       += #{y in B : s_y >  s_x}
    pessimistic(x)      += #{y in B : s_y >= s_x}
    realistic(x)        += the mean of the two additions
    nondeterministic(x) += #{y in B : s_y > s_x  or  (s_y == s_x and id(y) < id(x))}
    num_candidates(x)   += |B|

The non-deterministic rank breaks ties by entity id; PyKEEN numbers entities in sorted-label order, so ids are
compared as labels here (exact for every PyKEEN-built dataset; the test checks it against the engine).

:class:`AnswerIndex` sorts the rows once by (question, score descending, answer label); every addition is then a
difference of prefix sums of the unfiltered mask, so a new label set costs O(n) and no Python loop.
No library offers this incremental re-filtering, so it is written here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kgeval.tables import LP_KEY_COLUMNS, RANK_COLUMNS

__all__ = ["RANK_TYPES", "REQUIRED_COLUMNS", "AnswerIndex", "question_columns"]

#: rank types of the ranks table, by short name (column ``rank_<name>``)
RANK_TYPES: tuple[str, ...] = ("optimistic", "realistic", "pessimistic", "nondeterministic")

#: columns a ranks table needs here
REQUIRED_COLUMNS: tuple[str, ...] = (*LP_KEY_COLUMNS, *RANK_COLUMNS)


def question_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``anchor`` (the known entity) and ``answer`` (the predicted one) to a table with ``head, tail, side``.

    :param frame: shape: (n, >=3); ``side`` is ``head`` (predict the head of ``(?, r, t)``) or ``tail``
    :return: a copy with the two columns added
    :raises ValueError: when a side is neither ``head`` nor ``tail``
    """
    side = frame["side"].astype(str).to_numpy()
    bad = ~np.isin(side, ["head", "tail"])
    if bad.any():
        raise ValueError(f"side must be 'head' or 'tail'; found {sorted(set(side[bad]))[:3]}")
    is_head = side == "head"
    head = frame["head"].astype(str).to_numpy()
    tail = frame["tail"].astype(str).to_numpy()
    return frame.assign(anchor=np.where(is_head, tail, head), answer=np.where(is_head, head, tail))


class AnswerIndex:
    """The rows of one ranks table, grouped by question and sorted by score, ready for re-filtering.

    :ivar answers: the rows (``head, relation, tail, side, anchor, answer``, rank columns, ``score``), in sorted order:
        question, score descending, answer label
    :ivar question: shape: (n,) int64, question number of every row (0..Q-1, questions sorted by side, relation,
        anchor)
    :ivar questions: shape: (Q, 3), ``side, relation, anchor`` of every question
    """

    def __init__(self, ranks: pd.DataFrame, name: str = "ranks") -> None:
        """Index a ranks table.

        :param ranks: a table with :data:`REQUIRED_COLUMNS`, one row per (triple, side)
        :param name: what to call the table in error messages (e.g. its path)
        :raises ValueError: when columns are missing or a (triple, side) appears twice
        """
        missing = [c for c in REQUIRED_COLUMNS if c not in ranks.columns]
        if missing:
            raise ValueError(f"{name}: missing column(s) {missing}; a ranks table needs {list(REQUIRED_COLUMNS)}")
        frame = question_columns(ranks[list(REQUIRED_COLUMNS)].reset_index(drop=True))
        for column in ("head", "relation", "tail", "side"):
            frame[column] = frame[column].astype(str)
        if frame.duplicated(["head", "relation", "tail", "side"]).any():
            dup = frame.loc[frame.duplicated(["head", "relation", "tail", "side"])].iloc[0]
            raise ValueError(
                f"{name}: the row ({dup['head']}, {dup['relation']}, {dup['tail']}, side={dup['side']}) appears twice; "
                "a ranks table holds one row per (triple, side)"
            )
        question_keys = pd.MultiIndex.from_frame(frame[["side", "relation", "anchor"]])
        question_code, uniques = pd.factorize(question_keys, sort=True)
        answer_code, _ = pd.factorize(frame["answer"], sort=True)
        score = frame["score"].to_numpy(dtype=np.float64)
        order = np.lexsort((answer_code, -score, question_code))
        self.answers = frame.iloc[order].reset_index(drop=True)
        self.question = question_code[order].astype(np.int64)
        self.questions = pd.DataFrame(list(uniques), columns=["side", "relation", "anchor"])
        self._score = score[order]
        n = len(order)
        positions = np.arange(n)
        new_group = np.ones(n, dtype=bool)
        new_group[1:] = self.question[1:] != self.question[:-1]
        new_tie = new_group.copy()
        new_tie[1:] |= self._score[1:] != self._score[:-1]
        self._group_start = np.maximum.accumulate(np.where(new_group, positions, 0))
        self._tie_start = np.maximum.accumulate(np.where(new_tie, positions, 0))
        # end (exclusive) of a block = start of the next block, read backwards
        self._group_end = self._block_end(new_group)
        self._tie_end = self._block_end(new_tie)

    @staticmethod
    def _block_end(new_block: np.ndarray) -> np.ndarray:
        n = len(new_block)
        starts = np.flatnonzero(new_block)
        ends = np.append(starts[1:], n)
        return np.repeat(ends, np.diff(np.append(starts, n)))

    def __len__(self) -> int:
        return len(self.answers)

    @property
    def num_questions(self) -> int:
        """Number of distinct questions Q."""
        return len(self.questions)

    def triple_positions(self, triples: pd.DataFrame) -> np.ndarray:
        """Row-wise position of every row's triple in ``triples`` (-1 when absent).

        :param triples: shape: (m, >=3), ``head, relation, tail``, unique
        :return: shape: (n,) int64
        """
        target = pd.MultiIndex.from_frame(triples[["head", "relation", "tail"]].astype(str))
        return target.get_indexer(pd.MultiIndex.from_frame(self.answers[["head", "relation", "tail"]]))

    def base_ranks(self, rank_type: str) -> np.ndarray:
        """The table's own ranks (every universe answer filtered), shape: (n,)."""
        if rank_type not in RANK_TYPES:
            raise ValueError(f"unknown rank type {rank_type!r}; use one of {RANK_TYPES}")
        return self.answers[f"rank_{rank_type}"].to_numpy(dtype=np.float64)

    def additions(self, unfiltered: np.ndarray, rank_type: str) -> np.ndarray:
        """How far each row moves down when the rows in ``unfiltered`` become candidates again.

        :param unfiltered: shape: (n,) bool, in the index's row order: answers no longer filtered (a row's own flag
            never affects its own rank)
        :param rank_type: one of :data:`RANK_TYPES`
        :return: shape: (n,) float64, to add to :meth:`base_ranks`
        """
        unfiltered = np.asarray(unfiltered, dtype=bool)
        if unfiltered.shape != (len(self),):
            raise ValueError(f"unfiltered must have shape ({len(self)},), got {unfiltered.shape}")
        prefix = np.concatenate([[0], np.cumsum(unfiltered, dtype=np.int64)])
        at_group = prefix[self._group_start]
        if rank_type == "nondeterministic":
            return (prefix[:-1] - at_group).astype(np.float64)
        greater = prefix[self._tie_start] - at_group
        if rank_type == "optimistic":
            return greater.astype(np.float64)
        at_least = prefix[self._tie_end] - at_group - unfiltered
        if rank_type == "pessimistic":
            return at_least.astype(np.float64)
        if rank_type == "realistic":
            return (greater + at_least) / 2.0
        raise ValueError(f"unknown rank type {rank_type!r}; use one of {RANK_TYPES}")

    def ranks(self, unfiltered: np.ndarray, rank_type: str) -> np.ndarray:
        """Ranks when only the universe answers outside ``unfiltered`` are filtered, shape: (n,) float64."""
        return self.base_ranks(rank_type) + self.additions(unfiltered, rank_type)

    def num_candidates(self, unfiltered: np.ndarray) -> np.ndarray:
        """Candidate counts under the same re-filtering, shape: (n,) int64."""
        unfiltered = np.asarray(unfiltered, dtype=bool)
        prefix = np.concatenate([[0], np.cumsum(unfiltered, dtype=np.int64)])
        extra = prefix[self._group_end] - prefix[self._group_start] - unfiltered
        return self.answers["num_candidates"].to_numpy(dtype=np.int64) + extra
