"""The interface of the S3 scores: :class:`CandidateScorer`, which every S3 method's scorer implements
(:mod:`kgeval.studies.s3.models`, :class:`kgeval.studies.s3.multike.ViewScorer`), and :data:`QueryScores`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

__all__ = ["CandidateScorer", "QueryScores"]

#: ``f(query_ids)`` (b,) -> (b, c) scores against a fixed candidate list
QueryScores = Callable[[np.ndarray], torch.Tensor]


class CandidateScorer:
    """Scores of graph-1 entities against graph-2 entities and back; larger is better."""

    def for_candidates(self, side: str, candidate_ids: np.ndarray) -> QueryScores:
        """A function scoring query entities against a fixed candidate list.

        :param side: ``left`` (queries in graph 1, candidates in graph 2) or ``right`` (the reverse)
        :param candidate_ids: shape (c,), ids in the candidates' graph
        :returns: ``f(query_ids)`` with query_ids shape (b,), giving (b, c) float32 scores
        """
        raise NotImplementedError
