"""The exact filtered ranking engine: every rank type, candidate counts, true scores and top-k in one pass.

Scores are produced batch by batch by a *score function* (a fast :mod:`kgeval.lp.scoring` scorer for link prediction,
a similarity function for entity alignment, ...) and reduced immediately, so memory stays within a budget and no
dense ``(queries x candidates)`` matrix of a whole split is ever held.

Conventions (docs/design.md), for a query with true candidate ``c`` and true score ``s_c``, over the candidates left
after filtering (the true candidate is never filtered):

* optimistic rank ``= 1 + #{j : s_j > s_c}``;
* pessimistic rank ``= #{j : s_j >= s_c}`` (the true candidate included);
* realistic rank ``= (optimistic + pessimistic) / 2``;
* non-deterministic rank = the position of ``c`` after ``torch.sort(scores, stable=True, descending=True)`` of the
  filtered scores in candidate-ID order. A stable descending sort puts every larger score first and keeps equal
  scores in ID order, so this position is ``1 + #{j : s_j > s_c} + #{j < c : s_j = s_c}``; the engine counts that
  instead of sorting (the tests check it against an actual sort);
* ``num_candidates`` = the true candidate plus every candidate not filtered.

Filtered entries are set to NaN before counting, as PyKEEN's evaluator does: NaN compares false with everything, so
filtered candidates drop out of every count. The true score is read from the same score row before filtering, so
it is consistent with the candidates' scores. (Difference from PyKEEN: a candidate whose *model* score is NaN or
infinite still counts in ``num_candidates`` here; PyKEEN counts only finite scores.)

Link prediction groups queries that share ``(anchor, relation)``: one score row serves all of them (each still gets
its own rank, since the other true answers of the group are known triples and thus filtered).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import numpy as np
import torch

from kgeval.lp.engine.batches import ScoreFn, ScoreRows, SortedQueries, reduce_batches
from kgeval.lp.filtering import CSRIndex, FilterIndex, Side, expand_csr
from kgeval.lp.lp_setup import LPSetup, lp_setup
from kgeval.lp.scoring import RowBlocks, Scorer
from kgeval.config import MEMORY_BUDGET_MB

if TYPE_CHECKING:  # only a type hint here; PyKEEN's models are slow to import, and EA ranking never needs them
    from pykeen.models import Model

__all__ = [
    "RankResult",
    "RowExclusions",
    "RowFilters",
    "ScoreRows",
    "rank_batches",
    "rank_from_score_fn",
    "rank_lp",
]


@dataclass
class RankResult:
    """Ranks of a set of queries, numpy arrays with one entry per query, in input order.

    :ivar rank_optimistic: shape: (n,) int64
    :ivar rank_pessimistic: shape: (n,) int64
    :ivar rank_realistic: shape: (n,) float64, ``(optimistic + pessimistic) / 2``
    :ivar rank_nondeterministic: shape: (n,) int64, position after a stable descending sort in candidate-ID order
    :ivar num_candidates: shape: (n,) int64, the true candidate plus the unfiltered others
    :ivar score: shape: (n,) float32, the true candidate's score
    :ivar topk_ids: shape: (n, k) int64 candidate IDs, best first, ``-1`` padding; ``None`` unless ``top_k > 0``
    :ivar topk_scores: shape: (n, k) float32, NaN padding; ``None`` unless ``top_k > 0``
    """

    rank_optimistic: np.ndarray
    rank_pessimistic: np.ndarray
    rank_realistic: np.ndarray
    rank_nondeterministic: np.ndarray
    num_candidates: np.ndarray
    score: np.ndarray
    topk_ids: np.ndarray | None = None
    topk_scores: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.rank_optimistic)

    def ranks(self) -> dict[str, np.ndarray]:
        """The four rank types by their short names (``optimistic``, ``realistic``, ...)."""
        return {
            "optimistic": self.rank_optimistic,
            "realistic": self.rank_realistic,
            "pessimistic": self.rank_pessimistic,
            "nondeterministic": self.rank_nondeterministic,
        }

    def take(self, indices: np.ndarray) -> RankResult:
        """A new result holding only the given queries, in the given order."""
        return RankResult(
            **{
                field.name: (None if getattr(self, field.name) is None else getattr(self, field.name)[indices])
                for field in fields(self)
            }
        )


@dataclass(frozen=True)
class RowExclusions:
    """Candidates excluded from each score row, as ranges into a shared sorted value array.

    :ivar starts: shape: (num_rows,) start of each row's range in ``values``
    :ivar lengths: shape: (num_rows,) number of excluded candidates of each row (unique within a row)
    :ivar values: shape: (nnz,) excluded candidate IDs
    """

    starts: np.ndarray
    lengths: np.ndarray
    values: np.ndarray

    @classmethod
    def from_index(cls, index: CSRIndex, row_keys: np.ndarray) -> RowExclusions:
        """Exclusions of rows identified by their keys in a :class:`~kgeval.lp.filtering.CSRIndex`."""
        starts, lengths = index.ranges(row_keys)
        return cls(starts=starts, lengths=lengths, values=index.values)

    @classmethod
    def from_filter(cls, index: FilterIndex, side: Side, anchors: np.ndarray, relations: np.ndarray) -> RowExclusions:
        """Known answers of link-prediction score rows ``(anchor, relation)`` from a filter index."""
        starts, lengths = index.ranges(side, anchors, relations)
        return cls(starts=starts, lengths=lengths, values=index.csr(side).values)

    @classmethod
    def from_pairs(cls, rows: np.ndarray, candidates: np.ndarray, num_rows: int) -> tuple[RowExclusions, CSRIndex]:
        """Exclusions from (row, candidate) pairs (duplicates allowed); also returns the CSR index built."""
        index = CSRIndex.from_pairs(keys=rows, values=candidates)
        return cls.from_index(index, np.arange(num_rows, dtype=np.int64)), index

    def batch(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Flat (local row, candidate) pairs of rows ``start..stop-1``; local rows count from 0."""
        rows, positions = expand_csr(self.starts[start:stop], self.lengths[start:stop])
        return rows, self.values[positions]


