"""A tiny graph, a model of fixed random scores with ties, and its brute-force full filtered ranks, for the tests of
sampled evaluation."""

import numpy as np
import torch

from kgeval.lp.filtering import FilterIndex
from kgeval.lp.sampled.samplers import RelationPositions

E, R = 12, 2
TRAIN = np.array([[0, 0, 1], [0, 0, 2], [3, 0, 2], [4, 0, 5], [1, 1, 0], [2, 1, 3], [5, 1, 6], [7, 0, 8],
                  [9, 0, 10], [11, 1, 4]])
TEST = np.array([[0, 0, 5], [3, 0, 1], [2, 1, 6], [4, 0, 8], [9, 1, 11], [6, 0, 7]])
# scores rounded to one decimal, so that ties occur and the rank types differ
TABLE = np.round(np.random.default_rng(1).random((E, R, E)), 1)


class TableModel:
    """score_hrt of a fixed table, as a PyKEEN model scores triples."""

    def score_hrt(self, batch):
        b = batch.numpy()
        return torch.as_tensor(TABLE[b[:, 0], b[:, 1], b[:, 2]])[:, None]


def setup():
    known = FilterIndex([TRAIN, TEST], num_entities=E, num_relations=R)
    return known, RelationPositions.fit(TRAIN, E, R)


def brute_force(triples=TEST):
    """Per query (head queries first, then tail), the greater and equal counts among the filtered candidates and their
    number N (the true answer included), by enumerating every entity."""
    known = {tuple(t) for t in np.concatenate([TRAIN, TEST]).tolist()}
    out = {"greater": [], "equal": [], "num_candidates": []}
    for side in ("head", "tail"):
        for h, r, t in triples.tolist():
            true = TABLE[h, r, t]
            rows = [(e, r, t) if side == "head" else (h, r, e) for e in range(E)]
            kept = [TABLE[row] for row in rows if row not in known]
            out["greater"].append(sum(s > true for s in kept))
            out["equal"].append(sum(s == true for s in kept))
            out["num_candidates"].append(len(kept) + 1)
    return {key: np.array(value) for key, value in out.items()}
