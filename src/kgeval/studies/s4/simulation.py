"""Simulated sparse labels and their TREC-style pooled completion (S4 on a dataset without released labels).

Hide a share of the test triples, pool the top-k lists of the systems for the questions of the visible ones, and
judge the pooled triples with the dataset's own triples as the oracle (:func:`simulate_labels`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from kgeval.studies.s4.labels import TRIPLE_COLUMNS, LabelSet, triple_index, unique_triples

__all__ = ["simulate_labels"]


def _questions_of(visible: pd.DataFrame) -> pd.DataFrame:
    """The questions of the visible triples, keyed like the top-k table: side predicted, relation, anchor."""
    return pd.concat(
        [
            pd.DataFrame({"side": "head", "relation": visible["relation"], "anchor": visible["tail"]}),
            pd.DataFrame({"side": "tail", "relation": visible["relation"], "anchor": visible["head"]}),
        ],
        ignore_index=True,
    ).drop_duplicates()


def _pool_candidates(topk: Mapping[str, pd.DataFrame], questions: pd.DataFrame, max_depth: int) -> pd.DataFrame:
    """Every system's candidates at positions 1..``max_depth`` for ``questions``, as triples with their best depth.

    :raises ValueError: for a top-k table lacking a column or holding fewer than ``max_depth`` positions
    """
    pooled = []
    for system, table in sorted(topk.items()):
        need = {"side", "relation", "anchor", "position", "candidate"}
        if need - set(table.columns):
            raise ValueError(f"simulate_labels: top-k table of {system!r} lacks {sorted(need - set(table.columns))}")
        depth_available = int(table["position"].max()) if len(table) else 0
        if depth_available < max_depth:
            raise ValueError(
                f"simulate_labels: the top-k table of {system!r} holds {depth_available} positions per query but the "
                f"pool needs depth {max_depth}; raise ranking.top_k to >= {max_depth} or lower studies.s4.pool.max_depth"
            )
        part = table.loc[table["position"] <= max_depth, ["side", "relation", "anchor", "position", "candidate"]]
        part = part.astype({"side": str, "relation": str, "anchor": str, "candidate": str})
        part = part.merge(questions, on=["side", "relation", "anchor"], how="inner")
        is_head = (part["side"] == "head").to_numpy()
        pooled.append(
            pd.DataFrame(
                {
                    "head": np.where(is_head, part["candidate"], part["anchor"]),
                    "relation": part["relation"].to_numpy(),
                    "tail": np.where(is_head, part["anchor"], part["candidate"]),
                    "depth": part["position"].to_numpy(dtype=np.int64),
                }
            )
        )
    return pd.concat(pooled, ignore_index=True).groupby(TRIPLE_COLUMNS, as_index=False, sort=True)["depth"].min()


def _check_within_test(positives: pd.DataFrame, universe_index: pd.MultiIndex) -> None:
    """Raise unless every pooled positive is a test triple (top-k tables exclude train+valid answers)."""
    stray = ~triple_index(positives).isin(universe_index)
    if stray.any():
        first = positives.loc[stray].iloc[0]
        raise ValueError(
            f"simulate_labels: {int(stray.sum())} pooled candidate(s) are oracle triples outside the test set, e.g. "
            f"({first['head']}, {first['relation']}, {first['tail']}); top-k tables must exclude train+valid answers"
        )


def simulate_labels(
    test: pd.DataFrame,
    topk: Mapping[str, pd.DataFrame],
    *,
    oracle: pd.DataFrame,
    hide_fraction: float,
    seed: int,
    max_depth: int = 10,
) -> LabelSet:
    """Simulate sparse labels and their TREC-style pooled completion.

    1. Hide ``round(hide_fraction * n)`` of the ``n`` unique test triples, drawn with ``numpy.random.default_rng(seed)``
       from the triples sorted by label (so the draw does not depend on the input order). The rest are the sparse
       labels (``depth = 0``).
    2. Pool: for every question of a visible triple, ``(?, r, t)`` and ``(h, r, ?)``, take the candidates at positions
       1..``max_depth`` of each system's top-k list (the ranking with train+valid answers removed, as in the top-k
       contract, i.e. a TREC run; an already labelled candidate is not judged again). A triple's depth is the best
       position at which any system put it, over both of its questions.
    3. Judge every pooled triple with the oracle: positive iff it is one of the oracle's triples. Positive pooled
       triples are hidden test triples; they enter the labels at their depth. Hidden triples never pooled stay
       unlabelled (depth NaN) at every pooled level, but count in ``original``.

    :param test: shape: (n, >=3), the test triples (``head, relation, tail`` labels); the universe
    :param topk: per system, a top-k table (``side, relation, anchor, position, candidate``; more columns ignored)
    :param oracle: shape: (m, >=3), every true triple the oracle knows (train+valid+test of the dataset)
    :param hide_fraction: share of test triples hidden from the sparse labels, in [0, 1)
    :param seed: seed of the hiding draw
    :param max_depth: deepest pooling depth; every top-k table must hold at least this many positions
    :return: the label set (``known`` is all False: hidden triples are unknown to the sparse evaluation)
    :raises ValueError: on a bad fraction, a top-k table too shallow or lacking columns, or a pooled positive that is
        not a test triple (a top-k table that kept train/valid answers breaks the top-k contract)
    """
    if not 0.0 <= hide_fraction < 1.0:
        raise ValueError(f"simulate_labels: hide_fraction must be in [0, 1), got {hide_fraction}")
    if max_depth < 1:
        raise ValueError(f"simulate_labels: max_depth must be >= 1, got {max_depth}")
    if not topk:
        raise ValueError("simulate_labels: no pooling system given (topk is empty)")
    universe = unique_triples(test, "simulate_labels: test")
    n = len(universe)
    rng = np.random.default_rng(seed)
    hidden = np.zeros(n, dtype=bool)
    hidden[rng.choice(n, size=round(hide_fraction * n), replace=False)] = True
    visible = universe.loc[~hidden]

    pool = _pool_candidates(topk, _questions_of(visible), max_depth)
    # already labelled candidates are not judged again
    pool = pool.loc[~triple_index(pool).isin(triple_index(visible))].reset_index(drop=True)
    oracle_index = triple_index(unique_triples(oracle, "simulate_labels: oracle"))
    pool["label"] = np.where(triple_index(pool).isin(oracle_index), "Y", "N")

    positives = pool.loc[pool["label"] == "Y"]
    universe_index = triple_index(universe)
    _check_within_test(positives, universe_index)
    depth = np.full(n, np.nan)
    depth[~hidden] = 0.0
    position = universe_index.get_indexer(triple_index(positives))
    depth[position] = positives["depth"].to_numpy(dtype=float)
    triples = universe.assign(depth=depth, original=True, known=False)
    judgments = pool[TRIPLE_COLUMNS + ["label", "depth"]]
    meta = {
        "source": "simulated",
        "seed": int(seed),
        "hide_fraction": float(hide_fraction),
        "num_test": n,
        "num_hidden": int(hidden.sum()),
        "num_pooled_positive": len(positives),
        "pool_systems": sorted(topk),
    }
    return LabelSet(triples=triples, judgments=judgments, max_depth=max_depth, meta=meta)
