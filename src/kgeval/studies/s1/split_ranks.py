"""S1: ranks of one split under a scorer and a candidate order, and the ranks the definitions prescribe for the
constant scorer (every candidate ties)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kgeval.lp.filtering import FilterIndex, as_triples_array
from kgeval.config import MEMORY_BUDGET_MB

# torch, the ranking engine and the reference scorers are imported by the functions that rank, not here
if TYPE_CHECKING:
    from kgeval.lp.scoring import Scorer

__all__ = ["constant_scorer_ranks", "rank_split"]

_SIDES = ("head", "tail")


def _triples(triples, name: str) -> np.ndarray:
    if isinstance(triples, (list, tuple)):
        arrays = [as_triples_array(t, name=f"{name}[{i}]") for i, t in enumerate(triples)]
        return np.concatenate(arrays) if arrays else np.zeros((0, 3), dtype=np.int64)
    return as_triples_array(triples, name=name)


def rank_split(
    scorer: Scorer,
    triples,
    known_triples,
    *,
    permutation: np.ndarray | None = None,
    sides: Sequence[str] = _SIDES,
    memory_budget_mb: float = MEMORY_BUDGET_MB,
) -> pd.DataFrame:
    """Filtered ranks of every triple on each side, optionally with the entity IDs relabeled.

    :param scorer: any :class:`~kgeval.lp.scoring.Scorer` (a model's, or a reference scorer)
    :param triples: shape: (n, 3) the ID triples to rank
    :param known_triples: shape: (m, 3), or a list of such arrays: the triples whose answers are filtered
        (train + valid + test); the true entity of a query always stays a candidate
    :param permutation: shape: (E,) relabel entity ``e`` as ``permutation[e]`` before ranking (scores, true entities
        and filter sets alike), so that only the order among tied candidates changes; ``None`` keeps the IDs
    :param sides: ``head`` and/or ``tail``
    :param memory_budget_mb: bound on one batch of scores
    :return: one row per (triple, side): ``head, relation, tail`` (the original IDs), ``side``, the four
        ``rank_*`` columns and ``num_candidates``
    """
    import torch

    from kgeval.lp.ranking import rank_from_score_fn
    from kgeval.studies.s1.reference_scorers import PermutedScorer, permute_triples

    array = _triples(triples, "triples")
    known = _triples(known_triples, "known_triples")
    num_entities = scorer.num_entities
    for name, values in (("triples", array), ("known_triples", known)):
        if len(values) and values[:, [0, 2]].max() >= num_entities:
            raise ValueError(f"{name} use entity IDs >= the scorer's {num_entities} entities")
    num_relations = int(max(array[:, 1].max(initial=-1), known[:, 1].max(initial=-1))) + 1
    ranked, known_ranked = array, known
    if permutation is not None:
        scorer = PermutedScorer(scorer, permutation)
        ranked, known_ranked = permute_triples(array, permutation), permute_triples(known, permutation)
    index = FilterIndex(known_ranked, num_entities=num_entities, num_relations=max(num_relations, 1))
    frames = []
    for side in sides:
        if side not in _SIDES:
            raise ValueError(f"sides must be 'head' and/or 'tail', got {side!r}")
        anchor_col, answer_col = (0, 2) if side == "tail" else (2, 0)
        anchors = torch.from_numpy(ranked[:, anchor_col].copy())
        relations = torch.from_numpy(ranked[:, 1].copy())
        exclude = index.lookup(side, ranked[:, anchor_col], ranked[:, 1])

        def score_fn(rows: torch.Tensor, side=side, anchors=anchors, relations=relations) -> torch.Tensor:
            return scorer.score(side, anchors[rows], relations[rows])

        result = rank_from_score_fn(
            score_fn, ranked[:, answer_col], num_entities, exclude=exclude, memory_budget_mb=memory_budget_mb
        )
        frame = pd.DataFrame({"head": array[:, 0], "relation": array[:, 1], "tail": array[:, 2], "side": side})
        for rank_type, values in result.ranks().items():
            frame[f"rank_{rank_type}"] = values
        frame["num_candidates"] = result.num_candidates
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def constant_scorer_ranks(
    triples, known_triples, num_entities: int, sides: Sequence[str] = _SIDES
) -> pd.DataFrame:
    """The ranks a constant scorer must get, from the definitions alone (no scores, no engine).

    With every candidate tied, for a query with true entity ``c`` and ``|S|`` candidates left after filtering:
    optimistic 1, pessimistic ``|S|``, realistic ``(|S| + 1) / 2``, non-deterministic ``1 + #{kept j < c}`` (``c``'s
    position among the kept candidates in entity-ID order).

    :return: the columns of :func:`rank_split`
    """
    array = _triples(triples, "triples")
    known = _triples(known_triples, "known_triples")
    num_relations = int(max(array[:, 1].max(initial=-1), known[:, 1].max(initial=-1))) + 1
    index = FilterIndex(known, num_entities=num_entities, num_relations=max(num_relations, 1))
    frames = []
    for side in sides:
        anchor_col, answer_col = (0, 2) if side == "tail" else (2, 0)
        true = array[:, answer_col]
        rows, answers = index.lookup(side, array[:, anchor_col], array[:, 1])
        other = answers != true[rows]  # the true entity is never filtered
        removed = np.bincount(rows[other], minlength=len(array))
        removed_before = np.bincount(rows[other & (answers < true[rows])], minlength=len(array))
        num_candidates = num_entities - removed
        frames.append(
            pd.DataFrame(
                {
                    "head": array[:, 0],
                    "relation": array[:, 1],
                    "tail": array[:, 2],
                    "side": side,
                    "rank_optimistic": np.ones(len(array), dtype=np.int64),
                    "rank_realistic": (num_candidates + 1) / 2.0,
                    "rank_pessimistic": num_candidates.astype(np.int64),
                    "rank_nondeterministic": (true - removed_before + 1).astype(np.int64),
                    "num_candidates": num_candidates.astype(np.int64),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


# ----------------------------------------------------------------------------------------------------------------
# rank types of the trained models (from the collated metrics table)
