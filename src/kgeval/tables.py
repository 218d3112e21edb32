"""Column names of the tables every stage shares (docs/design.md); no heavy imports, so any module can use them."""

from __future__ import annotations

__all__ = ["RANK_COLUMNS", "LP_KEY_COLUMNS"]

#: the rank columns of a ranks table, in order (link prediction and entity alignment alike)
RANK_COLUMNS: tuple[str, ...] = (
    "rank_optimistic",
    "rank_realistic",
    "rank_pessimistic",
    "rank_nondeterministic",
    "num_candidates",
    "score",
)
#: the columns that identify a row of a link-prediction ranks table
LP_KEY_COLUMNS: tuple[str, ...] = ("head", "relation", "tail", "side")
