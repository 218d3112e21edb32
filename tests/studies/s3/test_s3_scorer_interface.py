"""The S3 scorer interface: the base class leaves scoring to its subclasses, and every S3 scorer implements it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgeval.studies.s3 import models
from kgeval.studies.s3.multike import View, ViewScorer
from kgeval.studies.s3.scorer_interface import CandidateScorer


def test_the_base_scorer_scores_nothing():
    with pytest.raises(NotImplementedError):
        CandidateScorer().for_candidates("left", np.arange(3))


def test_every_s3_scorer_is_a_candidate_scorer():
    assert models.CandidateScorer is CandidateScorer
    vectors = np.eye(3)
    for scorer in (
        models.DistanceScorer(torch.eye(3), torch.eye(3), p=2.0),
        models.NameScorer([("a",), ("b",), ("c",)], [("a",), ("b",), ("c",)]),
        ViewScorer([View("name", vectors, vectors, 1.0)]),
    ):
        assert isinstance(scorer, CandidateScorer)
        scores = scorer.for_candidates("left", np.arange(3))(np.arange(3))
        assert scores.argmax(dim=1).tolist() == [0, 1, 2]  # each entity tops its own row
