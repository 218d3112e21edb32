"""Rank-based evaluation of entity alignment, in the ranks-table format of link prediction.

For a set of test alignments ``{(a_i, b_i)}`` (i = 0..t-1) the common EA protocol (paper 000, Sec. 2) ranks, for
every test pair and in both directions, the true partner among the **test-side candidates only**:

- side ``left`` (graph 1 -> graph 2): query ``a_i``, candidates ``{b_0, ..., b_{t-1}}``, true candidate ``b_i``;
- side ``right`` (graph 2 -> graph 1): query ``b_i``, candidates ``{a_0, ..., a_{t-1}}``, true candidate ``a_i``.

The score of a candidate is the negative L1 distance between the two node representations (larger is better).
Every query therefore has ``num_candidates = t``. The ranks of all four types come from the shared engine
:func:`kgeval.lp.ranking.rank_from_score_fn` (streamed in chunks of queries that fit ``memory_budget_mb``), so ties
are handled exactly as for link prediction; non-deterministic ties are broken by the candidate's position in the
test list.

The table (:func:`ea_ranks_frame`) has one row per (test pair, side): ``source`` (the query's entity label),
``target`` (the true partner's label), ``side`` (``left``/``right``), then ``rank_optimistic, rank_realistic,
rank_pessimistic, rank_nondeterministic, num_candidates, score`` as in ``docs/design.md``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kgeval.config import MEMORY_BUDGET_MB
from kgeval.tables import RANK_COLUMNS

# torch and the ranking engine are imported by the functions that rank, not here: the EA metrics and tables of S1/S3
# (:func:`ea_metrics`) are TSV work, and their jobs would otherwise pay torch's import each.
if TYPE_CHECKING:
    import torch

    from kgeval.lp.ranking import RankResult

__all__ = [
    "EA_SIDES",
    "RANK_COLUMNS",
    "NESTED_MATRIX_MAX_BYTES",
    "l1_score_fn",
    "rank_alignment",
    "rank_alignment_nested",
    "ea_ranks_frame",
    "ea_metrics",
]

#: the largest distance matrix :func:`rank_alignment_nested` holds (float32, t x t of the largest prefix); larger
#: pools are ranked prefix by prefix with :func:`rank_alignment`
NESTED_MATRIX_MAX_BYTES = 2**31

#: EA sides: ``left`` ranks graph-2 candidates for a graph-1 query, ``right`` the reverse
EA_SIDES: tuple[str, ...] = ("left", "right")


def l1_score_fn(queries: torch.Tensor, candidates: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    """A score function for the engine: negative L1 distances of some query rows to every candidate.

    :param queries: shape (t, d), the query representations
    :param candidates: shape (c, d), the candidate representations
    :returns: ``f(rows)``, rows a (b,) long tensor of query positions, giving the (b, c) scores
        ``-||queries[rows] - candidates||_1``, with the bits of :func:`torch.cdist` (no (b, c, d) temporary;
        :class:`kgeval.engine.l1.L1Candidates`)
    """

    import torch

    from kgeval.engine.l1 import L1Candidates

    l1 = L1Candidates(candidates)

    def score(rows: torch.Tensor) -> torch.Tensor:
        return l1.distances(queries[rows.to(queries.device)]).neg_()

    return score


def rank_alignment(
    left: torch.Tensor,
    right: torch.Tensor,
    test_pairs: np.ndarray,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
    device: str | torch.device | None = None,
) -> dict[str, RankResult]:
    """Rank every test pair's true partner among the test-side candidates, in both directions.

    :param left: shape (n1, d), graph-1 representations
    :param right: shape (n2, d), graph-2 representations
    :param test_pairs: shape (t, 2), ``(graph-1 id, graph-2 id)``
    :param memory_budget_mb: bound on the score block held at once (the engine picks the chunk size from it)
    :param device: where to score (``None``: the engine's default)
    :returns: ``{"left": RankResult, "right": RankResult}``, each with t ranks in the order of ``test_pairs``
    """
    import torch

    from kgeval.lp.ranking import rank_from_score_fn

    pairs = torch.as_tensor(np.asarray(test_pairs, dtype=np.int64).reshape(-1, 2))
    a = left[pairs[:, 0]].float()
    b = right[pairs[:, 1]].float()
    true = torch.arange(len(pairs))
    results = {}
    for side, queries, candidates in (("left", a, b), ("right", b, a)):
        results[side] = rank_from_score_fn(
            l1_score_fn(queries, candidates),
            true_candidates=true,
            num_candidates_total=len(pairs),
            memory_budget_mb=memory_budget_mb,
            device=device,
        )
    return results


def rank_alignment_nested(
    left: torch.Tensor,
    right: torch.Tensor,
    test_pairs: np.ndarray,
    sizes: Sequence[int],
    memory_budget_mb: float = MEMORY_BUDGET_MB,
) -> dict[int, dict[str, RankResult]]:
    """:func:`rank_alignment` of every prefix ``test_pairs[:t]`` (``t`` in ``sizes``), the same ranks and scores.

    The prefixes are nested, so every distance of a smaller prefix is one of the largest prefix's: the L1 distance
    matrix of the largest is computed once (:func:`torch.cdist` computes each pair alone, so a distance has the same
    bits in any matrix; ``|x - y| = |y - x|`` exactly, so the ``right`` side reads its transpose) and each prefix is
    ranked from its top-left block, instead of computing the distances of every prefix anew (S1's test-size sweep:
    sum of t^2 over the sizes, 4.5 times the largest's at the paper's sizes). Above
    :data:`NESTED_MATRIX_MAX_BYTES` each prefix is ranked by :func:`rank_alignment`.

    :param sizes: prefix lengths, each at most ``len(test_pairs)``
    :returns: ``{t: {"left": RankResult, "right": RankResult}}``
    """
    import torch

    from kgeval.engine.l1 import l1_cdist
    from kgeval.lp.ranking import rank_from_score_fn

    pairs = np.asarray(test_pairs, dtype=np.int64).reshape(-1, 2)
    sizes = sorted({int(t) for t in sizes})
    if sizes and not 0 < sizes[0] <= sizes[-1] <= len(pairs):
        raise ValueError(f"prefix sizes must lie in 1..{len(pairs)}, got {sizes}")
    largest = sizes[-1] if sizes else 0
    if 4 * largest * largest > NESTED_MATRIX_MAX_BYTES:
        return {t: rank_alignment(left, right, pairs[:t], memory_budget_mb) for t in sizes}
    index = torch.as_tensor(pairs[:largest])
    distances = l1_cdist(left[index[:, 0]].float(), right[index[:, 1]].float(), threads=torch.get_num_threads())
    # rows of the transpose are read as fast as the matrix's own (a column gather per block was most of the time)
    by_side = {"left": distances, "right": distances.T.contiguous()}
    results: dict[int, dict[str, RankResult]] = {}
    for t in sizes:
        results[t] = {}
        for side, matrix in by_side.items():

            def scores(rows: torch.Tensor, block: torch.Tensor = matrix[:t, :t]) -> torch.Tensor:
                return block[rows.cpu()].neg_()

            results[t][side] = rank_from_score_fn(
                scores, true_candidates=torch.arange(t), num_candidates_total=t, memory_budget_mb=memory_budget_mb
            )
    return results


def ea_ranks_frame(
    results: dict[str, RankResult],
    test_pairs: np.ndarray,
    labels1: Sequence[str],
    labels2: Sequence[str],
) -> pd.DataFrame:
    """The ranks table of :func:`rank_alignment`'s output (see module doc), sorted by side, source, target.

    :param results: per side, the engine's ranks in the order of ``test_pairs``
    :param test_pairs: shape (t, 2)
    :param labels1: graph-1 entity labels by id
    :param labels2: graph-2 entity labels by id
    """
    pairs = np.asarray(test_pairs, dtype=np.int64).reshape(-1, 2)
    lab1 = np.asarray(labels1, dtype=object)[pairs[:, 0]]
    lab2 = np.asarray(labels2, dtype=object)[pairs[:, 1]]
    frames = []
    for side in EA_SIDES:
        result = results[side]
        source, target = (lab1, lab2) if side == "left" else (lab2, lab1)
        frame = pd.DataFrame({"source": source, "target": target, "side": side})
        for column in RANK_COLUMNS:
            frame[column] = _numpy(getattr(result, column))
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    return table.sort_values(["side", "source", "target"], kind="stable").reset_index(drop=True)


# kgeval.metrics names its sides after link prediction; EA's left/right play the roles of head/tail there.
_TO_LP = {"left": "head", "right": "tail"}
_FROM_LP = {"head": "left", "tail": "right", "both": "both"}


def ea_metrics(ranks: pd.DataFrame, metrics: Sequence[str] | None = None, source: str = "EA ranks") -> pd.DataFrame:
    """:func:`kgeval.metrics.compute_metrics` on an EA ranks table; sides ``left``, ``right`` and ``both``."""
    from kgeval.metrics import compute_metrics  # lazily: it imports PyKEEN's metrics (and scikit-learn)

    lp = ranks.assign(side=ranks["side"].map(_TO_LP))
    if lp["side"].isna().any():
        found = sorted(ranks["side"].unique())
        raise ValueError(f"{source}: column 'side' must hold only 'left'/'right', found {found}")
    table = compute_metrics(lp, metrics=metrics, source=source)
    return table.assign(side=table["side"].map(_FROM_LP))


def _numpy(values) -> np.ndarray:
    torch = sys.modules.get("torch")  # values can only be a tensor if torch is loaded; never import it just to check
    if torch is not None and isinstance(values, torch.Tensor):
        return values.detach().cpu().numpy()
    return np.asarray(values)