def _as_long_array(x, name: str) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    array = np.asarray(x)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold integer IDs, got dtype {array.dtype}")
    return array.astype(np.int64, copy=False)


@dataclass(frozen=True)
class RowFilters:
    """What is filtered from each score row.

    :ivar exclusions: candidates filtered from each row (may include the true ones; those stay in)
    :ivar true_excluded: shape: (n,) whether each query's true candidate is listed in its row's exclusions;
        computed from ``exclusions`` when omitted
    :ivar topk_exclusions: candidates removed from each row's top-k list only
    """

    exclusions: RowExclusions | None = None
    true_excluded: np.ndarray | None = None
    topk_exclusions: RowExclusions | None = None


def _checked_queries(row_of_query, true_candidates, C: int, top_k: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The queries as int64 arrays, checked; the top-k length ``k`` and the number of score rows."""
    row_of_query = _as_long_array(row_of_query, "row_of_query")
    true_candidates = _as_long_array(true_candidates, "true_candidates")
    n = len(row_of_query)
    if len(true_candidates) != n:
        raise ValueError(f"true_candidates has {len(true_candidates)} entries but row_of_query has {n}")
    if n and ((true_candidates < 0).any() or (true_candidates >= C).any()):
        bad = int(np.flatnonzero((true_candidates < 0) | (true_candidates >= C))[0])
        raise ValueError(f"true candidate {true_candidates[bad]} of query {bad} is outside 0..{C - 1}")
    if top_k < 0:
        raise ValueError(f"top_k must be >= 0, got {top_k}")
    k = min(int(top_k), C)
    num_rows = int(row_of_query.max()) + 1 if n else 0
    if n and row_of_query.min() < 0:
        raise ValueError("row_of_query must be non-negative")
    return row_of_query, true_candidates, k, num_rows


class _Ranks:
    """The rank definitions: ranks of the queries from each batch's counts, in input order."""

    def __init__(self, order: np.ndarray, num_rows: int, k: int) -> None:
        n = len(order)
        self.order, self.k = order, k
        self.opt = np.empty(n, dtype=np.int64)
        self.pess = np.empty(n, dtype=np.int64)
        self.nd = np.empty(n, dtype=np.int64)
        self.score = np.empty(n, dtype=np.float32)
        self.topk_ids = np.full((num_rows, k), -1, dtype=np.int64) if k else None
        self.topk_scores = np.full((num_rows, k), np.nan, dtype=np.float32) if k else None

    def store(self, counts: tuple, q_start: int, q_stop: int, row_start: int, row_stop: int, unexcluded_true) -> None:
        """One batch's counts (queries ``q_start..q_stop-1`` in row order, rows ``row_start..row_stop-1``)."""
        greater, greater_equal, equal_before, true_scores, topk_ids, topk_scores = counts
        if np.isnan(true_scores).any():
            bad = q_start + int(np.flatnonzero(np.isnan(true_scores))[0])
            raise ValueError(f"the model scored the true candidate of query {int(self.order[bad])} as NaN")
        out = self.order[q_start:q_stop]
        # the true candidate is counted in greater_equal if it was not filtered, else added here
        self.opt[out] = greater + 1
        self.pess[out] = greater_equal + ~unexcluded_true
        self.nd[out] = greater + equal_before + 1
        self.score[out] = true_scores
        if self.k:
            self.topk_ids[row_start:row_stop], self.topk_scores[row_start:row_stop] = topk_ids, topk_scores

    def result(self, row_of_query: np.ndarray, num_candidates: np.ndarray, available: np.ndarray, top_k: int):
        """The :class:`RankResult`; ``available``: per row, the candidates a top-k list may hold."""
        result = RankResult(
            rank_optimistic=self.opt,
            rank_pessimistic=self.pess,
            rank_realistic=(self.opt + self.pess) / 2.0,
            rank_nondeterministic=self.nd,
            num_candidates=num_candidates.astype(np.int64),
            score=self.score,
        )
        k, n = self.k, len(row_of_query)
        if k:
            padding = np.arange(k)[None, :] >= available[:, None]
            self.topk_ids[padding] = -1
            self.topk_scores[padding] = np.nan
            result.topk_ids = self.topk_ids[row_of_query]
            result.topk_scores = self.topk_scores[row_of_query]
        elif top_k:
            result.topk_ids = np.zeros((n, 0), dtype=np.int64)
            result.topk_scores = np.zeros((n, 0), dtype=np.float32)
        return result


def rank_batches(
    source: ScoreRows,
    row_of_query: np.ndarray,
    true_candidates: np.ndarray,
    *,
    filters: RowFilters = RowFilters(),
    top_k: int = 0,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
    device: str | torch.device | None = None,
) -> RankResult:
    """The engine: rank queries whose score rows are computed batch by batch.

    Several queries may share one score row (same anchor and relation); each query has its own true candidate.

    Per batch (:func:`kgeval.lp.engine.batches.reduce_batches`): score the rows, read the true scores, set the
    filtered entries to NaN, count (per query) the candidates scoring above and at least the true score and the ties
    with smaller IDs, then restore the filtered scores, set the top-k exclusions to ``-inf`` and take the top k. On
    CPU all of that runs block by block of rows, each block while it is in cache
    (:func:`kgeval.lp.engine.cpu_blocks.reduce_cpu`); on a GPU over the whole batch
    (:func:`kgeval.lp.engine.device_batch.reduce_torch`). The counts become ranks here.

    :param source: the score rows: ``source.score(rows)`` (and, on CPU, ``source.prepare``) and C, the number of
        candidates per row
    :param row_of_query: shape: (n,) the score row of each query, in ``0..num_rows-1``; rows are numbered densely
        and ``num_rows = row_of_query.max() + 1``
    :param true_candidates: shape: (n,) the true candidate of each query
    :param filters: candidates filtered from each row and from its top-k list
    :param top_k: length of the top-k lists (0: none)
    :param memory_budget_mb: bound on the score batch and its temporaries
    :param device: device for the reduction (scores are moved there); ``None`` keeps the scores' device
    :return: one entry per query, in input order; top-k lists are those of the query's row
    """
    C = int(source.num_candidates)
    row_of_query, true_candidates, k, num_rows = _checked_queries(row_of_query, true_candidates, C, top_k)
    exclusions, true_excluded, topk_exclusions = filters.exclusions, filters.true_excluded, filters.topk_exclusions
    n = len(row_of_query)

    # queries sorted by row (stable: input order within a row), and each row's query range
    order = np.argsort(row_of_query, kind="stable")
    sorted_rows = row_of_query[order]
    query_ptr = np.searchsorted(sorted_rows, np.arange(num_rows + 1, dtype=np.int64))

    if exclusions is None:
        num_excluded = np.zeros(num_rows, dtype=np.int64)
        true_excluded = np.zeros(n, dtype=bool)
    else:
        if len(exclusions.lengths) != num_rows:
            raise ValueError(f"exclusions cover {len(exclusions.lengths)} rows, expected {num_rows}")
        num_excluded = exclusions.lengths
        if true_excluded is None:
            true_excluded = _contains(exclusions, row_of_query, true_candidates)
    true_excluded = np.asarray(true_excluded, dtype=bool)
    queries = SortedQueries(sorted_rows, true_candidates[order], true_excluded[order], query_ptr)

    ranks = _Ranks(order, num_rows, k)
    reduce_batches(
        source, queries, exclusions, topk_exclusions, k, ranks.store, memory_budget_mb=memory_budget_mb, device=device
    )
    num_candidates = C - num_excluded[row_of_query] + true_excluded.astype(np.int64)
    available = None
    if k:
        available = C - (topk_exclusions.lengths if topk_exclusions is not None else np.zeros(num_rows, np.int64))
    return ranks.result(row_of_query, num_candidates, available, top_k)


def _contains(exclusions: RowExclusions, row_of_query: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Whether each query's candidate is among its row's exclusions. shape: (n,) bool."""
    rows, positions = expand_csr(exclusions.starts[row_of_query], exclusions.lengths[row_of_query])
    hits = exclusions.values[positions] == candidates[rows]
    return np.bincount(rows[hits], minlength=len(row_of_query)) > 0



def _pairs_to_exclusions(pairs, num_rows: int, num_candidates: int, name: str) -> RowExclusions | None:
    if pairs is None:
        return None
    rows, candidates = pairs
    rows = _as_long_array(rows, f"{name}[0]")
    candidates = _as_long_array(candidates, f"{name}[1]")
    if len(rows) != len(candidates):
        raise ValueError(f"{name}: query positions ({len(rows)}) and candidates ({len(candidates)}) differ in length")
    if len(rows) and (rows.min() < 0 or rows.max() >= num_rows):
        raise ValueError(f"{name}: query positions must lie in 0..{num_rows - 1}")
    if len(candidates) and (candidates.min() < 0 or candidates.max() >= num_candidates):
        raise ValueError(f"{name}: candidates must lie in 0..{num_candidates - 1}")
    return RowExclusions.from_pairs(rows, candidates, num_rows)[0]


def rank_from_score_fn(
    score_fn: ScoreFn,
    true_candidates,
    num_candidates_total: int,
    *,
    exclude: tuple[np.ndarray, np.ndarray] | None = None,
    topk_exclude: tuple[np.ndarray, np.ndarray] | None = None,
    top_k: int = 0,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
    device: str | torch.device | None = None,
) -> RankResult:
    """Rank one true candidate per query from a score function (entity alignment, S5's negatives, ...).

    :param score_fn: ``score_fn(query_positions)``, a (b,) long tensor, returns the (b, C) scores of all C
        candidates for those query rows (larger is better)
    :param true_candidates: shape: (n,) the correct candidate ID of each query
    :param num_candidates_total: C
    :param exclude: ``(query_positions, candidates)`` pairs removed from the candidate set; the true candidate is
        never removed even if listed
    :param topk_exclude: pairs removed from the top-k lists only
    :param top_k: length of the top-k lists (0: none)
    :param memory_budget_mb: bound on one batch of scores and its temporaries
    :param device: device for the reduction; ``None`` keeps the device ``score_fn`` returns
    :return: one entry per query, in input order
    """
    true_candidates = _as_long_array(true_candidates, "true_candidates")
    n = len(true_candidates)
    C = int(num_candidates_total)
    exclusions = _pairs_to_exclusions(exclude, n, C, "exclude")
    topk_exclusions = _pairs_to_exclusions(topk_exclude, n, C, "topk_exclude")
    return rank_batches(
        ScoreRows(score_fn, C),
        row_of_query=np.arange(n, dtype=np.int64),
        true_candidates=true_candidates,
        filters=RowFilters(exclusions=exclusions, topk_exclusions=topk_exclusions),
        top_k=top_k,
        memory_budget_mb=memory_budget_mb,
        device=device,
    )


@dataclass(frozen=True)
class _SideRows:
    """One side's score rows (one per unique ``(anchor, relation)``), its queries and what is filtered from them."""

    side: Side
    row_anchors: torch.Tensor
    row_relations: torch.Tensor
    row_of_query: np.ndarray
    answers: np.ndarray
    filters: RowFilters


def _side_rows(setup: LPSetup, side: Side, top_k: int) -> _SideRows:
    """The score rows of one side and their filters (numpy only: it may run beside another side's ranking)."""
    array, num_relations = setup.triples, setup.num_relations
    anchor_col, answer_col = (0, 2) if side == "tail" else (2, 0)
    anchors, relations, answers = array[:, anchor_col], array[:, 1], array[:, answer_col]
    unique_keys, row_of_query = np.unique(anchors * num_relations + relations, return_inverse=True)
    row_anchors, row_relations = unique_keys // num_relations, unique_keys % num_relations
    exclusions = topk_exclusions = true_excluded = None
    if setup.index is not None:
        exclusions = RowExclusions.from_filter(setup.index, side, row_anchors, row_relations)
        true_excluded = setup.index.contains(side, anchors, relations, answers)
    if top_k and setup.topk_index is not None:
        topk_exclusions = (
            exclusions
            if setup.topk_index is setup.index
            else RowExclusions.from_filter(setup.topk_index, side, row_anchors, row_relations)
        )
    filters = RowFilters(exclusions, true_excluded, topk_exclusions)
    return _SideRows(
        side, torch.from_numpy(row_anchors), torch.from_numpy(row_relations), row_of_query, answers, filters
    )


def _rank_side(scorer: Scorer, rows: _SideRows, top_k: int, memory_budget_mb: float) -> RankResult:
    """Ranks of one side's queries from their score rows."""
    side, row_anchors, row_relations = rows.side, rows.row_anchors, rows.row_relations

    def score_rows(batch: torch.Tensor) -> torch.Tensor:
        return scorer.score(side, row_anchors[batch], row_relations[batch])

    def prepare_rows(batch: torch.Tensor) -> RowBlocks:
        return scorer.prepare(side, row_anchors[batch], row_relations[batch])

    # PyKEEN's own scorer computes a whole batch at once: its blocks would only be slices of it
    source = ScoreRows(
        score_rows,
        scorer.num_entities,
        prepare=prepare_rows if scorer.is_fast else None,
        extra_bytes_per_row=scorer.bytes_per_query(),
    )
    return rank_batches(
        source,
        row_of_query=rows.row_of_query,
        true_candidates=rows.answers,
        filters=rows.filters,
        top_k=top_k,
        memory_budget_mb=memory_budget_mb,
        device=scorer.device,
    )


def rank_lp(
    model: Model | Scorer,
    triples,
    *,
    filter_triples=None,
    topk_filter_triples=None,
    sides: Sequence[Side] = ("head", "tail"),
    top_k: int = 0,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
    device: str | torch.device | None = None,
    fast: bool = True,
) -> dict[str, RankResult]:
    """Filtered link-prediction ranks of evaluation triples, on both sides, as PyKEEN's evaluator defines them.

    :param model: a trained PyKEEN model, or a :class:`~kgeval.lp.scoring.Scorer` made from one
    :param triples: shape: (n, 3) ID-based evaluation triples (dataset relation IDs, no inverse relations)
    :param filter_triples: known triples whose answers are filtered (e.g. ``[train, valid, test]``), as a list of
        (m, 3) tensors/arrays, one array, or a prebuilt :class:`~kgeval.lp.filtering.FilterIndex`; ``None``: raw ranks
    :param topk_filter_triples: known triples removed from the top-k lists only (e.g. ``[train, valid]``);
        ``None``: same as ``filter_triples``
    :param sides: which sides to rank: ``"head"`` predicts heads of ``(?, r, t)``, ``"tail"`` tails of ``(h, r, ?)``
    :param top_k: length of the top-k candidate lists (0: none)
    :param memory_budget_mb: bound on one batch of scores and its temporaries
    :param device: where to score and rank; ``None``: the GPU if present, else the CPU
    :param fast: use a matrix-product scorer where one exists (ignored when ``model`` is a scorer)
    :return: ``{side: RankResult}`` with one entry per triple, in input order
    """
    for side in sides:
        if side not in ("head", "tail"):
            raise ValueError(f"sides must be 'head' and/or 'tail', got {side!r}")
    setup = lp_setup(model, triples, filter_triples, topk_filter_triples, device, fast)
    # each side's rows and filters are found on a second thread, the next side's while this one is ranked
    with ThreadPoolExecutor(1, thread_name_prefix="kgeval-side") as pool:
        rows = [pool.submit(_side_rows, setup, side, top_k) for side in sides]
        return {side: _rank_side(setup.scorer, r.result(), top_k, memory_budget_mb) for side, r in zip(sides, rows)}
