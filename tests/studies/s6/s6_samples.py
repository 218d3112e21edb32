"""A tiny dataset and a scorer of fixed random scores for the S6 tests."""

import numpy as np
import torch

from kgeval.lp.filtering import FilterIndex
from kgeval.lp.scorer_interface import Scorer
from kgeval.studies.s6.evaluation import S6Settings
from kgeval.lp.sampled.samplers import RelationPositions

E, R = 9, 2
TRAIN = np.array([[0, 0, 1], [0, 0, 2], [3, 0, 2], [4, 0, 5], [1, 1, 0], [2, 1, 3], [5, 1, 6], [7, 0, 8]])
TEST = np.array([[0, 0, 5], [3, 0, 1], [2, 1, 6], [4, 0, 8]])
TABLE = np.random.default_rng(1).random((E, R, E)).astype(np.float32)  # score of (h, r, t)


class TableScorer(Scorer):
    name, is_fast, num_entities, device = "table", False, E, torch.device("cpu")

    def score_tails(self, heads, relations):
        return torch.as_tensor(TABLE[heads.numpy(), relations.numpy(), :])

    def score_heads(self, relations, tails):
        return torch.as_tensor(TABLE[:, relations.numpy(), tails.numpy()].T.copy())


class TableModel:
    def score_hrt(self, batch):
        b = batch.numpy()
        return torch.as_tensor(TABLE[b[:, 0], b[:, 1], b[:, 2]])[:, None]


def settings(ks=(2, 8), draws=2, samplers=("uniform", "static", "probabilistic")):
    return S6Settings(samplers=samplers, ks=ks, draws=draws, seed=0, gamma=0.01, buckets=2, timing_triples=2,
                      memory_budget_mb=1.0)


def setup():
    known = FilterIndex([TRAIN, TEST], num_entities=E, num_relations=R)
    return known, RelationPositions.fit(TRAIN, E, R)
