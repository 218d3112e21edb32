"""Relation categories 1-1, 1-N, N-1 and M-N (Bordes et al., 2013) as LibKGE computes them, from triples alone.

For each relation, ``tails_per_head`` is the mean number of distinct tails over its distinct heads and
``heads_per_tail`` the mirror; with the threshold 1.5 a relation is ``1-1`` when both are below it, ``1-N`` when only
``tails_per_head`` reaches it, ``N-1`` when only ``heads_per_tail`` does and ``M-N`` (``N-N`` in S4's paper) when both
do. (PyKEEN's ``pykeen.triples.analysis.relation_cardinality_types`` gives each relation a soft confidence for each of
the four types instead, from the share of heads with a single tail and of tails with a single head; kgeval uses the
hard 1.5 threshold, which gives one category per relation.) A module of its own, with pandas and numpy only, so that
light modules can classify relations without the table and figure code of :mod:`kgeval.lp.relation_metrics`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["CATEGORIES", "THRESHOLD", "relation_categories"]

#: the four relation categories, in the order of the tables and figures
CATEGORIES: tuple[str, ...] = ("1-1", "1-N", "N-1", "M-N")
#: the mean number of tails per head (heads per tail) from which a side counts as "many"
THRESHOLD = 1.5


def relation_categories(
    triples: pd.DataFrame, threshold: float = THRESHOLD, labels: tuple[str, str, str, str] = CATEGORIES
) -> pd.DataFrame:
    """The category of every relation of ``triples`` (the training triples).

    No maintained library exposes this classification (PyKEEN's ``TriplesFactory`` has relation statistics but no
    category), hence the few lines of pandas here.

    :param triples: columns ``head, relation, tail`` (labels or ids)
    :param threshold: a mean of at least this many tails per head (heads per tail) makes the tail (head) side "many"
    :param labels: the names of 1-1, 1-N, N-1 and the category with both sides "many" (``M-N`` here, ``N-N`` in S4's
        paper)
    :return: one row per relation, sorted: ``relation, tails_per_head, heads_per_tail, category``
    :raises ValueError: when a column is missing or the table is empty
    """
    missing = {"head", "relation", "tail"} - set(triples.columns)
    if missing:
        raise ValueError(
            f"relation_categories: triples lack the column(s) {sorted(missing)}; need head, relation, tail"
        )
    if triples.empty:
        raise ValueError("relation_categories: no triples given")
    pairs = triples[["head", "relation", "tail"]].drop_duplicates()
    grouped = pairs.groupby("relation")
    out = pd.DataFrame({
        "tails_per_head": grouped.size() / grouped["head"].nunique(),
        "heads_per_tail": grouped.size() / grouped["tail"].nunique(),
    }).reset_index()
    many_tails = out["tails_per_head"].to_numpy() >= threshold
    many_heads = out["heads_per_tail"].to_numpy() >= threshold
    out["category"] = np.select([~many_tails & ~many_heads, many_tails & ~many_heads, ~many_tails & many_heads],
                                list(labels[:3]), default=labels[3])
    return out.sort_values("relation", kind="stable").reset_index(drop=True)
