"""Shared inputs of the S1 rank-type tests: a scorer with many ties, brute-force ranks, a hand-made graph and the tiny
dataset with a small trained model.

A plain module, not a conftest.py: the tests import ``conftest`` (tests/conftest.py) by name.

Every expected rank is obtained by brute force: list the candidates left after filtering, sort them with Python's
stable ``sorted`` (descending score, ties in ID order) and count.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import torch

from conftest import REPO
from kgeval.lp.datasets import LPData, load_dataset
from kgeval.lp.scoring import Scorer

RANK_COLUMNS = ["rank_optimistic", "rank_realistic", "rank_pessimistic", "rank_nondeterministic"]


class TableScorer(Scorer):
    """Scores with many ties: small integers drawn per query (seeded by the query), the same in every batch."""

    is_fast = False

    def __init__(self, num_entities: int, levels: int = 3, seed: int = 0) -> None:
        self.num_entities = num_entities
        self.levels = levels
        self.seed = seed
        self.device = torch.device("cpu")
        self.name = "table"

    def row(self, side: str, anchor: int, relation: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, 0 if side == "head" else 1, int(anchor), int(relation)])
        return rng.integers(0, self.levels, self.num_entities).astype(np.float32)

    def score_tails(self, heads, relations):  # noqa: D102
        return torch.from_numpy(np.stack([self.row("tail", h, r) for h, r in zip(heads.tolist(), relations.tolist())]))

    def score_heads(self, relations, tails):  # noqa: D102
        return torch.from_numpy(np.stack([self.row("head", t, r) for t, r in zip(tails.tolist(), relations.tolist())]))


def brute_force_ranks(score_row, num_entities, true, excluded, permutation=None):
    """All four ranks of one query by enumeration; ``permutation`` relabels the IDs that break ties."""
    new_id = np.arange(num_entities) if permutation is None else np.asarray(permutation)
    kept = [j for j in range(num_entities) if j == true or j not in excluded]
    s = {j: float(score_row[j]) for j in kept}
    optimistic = 1 + sum(s[j] > s[true] for j in kept)
    pessimistic = sum(s[j] >= s[true] for j in kept)
    # a stable descending sort of the candidates listed in (new) ID order
    in_id_order = sorted(kept, key=lambda j: new_id[j])
    order = sorted(in_id_order, key=lambda j: -s[j])
    return {
        "rank_optimistic": optimistic,
        "rank_pessimistic": pessimistic,
        "rank_realistic": (optimistic + pessimistic) / 2,
        "rank_nondeterministic": order.index(true) + 1,
        "num_candidates": len(kept),
    }


def brute_force_frame(scorer, triples, known, permutation=None, sides=("head", "tail")):
    """Brute-force ranks of every triple and side, in the row order of :func:`rank_split`."""
    triples = np.asarray(triples)
    known = np.asarray(known)
    rows = []
    for side in sides:
        for h, r, t in triples:
            if side == "tail":
                true = t
                excluded = {int(k[2]) for k in known if k[0] == h and k[1] == r}
                score_row = scorer.score_tails(torch.tensor([h]), torch.tensor([r]))[0].numpy()
            else:
                true = h
                excluded = {int(k[0]) for k in known if k[2] == t and k[1] == r}
                score_row = scorer.score_heads(torch.tensor([r]), torch.tensor([t]))[0].numpy()
            rows.append({"side": side, **brute_force_ranks(score_row, scorer.num_entities, int(true), excluded,
                                                             permutation)})
    return pd.DataFrame(rows)


# a hand-made graph: 6 entities, 2 relations; several queries share answers, so filtering removes candidates
KNOWN = np.array(
    [[0, 0, 1], [0, 0, 2], [0, 0, 4], [3, 0, 2], [5, 1, 0], [5, 1, 3], [1, 1, 3], [2, 0, 2], [4, 1, 5]], dtype=np.int64
)
EVAL = KNOWN[[0, 1, 3, 4, 6, 7]]

#: the dataset spec of tests/data/tiny
TINY_SPEC = {"source": "files", **{s: str(REPO / "tests" / "data" / "tiny" / f"{s}.txt") for s in ("train", "valid", "test")}}


@functools.cache
def tiny_data() -> LPData:
    """The tiny dataset of tests/data/tiny (loaded once per session)."""
    return load_dataset("tiny", dict(TINY_SPEC))


@functools.cache
def tiny_model():
    """A DistMult model trained for 2 epochs on :func:`tiny_data` (trained once per session)."""
    from kgeval.lp.training import train_model

    torch.set_num_threads(1)
    spec = {
        "model": "DistMult",
        "model_kwargs": {"embedding_dim": 8},
        "optimizer_kwargs": {"lr": 0.01},
        "training_kwargs": {"num_epochs": 2, "batch_size": 64},
    }
    return train_model(tiny_data(), spec, seed=0).model
